//! Generates the cxx bridge and compiles the C++ trampolines (`src/glue.cc`) into this static
//! library, so that the C++ library (`cpp/`) depends on it and never the other way round.

use std::path::PathBuf;

/// `fluss_writer_version.h` (included by `fluss_writer.hpp`) for this build, from the template
/// CMake fills too and the crate version (= the workspace version in Cargo.toml).
fn version_header(out: &std::path::Path) -> PathBuf {
    let template = std::fs::read_to_string("../../cpp/include/fluss_writer_version.h.in").expect("cpp/include/fluss_writer_version.h.in");
    let text = template
        .replace("@PROJECT_VERSION_MAJOR@", env!("CARGO_PKG_VERSION_MAJOR"))
        .replace("@PROJECT_VERSION_MINOR@", env!("CARGO_PKG_VERSION_MINOR"))
        .replace("@PROJECT_VERSION_PATCH@", env!("CARGO_PKG_VERSION_PATCH"))
        .replace("@FLUSS_WRITER_VERSION@", env!("CARGO_PKG_VERSION"));
    let dir = out.join("version-include");
    std::fs::create_dir_all(&dir).expect("create the version header's dir");
    std::fs::write(dir.join("fluss_writer_version.h"), text).expect("write fluss_writer_version.h");
    dir
}

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let version_include = version_header(&out);
    cxx_build::bridge("src/bridge.rs")
        .file("src/glue.cc")
        .file("src/glue_job.cc")
        .include("include")
        .include("../../cpp/include")
        .include(&version_include)
        .std("c++17")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("fluss-writer-cxx-bridge");
    for f in [
        "src/bridge.rs",
        "src/glue.cc",
        "src/glue_job.cc",
        "include/fluss_writer_glue.h",
        "include/fluss_writer_job.inc",
        "../../cpp/include/fluss_writer.hpp",
        "../../cpp/include/fluss_writer_version.h.in",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
}
