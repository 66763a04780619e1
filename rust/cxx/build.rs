//! Generates the cxx bridge and compiles the C++ trampolines (`src/glue.cc`) into this static
//! library, so that the C++ library (`cpp/`) depends on it and never the other way round.

fn main() {
    cxx_build::bridge("src/bridge.rs")
        .file("src/glue.cc")
        .include("include")
        .include("../../cpp/include")
        .std("c++17")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("fluss-writer-cxx-bridge");
    for f in ["src/bridge.rs", "src/glue.cc", "include/fluss_writer_glue.h", "../../cpp/include/fluss_writer.hpp"] {
        println!("cargo:rerun-if-changed={f}");
    }
}
