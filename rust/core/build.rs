//! Compiles proto/fluss_api.proto with protox (pure Rust, so no protoc binary is needed).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fds = protox::compile(["proto/fluss_api.proto"], ["proto"])?;
    prost_build::Config::new().bytes(["."]).compile_fds(fds)?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
