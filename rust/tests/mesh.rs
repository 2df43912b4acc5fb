//! The mesh over the real libuform: it needs a VRAM executor, so without GPUs every bootstrap
//! is refused with a status and a message, never a crash.

use std::path::Path;
use uform::*;

fn refused(executor: &Executor, options: &MeshOptions<'_>) -> Error {
    Mesh::bootstrap(executor, options).expect_err("the mesh needs a VRAM executor")
}

#[test]
fn bootstrap_over_a_ram_executor_is_refused() {
    let executor = Executor::for_ram(&[], None, 1, 0).unwrap();
    let error = refused(&executor, &MeshOptions::default());
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(!error.message().is_empty(), "{error}");
}

#[test]
fn bootstrap_over_the_null_executor_is_refused() {
    let error = refused(&Executor::default(), &MeshOptions::default());
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
}

#[test]
fn bad_options_are_refused() {
    let executor = Executor::default();
    let directory = std::env::temp_dir();
    let cases = [
        MeshOptions { host_domain_index: 2, host_domain_count: 2, ..Default::default() },
        MeshOptions { host_domain_count: 2, host_domain_index: 1, ..Default::default() },
        MeshOptions { timeout_seconds: -1.0, ..Default::default() },
        MeshOptions { timeout_seconds: f64::NAN, ..Default::default() },
        MeshOptions { job: "nul\0inside", directory: &directory, ..Default::default() },
        MeshOptions { job: "run", directory: Path::new("nul\0inside"), ..Default::default() },
    ];
    for options in cases {
        let error = refused(&executor, &options);
        assert_eq!(error.status(), Status::InvalidArgument, "{options:?}: {error}");
    }
}

#[test]
fn a_one_process_mesh_where_gpus_exist() {
    if gpu_devices(&mut []).unwrap() == 0 {
        return;
    }
    // SAFETY: no streams are borrowed.
    let executor = unsafe { Executor::for_vram(&[0], None, &[], None, &[], 0, 0) }.unwrap();
    let mesh = Mesh::bootstrap(&executor, &MeshOptions::default()).unwrap();
    let description = mesh.describe().unwrap();
    assert_eq!(description.gpus_per_host_domain, 1);
    assert_eq!(description.gpus_per_colocated_domain, 1);
    assert_eq!(description.host_domain_index, 0);
    assert_eq!(description.first_gpu_index, 0);
    let mesh = std::sync::Arc::new(mesh);
    let shared = mesh.clone();
    assert_eq!(std::thread::spawn(move || shared.describe().unwrap()).join().unwrap(), description);
    assert!(format!("{mesh:?}").starts_with("Mesh"));
}
