//! Runs the README's Rust GPU example (`examples/gpu.rs`, included here as a module) against
//! the CUDA driver test double: two emulated devices, never a real GPU. It runs in a child
//! process, as libuform loads the driver once per process.
mod support;

#[path = "../examples/gpu.rs"]
#[allow(dead_code)]
mod gpu_example;

use support::cuda_double::{cuda_double, run_child, CHILD_ROLE};

const CHILD_TEST: &str = "readme_gpu_child_runs_the_example";

#[test]
fn readme_gpu_example_runs_against_the_cuda_double() {
    run_child(
        CHILD_TEST,
        "readme_gpu",
        cuda_double(),
        Some("device cc=9.0 memory=256M\ndevice cc=8.0 memory=256M"),
        &[],
    );
}

/// The child: the example's own asserts check the round trips; it must also return Ok.
#[test]
#[ignore = "run by readme_gpu_example_runs_against_the_cuda_double in a child process"]
fn readme_gpu_child_runs_the_example() {
    let Ok(scenario) = std::env::var(CHILD_ROLE) else { return };
    gpu_example::main().expect("the README's GPU example");
    println!("scenario {scenario}: passed");
}
