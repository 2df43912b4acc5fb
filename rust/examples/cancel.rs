//! The README's Rust example of calls that stop early, run by `cargo test --test cancel`.
use std::time::Duration;
use uform::*;

pub fn main() -> Result<()> {
    let executor = Executor::for_ram(&[], None, 2, 0)?;
    // A task returning Err stops the call; the error comes back with its Display text.
    let parsed = On::new(&executor).try_for_n(1000, |task, _thread| {
        if task == 700 {
            return Err(format!("record {task} is malformed"));
        }
        Ok(())
    });
    assert_eq!(parsed.unwrap_err().message(), "record 700 is malformed");
    // A deferred call cancelled: tasks not yet started never start, running ones finish.
    let mut pending = On::new(&executor)
        .deferred()
        .for_n_dynamic(1_000_000, |_task, _thread| std::thread::sleep(Duration::from_micros(10)))?;
    pending.cancel()?;
    assert_eq!(pending.wait(None).unwrap_err().status(), Status::Interrupted);
    let (done, total) = pending.progress();
    println!("cancelled after {done} of {total} tasks");
    // A flag any thread may raise, for synchronous calls too.
    let flag = CancelFlag::new();
    let stop = flag.clone();
    let outcome = On::new(&executor).cancel_flag(&flag).for_n_dynamic(1_000_000, move |task, _thread| {
        if task == 100 {
            stop.cancel();
        }
    });
    assert_eq!(outcome.unwrap_err().status(), Status::Interrupted);
    On::new(&executor).for_n(10, |_task, _thread| {})?; // the executor goes on
    Ok(())
}
