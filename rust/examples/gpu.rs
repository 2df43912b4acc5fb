//! The README's Rust GPU example, built by `cargo test` and run by `tests/readme_gpu.rs` against
//! the CUDA driver test double (on a machine with GPUs it runs on them as it is).
use std::ffi::c_void;
use uform::*;

pub fn main() -> Result<()> {
    let mut devices = [GPUDevice::default(); 8];
    let count = gpu_devices(&mut devices)?;
    println!("{count} GPUs");
    if count == 0 {
        return Ok(());
    }
    // One non-blocking stream per device, host decoders near them, 64 MiB of scratch each.
    let gpus = unsafe { Executor::for_vram(&[], None, &[], None, &[], 64 << 20, 0)? };
    let weights = Arena::new_in(&gpus, 1 << 20)?; // on every device: one offset, a twin each
    let slot = weights.allocate(4096, 256)?.as_ptr() as *const c_void;
    let host: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    let mut back = vec![0u8; 4096];
    for device in 0..gpus.devices() {
        let twin = weights.device_pointer(device, slot)?;
        // SAFETY: `twin` is 4096 bytes of this arena on `device`, alive for both calls.
        unsafe {
            On::new(&gpus).copy_to_device(device, twin, &host)?; // pageable: staged, double-buffered
            On::new(&gpus).copy_to_host(&mut back, device, twin)?;
        }
        assert_eq!(back, host);
    }
    // One host function per device, its context current; enqueue your own work on slot.stream().
    On::new(&gpus).for_devices(|slot| {
        let scratch = slot.device_scratch(1 << 20)?; // device memory, grown to a high-water mark
        println!("device {} stream {:?} scratch {:?}", slot.device(), slot.stream(), scratch);
        Ok(())
    })?;
    drop(gpus); // drains; the arena still holds the executor...
    drop(weights); // ...and its drop closes it
    println!("round trips ok");
    Ok(())
}
