//! Executors dropped where C cannot free them at once: inside one of their own callbacks.
//! Their threads must still go away once the call ends, and nothing may hang.

mod support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use support::within;
use uform::*;

/// The calling thread's `/proc/self/task/<tid>` directory and its name (`comm`).
fn this_thread() -> (PathBuf, String) {
    let link = std::fs::read_link("/proc/thread-self").expect("Linux names the calling thread in /proc");
    let tid = link.file_name().expect("PID/task/TID").to_owned();
    let task = PathBuf::from("/proc/self/task").join(tid);
    let name = std::fs::read_to_string(task.join("comm")).expect("the thread's name");
    (task, name.trim_end().to_string())
}


/// Waits until every one of `tasks` has left the process, for at most `bound`.
fn await_gone(tasks: &[PathBuf], bound: Duration) {
    let start = Instant::now();
    loop {
        let alive: Vec<&PathBuf> = tasks.iter().filter(|task| task.exists()).collect();
        if alive.is_empty() {
            return;
        }
        assert!(start.elapsed() < bound, "still running after {bound:?}: {alive:?}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// The executor's own threads, named `uform:ram:*`, as a deferred call finds them.
fn threads_of(executor: &Executor) -> Vec<PathBuf> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let mut call = On::new(executor)
        .deferred()
        .for_threads(move |_| {
            let thread = this_thread();
            record.lock().unwrap().push(thread);
        })
        .unwrap();
    call.wait(Some(Duration::from_secs(30))).unwrap();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen.len(), executor.threads());
    for (task, name) in &seen {
        assert!(name.starts_with("uform:ram:"), "{task:?} is named {name:?}");
    }
    seen.into_iter().map(|(task, _)| task).collect()
}

#[test]
fn an_executor_dropped_inside_its_own_deferred_call_closes_once_the_call_ends() {
    within(Duration::from_secs(60), || {
        let slot = Arc::new(Mutex::new(Some(Executor::for_ram(&[], None, 2, 0).unwrap())));
        let guard = slot.lock().unwrap();
        let executor = guard.as_ref().unwrap();
        let tasks = threads_of(executor);

        // The first call drops the executor from its own thread 0; the second was queued
        // behind it and must still run: the close drains, as any drop does.
        let dropper = slot.clone();
        let dropped_in = Arc::new(Mutex::new(None));
        let where_dropped = dropped_in.clone();
        let mut dropping = On::new(executor)
            .deferred()
            .for_threads(move |thread| {
                if thread == 0 {
                    let executor = dropper.lock().unwrap().take();
                    assert!(executor.is_some());
                    drop(executor);
                    *where_dropped.lock().unwrap() = Some(this_thread().1);
                }
            })
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        let mut queued = On::new(executor)
            .deferred()
            .for_n(10, move |_, _| {
                thread::sleep(Duration::from_millis(1));
                counter.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        drop(guard);

        dropping.wait(Some(Duration::from_secs(30))).unwrap();
        let name = dropped_in.lock().unwrap().clone().expect("the callback dropped the executor");
        assert!(name.starts_with("uform:ram:"), "dropped on one of its own threads, not {name:?}");
        assert!(slot.lock().unwrap().is_none());
        queued.wait(Some(Duration::from_secs(30))).unwrap();
        assert_eq!(ran.load(Ordering::Relaxed), 10, "the call queued behind still ran");
        await_gone(&tasks, Duration::from_secs(20));
    });
}

#[test]
fn an_executor_dropped_inside_its_own_progress_callback_closes_too() {
    within(Duration::from_secs(60), || {
        let slot = Arc::new(Mutex::new(Some(Executor::for_ram(&[], None, 3, 0).unwrap())));
        let guard = slot.lock().unwrap();
        let executor = guard.as_ref().unwrap();
        let tasks = threads_of(executor);
        let dropper = slot.clone();
        let mut call = On::new(executor)
            .deferred()
            .progress(move |done, total| {
                if done == total {
                    drop(dropper.lock().unwrap().take());
                }
            })
            .for_n(30, |_, _| {})
            .unwrap();
        drop(guard);
        call.wait(Some(Duration::from_secs(30))).unwrap();
        await_gone(&tasks, Duration::from_secs(20));
        assert!(slot.lock().unwrap().is_none());
    });
}

#[test]
fn an_executor_dropped_elsewhere_still_closes_at_once() {
    within(Duration::from_secs(60), || {
        let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
        let tasks = threads_of(&executor);
        drop(executor);
        // free joined the threads before returning; the kernel may take a moment to drop their entries.
        await_gone(&tasks, Duration::from_secs(5));
    });
}

/// Sets its flag when dropped: shows when a closure's captures are freed.
struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_deferred_handle_dropped_inside_its_own_call_keeps_the_closure_until_the_call_ends() {
    within(Duration::from_secs(60), || {
        let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
        let handle = Arc::new(Mutex::new(None::<Deferred>));
        let freed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen_freed = Arc::new(Mutex::new(None));
        let (slot, flag, seen, captured) = (handle.clone(), freed.clone(), seen_freed.clone(), DropFlag(freed.clone()));
        let guard = handle.lock().unwrap();
        let call = On::new(&executor)
            .deferred()
            .for_threads(move |thread| {
                let _keep = &captured;
                if thread == 0 {
                    drop(slot.lock().unwrap().take()); // the handle of this very call
                    *seen.lock().unwrap() = Some(flag.load(Ordering::SeqCst));
                }
            })
            .unwrap();
        let mut guard = guard;
        *guard = Some(call);
        drop(guard);
        executor.drain(Mood::Parked).unwrap();
        assert_eq!(*seen_freed.lock().unwrap(), Some(false), "the running closure was not freed under itself");
        let start = Instant::now();
        while !freed.load(Ordering::SeqCst) {
            assert!(start.elapsed() < Duration::from_secs(20), "the closure is freed once its call ends");
            thread::sleep(Duration::from_millis(5));
        }
    });
}

#[test]
fn a_queued_handle_dropped_inside_another_call_still_runs_its_closure() {
    within(Duration::from_secs(60), || {
        let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
        let gate = Arc::new(Mutex::new(()));
        let closed = gate.lock().unwrap();
        let queued_handle = Arc::new(Mutex::new(None::<Deferred>));
        let freed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen_freed = Arc::new(Mutex::new(None));
        let (wait_gate, slot, flag, seen) = (gate.clone(), queued_handle.clone(), freed.clone(), seen_freed.clone());
        // The first call waits for the gate, then drops the second call's handle before the
        // second has run.
        let mut first = On::new(&executor)
            .deferred()
            .for_threads(move |thread| {
                if thread == 0 {
                    drop(wait_gate.lock().unwrap());
                    drop(slot.lock().unwrap().take());
                    *seen.lock().unwrap() = Some(flag.load(Ordering::SeqCst));
                }
            })
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let (counter, captured) = (ran.clone(), DropFlag(freed.clone()));
        let second = On::new(&executor)
            .deferred()
            .for_n(10, move |_, _| {
                let _keep = &captured;
                counter.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        *queued_handle.lock().unwrap() = Some(second);
        drop(closed);
        first.wait(Some(Duration::from_secs(30))).unwrap();
        executor.drain(Mood::Parked).unwrap();
        assert_eq!(*seen_freed.lock().unwrap(), Some(false), "the queued closure was not freed before it ran");
        assert_eq!(ran.load(Ordering::Relaxed), 10, "the queued call ran");
        let start = Instant::now();
        while !freed.load(Ordering::SeqCst) {
            assert!(start.elapsed() < Duration::from_secs(20), "the closure is freed once its call ends");
            thread::sleep(Duration::from_millis(5));
        }
    });
}

#[test]
fn a_deferred_closure_reaching_its_own_executor_is_refused_not_deadlocked() {
    within(Duration::from_secs(60), || {
        let slot = Arc::new(Mutex::new(Executor::for_ram(&[], None, 2, 0).unwrap()));
        let reach = slot.clone();
        let answers = Arc::new(Mutex::new(Vec::new()));
        let record = answers.clone();
        let guard = slot.lock().unwrap();
        let mut call = On::new(&guard)
            .deferred()
            .for_threads(move |thread| {
                if thread == 0 {
                    let executor = reach.lock().unwrap();
                    let verb = On::new(&executor).for_n(4, |_, _| {}).map_err(|error| error.status());
                    let drain = executor.drain(Mood::Parked).map_err(|error| error.status());
                    record.lock().unwrap().extend([verb, drain]);
                }
            })
            .unwrap();
        drop(guard);
        call.wait(Some(Duration::from_secs(30))).unwrap();
        let answers = answers.lock().unwrap().clone();
        assert_eq!(answers, [Err(Status::InvalidArgument), Err(Status::InvalidArgument)]);
    });
}
