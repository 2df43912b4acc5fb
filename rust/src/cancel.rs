//! Cancelling calls: [`CancelFlag`], which an [`On`](crate::On) hands to its calls.

use std::fmt;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// A flag that cancels the calls it was given to ([`On::cancel_flag`](crate::On::cancel_flag)),
/// from any thread: tasks not yet started never start, running ones finish, and the call answers
/// [`Status::Interrupted`](crate::Status::Interrupted). Clones share one flag. Once raised it
/// stays raised; use a fresh flag for the next call. Once a call has begun, each thread's first
/// task still starts, so tasks that wait for each other never hang.
///
/// ```
/// use uform::{CancelFlag, Executor, On, Status};
///
/// let executor = Executor::for_ram(&[], None, 2, 0)?;
/// let flag = CancelFlag::new();
/// let stop = flag.clone();
/// let outcome = On::new(&executor).cancel_flag(&flag).for_n_dynamic(1_000_000, move |task, _| {
///     if task == 10 {
///         stop.cancel();
///     }
/// });
/// assert_eq!(outcome.unwrap_err().status(), Status::Interrupted);
/// # Ok::<(), uform::Error>(())
/// ```
///
/// Mirrors `uform_call_t.cancel`.
#[derive(Clone, Default)]
pub struct CancelFlag(Arc<AtomicI32>);

impl CancelFlag {
    /// A flag not raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the flag: the calls given it stop handing out tasks.
    pub fn cancel(&self) {
        self.0.store(1, Ordering::Relaxed);
    }

    /// Whether the flag was raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0
    }

    /// The address C reads (`const volatile int *`): an `AtomicI32` has an `int`'s layout, and
    /// C only loads it.
    pub(crate) fn as_ptr(&self) -> *const c_int {
        self.0.as_ptr().cast_const().cast()
    }
}

impl fmt::Debug for CancelFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CancelFlag").field(&self.is_cancelled()).finish()
    }
}
