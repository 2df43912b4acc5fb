//! The CUDA driver test double (`tests/doubles/cuda_emulated`, see its README.md), shared by
//! the test binaries that run against it: a host emulation of the CUDA driver's ABI, never a
//! real GPU.
//!
//! The double is built once per test binary with the system C compiler, under
//! `CARGO_TARGET_TMPDIR`. libuform loads the driver named by `UFORM_CUDA_LIBRARY` once per
//! process, so every check runs in a child: the very test binary, re-run with
//! `UFORM_CUDA_DOUBLE_CHILD` naming the scenario and only the binary's child test selected. The
//! child asserts and panics on a mismatch; the parent asserts that it passed.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A library path that does not exist: the children of these tests run without NCCL.
pub const NO_NCCL: &str = "/nonexistent/libnccl.so.2";

/// The variable naming the scenario a child runs.
pub const CHILD_ROLE: &str = "UFORM_CUDA_DOUBLE_CHILD";

/// The CUDA driver test double, `libuform_cuda_emulated.so`, built once per test binary.
pub fn cuda_double() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate lives in the repository");
        let sources_dir = repository.join("tests").join("doubles").join("cuda_emulated");
        // The double's own sources and the doubles' shared configuration parsing.
        let common_dir = repository.join("tests").join("doubles").join("common");
        let mut sources: Vec<PathBuf> = [&sources_dir, &common_dir]
            .into_iter()
            .flat_map(|directory| {
                std::fs::read_dir(directory).unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
            })
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "c"))
            .collect();
        sources.sort();
        assert!(!sources.is_empty(), "no CUDA driver test double sources under {}", sources_dir.display());
        let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda_double");
        std::fs::create_dir_all(&out_dir).expect("the double's directory");
        let library = out_dir.join("libuform_cuda_emulated.so");
        // Built under a name of this process, then renamed: concurrent test runs never load a
        // half-written library.
        let partial = out_dir.join(format!("libuform_cuda_emulated.{}.so", std::process::id()));
        let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
        let output = Command::new(&compiler)
            .args(["-shared", "-fPIC", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter"])
            .arg(format!("-I{}", sources_dir.display()))
            .arg(format!("-I{}", repository.join("src").display()))
            .arg("-o")
            .arg(&partial)
            .args(&sources)
            .arg("-lpthread")
            // A source missing from the list fails the link here, not as "no GPU" later.
            .arg("-Wl,--no-undefined")
            .output()
            .unwrap_or_else(|error| panic!("running {compiler:?} to build the CUDA driver test double: {error}"));
        assert!(
            output.status.success(),
            "building the CUDA driver test double failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::rename(&partial, &library).expect("renaming the built double");
        library
    })
}

/// Runs `scenario` in a child (the test `child_test` of this binary) with uform pointed at
/// `library` configured by `config`, and asserts that it passed.
pub fn run_child(child_test: &str, scenario: &str, library: &Path, config: Option<&str>, extra: &[(&str, &str)]) {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["--exact", child_test, "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_ROLE, scenario)
        .env("UFORM_CUDA_LIBRARY", library)
        // A machine without NCCL unless `extra` says otherwise: a real libnccl.so.2 installed
        // here cannot drive the emulated GPUs.
        .env("UFORM_NCCL_LIBRARY", NO_NCCL)
        .env_remove("CUDA_DEVICE_ORDER");
    match config {
        Some(config) => command.env("UFORM_CUDA_DOUBLE_CONFIG", config),
        None => command.env_remove("UFORM_CUDA_DOUBLE_CONFIG"),
    };
    for (name, value) in extra {
        command.env(name, value);
    }
    let output = command.output().expect("running the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "scenario {scenario} failed in the child:\n{stdout}{stderr}");
    // The filter selected the child test, which really ran the scenario.
    assert!(stdout.contains(&format!("scenario {scenario}: passed")), "scenario {scenario} did not run:\n{stdout}");
}

#[allow(unused_imports)] // not every test binary bounds its scenarios
pub use super::within;
