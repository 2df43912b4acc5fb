//! The README's Rust example, compiled and run by `cargo test` so it cannot drift.
use uform::*;

pub fn main() -> Result<()> {
    let threads = Executor::for_ram(&[], None, 0, 0)?; // zero takes 7/8 of the cores
    let sum = std::sync::atomic::AtomicUsize::new(0);
    On::new(&threads).for_n(100, |task, _thread| {
        sum.fetch_add(task, std::sync::atomic::Ordering::Relaxed);
    })?;
    let mut pending = On::new(&threads)
        .deferred()
        .progress(|done, total| {
            if done == total {
                println!("{done}/{total}"); // reports arrive as tasks finish, the last one complete
            }
        })
        .for_n_dynamic(1000, |_task, _thread| {})?; // closures owned by the handle
    pending.wait(None)?;
    threads.drain(Mood::Parked)?;
    assert_eq!(sum.into_inner(), 4950);
    Ok(())
}
