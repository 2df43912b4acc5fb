//! Calls that stop early: fallible closures (`try_for_n` and kin), `Deferred::cancel`, and an
//! `On`'s `CancelFlag`, over the real libuform.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use uform::*;

#[path = "../examples/cancel.rs"]
mod cancel_example;

#[test]
fn the_readme_cancel_example_runs() {
    cancel_example::main().expect("examples/cancel.rs");
}

fn executor(threads: usize) -> Executor {
    Executor::for_ram(&[], None, threads, 0).expect("a RAM executor")
}

#[derive(Debug)]
struct BadRecord(usize);

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "record {} is malformed", self.0)
    }
}

#[test]
fn a_failing_task_stops_the_call_with_its_display_text() {
    let executor = executor(2);
    let ran = AtomicUsize::new(0);
    let error = On::new(&executor)
        .try_for_n_dynamic(1_000_000, |task, _| {
            ran.fetch_add(1, Ordering::Relaxed);
            if task == 100 {
                return Err(BadRecord(task));
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert_eq!(error.message(), "record 100 is malformed");
    let ran = ran.load(Ordering::Relaxed);
    assert!(ran < 1_000_000, "the error stopped the call, yet {ran} tasks ran");
    // The executor goes on, and the success path answers Ok.
    On::new(&executor).try_for_n(10, |_, _| Ok::<(), BadRecord>(())).unwrap();
}

#[test]
fn every_try_verb_answers_its_first_error() {
    let executor = executor(2);
    let on = On::new(&executor);
    let error = on.try_for_n(8, |task, _| if task == 3 { Err("three") } else { Ok(()) }).unwrap_err();
    assert_eq!(error.message(), "three");
    let error = on.try_for_threads(|thread| if thread == 1 { Err(format!("thread {thread}")) } else { Ok(()) });
    assert_eq!(error.unwrap_err().message(), "thread 1");
    let error = on.try_for_slices(100, |range, _| if range.start == 0 { Err(BadRecord(range.end)) } else { Ok(()) });
    assert_eq!(error.unwrap_err().message(), "record 50 is malformed");
    let mut deferred = On::new(&executor)
        .deferred()
        .try_for_n(4, |task, _| if task == 2 { Err(BadRecord(2)) } else { Ok(()) })
        .unwrap();
    let error = deferred.wait(None).unwrap_err();
    assert_eq!((error.status(), error.message()), (Status::CallbackFailed, "record 2 is malformed"));
    let mut fine = On::new(&executor).deferred().try_for_threads(|_| Ok::<(), String>(())).unwrap();
    fine.wait(None).unwrap();
}

#[test]
fn a_panicking_fallible_task_still_fails_as_a_panic() {
    let executor = executor(2);
    let error = On::new(&executor).try_for_n(4, |task, _| -> Result<()> {
        assert_ne!(task, 1, "boom");
        Ok(())
    });
    let error = error.unwrap_err();
    assert_eq!(error.status(), Status::CallbackFailed);
    assert!(error.message().contains("boom"), "{}", error.message());
}

#[test]
fn cancelling_a_running_deferred_call() {
    let executor = executor(2);
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let mut call = On::new(&executor)
        .deferred()
        .for_n_dynamic(100_000, move |_, _| {
            counter.fetch_add(1, Ordering::Relaxed);
            thread::sleep(Duration::from_micros(100));
        })
        .unwrap();
    let start = Instant::now();
    while ran.load(Ordering::Relaxed) == 0 {
        assert!(start.elapsed() < Duration::from_secs(30));
        thread::yield_now();
    }
    call.cancel().unwrap();
    let error = call.wait(None).unwrap_err();
    assert_eq!(error.status(), Status::Interrupted);
    let (done, total) = call.progress();
    assert!(total == 100_000 && done < total, "{done} of {total}");
    call.cancel().unwrap(); // finished: nothing more
    drop(call);
    On::new(&executor).for_n(4, |_, _| {}).unwrap(); // still usable
}

#[test]
fn a_queued_call_cancelled_never_runs() {
    let executor = executor(2);
    let gate = Arc::new(std::sync::Barrier::new(3));
    let held = Arc::clone(&gate);
    let mut blocker = On::new(&executor).deferred().for_threads(move |_| {
        held.wait();
    });
    let blocker_call = blocker.as_mut().unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let mut queued = On::new(&executor)
        .deferred()
        .for_n(50, move |_, _| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    queued.cancel().unwrap();
    gate.wait();
    blocker_call.wait(None).unwrap();
    assert_eq!(queued.wait(None).unwrap_err().status(), Status::Interrupted);
    assert_eq!((ran.load(Ordering::Relaxed), queued.progress()), (0, (0, 50)));
}

#[test]
fn a_cancel_flag_stops_synchronous_and_deferred_calls() {
    let executor = executor(2);
    let flag = CancelFlag::new();
    assert!(!flag.is_cancelled());
    let raiser = flag.clone();
    let ran = AtomicUsize::new(0);
    let error = On::new(&executor)
        .cancel_flag(&flag)
        .for_n_dynamic(1_000_000, |task, _| {
            ran.fetch_add(1, Ordering::Relaxed);
            if task == 10 {
                raiser.cancel();
            }
        })
        .unwrap_err();
    assert_eq!(error.status(), Status::Interrupted);
    assert!(flag.is_cancelled() && ran.load(Ordering::Relaxed) < 1_000_000);

    let flag = CancelFlag::new();
    let on = On::new(&executor).cancel_flag(&flag).deferred();
    let mut call = on.for_n_dynamic(1_000_000, |_, _| thread::sleep(Duration::from_micros(50))).unwrap();
    drop(on);
    let other = flag.clone();
    thread::spawn(move || other.cancel()).join().unwrap();
    assert_eq!(call.wait(None).unwrap_err().status(), Status::Interrupted);
    assert!(call.progress().0 < 1_000_000);
    // An On without a flag is not cancelled by one raised elsewhere.
    On::new(&executor).for_n(100, |_, _| {}).unwrap();
}
