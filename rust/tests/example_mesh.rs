//! Runs the mesh example (`examples/mesh.rs`, included here as a module) against the CUDA
//! driver test double: two emulated devices, never a real GPU. It runs in a child process, as
//! libuform loads the driver once per process.
mod support;

#[path = "../examples/mesh.rs"]
#[allow(dead_code)]
mod mesh_example;

use support::cuda_double::{cuda_double, run_child, CHILD_ROLE};

const CHILD_TEST: &str = "example_mesh_child_runs_the_example";

#[test]
fn example_mesh_runs_against_the_cuda_double() {
    run_child(
        CHILD_TEST,
        "example_mesh",
        cuda_double(),
        Some("device cc=9.0 memory=256M\ndevice cc=9.0 memory=256M"),
        &[],
    );
}

/// The child: the example's own asserts check the description; it must also return Ok.
#[test]
#[ignore = "run by example_mesh_runs_against_the_cuda_double in a child process"]
fn example_mesh_child_runs_the_example() {
    let Ok(scenario) = std::env::var(CHILD_ROLE) else { return };
    mesh_example::main().expect("the mesh example");
    println!("scenario {scenario}: passed");
}
