//! The VRAM verbs against whatever CUDA driver this process loads: the machine's own
//! (`libcuda.so.1`) on a machine with GPUs, where this is the Rust half of a real-GPU check
//! (`cargo test --test vram_any_driver -- --nocapture`), or the test double when
//! `UFORM_CUDA_LIBRARY` names it. Without any GPU, a VRAM executor is refused with NotFound.

use std::os::raw::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use uform::*;

/// Bytes per copy: large enough to go through several staging chunks.
const BYTES: usize = 64 << 20;

#[test]
fn vram_round_trip_on_every_device_of_this_machine() {
    let count = gpu_devices(&mut []).unwrap();
    // SAFETY: no borrowed streams.
    let executor = match unsafe { Executor::for_vram(&[], None, &[], None, &[], 0, 0) } {
        Ok(executor) => executor,
        Err(error) => {
            assert_eq!(count, 0, "{count} GPUs listed, yet no VRAM executor: {error}");
            assert_eq!(error.status(), Status::NotFound, "{error}");
            println!("no GPU: {error}");
            return;
        }
    };
    println!("{executor:?}");
    assert_eq!(executor.devices(), count);

    let seen = Mutex::new(Vec::new());
    On::new(&executor)
        .for_devices(|slot| {
            let scratch = slot.device_scratch(1 << 20)?;
            assert!(!scratch.is_null() && !slot.stream().is_null());
            seen.lock().unwrap().push(slot.device());
            Ok(())
        })
        .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, (0..count).collect::<Vec<_>>());

    let arena = Arena::new_in(&executor, BYTES + (1 << 20)).unwrap();
    assert_eq!(arena.devices(), count);
    let base = arena.allocate(BYTES, 256).unwrap().as_ptr().cast::<c_void>();
    let data: Vec<u8> = (0..BYTES).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ 0x5A).collect();
    for device in 0..count {
        let twin = arena.device_pointer(device, base).unwrap();
        let started = Instant::now();
        let reported = AtomicUsize::new(0);
        // SAFETY: BYTES of this device's reservation, kept by the arena, used by nothing else.
        unsafe {
            On::new(&executor)
                .progress(|done, _| reported.store(done, Ordering::Relaxed))
                .copy_to_device(device, twin, &data)
        }
        .unwrap();
        let to_device = started.elapsed();
        assert_eq!(reported.load(Ordering::Relaxed), BYTES);
        let started = Instant::now();
        // SAFETY: as above.
        let copy = unsafe { On::new(&executor).deferred().copy_to_host(vec![0; BYTES], device, twin) }.unwrap();
        let back = copy.into_host().unwrap();
        let to_host = started.elapsed();
        assert!(back == data, "device {device}: the round trip changed the data");
        let rate = |time: Duration| BYTES as f64 / time.as_secs_f64() / 1e9;
        println!(
            "device {device}: to device {:.2} GB/s, to host {:.2} GB/s (pageable)",
            rate(to_device),
            rate(to_host)
        );
    }
    executor.drain(Mood::Parked).unwrap();
}
