//! Panics caught at the C boundary whose payloads misbehave: a payload that panics again when
//! dropped must fail the call, never abort the process.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use uform::*;

/// Payloads dropped so far, counted before each one panics in its `Drop`.
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A panic payload whose `Drop` panics with a plain string.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
        panic!("the payload panicked while being dropped");
    }
}

/// A panic payload whose `Drop` panics with another payload like itself, without end.
struct PanicsOnDropForever;

impl Drop for PanicsOnDropForever {
    fn drop(&mut self) {
        std::panic::panic_any(PanicsOnDropForever);
    }
}

fn assert_callback_failed(result: Result<()>) {
    let error = result.expect_err("the panicking call fails");
    assert_eq!(error.status(), Status::CallbackFailed, "{error}");
    assert!(error.message().contains("non-string"), "{error}");
}

#[test]
fn a_payload_panicking_on_drop_fails_the_call_and_the_process_survives() {
    let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
    let before = DROPPED.load(Ordering::SeqCst);
    assert_callback_failed(On::new(&executor).for_n(8, |_, _| std::panic::panic_any(PanicsOnDrop)));
    assert_callback_failed(On::new(&executor).for_threads(|_| std::panic::panic_any(PanicsOnDrop)));
    assert_callback_failed(On::new(&Executor::default()).for_n(1, |_, _| std::panic::panic_any(PanicsOnDrop)));
    let mut call = On::new(&executor).deferred().for_n_dynamic(8, |_, _| std::panic::panic_any(PanicsOnDrop)).unwrap();
    assert_callback_failed(call.wait(Some(Duration::from_secs(30))));
    assert!(DROPPED.load(Ordering::SeqCst) >= before + 4, "every caught payload was dropped, not leaked");

    // The executor still runs calls afterwards.
    let count = AtomicUsize::new(0);
    On::new(&executor)
        .for_n(10, |_, _| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(count.into_inner(), 10);
}

#[test]
fn a_payload_panicking_on_drop_without_end_fails_the_call() {
    let executor = Executor::for_ram(&[], None, 2, 0).unwrap();
    assert_callback_failed(On::new(&executor).for_n(4, |_, _| std::panic::panic_any(PanicsOnDropForever)));
    assert_callback_failed(
        On::new(&executor).progress(|_, _| {}).for_slices(4, |_, _| std::panic::panic_any(PanicsOnDropForever)),
    );
    let error = On::new(&executor)
        .progress(|_, _| std::panic::panic_any(PanicsOnDropForever))
        .for_n(4, |_, _| {})
        .expect_err("a panicking progress callback fails the call");
    assert_eq!(error.status(), Status::CallbackFailed, "{error}");
}
