//! How a call runs: [`On`], its [`Now`] and [`Later`] modes, and the verbs it runs.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use crate::callback::{
    outcome, progress_trampoline, submit_for_n, submit_for_n_dynamic, submit_for_slices, submit_for_threads,
    submit_try_for_n, submit_try_for_n_dynamic, submit_try_for_slices, submit_try_for_threads, Captured, Context,
    Submit,
};
use crate::{check, ffi, linked_library, CancelFlag, Deferred, Error, Executor, Result, Status};

/// Marks an [`On`] whose calls are synchronous: each returns once every task has run.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub struct Now;

/// Marks an [`On`] whose calls are deferred: each returns a [`Deferred`] handle at once and
/// runs on the executor's own threads.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub struct Later;

/// How a call runs: the executor it runs on, whether it is deferred, and the progress callback
/// it reports to - the Rust twin of C's `uform_call_t`.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use uform::{Executor, On};
///
/// let executor = Executor::for_ram(&[], None, 2, 0)?;
/// let hits = AtomicUsize::new(0);
/// On::new(&executor)
///     .progress(|done, total| assert!(done <= total))
///     .for_n_dynamic(1000, |_task, _thread| {
///         hits.fetch_add(1, Ordering::Relaxed);
///     })?;
/// assert_eq!(hits.load(Ordering::Relaxed), 1000);
///
/// // Deferred: the closures move into the handle, which waits for the call when dropped.
/// let mut call = On::new(&executor).deferred().for_threads(|thread| assert!(thread < 2))?;
/// call.wait(None)?;
/// # Ok::<(), uform::Error>(())
/// ```
///
/// A deferred call may outlive the stack frame that made it (its handle can be leaked with
/// `std::mem::forget`, which is safe), so its closures own what they use: they are `'static`,
/// and share data through an `Arc`. Borrowing a local is refused at compile time:
///
/// ```compile_fail,E0373
/// # fn main() -> uform::Result<()> {
/// let executor = uform::Executor::for_ram(&[], None, 2, 0)?;
/// let local = vec![1, 2, 3];
/// let mut call = uform::On::new(&executor).deferred().for_n(3, |task, _| assert!(local[task] > 0))?;
/// call.wait(None)
/// # }
/// ```
///
/// Closures run on the executor's threads at once, so they must be `Sync`; a panic inside one
/// is caught at the boundary (never unwinding through C), stops the call, and comes back as
/// [`Status::CallbackFailed`] carrying the panic's message. A synchronous call's closures cannot
/// reach the executor they run on (it is not `Sync`); a deferred closure reaching it through a
/// `Mutex` gets [`Status::InvalidArgument`] from its verbs and [`Executor::drain`] instead of
/// a deadlock, and dropping it (or a [`Deferred`] of that executor) there finishes the release
/// on another thread once the call has ended.
pub struct On<'e, M = Now, P = fn(usize, usize)> {
    executor: &'e Executor,
    progress: Option<Arc<P>>,
    cancel: Option<CancelFlag>,
    _mode: PhantomData<M>,
}

impl<'e> On<'e> {
    /// Synchronous calls on `executor`, without progress.
    pub fn new(executor: &'e Executor) -> Self {
        Self { executor, progress: None, cancel: None, _mode: PhantomData }
    }
}

impl<'e, P> On<'e, Now, P> {
    /// Makes the calls deferred: each returns a [`Deferred`] at once. Deferred closures (and
    /// the progress callback) must be `'static`, since a handle may be leaked while the call
    /// still runs.
    pub fn deferred(self) -> On<'e, Later, P> {
        On { executor: self.executor, progress: self.progress, cancel: self.cancel, _mode: PhantomData }
    }
}

impl<'e, M, P> On<'e, M, P> {
    /// Reports progress to `progress(done, total)` as tasks finish: one report at a time, on
    /// the executor's threads, non-decreasing, the last one `done == total` when the call
    /// succeeds.
    pub fn progress<Q>(self, progress: Q) -> On<'e, M, Q>
    where
        Q: Fn(usize, usize) + Sync,
    {
        On { executor: self.executor, progress: Some(Arc::new(progress)), cancel: self.cancel, _mode: PhantomData }
    }

    /// Makes the calls cancellable through `flag` (see [`CancelFlag`]): once it is raised,
    /// from any thread, they start no further task and answer [`Status::Interrupted`]. A
    /// deferred call keeps the flag until it has finished; [`Deferred::cancel`] cancels one
    /// without a flag.
    pub fn cancel_flag(self, flag: &CancelFlag) -> Self {
        On { executor: self.executor, progress: self.progress, cancel: Some(flag.clone()), _mode: PhantomData }
    }

    /// The executor the calls run on.
    pub fn executor(&self) -> &'e Executor {
        self.executor
    }
}

impl<M, P> fmt::Debug for On<'_, M, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("On")
            .field("executor", self.executor)
            .field("deferred", &(std::any::type_name::<M>() == std::any::type_name::<Later>()))
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl<P: Fn(usize, usize) + Sync> On<'_, Now, P> {
    fn run<F>(&self, n: usize, body: F, submit: Submit) -> Result<()> {
        // SAFETY: `submit` matches the closure type F, and is handed the context of `body`.
        unsafe { self.submit(body, |executor, call, context| submit(executor, call, n, context)) }
    }

    /// Makes one synchronous call: `submit(executor, call, context)` with `body` as the task
    /// context and this `On`'s progress, and answers its outcome.
    ///
    /// # Safety
    /// `submit` must hand C only trampolines that read `context` as a `Context<F>`.
    pub(crate) unsafe fn submit<F>(
        &self,
        body: F,
        submit: impl FnOnce(*mut ffi::uform_executor_t, *const ffi::uform_call_t, *mut c_void) -> ffi::uform_status_t,
    ) -> Result<()> {
        linked_library()?;
        let task = Context::new(body);
        let progress = self.progress.as_deref().map(Context::new);
        let mut call = ffi::uform_call_t::INIT;
        if let Some(progress) = &progress {
            call.progress = Some(progress_trampoline::<&P, P>);
            call.progress_context = ptr::from_ref(progress).cast_mut().cast();
        }
        // The flag is this On's, alive past the synchronous call.
        call.cancel = self.cancel.as_ref().map_or(ptr::null(), CancelFlag::as_ptr);
        // Both contexts live on this frame until the synchronous call has returned, after
        // which C calls neither again; the caller vouches for the trampolines.
        let raw = submit(self.executor.as_raw(), &call, ptr::from_ref(&task).cast_mut().cast());
        outcome(raw, task.failure.error(), progress.and_then(|progress| progress.failure.error()))
    }

    /// Runs `task(i, thread)` once for every `i` in `0..n`, split statically: thread `t` of
    /// `T` takes the contiguous range `t*n/T .. (t+1)*n/T`.
    ///
    /// Calls `uform_executor_for_n`.
    ///
    /// # Errors
    /// [`Status::CallbackFailed`] with the panic's message when a closure panicked (later
    /// tasks may be skipped); [`Status::Contended`] when another thread's call holds the
    /// executor; [`Status::Forked`] in a child process; [`Status::Mismatch`] for a linked
    /// `libuform` of another version, as [`Executor::for_ram`].
    pub fn for_n<F>(&self, n: usize, task: F) -> Result<()>
    where
        F: Fn(usize, usize) + Sync,
    {
        self.run(n, task, submit_for_n::<F>)
    }

    /// As [`On::for_n`], for tasks of uneven cost: each thread takes the tasks of its part one
    /// at a time, then takes tasks nobody has started from the back of the others' parts.
    ///
    /// Calls `uform_executor_for_n_dynamic`.
    ///
    /// # Errors
    /// As [`On::for_n`].
    pub fn for_n_dynamic<F>(&self, n: usize, task: F) -> Result<()>
    where
        F: Fn(usize, usize) + Sync,
    {
        self.run(n, task, submit_for_n_dynamic::<F>)
    }

    /// Runs `task(thread)` once on every thread of the executor.
    ///
    /// Calls `uform_executor_for_threads`.
    ///
    /// # Errors
    /// As [`On::for_n`].
    pub fn for_threads<F>(&self, task: F) -> Result<()>
    where
        F: Fn(usize) + Sync,
    {
        self.run(0, task, submit_for_threads::<F>)
    }

    /// Splits `0..n` into one contiguous slice per thread (the static split) and runs
    /// `slice(range, thread)` for each non-empty one.
    ///
    /// Calls `uform_executor_for_slices`.
    ///
    /// # Errors
    /// As [`On::for_n`].
    pub fn for_slices<F>(&self, n: usize, slice: F) -> Result<()>
    where
        F: Fn(Range<usize>, usize) + Sync,
    {
        self.run(n, slice, submit_for_slices::<F>)
    }

    /// As [`On::for_n`], with a task that can fail: the first `Err` stops the call (tasks not
    /// yet started are skipped) and comes back as [`Status::CallbackFailed`] whose message is
    /// the error's `Display` text.
    ///
    /// ```
    /// use uform::{Executor, On, Status};
    ///
    /// let executor = Executor::for_ram(&[], None, 2, 0)?;
    /// let outcome = On::new(&executor).try_for_n(100, |task, _thread| {
    ///     if task == 42 { Err(format!("task {task} found a bad record")) } else { Ok(()) }
    /// });
    /// let error = outcome.unwrap_err();
    /// assert_eq!((error.status(), error.message()), (Status::CallbackFailed, "task 42 found a bad record"));
    /// # Ok::<(), uform::Error>(())
    /// ```
    ///
    /// Calls `uform_executor_for_n`.
    ///
    /// # Errors
    /// As [`On::for_n`], and the task's first error.
    pub fn try_for_n<F, E>(&self, n: usize, task: F) -> Result<()>
    where
        F: Fn(usize, usize) -> std::result::Result<(), E> + Sync,
        E: fmt::Display,
    {
        self.run(n, task, submit_try_for_n::<F, E>)
    }

    /// As [`On::for_n_dynamic`], with a task that can fail, as [`On::try_for_n`].
    ///
    /// Calls `uform_executor_for_n_dynamic`.
    ///
    /// # Errors
    /// As [`On::try_for_n`].
    pub fn try_for_n_dynamic<F, E>(&self, n: usize, task: F) -> Result<()>
    where
        F: Fn(usize, usize) -> std::result::Result<(), E> + Sync,
        E: fmt::Display,
    {
        self.run(n, task, submit_try_for_n_dynamic::<F, E>)
    }

    /// As [`On::for_threads`], with a task that can fail, as [`On::try_for_n`].
    ///
    /// Calls `uform_executor_for_threads`.
    ///
    /// # Errors
    /// As [`On::try_for_n`].
    pub fn try_for_threads<F, E>(&self, task: F) -> Result<()>
    where
        F: Fn(usize) -> std::result::Result<(), E> + Sync,
        E: fmt::Display,
    {
        self.run(0, task, submit_try_for_threads::<F, E>)
    }

    /// As [`On::for_slices`], with a slice function that can fail, as [`On::try_for_n`].
    ///
    /// Calls `uform_executor_for_slices`.
    ///
    /// # Errors
    /// As [`On::try_for_n`].
    pub fn try_for_slices<F, E>(&self, n: usize, slice: F) -> Result<()>
    where
        F: Fn(Range<usize>, usize) -> std::result::Result<(), E> + Sync,
        E: fmt::Display,
    {
        self.run(n, slice, submit_try_for_slices::<F, E>)
    }
}

impl<P: Fn(usize, usize) + Send + Sync + 'static> On<'_, Later, P> {
    fn run<F: Send + Sync + 'static>(&self, n: usize, body: F, submit: Submit) -> Result<Deferred> {
        // SAFETY: `submit` matches the closure type F, and is handed the context of `body`.
        let (deferred, _) = unsafe { self.submit(body, |executor, call, context| submit(executor, call, n, context)) }?;
        Ok(deferred)
    }

    /// Queues one deferred call: `submit(executor, call, context)` with `body` as the task
    /// context and this `On`'s progress. Answers the handle, which owns both contexts, and the
    /// task context, valid for as long as the handle.
    ///
    /// # Safety
    /// `submit` must hand C only trampolines that read `context` as a `Context<F>`.
    pub(crate) unsafe fn submit<F: Send + Sync + 'static>(
        &self,
        body: F,
        submit: impl FnOnce(*mut ffi::uform_executor_t, *const ffi::uform_call_t, *mut c_void) -> ffi::uform_status_t,
    ) -> Result<(Deferred, NonNull<Context<F>>)> {
        linked_library()?;
        // The contexts move to the heap and into the handle, so they stay put and alive for as
        // long as the call may use them; a leaked handle leaks them too, never frees them early.
        let task = NonNull::from(Box::leak(Box::new(Context::new(body))));
        let mut call = ffi::uform_call_t::INIT;
        let progress = self.progress.clone().map(|progress| {
            let context = NonNull::from(Box::leak(Box::new(Context::new(progress))));
            call.progress = Some(progress_trampoline::<Arc<P>, P>);
            call.progress_context = context.as_ptr().cast();
            context as NonNull<dyn Captured>
        });
        let mut handle: *mut ffi::uform_deferred_t = ptr::null_mut();
        call.deferred = &mut handle;
        // The handle keeps a clone of the flag until the call has finished.
        call.cancel = self.cancel.as_ref().map_or(ptr::null(), CancelFlag::as_ptr);
        let mut deferred =
            Deferred { raw: None, task: task as NonNull<dyn Captured>, progress, cancel: self.cancel.clone() };
        // The contexts are heap-allocated and owned by `deferred`, which frees them only after
        // uform_deferred_free has waited for the call; the caller vouches for the trampolines.
        let raw = submit(self.executor.as_raw(), &call, task.as_ptr().cast());
        // On failure C kept nothing: dropping `deferred` (without a handle) frees the contexts.
        check(raw)?;
        deferred.raw = Some(
            NonNull::new(handle)
                .ok_or_else(|| Error::new(Status::Malformed, "libuform queued a call without a handle"))?,
        );
        Ok((deferred, task))
    }

    /// Queues [`On::for_n`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_n` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// [`Status::Contended`] when the executor's deferred table is full; [`Status::Forked`]
    /// in a child process. The call's own failure comes from [`Deferred::wait`].
    pub fn for_n<F>(&self, n: usize, task: F) -> Result<Deferred>
    where
        F: Fn(usize, usize) + Send + Sync + 'static,
    {
        self.run(n, task, submit_for_n::<F>)
    }

    /// Queues [`On::for_n_dynamic`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_n_dynamic` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn for_n_dynamic<F>(&self, n: usize, task: F) -> Result<Deferred>
    where
        F: Fn(usize, usize) + Send + Sync + 'static,
    {
        self.run(n, task, submit_for_n_dynamic::<F>)
    }

    /// Queues [`On::for_threads`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_threads` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn for_threads<F>(&self, task: F) -> Result<Deferred>
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        self.run(0, task, submit_for_threads::<F>)
    }

    /// Queues [`On::for_slices`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_slices` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn for_slices<F>(&self, n: usize, slice: F) -> Result<Deferred>
    where
        F: Fn(Range<usize>, usize) + Send + Sync + 'static,
    {
        self.run(n, slice, submit_for_slices::<F>)
    }

    /// Queues [`On::try_for_n`]'s call and returns its handle at once; the task's first error
    /// comes from [`Deferred::wait`].
    ///
    /// Calls `uform_executor_for_n` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn try_for_n<F, E>(&self, n: usize, task: F) -> Result<Deferred>
    where
        F: Fn(usize, usize) -> std::result::Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        self.run(n, task, submit_try_for_n::<F, E>)
    }

    /// Queues [`On::try_for_n_dynamic`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_n_dynamic` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn try_for_n_dynamic<F, E>(&self, n: usize, task: F) -> Result<Deferred>
    where
        F: Fn(usize, usize) -> std::result::Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        self.run(n, task, submit_try_for_n_dynamic::<F, E>)
    }

    /// Queues [`On::try_for_threads`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_threads` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn try_for_threads<F, E>(&self, task: F) -> Result<Deferred>
    where
        F: Fn(usize) -> std::result::Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        self.run(0, task, submit_try_for_threads::<F, E>)
    }

    /// Queues [`On::try_for_slices`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_slices` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// As the deferred [`On::for_n`].
    pub fn try_for_slices<F, E>(&self, n: usize, slice: F) -> Result<Deferred>
    where
        F: Fn(Range<usize>, usize) -> std::result::Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        self.run(n, slice, submit_try_for_slices::<F, E>)
    }
}
