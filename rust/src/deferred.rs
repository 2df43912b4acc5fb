//! A deferred call in flight or finished: [`Deferred`], polled, waited on, and released.

use std::fmt;
use std::ptr::{self, NonNull};
use std::time::Duration;

use crate::callback::{outcome, Captured};
use crate::{check, ffi, CancelFlag, Result, Status};

/// A deferred call in flight or finished, returned by an [`On`](crate::On) made
/// [`deferred`](crate::On::deferred).
///
/// It owns the call's closures: dropping it waits for the call to finish (as
/// `uform_deferred_free` does) and only then frees them. It may be polled, waited on and dropped
/// from any thread. Dropped inside a callback of its own executor, where that wait would never
/// end, it returns at once and another thread frees the closures once the call has ended.
///
/// Mirrors `uform_deferred_t`.
#[must_use = "dropping a Deferred waits for its call, making it synchronous"]
pub struct Deferred {
    /// NULL only while the submission is pending or after it failed.
    pub(crate) raw: Option<NonNull<ffi::uform_deferred_t>>,
    pub(crate) task: NonNull<dyn Captured>,
    pub(crate) progress: Option<NonNull<dyn Captured>>,
    /// The On's cancel flag, kept until the call has finished since C reads it until then.
    pub(crate) cancel: Option<CancelFlag>,
}

// SAFETY: the C interface lets a handle be polled, waited on and freed from any thread, and the
// closures it owns are Send + Sync (Captured requires both).
unsafe impl Send for Deferred {}

impl Deferred {
    pub(crate) fn raw(&self) -> *mut ffi::uform_deferred_t {
        self.raw.map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    /// Whether the call finished, whatever its outcome. Never blocks.
    ///
    /// Calls `uform_deferred_poll`.
    pub fn poll(&self) -> bool {
        // SAFETY: `raw` is a live handle this value owns.
        unsafe { ffi::uform_deferred_poll(self.raw()) == ffi::UFORM_STATUS_OK }
    }

    /// Waits up to `timeout` (`None`: for as long as it takes) for the call to finish, and
    /// answers its outcome; waiting again answers the same.
    ///
    /// Calls `uform_deferred_wait`.
    ///
    /// # Errors
    /// [`Status::Timeout`] while the call still runs; once it finished, its own failure:
    /// [`Status::CallbackFailed`] with the panic's message when a closure panicked, or what
    /// the executor answered.
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<()> {
        let seconds = timeout.map_or(-1.0, |timeout| timeout.as_secs_f64());
        // SAFETY: `raw` is a live handle this value owns.
        let raw = unsafe { ffi::uform_deferred_wait(self.raw(), seconds) };
        if raw == Status::Timeout.to_raw() {
            return check(raw);
        }
        // SAFETY: the call finished, so nothing else touches its contexts any more.
        let (task, progress) =
            unsafe { (self.task.as_ref().failure(), self.progress.map(|progress| progress.as_ref().failure())) };
        outcome(raw, task, progress.flatten())
    }

    /// Cancels the call: tasks not yet started never start, running ones finish, and
    /// [`Deferred::wait`] then answers [`Status::Interrupted`]. A call still queued behind
    /// others ends at once, with no task run. Never blocks; a call that already finished keeps
    /// its outcome, and cancelling twice does nothing more. Once the call has begun, each
    /// thread's first task still starts, so tasks that wait for each other never hang.
    ///
    /// ```
    /// use uform::{Executor, On, Status};
    ///
    /// let executor = Executor::for_ram(&[], None, 2, 0)?;
    /// let mut call = On::new(&executor).deferred().for_n_dynamic(1_000_000, |_, _| {
    ///     std::thread::sleep(std::time::Duration::from_micros(10))
    /// })?;
    /// call.cancel()?;
    /// assert_eq!(call.wait(None).unwrap_err().status(), Status::Interrupted);
    /// assert!(call.progress().0 < 1_000_000);
    /// # Ok::<(), uform::Error>(())
    /// ```
    ///
    /// Calls `uform_deferred_cancel`.
    ///
    /// # Errors
    /// [`Status::Forked`] in a child process, for a call of the parent's.
    pub fn cancel(&self) -> Result<()> {
        // SAFETY: `raw` is a live handle this value owns; cancelling never blocks.
        check(unsafe { ffi::uform_deferred_cancel(self.raw()) })
    }

    /// Tasks finished so far, and in total.
    ///
    /// Calls `uform_deferred_progress`.
    pub fn progress(&self) -> (usize, usize) {
        let (mut done, mut total) = (0, 0);
        // SAFETY: `raw` is a live handle this value owns; the outputs are valid.
        unsafe { ffi::uform_deferred_progress(self.raw(), &mut done, &mut total) };
        (done, total)
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        let owned = Owned { raw: self.raw, task: self.task, progress: self.progress, cancel: self.cancel.take() };
        if let Some(raw) = self.raw {
            // SAFETY: a live handle this value owns; neither a zero wait nor a poll blocks.
            // The wait answers INVALID_ARGUMENT when the call has yet to finish and this thread
            // runs a callback of the executor that must run it: there uform_deferred_free would
            // let the handle go without waiting, and freeing the closures now would free them
            // while this call (or a call queued behind it) still uses them. A finished call
            // answers its own status, which may be INVALID_ARGUMENT too: the poll (OK once
            // finished) tells the two apart, and a finished call's closures go now.
            let unwaitable = unsafe {
                ffi::uform_deferred_wait(raw.as_ptr(), 0.0) == ffi::UFORM_STATUS_INVALID_ARGUMENT
                    && ffi::uform_deferred_poll(raw.as_ptr()) != ffi::UFORM_STATUS_OK
            };
            if unwaitable {
                release_elsewhere(owned);
                return;
            }
        }
        owned.release();
    }
}

/// What a [`Deferred`] owns, free to move to the thread that releases it.
struct Owned {
    raw: Option<NonNull<ffi::uform_deferred_t>>,
    task: NonNull<dyn Captured>,
    progress: Option<NonNull<dyn Captured>>,
    cancel: Option<CancelFlag>,
}

// SAFETY: as Deferred's Send: the handle may be freed from any thread, the closures are Send.
unsafe impl Send for Owned {}

impl Owned {
    /// Frees the handle, which waits for the call, then the closures.
    fn release(self) {
        if let Some(raw) = self.raw {
            // SAFETY: a live handle, freed once; from any thread but the executor's own it
            // waits for the call first.
            unsafe { ffi::uform_deferred_free(raw.as_ptr()) };
        }
        // SAFETY: the call finished (or was never queued), so C holds no pointer to the
        // contexts; both came from Box::leak and are freed once.
        unsafe {
            drop(Box::from_raw(self.task.as_ptr()));
            if let Some(progress) = self.progress {
                drop(Box::from_raw(progress.as_ptr()));
            }
        }
        drop(self.cancel); // C reads the flag no more
    }
}

/// Releases a handle dropped inside a callback of its own executor on another thread, which
/// waits for the call to end without holding the executor up.
fn release_elsewhere(owned: Owned) {
    let spawned = std::thread::Builder::new().name("uform:closer".to_string()).spawn(move || owned.release());
    if let Err(error) = spawned {
        // Waiting here would never end and freeing the closures would free them under a call
        // still to run them: leak them, and say so.
        eprintln!(
            "uform: a Deferred dropped inside a callback of its own executor could not be released \
             (no thread to wait on: {error}); its closures stay allocated until the process exits"
        );
    }
}

impl fmt::Debug for Deferred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (done, total) = self.progress();
        f.debug_struct("Deferred").field("finished", &self.poll()).field("done", &done).field("total", &total).finish()
    }
}
