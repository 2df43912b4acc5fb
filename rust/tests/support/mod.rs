//! Helpers shared by several test binaries.

#![allow(dead_code)]

pub mod cuda_double;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Runs `scenario` on its own thread and answers what it returns, failing the test instead of
/// hanging past `bound`; a panic in the scenario is the test's panic.
pub fn within<T: Send + 'static>(bound: Duration, scenario: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    let runner = thread::spawn(move || {
        let _ = sender.send(scenario());
    });
    match receiver.recv_timeout(bound) {
        Ok(value) => {
            runner.join().expect("the scenario ended");
            value
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung for {bound:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => match runner.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("the scenario sends before it ends"),
        },
    }
}
