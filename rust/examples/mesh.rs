//! A one-process mesh over every GPU, built by `cargo test` and run by `tests/example_mesh.rs`
//! against the CUDA driver test double (on a machine with GPUs it runs on them as it is).
//!
//! A run of several processes gives each its place and a directory every host sees:
//! `MeshOptions { host_domain_index: rank, host_domain_count: 4, directory: Path::new("/shared"),
//! job: "pretrain-0042", ..Default::default() }`, the same count, directory and job everywhere.
use uform::*;

pub fn main() -> Result<()> {
    let count = gpu_devices(&mut [])?;
    println!("{count} GPUs");
    if count == 0 {
        return Ok(()); // the mesh needs a VRAM executor
    }
    // SAFETY: no borrowed streams.
    let gpus = unsafe { Executor::for_vram(&[], None, &[], None, &[], 0, 0)? };
    let mesh = Mesh::bootstrap(&gpus, &MeshOptions::default())?; // a run of one: no peers, no directory
    let description = mesh.describe()?;
    println!("{description:?}");
    assert_eq!(description.gpus_per_host_domain, gpus.devices());
    assert_eq!(description.first_gpu_index, 0);
    // One NCCL communicator per device, borrowed from the mesh; none where NCCL does not load.
    match mesh.communicator(0) {
        Ok(communicator) => println!("device 0's ncclComm_t: {communicator:?}"),
        Err(error) if error.status() == Status::NotFound => println!("{error}"),
        Err(error) => return Err(error),
    }
    drop(gpus); // the mesh holds the executor...
    drop(mesh); // ...and its drop closes it
    Ok(())
}
