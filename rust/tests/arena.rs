//! Host arenas: memory placed where a RAM (or the null) executor computes, bump-allocated and
//! freed whole, which may outlive its executor. Device arenas are in `vram_cuda_double.rs`.

use std::collections::HashSet;
use std::os::raw::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use uform::*;

/// Writes `byte` over `bytes` bytes at `pointer`, then reads them back.
fn fill_and_check(pointer: NonNull<u8>, bytes: usize, byte: u8) {
    // SAFETY: the tests hand in a fresh allocation of `bytes` bytes that nothing else uses,
    // valid while its arena lives.
    let memory = unsafe { std::slice::from_raw_parts_mut(pointer.as_ptr(), bytes) };
    memory.fill(byte);
    assert!(memory.iter().all(|&value| value == byte));
}

#[test]
fn allocations_are_aligned_counted_and_writable() {
    let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
    let arena = Arena::new_in(&executor, 1 << 16).unwrap();
    assert_eq!(arena.usage(), (0, 1 << 16));
    assert_eq!(arena.devices(), 0, "a host arena spans no device");

    let first = arena.allocate(3, 1).unwrap();
    assert_eq!(arena.usage().0, 3);
    fill_and_check(first, 3, 0xA5);

    // Zero alignment means 64: the padding after the first 3 bytes counts as used.
    let second = arena.allocate(100, 0).unwrap();
    assert_eq!(second.as_ptr() as usize % 64, 0);
    assert_eq!(second.as_ptr() as usize - first.as_ptr() as usize, 64, "the next 64-byte boundary");
    assert_eq!(arena.usage().0, 64 + 100);

    let third = arena.allocate(4096, 4096).unwrap();
    assert_eq!(third.as_ptr() as usize % 4096, 0);
    assert!(third.as_ptr() as usize >= second.as_ptr() as usize + 100, "allocations never overlap");
    fill_and_check(second, 100, 0x5A);
    fill_and_check(third, 4096, 0x33);
    // SAFETY: `first` holds 3 bytes this test wrote; later fills stayed in their own ranges.
    assert_eq!(unsafe { std::slice::from_raw_parts(first.as_ptr(), 3) }, [0xA5; 3]);

    // Zero bytes is a valid, aligned, non-null allocation that takes only its padding.
    let (used, _) = arena.usage();
    let empty = arena.allocate(0, 8).unwrap();
    assert_eq!(empty.as_ptr() as usize % 8, 0);
    assert_eq!(arena.usage().0, used.next_multiple_of(8));

    let text = format!("{arena:?}");
    assert!(text.contains("capacity: 65536") && text.contains("devices: 0"), "{text}");
}

#[test]
fn a_full_arena_is_out_of_memory_and_unchanged() {
    let arena = Arena::new_in(&Executor::default(), 1000).unwrap();
    let whole = arena.allocate(1000, 1).unwrap();
    fill_and_check(whole, 1000, 1);
    assert_eq!(arena.usage(), (1000, 1000));
    let error = arena.allocate(1, 1).unwrap_err();
    assert_eq!(error.status(), Status::OutOfMemory, "{error}");
    assert!(!error.message().is_empty(), "the library says how full it is");
    assert_eq!(arena.usage(), (1000, 1000), "a refused allocation takes nothing");

    let arena = Arena::new_in(&Executor::default(), 1000).unwrap();
    arena.allocate(600, 1).unwrap();
    assert_eq!(arena.allocate(500, 1).unwrap_err().status(), Status::OutOfMemory);
    assert_eq!(arena.allocate(usize::MAX, 1).unwrap_err().status(), Status::OutOfMemory);
    assert_eq!(arena.usage(), (600, 1000));
    // What still fits is still given.
    arena.allocate(400, 1).unwrap();
    assert_eq!(arena.usage(), (1000, 1000));
}

#[test]
fn bad_inputs_answer_statuses() {
    let executor = Executor::for_ram(&[], None, 1, 0).unwrap();
    assert_eq!(Arena::new_in(&executor, 0).unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(Arena::new_in(&Executor::default(), 0).unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(Arena::new_in(&executor, usize::MAX).unwrap_err().status(), Status::OutOfMemory);
    assert_eq!(Arena::new_in(&executor, 1 << 60).unwrap_err().status(), Status::OutOfMemory);

    let arena = Arena::new_in(&executor, 4096).unwrap();
    for alignment in [3, 24, 100, usize::MAX] {
        let error = arena.allocate(8, alignment).unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "alignment {alignment}: {error}");
    }
    assert_eq!(arena.usage().0, 0, "refused allocations take nothing");

    // A host arena has no device twins.
    let pointer = arena.allocate(8, 8).unwrap();
    for device in [0, 1] {
        let error = arena.device_pointer(device, pointer.as_ptr().cast::<c_void>()).unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    }
}

#[test]
fn a_host_arena_outlives_its_executor() {
    let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
    let arena = Arena::new_in(&executor, 3 << 20).unwrap();
    let before = arena.allocate(1 << 20, 0).unwrap();
    fill_and_check(before, 1 << 20, 9);
    drop(executor);
    // Memory given before and after the executor is gone stays usable.
    let after = arena.allocate(2 << 20, 4096).unwrap();
    assert_eq!(after.as_ptr() as usize % 4096, 0);
    fill_and_check(after, 2 << 20, 10);
    // SAFETY: the first megabyte this test filled, still the arena's.
    assert!(unsafe { std::slice::from_raw_parts(before.as_ptr(), 1 << 20) }.iter().all(|&byte| byte == 9));
    assert_eq!(arena.usage(), (3 << 20, 3 << 20));
    assert_eq!(arena.allocate(1, 1).unwrap_err().status(), Status::OutOfMemory);
}

#[test]
fn threads_allocate_from_one_arena_at_once() {
    const THREADS: usize = 4;
    const EACH: usize = 500;
    let arena = Arena::new_in(&Executor::default(), THREADS * EACH * 64).unwrap();
    let given = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (arena, given) = (&arena, &given);
            scope.spawn(move || {
                let mut mine = Vec::with_capacity(EACH);
                for _ in 0..EACH {
                    let pointer = arena.allocate(40, 64).unwrap();
                    fill_and_check(pointer, 40, thread as u8);
                    mine.push(pointer.as_ptr() as usize);
                }
                given.lock().unwrap().extend(mine);
            });
        }
    });
    let given = given.into_inner().unwrap();
    let distinct: HashSet<usize> = given.iter().copied().collect();
    assert_eq!(distinct.len(), THREADS * EACH, "every allocation is its own");
    assert!(given.iter().all(|address| address % 64 == 0));
    assert_eq!(arena.usage(), (THREADS * EACH * 64 - 24, THREADS * EACH * 64), "packed, the last one unpadded");
    assert_eq!(arena.allocate(64, 64).unwrap_err().status(), Status::OutOfMemory);
}

#[test]
fn an_arena_moves_between_threads_and_drops_there() {
    let executor = Executor::for_ram(&[], None, 1, 0).unwrap();
    let arena = Arena::new_in(&executor, 4096).unwrap();
    let used = std::thread::spawn(move || {
        arena.allocate(10, 1).unwrap();
        arena.usage().0
    })
    .join()
    .unwrap();
    assert_eq!(used, 10);
}

#[test]
fn ram_and_null_executors_have_no_devices() {
    static CALLED: AtomicUsize = AtomicUsize::new(0);
    let ram = Executor::for_ram(&[], None, 2, 0).unwrap();
    let null = Executor::default();
    for executor in [&ram, &null] {
        assert_eq!(executor.devices(), 0);
        let error = On::new(executor)
            .for_devices(|_| {
                CALLED.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
            .unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        let mut host = [0u8; 16];
        // SAFETY: refused before anything is copied: the executor has no device 0.
        let error = unsafe { On::new(executor).copy_to_device(0, host.as_mut_ptr().cast(), &[1; 16]) }.unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        // SAFETY: as above.
        let error = unsafe { On::new(executor).copy_to_host(&mut host, 0, [1u8; 16].as_ptr().cast()) }.unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        assert_eq!(host, [0; 16], "nothing was copied");
    }
    // Deferred submissions are refused the same way, and the closures are dropped unrun.
    let error = On::new(&ram).deferred().for_devices(|_| Ok(())).unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    let mut target = vec![0u8; 16];
    // SAFETY: refused before anything is copied.
    let error = unsafe { On::new(&ram).deferred().copy_to_device(0, target.as_mut_ptr().cast(), vec![1; 16]) }
        .map(drop)
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    assert_eq!(target, [0; 16]);
    assert_eq!(CALLED.load(Ordering::Relaxed), 0, "no device function ran");
}
