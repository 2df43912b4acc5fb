//! VRAM executors against the CUDA driver test double (`tests/doubles/cuda_emulated`, see its
//! README.md): device functions, staged copies, device scratch and staging, device arenas and
//! sticky faults, end to end through a host emulation of the driver, never a real GPU.
//!
//! Every check runs in a child process (see `support/cuda_double.rs`), since libuform loads the
//! driver once per process, and the double's sticky faults last until the process ends.

mod support;

use std::collections::HashSet;
use std::os::raw::c_void;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use support::cuda_double::{cuda_double, within, CHILD_ROLE};
use uform::*;

const CHILD_TEST: &str = "vram_cuda_double_child_runs_a_scenario";

/// Three emulated H100s (the double's default device) of 1 GiB each.
const THREE_DEVICES: &str = "device memory=1G name=first\ndevice memory=1G name=second\ndevice memory=1G name=third";
const TWO_DEVICES: &str = "device memory=1G name=first\ndevice memory=1G name=second";

fn run_child(scenario: &str, config: &str) {
    support::cuda_double::run_child(CHILD_TEST, scenario, cuda_double(), Some(config), &[]);
}

#[test]
fn for_devices_cuda_double_sees_every_device_on_its_own_stream() {
    run_child("streams", THREE_DEVICES);
}

#[test]
fn for_devices_cuda_double_waits_for_the_work_a_function_enqueues() {
    run_child("own_work", TWO_DEVICES);
}

#[test]
fn copies_cuda_double_round_trip_twenty_mebibytes() {
    run_child("round_trip", TWO_DEVICES);
}

#[test]
fn copies_cuda_double_deferred_own_their_buffers_and_count_bytes() {
    run_child("deferred_copies", TWO_DEVICES);
}

#[test]
fn for_devices_cuda_double_error_or_panic_fails_the_call() {
    run_child("failures", TWO_DEVICES);
}

#[test]
fn deferred_cuda_double_drop_frees_the_closures_of_a_call_that_failed_invalid_argument() {
    run_child("drop_after_invalid_argument", TWO_DEVICES);
}

#[test]
fn arena_cuda_double_is_symmetric_across_devices() {
    run_child("device_arena", TWO_DEVICES);
}

#[test]
fn arena_cuda_double_holds_its_executor_until_dropped() {
    run_child("arena_holds_executor", TWO_DEVICES);
}

#[test]
fn scratch_cuda_double_past_the_limit_is_out_of_memory() {
    run_child("scratch", TWO_DEVICES);
}

#[test]
fn executor_cuda_double_sticky_fault_lasts_until_dropped() {
    run_child("sticky_fault", &format!("{TWO_DEVICES}\nfault sticky=1"));
}

#[test]
fn executor_cuda_double_bad_devices_answer_statuses() {
    run_child("bad_devices", TWO_DEVICES);
}

#[test]
fn order_stream_cuda_double_returns_before_the_stream_drains() {
    run_child("order_stream", TWO_DEVICES);
}

/// The child's half: does nothing unless a parent above selected a scenario.
#[test]
#[ignore = "the child role of the VRAM tests against the CUDA driver test double, run in a process of its own"]
fn vram_cuda_double_child_runs_a_scenario() {
    let Ok(scenario) = std::env::var(CHILD_ROLE) else { return };
    within(Duration::from_secs(120), {
        let scenario = scenario.clone();
        move || match scenario.as_str() {
            "streams" => streams(),
            "own_work" => own_work(),
            "round_trip" => round_trip(),
            "deferred_copies" => deferred_copies(),
            "failures" => failures(),
            "drop_after_invalid_argument" => drop_after_invalid_argument(),
            "device_arena" => device_arena(),
            "arena_holds_executor" => arena_holds_executor(),
            "scratch" => scratch(),
            "sticky_fault" => sticky_fault(),
            "bad_devices" => bad_devices(),
            "order_stream" => order_stream(),
            other => panic!("unknown scenario {other}"),
        }
    });
    println!("scenario {scenario}: passed");
}

// ---- helpers ----

/// A VRAM executor over `devices` (empty: all), without pins, with `scratch_limit`.
fn vram(devices: &[i32], scratch_limit: usize) -> Executor {
    // SAFETY: no borrowed streams.
    unsafe { Executor::for_vram(devices, None, &[], None, &[], scratch_limit, 0) }
        .unwrap_or_else(|error| panic!("for_vram({devices:?}): {error}"))
}

fn vram_error(devices: &[i32]) -> Error {
    // SAFETY: no borrowed streams.
    unsafe { Executor::for_vram(devices, None, &[], None, &[], 0, 0) }.expect_err("for_vram is refused")
}

/// A pattern where a dropped, doubled or shifted byte shows.
fn pattern(bytes: usize, seed: u32) -> Vec<u8> {
    (0..bytes).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 13 ^ seed) as u8).collect()
}

fn copy_in(executor: &Executor, device: usize, device_pointer: *mut c_void, host: &[u8]) {
    // SAFETY: the scenarios hand in device memory of `device` holding at least host.len() bytes.
    unsafe { On::new(executor).copy_to_device(device, device_pointer, host) }
        .unwrap_or_else(|error| panic!("copy_to_device: {error}"));
}

fn copy_out(executor: &Executor, device: usize, device_pointer: *const c_void, bytes: usize) -> Vec<u8> {
    let mut host = vec![0u8; bytes];
    // SAFETY: as in copy_in.
    unsafe { On::new(executor).copy_to_host(&mut host, device, device_pointer) }
        .unwrap_or_else(|error| panic!("copy_to_host: {error}"));
    host
}

/// Progress reports, in the order they came.
#[derive(Clone, Default)]
struct Reports(Arc<Mutex<Vec<(usize, usize)>>>);

impl Reports {
    fn callback(&self) -> impl Fn(usize, usize) + Send + Sync + 'static {
        let reports = self.0.clone();
        move |done, total| reports.lock().unwrap().push((done, total))
    }

    /// Asserts the reports are non-decreasing, of one total, and end at `total` of `total`.
    fn assert_complete(&self, total: usize) -> usize {
        let reports = self.0.lock().unwrap();
        assert!(!reports.is_empty(), "progress was reported");
        assert!(reports.windows(2).all(|pair| pair[0].0 <= pair[1].0), "non-decreasing: {reports:?}");
        assert!(reports.iter().all(|&(done, all)| all == total && done <= total), "{reports:?}");
        assert_eq!(reports.last(), Some(&(total, total)));
        reports.len()
    }
}

/// The calling thread's `/proc/self/task/<tid>` directory.
fn this_task() -> PathBuf {
    let link = std::fs::read_link("/proc/thread-self").expect("Linux names the calling thread in /proc");
    PathBuf::from("/proc/self/task").join(link.file_name().expect("PID/task/TID"))
}

fn task_count() -> usize {
    std::fs::read_dir("/proc/self/task").expect("/proc/self/task").count()
}

/// Waits up to `bound` for `done` to hold.
fn eventually(bound: Duration, what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < bound, "{what}: not after {bound:?}");
        thread::sleep(Duration::from_millis(10));
    }
}

// ---- scenarios ----

fn streams() {
    assert_eq!(gpu_devices(&mut []).unwrap(), 3);
    let executor = vram(&[], 0);
    println!("{executor:?}");
    assert_eq!(executor.devices(), 3);
    assert_eq!(executor.gpu_class(), Some(GPUClass::NvidiaHopper), "the double's default device is an H100");
    let threads = executor.threads();
    assert!(threads >= 1);

    let seen = Mutex::new(Vec::new());
    let reports = Reports::default();
    On::new(&executor)
        .progress(reports.callback())
        .for_devices(|slot| {
            println!("{slot:?}");
            assert!(slot.thread() < threads, "{slot:?}");
            assert_eq!(slot.vendor(), Some(GPUVendor::Nvidia));
            assert!(!slot.native_context().is_null() && !slot.stream().is_null(), "{slot:?}");
            let entry = (slot.device(), slot.ordinal(), slot.native_device());
            seen.lock().unwrap().push((entry, slot.native_context() as usize, slot.stream() as usize));
            Ok(())
        })
        .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    let devices: Vec<_> = seen.iter().map(|&(entry, _, _)| entry).collect();
    assert_eq!(devices, [(0, 0, 0), (1, 1, 1), (2, 2, 2)], "every device once, in gpu_devices order");
    let streams: HashSet<usize> = seen.iter().map(|&(_, _, stream)| stream).collect();
    assert_eq!(streams.len(), 3, "one stream per device");
    let contexts: HashSet<usize> = seen.iter().map(|&(_, context, _)| context).collect();
    assert_eq!(contexts.len(), 3, "one primary context per device");
    reports.assert_complete(3);

    // The same streams on every call: they are the executor's.
    let again = Mutex::new(HashSet::new());
    On::new(&executor)
        .for_devices(|slot| {
            again.lock().unwrap().insert(slot.stream() as usize);
            Ok(())
        })
        .unwrap();
    assert_eq!(again.into_inner().unwrap(), streams);

    // Deferred, with progress: the closure and the reports outlive the submitting frame.
    let reports = Reports::default();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let mut call = On::new(&executor)
        .deferred()
        .progress(reports.callback())
        .for_devices(move |slot| {
            assert!(slot.device() < 3);
            counter.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    call.wait(Some(Duration::from_secs(30))).unwrap();
    assert_eq!(call.progress(), (3, 3));
    assert_eq!(count.load(Ordering::Relaxed), 3);
    reports.assert_complete(3);
    drop(executor);

    // A subset, in the order named: slot.device() indexes the executor's list.
    let executor = vram(&[2, 0], 0);
    assert_eq!(executor.devices(), 2);
    let seen = Mutex::new(Vec::new());
    On::new(&executor)
        .for_devices(|slot| {
            seen.lock().unwrap().push((slot.device(), slot.ordinal()));
            Ok(())
        })
        .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, [(0, 2), (1, 0)]);

    // The RAM verbs run on a VRAM executor's host decoders.
    let sum = AtomicUsize::new(0);
    On::new(&executor)
        .for_n(100, |task, _| {
            sum.fetch_add(task, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(sum.into_inner(), 4950);
    executor.drain(Mood::Parked).unwrap();
}

/// The double's own entry points, found in the very library uform loaded: a device function
/// enqueues work of its own on the executor's stream through them, as it would its kernels.
struct Driver {
    memset: unsafe extern "C" fn(u64, u8, usize, *mut c_void) -> i32,
    launch_host_function: unsafe extern "C" fn(*mut c_void, unsafe extern "C" fn(*mut c_void), *mut c_void) -> i32,
}

extern "C" {
    fn dlopen(filename: *const std::os::raw::c_char, flags: i32) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const std::os::raw::c_char) -> *mut c_void;
}

impl Driver {
    fn open() -> Driver {
        let path = std::env::var("UFORM_CUDA_LIBRARY").expect("the parent names the double");
        let path = std::ffi::CString::new(path).unwrap();
        const RTLD_NOW: i32 = 2;
        // SAFETY: a NUL-terminated path; the double is loaded already, so this only counts in.
        let handle = unsafe { dlopen(path.as_ptr(), RTLD_NOW) };
        assert!(!handle.is_null(), "dlopen of the double");
        let symbol = |name: &std::ffi::CStr| {
            // SAFETY: a live handle and a NUL-terminated name.
            let address = unsafe { dlsym(handle, name.as_ptr()) };
            assert!(!address.is_null(), "the double exports {name:?}");
            address
        };
        // SAFETY: the double's exports have the CUDA driver's signatures for these names.
        unsafe {
            Driver {
                memset: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(u64, u8, usize, *mut c_void) -> i32>(
                    symbol(c"cuMemsetD8Async"),
                ),
                launch_host_function: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*mut c_void, unsafe extern "C" fn(*mut c_void), *mut c_void) -> i32,
                >(symbol(c"cuLaunchHostFunc")),
            }
        }
    }
}

/// A host function queued on a stream: sleeps, then counts itself done.
unsafe extern "C" fn slow_host_function(done: *mut c_void) {
    thread::sleep(Duration::from_millis(100));
    // SAFETY: the scenario hands in a static counter.
    unsafe { &*done.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

/// Ordering a stream after a deferred device function whose queued work takes 100 ms: the
/// host waits for the function to have queued it, not for the stream to run it; refusals.
fn order_stream() {
    static DONE: AtomicUsize = AtomicUsize::new(0);
    let driver = Driver::open();
    let executor = vram(&[], 0);
    let mut call = On::new(&executor)
        .deferred()
        .for_devices(move |slot| {
            // SAFETY: the static outlives the call; the stream is the executor's.
            let status = unsafe {
                let done = std::ptr::addr_of!(DONE).cast_mut().cast();
                (driver.launch_host_function)(slot.stream(), slow_host_function, done)
            };
            assert_eq!(status, 0);
            Ok(())
        })
        .unwrap();
    // SAFETY: a null stream is the device's legacy default stream.
    unsafe { executor.order_stream(1, std::ptr::null_mut()) }.unwrap();
    assert!(DONE.load(Ordering::SeqCst) < 2, "ordering returned before both streams ran the 100 ms work");
    call.wait(Some(Duration::from_secs(30))).unwrap();
    assert_eq!(DONE.load(Ordering::SeqCst), 2);
    // SAFETY: as above.
    let error = unsafe { executor.order_stream(2, std::ptr::null_mut()) }.expect_err("device 2 of 2");
    assert_eq!(error.status(), Status::InvalidArgument);
    let ram = Executor::for_ram(&[], None, 1, 0).unwrap();
    // SAFETY: as above.
    let error = unsafe { ram.order_stream(0, std::ptr::null_mut()) }.expect_err("a RAM executor has no devices");
    assert_eq!(error.status(), Status::InvalidArgument);
}

fn own_work() {
    static DONE: AtomicUsize = AtomicUsize::new(0);
    const BYTES: usize = 1 << 20;
    let driver = Driver::open();
    let executor = vram(&[], 0);
    let scratches = Mutex::new(Vec::new());
    On::new(&executor)
        .for_devices(|slot| {
            let scratch = slot.device_scratch(BYTES)?;
            // The device's context is current on this thread, and the stream is the executor's.
            // SAFETY: BYTES of this device's scratch, on its stream; the static outlives the call.
            unsafe {
                assert_eq!((driver.memset)(scratch as u64, 0xC0 + slot.device() as u8, BYTES, slot.stream()), 0);
                let done = std::ptr::addr_of!(DONE).cast_mut().cast();
                assert_eq!((driver.launch_host_function)(slot.stream(), slow_host_function, done), 0);
            }
            scratches.lock().unwrap().push((slot.device(), scratch as usize));
            Ok(())
        })
        .unwrap();
    assert_eq!(DONE.load(Ordering::SeqCst), 2, "the call returned only once both streams ran what was queued");
    for (device, scratch) in scratches.into_inner().unwrap() {
        let memory = copy_out(&executor, device, scratch as *const c_void, BYTES);
        assert!(memory.iter().all(|&byte| byte == 0xC0 + device as u8), "device {device}'s memset ran");
    }

    // Deferred too: the handle finishes only once the streams have drained.
    let mut call = On::new(&executor)
        .deferred()
        .for_devices(move |slot| {
            // SAFETY: as above.
            let status = unsafe {
                let done = std::ptr::addr_of!(DONE).cast_mut().cast();
                (driver.launch_host_function)(slot.stream(), slow_host_function, done)
            };
            assert_eq!(status, 0);
            Ok(())
        })
        .unwrap();
    call.wait(Some(Duration::from_secs(30))).unwrap();
    assert_eq!(DONE.load(Ordering::SeqCst), 4);

    // A function failing after it queued work: the call fails, and still drains its streams.
    let error = On::new(&executor)
        .for_devices(|slot| {
            // SAFETY: as above.
            let status = unsafe {
                let done = std::ptr::addr_of!(DONE).cast_mut().cast();
                (driver.launch_host_function)(slot.stream(), slow_host_function, done)
            };
            assert_eq!(status, 0);
            Err(Error::new(Status::Mismatch, "queued, then refused"))
        })
        .unwrap_err();
    assert_eq!(error.status(), Status::Mismatch);
    assert_eq!(DONE.load(Ordering::SeqCst), 6, "the failed call's queued work ran before it returned");
}

fn round_trip() {
    const BYTES: usize = (20 << 20) + 12_345;
    let executor = vram(&[], 0);
    let arena = Arena::new_in(&executor, 48 << 20).unwrap();
    assert_eq!(arena.devices(), 2);
    let on_zero = arena.allocate(BYTES, 256).unwrap().as_ptr().cast::<c_void>();
    let on_one = arena.device_pointer(1, on_zero).unwrap();

    let first = pattern(BYTES, 1);
    let second = pattern(BYTES, 2);
    let reports = Reports::default();
    // SAFETY: BYTES of device 0's reservation at `on_zero`, which the arena keeps.
    unsafe { On::new(&executor).progress(reports.callback()).copy_to_device(0, on_zero, &first) }.unwrap();
    let reported = reports.assert_complete(BYTES);
    assert!(reported >= 2, "a 20 MiB staged copy reports more than once, not {reported}");
    copy_in(&executor, 1, on_one, &second);

    let reports = Reports::default();
    let mut back = vec![0u8; BYTES];
    // SAFETY: as above.
    unsafe { On::new(&executor).progress(reports.callback()).copy_to_host(&mut back, 0, on_zero) }.unwrap();
    reports.assert_complete(BYTES);
    assert!(back == first, "device 0 holds what was copied to it");
    assert!(copy_out(&executor, 1, on_one, BYTES) == second, "device 1's reservation is its own");

    // A part at an offset, and nothing at all.
    let middle = pattern(1000, 3);
    let inside = on_zero.cast::<u8>().wrapping_add(4096).cast::<c_void>();
    copy_in(&executor, 0, inside, &middle);
    let mut expected = first.clone();
    expected[4096..5096].copy_from_slice(&middle);
    assert!(copy_out(&executor, 0, on_zero, BYTES) == expected);
    copy_in(&executor, 0, on_zero, &[]);
    assert!(copy_out(&executor, 0, on_zero, 0).is_empty());
    executor.drain(Mood::Parked).unwrap();
}

fn deferred_copies() {
    const BYTES: usize = (20 << 20) + 7;
    let executor = vram(&[], 0);
    let arena = Arena::new_in(&executor, 24 << 20).unwrap();
    let target = arena.allocate(BYTES, 0).unwrap().as_ptr().cast::<c_void>();
    let data = pattern(BYTES, 7);

    let reports = Reports::default();
    let counted = Arc::new(AtomicUsize::new(0));
    let counter = counted.clone();
    let progress = reports.callback();
    // SAFETY: BYTES of device 0's reservation, kept by the arena, used by nothing else.
    let mut copy = unsafe {
        On::new(&executor)
            .deferred()
            .progress(move |done, total| {
                counter.store(done, Ordering::Relaxed);
                progress(done, total);
            })
            .copy_to_device(0, target, data.clone())
    }
    .unwrap();
    copy.wait(Some(Duration::from_secs(60))).unwrap();
    assert!(copy.poll());
    assert_eq!(copy.progress(), (BYTES, BYTES), "progress counts bytes");
    assert_eq!(counted.load(Ordering::Relaxed), BYTES);
    reports.assert_complete(BYTES);
    println!("{copy:?}");
    let given_back = copy.into_host().unwrap();
    assert!(given_back == data, "the buffer comes back as it went");

    // Into the host: the buffer comes back filled, without waiting first.
    // SAFETY: as above.
    let copy = unsafe { On::new(&executor).deferred().copy_to_host(vec![0; BYTES], 0, target) }.unwrap();
    let filled = copy.into_host().unwrap();
    assert!(filled == data, "the deferred copy filled the buffer");

    // A handle dropped unwaited waits for its copy before freeing the buffer.
    let other = pattern(BYTES, 8);
    // SAFETY: as above.
    drop(unsafe { On::new(&executor).deferred().copy_to_device(0, target, other.clone()) }.unwrap());
    assert!(copy_out(&executor, 0, target, BYTES) == other);

    // Queued behind each other, in order, from another thread.
    let first = pattern(BYTES, 9);
    // SAFETY: as above; the two copies run one after the other.
    let (to_device, to_host) = unsafe {
        let on = On::new(&executor).deferred();
        (on.copy_to_device(0, target, first.clone()).unwrap(), on.copy_to_host(vec![1; BYTES], 0, target).unwrap())
    };
    let filled = thread::spawn(move || {
        drop(to_device);
        to_host.into_host().unwrap()
    })
    .join()
    .unwrap();
    assert!(filled == first, "the copy to the host ran after the copy to the device");

    // A failing deferred copy answers when waited for, and its buffer still comes back.
    let mut host_memory = vec![0u8; 64];
    // SAFETY: a host address is no device memory: the double refuses the range, writing nothing.
    let mut refused =
        unsafe { On::new(&executor).deferred().copy_to_device(0, host_memory.as_mut_ptr().cast(), vec![5; 64]) }
            .unwrap();
    let error = refused.wait(Some(Duration::from_secs(30))).unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    assert_eq!(refused.into_host().unwrap(), vec![5; 64]);
    assert_eq!(host_memory, vec![0; 64]);
}

fn failures() {
    let executor = vram(&[], 0);
    let ran = AtomicUsize::new(0);
    let error = On::new(&executor)
        .for_devices(|slot| {
            ran.fetch_add(1, Ordering::Relaxed);
            if slot.device() == 1 {
                return Err(Error::new(Status::NotFound, "device 1 has no such tensor"));
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(error, Error::new(Status::NotFound, "device 1 has no such tensor"), "the closure's own error");
    assert_eq!(ran.load(Ordering::Relaxed), 2, "the other device's function still ran");

    let error = On::new(&executor)
        .for_devices(|slot| {
            if slot.device() == 0 {
                panic!("device zero panicked");
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed, "{error}");
    assert!(error.message().contains("device zero panicked"), "{error}");

    // An error claiming success still fails the call.
    let error = On::new(&executor).for_devices(|_| Err(Error::new(Status::Ok, "not really"))).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed, "{error}");
    assert!(error.message().contains("not really"), "{error}");

    // A panicking progress callback fails a call that otherwise succeeded.
    let error = On::new(&executor).progress(|_, _| panic!("progress broke")).for_devices(|_| Ok(())).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed, "{error}");
    assert!(error.message().contains("progress broke"), "{error}");

    // Deferred: the failures surface when waited for.
    let mut call =
        On::new(&executor).deferred().for_devices(|_| Err(Error::new(Status::Mismatch, "shapes disagree"))).unwrap();
    assert_eq!(call.wait(Some(Duration::from_secs(30))).unwrap_err(), Error::new(Status::Mismatch, "shapes disagree"));
    let mut call = On::new(&executor).deferred().for_devices(|_| panic!("deferred panic")).unwrap();
    let error = call.wait(Some(Duration::from_secs(30))).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed, "{error}");
    assert!(error.message().contains("deferred panic"), "{error}");

    // The executor is unharmed.
    let count = AtomicUsize::new(0);
    On::new(&executor)
        .for_devices(|_| {
            count.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    assert_eq!(count.into_inner(), 2);
    executor.drain(Mood::Parked).unwrap();
}

/// A finished call answers its own status from every wait, INVALID_ARGUMENT included: dropping
/// its handle still frees the closures there and then, not later on another thread.
fn drop_after_invalid_argument() {
    let executor = vram(&[], 0);
    for status in [Status::InvalidArgument, Status::Mismatch] {
        let token = Arc::new(());
        let held = Arc::clone(&token);
        let mut call = On::new(&executor)
            .deferred()
            .for_devices(move |_| {
                let _ = &held;
                Err(Error::new(status, "refused"))
            })
            .unwrap();
        assert_eq!(call.wait(Some(Duration::from_secs(30))).unwrap_err(), Error::new(status, "refused"));
        assert!(call.poll(), "the call finished");
        drop(call);
        assert_eq!(Arc::strong_count(&token), 1, "{status:?}: dropping the finished call freed its closure");
    }
    executor.drain(Mood::Parked).unwrap();
}

fn device_arena() {
    let executor = vram(&[], 0);
    let arena = Arena::new_in(&executor, 1 << 20).unwrap();
    println!("{arena:?}");
    assert_eq!(arena.devices(), 2);
    assert_eq!(arena.usage(), (0, 1 << 20));

    let first = arena.allocate(1000, 0).unwrap().as_ptr().cast::<c_void>();
    let second = arena.allocate(4096, 256).unwrap().as_ptr().cast::<c_void>();
    assert_eq!(first as usize % 64, 0);
    assert_eq!(second as usize % 256, 0);
    assert_eq!(arena.usage().0, (second as usize - first as usize) + 4096);

    // Device 0's pointers are their own twins; device 1's keep the offsets.
    assert_eq!(arena.device_pointer(0, first).unwrap(), first);
    let first_on_one = arena.device_pointer(1, first).unwrap();
    let second_on_one = arena.device_pointer(1, second).unwrap();
    assert_ne!(first_on_one, first);
    assert_eq!(second_on_one as usize - first_on_one as usize, second as usize - first as usize);
    assert_eq!(second_on_one as usize % 256, 0, "256-byte alignment holds on every device");

    // Out of range, outside, null.
    for (device, pointer) in [
        (2, first.cast_const()),
        (usize::MAX, first),
        (0, std::ptr::null()),
        (1, (first as usize + (1 << 20)) as *const c_void),
        (1, (first as usize - 1) as *const c_void),
    ] {
        let error = arena.device_pointer(device, pointer).unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "device {device}, {pointer:?}: {error}");
    }

    // Copies into either twin land in that device's reservation only.
    let zero = pattern(4096, 10);
    let one = pattern(4096, 11);
    copy_in(&executor, 0, second, &zero);
    copy_in(&executor, 1, second_on_one, &one);
    assert!(copy_out(&executor, 0, second, 4096) == zero);
    assert!(copy_out(&executor, 1, second_on_one, 4096) == one);

    // Full: out of memory, nothing taken.
    let (used, capacity) = arena.usage();
    assert_eq!(arena.allocate(capacity, 0).unwrap_err().status(), Status::OutOfMemory);
    assert_eq!(arena.usage(), (used, capacity));
    // More than a device holds: out of memory, and nothing else changes.
    let error = Arena::new_in(&executor, 2 << 30).unwrap_err();
    assert_eq!(error.status(), Status::OutOfMemory, "{error}");
    assert!(copy_out(&executor, 1, second_on_one, 4096) == one);
    let again = Arena::new_in(&executor, 256 << 20).unwrap();
    assert_eq!(again.devices(), 2);
    drop(again);

    // Allocation is shared between threads.
    let arena = Arc::new(arena);
    let taken: Vec<usize> = (0..4)
        .map(|_| {
            let arena = arena.clone();
            thread::spawn(move || arena.allocate(256, 256).unwrap().as_ptr() as usize)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .collect();
    assert_eq!(taken.iter().collect::<HashSet<_>>().len(), 4);
}

fn arena_holds_executor() {
    let baseline = task_count();
    let executor = vram(&[], 0);
    // The executor's own host threads, as a deferred call finds them.
    let tasks = Arc::new(Mutex::new(HashSet::new()));
    let record = tasks.clone();
    let mut call = On::new(&executor)
        .deferred()
        .for_threads(move |_| {
            record.lock().unwrap().insert(this_task());
        })
        .unwrap();
    call.wait(Some(Duration::from_secs(30))).unwrap();
    drop(call);
    let tasks: Vec<PathBuf> = tasks.lock().unwrap().iter().cloned().collect();
    assert!(!tasks.is_empty());
    let running = task_count();
    assert!(running > baseline, "the executor runs threads of its own ({running} vs {baseline})");

    let arena = Arena::new_in(&executor, 8 << 20).unwrap();
    let pointer = arena.allocate(4096, 0).unwrap().as_ptr().cast::<c_void>();
    let data = pattern(4096, 12);
    copy_in(&executor, 1, arena.device_pointer(1, pointer).unwrap(), &data);
    let second = Arena::new_in(&executor, 1 << 20).unwrap();

    // Dropping the executor drains it and returns, but the arenas hold it open.
    drop(executor);
    thread::sleep(Duration::from_millis(100));
    for task in &tasks {
        assert!(task.exists(), "{task:?} ended while device arenas still hold the executor");
    }
    // The arena still allocates and names its twins.
    let later = arena.allocate(4096, 256).unwrap().as_ptr().cast::<c_void>();
    assert!(arena.device_pointer(1, later).is_ok());
    drop(second);
    for task in &tasks {
        assert!(task.exists(), "{task:?} ended while one device arena still holds the executor");
    }

    // The last arena closes it, on whichever thread drops it.
    thread::spawn(move || drop(arena)).join().unwrap();
    eventually(Duration::from_secs(20), "the executor's threads end", || tasks.iter().all(|task| !task.exists()));
    eventually(Duration::from_secs(20), "every thread the executor started ends", || task_count() <= baseline);

    // The devices are free for a new executor.
    let executor = vram(&[], 0);
    let arena = Arena::new_in(&executor, 1 << 20).unwrap();
    let pointer = arena.allocate(64, 0).unwrap().as_ptr().cast::<c_void>();
    copy_in(&executor, 0, pointer, &[9; 64]);
    assert_eq!(copy_out(&executor, 0, pointer, 64), vec![9; 64]);
    // Dropped the other way round, as usual.
    drop(arena);
    drop(executor);
    eventually(Duration::from_secs(20), "the second executor's threads end", || task_count() <= baseline);
}

fn scratch() {
    const LIMIT: usize = 4 << 20;
    let executor = vram(&[], LIMIT);
    let pointers = Mutex::new(Vec::new());
    On::new(&executor)
        .for_devices(|slot| {
            let scratch = slot.device_scratch(1 << 20)?;
            assert!(!scratch.is_null());
            assert_eq!(scratch as usize % 256, 0);
            // Past the limit: out of memory, and the earlier buffer stays.
            let error = slot.device_scratch(LIMIT + 1).unwrap_err();
            assert_eq!(error.status(), Status::OutOfMemory, "{error}");
            assert_eq!(slot.device_scratch(1000)?, scratch, "a smaller request reuses the buffer");

            // Pinned staging is host memory the function may fill.
            let staging = slot.staging(64 << 10)?;
            // SAFETY: 64 KiB of this device's staging, used by nothing else during this function.
            let staging = unsafe { std::slice::from_raw_parts_mut(staging.as_ptr(), 64 << 10) };
            staging.fill(slot.device() as u8 + 1);
            assert!(staging.iter().all(|&byte| byte == slot.device() as u8 + 1));
            pointers.lock().unwrap().push((slot.device(), scratch as usize));
            Ok(())
        })
        .unwrap();
    let mut pointers = pointers.into_inner().unwrap();
    pointers.sort();
    assert_eq!(pointers.len(), 2);
    assert_ne!(pointers[0].1, pointers[1].1, "each device has its own scratch");

    // Scratch is device memory of its device, kept between calls.
    for &(device, scratch) in &pointers {
        let data = pattern(1 << 20, device as u32);
        copy_in(&executor, device, scratch as *mut c_void, &data);
        assert!(copy_out(&executor, device, scratch as *const c_void, 1 << 20) == data);
    }

    // A closure propagating the refusal fails the call with it.
    let error = On::new(&executor).for_devices(|slot| slot.device_scratch(LIMIT * 2).map(drop)).unwrap_err();
    assert_eq!(error.status(), Status::OutOfMemory, "{error}");
    // Up to the limit still grows.
    On::new(&executor)
        .for_devices(|slot| {
            let grown = slot.device_scratch(LIMIT)?;
            assert!(!grown.is_null());
            Ok(())
        })
        .unwrap();
    // Deferred: the same refusal when waited for.
    let mut call = On::new(&executor).deferred().for_devices(|slot| slot.device_scratch(LIMIT + 1).map(drop)).unwrap();
    assert_eq!(call.wait(Some(Duration::from_secs(30))).unwrap_err().status(), Status::OutOfMemory);
    executor.drain(Mood::Parked).unwrap();
}

fn sticky_fault() {
    let executor = vram(&[], 0);
    let arena = Arena::new_in(&executor, 1 << 20).unwrap();
    let pointer = arena.allocate(4096, 0).unwrap().as_ptr().cast::<c_void>();
    // The first stream operation of the process faults device 0's context when it runs.
    // SAFETY: 4096 bytes of device 0's reservation.
    let error = unsafe { On::new(&executor).copy_to_device(0, pointer, &[1; 4096]) }.unwrap_err();
    assert_eq!(error.status(), Status::DeviceFault, "{error}");
    assert!(error.message().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{error}");

    // From then on every call, drain and new arena answers the fault.
    let error = On::new(&executor).for_devices(|_| Ok(())).unwrap_err();
    assert_eq!(error.status(), Status::DeviceFault, "{error}");
    assert!(error.message().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "the first fault is named: {error}");
    let twin = arena.device_pointer(1, pointer).unwrap();
    // SAFETY: 4096 bytes of device 1's reservation.
    let error = unsafe { On::new(&executor).copy_to_device(1, twin, &[2; 4096]) }.unwrap_err();
    assert_eq!(error.status(), Status::DeviceFault, "the healthy device's copy too: {error}");
    let mut host = [0u8; 16];
    // SAFETY: as above.
    let error = unsafe { On::new(&executor).copy_to_host(&mut host, 1, twin) }.unwrap_err();
    assert_eq!(error.status(), Status::DeviceFault, "{error}");
    assert_eq!(executor.drain(Mood::Parked).unwrap_err().status(), Status::DeviceFault);
    assert_eq!(Arena::new_in(&executor, 4096).unwrap_err().status(), Status::DeviceFault);
    let mut call = On::new(&executor).deferred().for_devices(|_| Ok(())).unwrap();
    assert_eq!(call.wait(Some(Duration::from_secs(30))).unwrap_err().status(), Status::DeviceFault);
    let ran = AtomicUsize::new(0);
    let error = On::new(&executor)
        .for_n(10, |_, _| {
            ran.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap_err();
    assert_eq!(error.status(), Status::DeviceFault, "even host verbs: {error}");
    assert_eq!(ran.into_inner(), 0);

    // Dropping still releases everything, the faulted device included.
    drop(arena);
    drop(executor);
    // The double keeps device 0's context faulted until the process ends; device 1 is healthy.
    let executor = vram(&[1], 0);
    let arena = Arena::new_in(&executor, 1 << 20).unwrap();
    let pointer = arena.allocate(4096, 0).unwrap().as_ptr().cast::<c_void>();
    let data = pattern(4096, 13);
    copy_in(&executor, 0, pointer, &data);
    assert!(copy_out(&executor, 0, pointer, 4096) == data);
    executor.drain(Mood::Parked).unwrap();
}

fn bad_devices() {
    assert_eq!(vram_error(&[0, 0]).status(), Status::InvalidArgument);
    assert_eq!(vram_error(&[1, 0, 1]).status(), Status::InvalidArgument);
    assert_eq!(vram_error(&[2]).status(), Status::NotFound);
    assert_eq!(vram_error(&[0, 7]).status(), Status::NotFound);
    assert_eq!(vram_error(&[-1]).status(), Status::NotFound);
    let stream = std::ptr::NonNull::<u8>::dangling().as_ptr().cast::<c_void>();
    // SAFETY: refused before the stream is looked at: borrowing is not designed yet.
    let borrowed = unsafe { Executor::for_vram(&[0], None, &[], None, &[stream], 0, 0) }.unwrap_err();
    assert_eq!(borrowed.status(), Status::Unsupported);
    // SAFETY: no borrowed streams.
    let pinned = unsafe { Executor::for_vram(&[], Some(GPUClass::AmdCdna3), &[], None, &[], 0, 0) }.unwrap_err();
    assert_eq!(pinned.status(), Status::Unsupported, "{pinned}");
    // SAFETY: as above.
    let floor = unsafe { Executor::for_vram(&[], Some(GPUClass::NvidiaAmpere), &[], None, &[], 0, 0) }.unwrap();
    assert_eq!(floor.gpu_class(), Some(GPUClass::NvidiaAmpere), "a Hopper runs the Ampere floor");
    drop(floor);

    let executor = vram(&[], 0);
    let arena = Arena::new_in(&executor, 1 << 20).unwrap();
    let pointer = arena.allocate(64, 0).unwrap().as_ptr().cast::<c_void>();
    for device in [2, usize::MAX] {
        // SAFETY: refused before anything is copied: no such device.
        let error = unsafe { On::new(&executor).copy_to_device(device, pointer, &[1; 64]) }.unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        let mut host = [0u8; 64];
        // SAFETY: as above.
        let error = unsafe { On::new(&executor).copy_to_host(&mut host, device, pointer) }.unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        // SAFETY: as above.
        let error =
            unsafe { On::new(&executor).deferred().copy_to_host(vec![0; 64], device, pointer) }.map(drop).unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    }
    // SAFETY: refused before anything is copied: a null device pointer.
    let error = unsafe { On::new(&executor).copy_to_device(0, std::ptr::null_mut(), &[1; 64]) }.unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    // A range past the allocation's end is refused by the driver, and nothing is written.
    let past_end = pointer.cast::<u8>().wrapping_add((1 << 20) - 32).cast::<c_void>();
    // SAFETY: the double checks every device range against its allocations.
    let error = unsafe { On::new(&executor).copy_to_device(0, past_end, &[1; 64]) }.unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    assert_eq!(arena.device_pointer(2, pointer).unwrap_err().status(), Status::InvalidArgument);
    // The executor is unharmed by refusals.
    copy_in(&executor, 1, arena.device_pointer(1, pointer).unwrap(), &[4; 64]);
    assert_eq!(copy_out(&executor, 1, arena.device_pointer(1, pointer).unwrap(), 64), vec![4; 64]);
}
