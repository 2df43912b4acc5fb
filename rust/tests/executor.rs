//! Executors and their verbs over the real libuform: RAM executors, the null executor,
//! deferred calls, progress, panics, contention and bad inputs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use uform::*;

fn executor(threads: usize) -> Executor {
    Executor::for_ram(&[], None, threads, 0).expect("a RAM executor")
}

/// Spins until `flag` is set, failing the test instead of hanging past a generous bound.
fn await_flag(flag: &AtomicBool) {
    let start = Instant::now();
    while !flag.load(Ordering::Acquire) {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for a flag");
        thread::yield_now();
    }
}

#[test]
fn for_ram_threads_and_class() {
    let default = Executor::for_ram(&[], None, 0, 0).unwrap();
    assert!(default.threads() >= 1);
    let cores = thread::available_parallelism().map_or(1, |cores| cores.get());
    assert!(default.threads() <= cores, "zero threads takes at most the cores this process may use");
    assert_eq!(executor(3).threads(), 3, "more threads than cores is allowed");
    let serial = Executor::for_ram(&[], Some(CPUClass::Serial), 0, 0).unwrap();
    assert_eq!(serial.cpu_class(), Some(CPUClass::Serial));
    assert!(default.cpu_class().is_some());
    let node_zero = Executor::for_ram(&[0], None, 1, 16).unwrap();
    assert_eq!(node_zero.threads(), 1);
    assert!(format!("{default:?}").contains("threads"));
}

#[test]
fn bad_inputs_answer_statuses() {
    let status = |result: Result<Executor>| result.unwrap_err().status();
    assert_eq!(status(Executor::for_ram(&[9999], None, 1, 0)), Status::NotFound, "unknown NUMA node");
    assert_eq!(status(Executor::for_ram(&[0, 0], None, 1, 0)), Status::InvalidArgument, "duplicate domain");
    assert_eq!(status(Executor::for_ram(&[], None, 1_000_000, 0)), Status::InvalidArgument, "absurd thread count");
    assert_eq!(status(Executor::for_ram(&[], None, 4097, 0)), Status::InvalidArgument, "above UFORM_THREADS_MAX");
    assert_eq!(status(Executor::for_ram(&[], None, 1, 1 << 20)), Status::InvalidArgument, "absurd deferred limit");
    let error = Executor::for_ram(&[9999], None, 1, 0).unwrap_err();
    assert!(!error.message().is_empty(), "the library says which domain: {error}");
}

#[test]
fn a_class_this_cpu_cannot_run_is_unsupported() {
    let available = capabilities_available();
    let missing = [CPUClass::AppleM4, CPUClass::IntelDiamond, CPUClass::AlibabaC930, CPUClass::Wasm64Extended]
        .into_iter()
        .find(|class| !available.split(',').any(|token| token == class.to_string()))
        .expect("no machine runs every one of these");
    let error = Executor::for_ram(&[], Some(missing), 1, 0).unwrap_err();
    assert_eq!(error.status(), Status::Unsupported, "{missing}: {error}");
}

#[test]
fn on_pool_is_unsupported() {
    let mut not_a_pool = 0u64;
    // SAFETY: the library validates and refuses before it would ever touch the pool.
    let error = unsafe { Executor::on_pool(&[], None, (&mut not_a_pool as *mut u64).cast(), 0) }.unwrap_err();
    assert_eq!(error.status(), Status::Unsupported, "{error}");
    // Arguments are validated first.
    // SAFETY: as above; a null pool is refused.
    let error = unsafe { Executor::on_pool(&[], None, std::ptr::null_mut(), 0) }.unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    // SAFETY: as above.
    let error = unsafe { Executor::on_pool(&[9999], None, (&mut not_a_pool as *mut u64).cast(), 0) }.unwrap_err();
    assert_eq!(error.status(), Status::NotFound, "{error}");
}

#[test]
fn for_vram_without_gpus_is_not_found() {
    if gpu_devices(&mut []).unwrap() > 0 {
        return;
    }
    // SAFETY: no streams are borrowed.
    let error = unsafe { Executor::for_vram(&[], None, &[], None, &[], 0, 0) }.unwrap_err();
    assert_eq!(error.status(), Status::NotFound, "{error}");
    // SAFETY: as above.
    let error = unsafe { Executor::for_vram(&[0, 1], None, &[], None, &[], 0, 0) }.unwrap_err();
    assert_eq!(error.status(), Status::NotFound, "{error}");
}

#[test]
fn null_executor_runs_on_the_calling_thread() {
    let local = Executor::default();
    assert_eq!(local.threads(), 1);
    assert_eq!(format!("{local:?}"), "Executor(null)");
    let caller = thread::current().id();
    let count = AtomicUsize::new(0);
    On::new(&local)
        .for_n(10, |_, thread| {
            assert_eq!(thread, 0);
            assert_eq!(std::thread::current().id(), caller);
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 10);
    On::new(&local).for_threads(|thread| assert_eq!(thread, 0)).unwrap();
    local.drain(Mood::Spinning).unwrap();
    local.drain(Mood::Parked).unwrap();

    let shared = Arc::new(AtomicUsize::new(0));
    let counter = shared.clone();
    let mut call = On::new(&local)
        .deferred()
        .for_n(5, move |_, _| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert!(call.poll(), "the null executor's deferred calls finish at once");
    call.wait(None).unwrap();
    assert_eq!(shared.load(Ordering::Relaxed), 5);
}

#[test]
fn for_n_runs_every_task_once_in_a_static_split() {
    let executor = executor(2);
    let threads = executor.threads();
    let n = 1001;
    let owner: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(usize::MAX)).collect();
    On::new(&executor)
        .for_n(n, |task, thread| {
            assert!(thread < threads);
            assert_eq!(owner[task].swap(thread, Ordering::Relaxed), usize::MAX, "task {task} ran twice");
        })
        .unwrap();
    // Static: each thread takes one contiguous range, in thread order, the sizes within one of
    // each other. (The header says `t*n/T`; the library gives the remainder to the first
    // threads instead. Both are contiguous and balanced, which is what callers rely on.)
    let owners: Vec<usize> = owner.iter().map(|slot| slot.load(Ordering::Relaxed)).collect();
    assert!(owners.windows(2).all(|pair| pair[0] <= pair[1]), "ranges are contiguous and in thread order");
    let sizes: Vec<usize> =
        (0..threads).map(|thread| owners.iter().filter(|&&owner| owner == thread).count()).collect();
    assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "balanced: {sizes:?}");
    On::new(&executor).for_n(0, |_, _| panic!("no tasks")).unwrap();
}

#[test]
fn for_n_dynamic_runs_every_task_once() {
    let executor = executor(2);
    let hits: Vec<AtomicUsize> = (0..5000).map(|_| AtomicUsize::new(0)).collect();
    On::new(&executor)
        .for_n_dynamic(hits.len(), |task, thread| {
            assert!(thread < 2);
            hits[task].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert!(hits.iter().all(|hit| hit.load(Ordering::Relaxed) == 1));
}

#[test]
fn for_threads_runs_once_per_thread() {
    let executor = executor(3);
    let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
    On::new(&executor)
        .for_threads(|thread| {
            hits[thread].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert!(hits.iter().all(|hit| hit.load(Ordering::Relaxed) == 1));
}

#[test]
fn for_slices_cover_the_range_once() {
    let executor = executor(2);
    let n = 777;
    let slices = Mutex::new(Vec::new());
    On::new(&executor)
        .for_slices(n, |range, thread| {
            assert!(!range.is_empty());
            slices.lock().unwrap().push((range, thread));
        })
        .unwrap();
    let mut slices = slices.into_inner().unwrap();
    slices.sort_by_key(|(range, _)| range.start);
    assert!(slices.len() <= 2);
    let mut next = 0;
    for (range, thread) in slices {
        assert_eq!(range.start, next);
        assert!(range.len().abs_diff(n / 2) <= 1, "thread {thread} takes its static share: {range:?}");
        next = range.end;
    }
    assert_eq!(next, n);
}

#[test]
fn progress_reports_are_ordered_and_complete() {
    let executor = executor(2);
    let reports = Mutex::new(Vec::new());
    On::new(&executor)
        .progress(|done, total| reports.lock().unwrap().push((done, total)))
        .for_n(200, |_, _| {})
        .unwrap();
    let reports = reports.into_inner().unwrap();
    assert!(!reports.is_empty());
    assert!(reports.windows(2).all(|pair| pair[0].0 <= pair[1].0), "non-decreasing: {reports:?}");
    assert!(reports.iter().all(|&(done, total)| total == 200 && done <= 200));
    assert_eq!(*reports.last().unwrap(), (200, 200));
}

#[test]
fn a_panicking_closure_fails_the_call_and_spares_the_executor() {
    let executor = executor(2);
    let error = On::new(&executor)
        .for_n(100, |task, _| {
            if task == 42 {
                panic!("task {task} exploded");
            }
        })
        .unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert_eq!(error.message(), "task 42 exploded");

    let error = On::new(&executor).for_threads(|_| std::panic::panic_any(7u8)).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert!(error.message().contains("non-string"), "{error}");

    let error = On::new(&executor).for_slices(10, |_, _| panic!("slice")).unwrap_err();
    assert_eq!((error.status(), error.message()), (Status::CallbackFailed, "slice"));

    let error = On::new(&executor).progress(|_, _| panic!("progress")).for_n_dynamic(10, |_, _| {}).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert!(error.message().contains("progress"), "{error}");

    let count = AtomicUsize::new(0);
    On::new(&executor)
        .for_n(10, |_, _| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 10, "the executor still works");

    let error = On::new(&Executor::default()).for_n(3, |_, _| panic!("inline")).unwrap_err();
    assert_eq!((error.status(), error.message()), (Status::CallbackFailed, "inline"));
}

#[test]
fn deferred_calls_poll_wait_and_report_progress() {
    let executor = executor(2);
    let release = Arc::new(AtomicBool::new(false));
    let ran = Arc::new(AtomicUsize::new(0));
    let reports = Arc::new(Mutex::new(Vec::new()));
    let (gate, counter, log) = (release.clone(), ran.clone(), reports.clone());
    let mut call = On::new(&executor)
        .deferred()
        .progress(move |done, total| log.lock().unwrap().push((done, total)))
        .for_n(64, move |task, _| {
            if task == 0 {
                await_flag(&gate);
            }
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert!(!call.poll());
    assert_eq!(call.wait(Some(Duration::from_millis(20))).unwrap_err().status(), Status::Timeout);
    let (done, total) = call.progress();
    assert!(done < 64 && total == 64, "({done}, {total})");
    release.store(true, Ordering::Release);
    call.wait(None).unwrap();
    assert!(call.poll());
    assert_eq!(call.progress(), (64, 64));
    call.wait(Some(Duration::ZERO)).unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), 64);
    assert_eq!(*reports.lock().unwrap().last().unwrap(), (64, 64));
    assert!(format!("{call:?}").contains("finished: true"));
}

#[test]
fn deferred_verbs_of_every_kind() {
    let executor = executor(2);
    let ran = Arc::new(AtomicUsize::new(0));
    let on = On::new(&executor).deferred();
    let (a, b, c, d) = (ran.clone(), ran.clone(), ran.clone(), ran.clone());
    let mut calls = vec![
        on.for_n(10, move |_, _| {
            a.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap(),
        on.for_n_dynamic(10, move |_, _| {
            b.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap(),
        on.for_threads(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap(),
        on.for_slices(10, move |range, _| {
            d.fetch_add(range.len(), Ordering::Relaxed);
        })
        .unwrap(),
    ];
    for call in &mut calls {
        call.wait(None).unwrap();
    }
    assert_eq!(ran.load(Ordering::Relaxed), 10 + 10 + 2 + 10);
}

#[test]
fn a_deferred_panic_surfaces_when_waited_for() {
    let executor = executor(2);
    let mut call = On::new(&executor).deferred().for_n_dynamic(50, |task, _| assert_ne!(task, 13, "unlucky")).unwrap();
    let error = call.wait(None).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert!(error.message().contains("unlucky"), "{error}");
    assert_eq!(call.wait(None).unwrap_err(), error, "waiting again answers the same");
}

#[test]
fn dropping_a_deferred_handle_waits_for_its_call() {
    let executor = executor(2);
    let finished = Arc::new(AtomicBool::new(false));
    let flag = finished.clone();
    let call = On::new(&executor)
        .deferred()
        .for_threads(move |thread| {
            if thread == 0 {
                thread::sleep(Duration::from_millis(50));
                flag.store(true, Ordering::Release);
            }
        })
        .unwrap();
    drop(call);
    assert!(finished.load(Ordering::Acquire));
}

#[test]
fn a_deferred_handle_outlives_its_executor_and_moves_between_threads() {
    let executor = executor(2);
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let mut call = On::new(&executor)
        .deferred()
        .for_n(100, move |_, _| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    drop(executor); // drains: the call finishes first
    assert_eq!(ran.load(Ordering::Relaxed), 100);
    thread::spawn(move || call.wait(None)).join().unwrap().unwrap();
}

#[test]
fn a_full_deferred_table_is_contended() {
    let executor = Executor::for_ram(&[], None, 2, 1).unwrap();
    let release = Arc::new(AtomicBool::new(false));
    let gate = release.clone();
    let mut first = On::new(&executor).deferred().for_threads(move |_| await_flag(&gate)).unwrap();
    let error = On::new(&executor).deferred().for_n(1, |_, _| {}).unwrap_err();
    assert_eq!(error.status(), Status::Contended, "{error}");
    release.store(true, Ordering::Release);
    first.wait(None).unwrap();
    let mut second = On::new(&executor).deferred().for_n(1, |_, _| {}).unwrap();
    second.wait(None).unwrap();
}

/// Shares one executor between two threads, which its type forbids, to show what the C
/// library does when someone does it anyway through FFI: it refuses at once.
struct SharedAnyway<'a>(&'a Executor);
// SAFETY: only for this test: the C library answers CONTENDED rather than racing.
unsafe impl Sync for SharedAnyway<'_> {}

impl SharedAnyway<'_> {
    /// Borrowing through a method makes closures capture the wrapper, not its field.
    fn get(&self) -> &Executor {
        self.0
    }
}

#[test]
fn a_second_thread_is_contended_while_a_call_holds_the_executor() {
    let executor = executor(2);
    let shared = SharedAnyway(&executor);
    let started = AtomicBool::new(false);
    let release = AtomicBool::new(false);
    thread::scope(|scope| {
        let holder = scope.spawn(|| {
            On::new(shared.get()).for_n(2, |task, _| {
                if task == 0 {
                    started.store(true, Ordering::Release);
                    await_flag(&release);
                }
            })
        });
        await_flag(&started);
        let begun = Instant::now();
        let error = On::new(shared.get()).for_n(1, |_, _| {}).unwrap_err();
        assert_eq!(error.status(), Status::Contended, "{error}");
        assert!(begun.elapsed() < Duration::from_secs(5), "CONTENDED comes at once, without blocking");
        release.store(true, Ordering::Release);
        holder.join().unwrap().unwrap();
    });
    On::new(&executor).for_n(4, |_, _| {}).unwrap();
}

#[test]
fn drain_waits_and_sets_the_mood() {
    let executor = executor(2);
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let call = On::new(&executor)
        .deferred()
        .for_threads(move |_| {
            thread::sleep(Duration::from_millis(20));
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    executor.drain(Mood::Spinning).unwrap();
    assert_eq!(ran.load(Ordering::Relaxed), 2, "drain waited for the deferred call");
    assert!(call.poll());
    On::new(&executor).for_n(10, |_, _| {}).unwrap();
    executor.drain(Mood::Parked).unwrap();
}

#[test]
fn an_executor_moves_between_threads() {
    let executor = executor(2);
    let executor = thread::spawn(move || {
        On::new(&executor).for_n(10, |_, _| {}).unwrap();
        executor
    })
    .join()
    .unwrap();
    On::new(&executor).for_n(10, |_, _| {}).unwrap();
}

#[test]
fn many_executors_side_by_side() {
    let barrier = Barrier::new(4);
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let executor = executor(2);
                barrier.wait();
                for _ in 0..50 {
                    let sum = AtomicUsize::new(0);
                    On::new(&executor)
                        .for_n(100, |task, _| {
                            sum.fetch_add(task, Ordering::Relaxed);
                        })
                        .unwrap();
                    assert_eq!(sum.into_inner(), 4950);
                }
            });
        }
    });
}

#[test]
fn a_deferred_progress_panic_surfaces_when_waited_for() {
    let executor = executor(2);
    let mut call = On::new(&executor)
        .deferred()
        .progress(|done, _| assert!(done < 5, "progress gave up"))
        .for_n(10, |_, _| {})
        .unwrap();
    let error = call.wait(None).unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert!(error.message().contains("progress gave up"), "{error}");
}
