//! Closures handed to C: the contexts they travel in, the trampolines C calls, the panics and
//! errors caught at the boundary, and the error a finished call answers.

use std::fmt;
use std::ops::Range;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::{check, ffi, Error, Result, Status};

/// The first failure a call's closures raised (a panic, or an error a device function returned),
/// kept for the error the call answers.
#[derive(Default)]
pub(crate) struct Failure(Mutex<Option<Error>>);

impl Failure {
    fn record(&self, payload: Box<dyn std::any::Any + Send>) {
        let message = if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_string()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "a closure panicked with a non-string payload".to_string()
        };
        drop_payload(payload);
        self.record_error(Error::new(Status::CallbackFailed, message));
    }

    /// Keeps `error` unless an earlier failure is kept already.
    fn record_error(&self, error: Error) {
        let mut slot = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.get_or_insert(error);
    }

    pub(crate) fn error(&self) -> Option<Error> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

/// Drops a caught panic's payload without letting a second panic escape: a payload whose own
/// `Drop` panics would otherwise unwind out of the `extern "C"` trampoline, which aborts the
/// process.
fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        // The new payload may panic on drop as well, and so on without end; leaking it is the
        // one way to be rid of it that runs no more user code, and costs less than an abort.
        std::mem::forget(again);
    }
}

/// A closure handed to C as `context`, with the slot its panic lands in.
pub(crate) struct Context<F> {
    pub(crate) body: F,
    pub(crate) failure: Failure,
}

impl<F> Context<F> {
    pub(crate) fn new(body: F) -> Self {
        Self { body, failure: Failure::default() }
    }

    /// Runs `call` on the body and answers its status: an error it returns is kept and its
    /// status fails the call; a panic is kept and becomes CALLBACK_FAILED.
    pub(crate) fn guard_result(&self, call: impl FnOnce(&F) -> Result<()>) -> ffi::uform_status_t {
        match catch_unwind(AssertUnwindSafe(|| call(&self.body))) {
            Ok(Ok(())) => ffi::UFORM_STATUS_OK,
            Ok(Err(error)) => {
                // An error claiming success must still fail the call, as a callback failure.
                let error = match error.status() {
                    Status::Ok => Error::new(
                        Status::CallbackFailed,
                        format!("a closure failed with an error of status Ok: {}", error.message()),
                    ),
                    _ => error,
                };
                let raw = error.status().to_raw();
                self.failure.record_error(error);
                raw
            }
            Err(payload) => {
                self.failure.record(payload);
                ffi::UFORM_STATUS_CALLBACK_FAILED
            }
        }
    }

    /// Runs `call` on the body; a panic is recorded and becomes CALLBACK_FAILED.
    fn guard(&self, call: impl FnOnce(&F)) -> ffi::uform_status_t {
        match catch_unwind(AssertUnwindSafe(|| call(&self.body))) {
            Ok(()) => ffi::UFORM_STATUS_OK,
            Err(payload) => {
                self.failure.record(payload);
                ffi::UFORM_STATUS_CALLBACK_FAILED
            }
        }
    }
}

/// What a deferred call keeps alive: a boxed [`Context`] whatever its closure.
pub(crate) trait Captured: Send + Sync {
    fn failure(&self) -> Option<Error>;
}

impl<F: Send + Sync> Captured for Context<F> {
    fn failure(&self) -> Option<Error> {
        self.failure.error()
    }
}

unsafe extern "C" fn task_trampoline<F: Fn(usize, usize) + Sync>(
    context: *mut c_void,
    task: usize,
    thread: usize,
) -> ffi::uform_status_t {
    // SAFETY: `context` is the Context<F> this crate handed to the verb, alive until the call
    // finishes, and only shared references to it are made.
    let context = unsafe { &*context.cast::<Context<F>>() };
    context.guard(|body| body(task, thread))
}

unsafe extern "C" fn thread_trampoline<F: Fn(usize) + Sync>(
    context: *mut c_void,
    thread: usize,
    _: usize,
) -> ffi::uform_status_t {
    // SAFETY: as in task_trampoline.
    let context = unsafe { &*context.cast::<Context<F>>() };
    context.guard(|body| body(thread))
}

unsafe extern "C" fn slice_trampoline<F: Fn(Range<usize>, usize) + Sync>(
    context: *mut c_void,
    first: usize,
    count: usize,
    thread: usize,
) -> ffi::uform_status_t {
    // SAFETY: as in task_trampoline.
    let context = unsafe { &*context.cast::<Context<F>>() };
    context.guard(|body| body(first..first.saturating_add(count), thread))
}

/// A fallible closure's error as its call answers it: CALLBACK_FAILED with the error's `Display`
/// text, which stops the call.
fn closure_error<E: fmt::Display>(error: E) -> Error {
    Error::new(Status::CallbackFailed, error.to_string())
}

unsafe extern "C" fn try_task_trampoline<F, E>(context: *mut c_void, task: usize, thread: usize) -> ffi::uform_status_t
where
    F: Fn(usize, usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in task_trampoline.
    let context = unsafe { &*context.cast::<Context<F>>() };
    context.guard_result(|body| body(task, thread).map_err(closure_error))
}

unsafe extern "C" fn try_thread_trampoline<F, E>(context: *mut c_void, thread: usize, _: usize) -> ffi::uform_status_t
where
    F: Fn(usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in task_trampoline.
    let context = unsafe { &*context.cast::<Context<F>>() };
    context.guard_result(|body| body(thread).map_err(closure_error))
}

unsafe extern "C" fn try_slice_trampoline<F, E>(
    context: *mut c_void,
    first: usize,
    count: usize,
    thread: usize,
) -> ffi::uform_status_t
where
    F: Fn(Range<usize>, usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in task_trampoline.
    let context = unsafe { &*context.cast::<Context<F>>() };
    context.guard_result(|body| body(first..first.saturating_add(count), thread).map_err(closure_error))
}

pub(crate) unsafe extern "C" fn progress_trampoline<R, P>(context: *mut c_void, done: usize, total: usize)
where
    R: std::ops::Deref<Target = P>,
    P: Fn(usize, usize) + Sync,
{
    // SAFETY: as in task_trampoline, for the progress context.
    let context = unsafe { &*context.cast::<Context<R>>() };
    // A progress report cannot fail the call from C's side: the panic is kept and the call
    // answers CALLBACK_FAILED once it returns.
    context.guard(|body| body(done, total));
}

/// One verb as C sees it: a trampoline for the closure type and the submission itself.
pub(crate) type Submit =
    unsafe fn(*mut ffi::uform_executor_t, *const ffi::uform_call_t, usize, *mut c_void) -> ffi::uform_status_t;

pub(crate) unsafe fn submit_for_n<F: Fn(usize, usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: forwarded from the caller, which keeps `context` alive as the call needs.
    unsafe { ffi::uform_executor_for_n(executor, call, n, Some(task_trampoline::<F>), context) }
}

pub(crate) unsafe fn submit_for_n_dynamic<F: Fn(usize, usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_n_dynamic(executor, call, n, Some(task_trampoline::<F>), context) }
}

pub(crate) unsafe fn submit_for_threads<F: Fn(usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    _: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_threads(executor, call, Some(thread_trampoline::<F>), context) }
}

pub(crate) unsafe fn submit_for_slices<F: Fn(Range<usize>, usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_slices(executor, call, n, Some(slice_trampoline::<F>), context) }
}

pub(crate) unsafe fn submit_try_for_n<F, E>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t
where
    F: Fn(usize, usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_n(executor, call, n, Some(try_task_trampoline::<F, E>), context) }
}

pub(crate) unsafe fn submit_try_for_n_dynamic<F, E>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t
where
    F: Fn(usize, usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_n_dynamic(executor, call, n, Some(try_task_trampoline::<F, E>), context) }
}

pub(crate) unsafe fn submit_try_for_threads<F, E>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    _: usize,
    context: *mut c_void,
) -> ffi::uform_status_t
where
    F: Fn(usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_threads(executor, call, Some(try_thread_trampoline::<F, E>), context) }
}

pub(crate) unsafe fn submit_try_for_slices<F, E>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t
where
    F: Fn(Range<usize>, usize) -> std::result::Result<(), E> + Sync,
    E: fmt::Display,
{
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_slices(executor, call, n, Some(try_slice_trampoline::<F, E>), context) }
}

/// The error a finished call answers, preferring a closure's own failure (its panic, or the
/// error a device function returned) over C's generic detail.
pub(crate) fn outcome(raw: ffi::uform_status_t, task: Option<Error>, progress: Option<Error>) -> Result<()> {
    match (raw, task, progress) {
        (ffi::UFORM_STATUS_OK, _, Some(error)) => {
            Err(Error::new(Status::CallbackFailed, format!("progress callback panicked: {}", error.message())))
        }
        (ffi::UFORM_STATUS_OK, _, None) => Ok(()),
        // A closure failed, so the call answers a closure's status: its own error says more.
        (_, Some(error), _) => Err(error),
        (raw, None, _) => check(raw),
    }
}
