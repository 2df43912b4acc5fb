//! Builds or finds libuform, with no build-dependency crate.
//!
//! - `UFORM_LIB_DIR` set: link `uform` from that directory (shared or static, as the linker
//!   finds it there). A shared library found there must also be found at run time
//!   (`LD_LIBRARY_PATH` or an rpath), which this script does not arrange.
//! - otherwise: configure the repository's CMake project (the directory above this crate)
//!   into `$OUT_DIR/build`, build only the `uform_static` target, and link it statically
//!   together with the system libraries it needs (pthread, dl).
//!
//! It also tells the crate where the C headers are (`UFORM_INCLUDE_DIR`), so the layout test
//! can compile a C program against the very header the FFI mirrors.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repository = manifest_dir.parent().expect("the crate lives one level below the repository").to_path_buf();
    let include_dir = repository.join("include");
    println!("cargo:rustc-env=UFORM_INCLUDE_DIR={}", include_dir.display());
    println!("cargo:include={}", include_dir.display());
    println!("cargo:rerun-if-env-changed=UFORM_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");

    if let Some(lib_dir) = env::var_os("UFORM_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", PathBuf::from(lib_dir).display());
        println!("cargo:rustc-link-lib=uform");
        link_system_libraries();
        return;
    }

    if !repository.join("CMakeLists.txt").is_file() {
        panic!(
            "uform: no CMakeLists.txt at {}; build libuform yourself and set UFORM_LIB_DIR to the directory holding it",
            repository.display()
        );
    }
    // Any change to the C library's sources or its build description rebuilds it.
    for watched in ["CMakeLists.txt", "cmake", "include", "src"] {
        println!("cargo:rerun-if-changed={}", repository.join(watched).display());
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let build_dir = out_dir.join("build");
    let build_type = "Release";
    run(Command::new(cmake())
        .arg("-S")
        .arg(&repository)
        .arg("-B")
        .arg(&build_dir)
        .arg("-DUFORM_BUILD_TESTS=OFF")
        .arg("-DUFORM_BUILD_TOOLS=OFF")
        .arg("-DUFORM_BUILD_BENCH=OFF")
        .arg("-DUFORM_BUILD_FUZZ=OFF")
        .arg(format!("-DCMAKE_BUILD_TYPE={build_type}")));
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "2".to_string());
    run(Command::new(cmake())
        .arg("--build")
        .arg(&build_dir)
        .arg("--target")
        .arg("uform_static")
        .arg("--config")
        .arg(build_type)
        .arg("--parallel")
        .arg(jobs));

    let archive_dir = find_archive(&build_dir).unwrap_or_else(|| {
        panic!("uform: cmake built uform_static but no libuform.a was found under {}", build_dir.display())
    });
    println!("cargo:rustc-link-search=native={}", archive_dir.display());
    println!("cargo:rustc-link-lib=static=uform");
    link_system_libraries();
}

/// The libraries libuform's CMake target links publicly: Threads::Threads, CMAKE_DL_LIBS and libm.
fn link_system_libraries() {
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "windows" {
        println!("cargo:rustc-link-lib=pthread");
    }
    if target_os == "linux" || target_os == "android" {
        println!("cargo:rustc-link-lib=dl");
    }
    if target_os != "windows" && target_os != "macos" {
        println!("cargo:rustc-link-lib=m");
    }
}

/// `CMAKE` names another cmake executable, as the cmake crate honours it.
fn cmake() -> String {
    println!("cargo:rerun-if-env-changed=CMAKE");
    env::var("CMAKE").unwrap_or_else(|_| "cmake".to_string())
}

fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("uform: could not start {command:?}: {error}; is CMake installed?"));
    if !status.success() {
        panic!("uform: {command:?} failed with {status}");
    }
}

/// Single-configuration generators put the archive in the build root, multi-configuration
/// ones in a folder named after the configuration: look in both.
fn find_archive(build_dir: &Path) -> Option<PathBuf> {
    [build_dir.to_path_buf(), build_dir.join("Release"), build_dir.join("lib")]
        .into_iter()
        .find(|candidate| candidate.join("libuform.a").is_file() || candidate.join("uform.lib").is_file())
}
