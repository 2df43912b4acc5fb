//! The host threads or device streams calls run on: [`Executor`], its constructors and its release.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr;

use crate::{check, ffi, linked_library, CPUClass, Error, GPUClass, Mood, Result, Status};

/// The C number of an optional class pin: 0 derives the hardware's own.
fn cpu_class_raw(cpu_class: Option<CPUClass>) -> ffi::uform_cpu_class_t {
    cpu_class.map_or(0, CPUClass::to_raw)
}

fn gpu_class_raw(gpu_class: Option<GPUClass>) -> ffi::uform_gpu_class_t {
    gpu_class.map_or(0, GPUClass::to_raw)
}

/// A slice as the C pointer-and-count pair, NULL for an empty one.
fn slice_raw<T>(items: &[T]) -> (*const T, usize) {
    if items.is_empty() {
        (ptr::null(), 0)
    } else {
        (items.as_ptr(), items.len())
    }
}

/// The host threads or device streams an [`On`](crate::On) runs its calls on, with the
/// activation scratch and the staging buffers each of them uses.
///
/// One executor serves any number of models of its residency, so several models share one
/// machine's cores or devices instead of each claiming a private set.
///
/// `Executor::default()` is the C interface's null executor: it owns nothing, and every call
/// handed it runs on the calling thread.
///
/// Calls on one executor run in submission order, so threads wanting to overlap take one
/// apiece; it is `Send` but not `Sync`. Every constructor takes a `deferred_limit` sizing its
/// table of deferred calls, where zero takes the default (64); a deferred submission finding
/// the table full fails with [`Status::Contended`]. [`Arena::new_in`](crate::Arena::new_in)
/// places an arena where it computes: a host arena may outlive it, while a GPU arena holds it
/// until the arena drops.
///
/// Mirrors `uform_executor_t`; dropping it calls `uform_executor_free`, which drains it, unless
/// a GPU arena it made still holds it, which then does so on its own drop.
/// Dropped inside one of its own callbacks (a deferred closure taking it out of a `Mutex`),
/// where draining would wait for the very call dropping it, it closes on another thread
/// instead, once that call and every call queued behind it have ended.
///
/// An executor cannot be shared between threads:
///
/// ```compile_fail,E0277
/// fn shared<T: Sync>() {}
/// shared::<uform::Executor>();
/// ```
///
/// but it can move to another thread:
///
/// ```
/// let executor = uform::Executor::for_ram(&[], None, 1, 0)?;
/// std::thread::spawn(move || executor.drain(uform::Mood::Parked)).join().unwrap()?;
/// # Ok::<(), uform::Error>(())
/// ```
pub struct Executor {
    /// NULL for the null executor.
    raw: *mut ffi::uform_executor_t,
    /// Not Sync even if the field above ever stops implying it.
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the C interface documents that an executor may move between threads: nothing in it
// is tied to the thread that created it (its workers are its own threads, and the calling
// thread only joins a call for its duration). It is deliberately not Sync: two threads using
// one executor at once is what the C library answers CONTENDED for, so Rust rules it out.
unsafe impl Send for Executor {}

impl Default for Executor {
    /// The null executor: owns nothing, every call runs on the calling thread as thread 0 of 1.
    fn default() -> Self {
        Self { raw: ptr::null_mut(), _not_sync: PhantomData }
    }
}

impl Executor {
    fn from_out(raw: *mut ffi::uform_executor_t) -> Result<Self> {
        if raw.is_null() {
            return Err(Error::new(Status::Malformed, "libuform answered OK without an executor"));
        }
        Ok(Self { raw, _not_sync: PhantomData })
    }

    /// Spawns host threads for RAM-resident models, interleaved across the compute domains
    /// local to `memory_domains`, which is the same list the models were loaded with; empty
    /// means every NUMA node this process may use.
    ///
    /// Zero `threads` takes 7/8 of the cores those domains carry, and `cpu_class` pins the
    /// class its calls dispatch as, where `None` derives the CPU's own. Zero `deferred_limit`
    /// takes the default of 64 deferred calls.
    ///
    /// Calls `uform_executor_for_ram`.
    ///
    /// # Errors
    /// [`Status::NotFound`] for an unknown or CPU-less node; [`Status::InvalidArgument`] for a
    /// duplicate domain, more than 4096 threads or a `deferred_limit` above 65536;
    /// [`Status::Unsupported`] for a class pin this CPU cannot run; [`Status::OutOfMemory`];
    /// [`Status::IoError`] when a thread cannot be created; [`Status::Mismatch`] when the linked
    /// `libuform` is not the version this crate is built for (see [`version`](crate::version)).
    pub fn for_ram(
        memory_domains: &[i32],
        cpu_class: Option<CPUClass>,
        threads: usize,
        deferred_limit: usize,
    ) -> Result<Self> {
        linked_library()?;
        let (domains, domains_count) = slice_raw(memory_domains);
        let mut raw = ptr::null_mut();
        // SAFETY: the domain pointer and count describe a live slice (or NULL and 0); `raw` is
        // a valid output.
        check(unsafe {
            ffi::uform_executor_for_ram(
                domains,
                domains_count,
                cpu_class_raw(cpu_class),
                threads,
                deferred_limit,
                &mut raw,
            )
        })?;
        Self::from_out(raw)
    }

    /// Creates a RAM executor over a borrowed ForkUnion pool, so UForm, USearch and UStore in
    /// one process share one set of threads while each keeps its own scratch.
    ///
    /// The C verb validates every argument as [`Executor::for_ram`] does, plus a non-null
    /// `pool`, then answers [`Status::Unsupported`] until borrowing is designed.
    ///
    /// Calls `uform_executor_on_pool`.
    ///
    /// # Safety
    /// `pool` must address a live ForkUnion `fu_pool_t` that outlives the executor.
    ///
    /// # Errors
    /// [`Status::Unsupported`] for now; before it, whatever [`Executor::for_ram`] answers for
    /// the same arguments, and [`Status::InvalidArgument`] for a null `pool`.
    pub unsafe fn on_pool(
        memory_domains: &[i32],
        cpu_class: Option<CPUClass>,
        pool: *mut c_void,
        deferred_limit: usize,
    ) -> Result<Self> {
        linked_library()?;
        let (domains, domains_count) = slice_raw(memory_domains);
        let mut raw = ptr::null_mut();
        // SAFETY: the slice is live; the caller vouches for `pool`.
        check(unsafe {
            ffi::uform_executor_on_pool(
                domains,
                domains_count,
                cpu_class_raw(cpu_class),
                pool,
                deferred_limit,
                &mut raw,
            )
        })?;
        Self::from_out(raw)
    }

    /// Opens one submission stream on every named device, or borrows the caller's, all of them
    /// driven by whichever host thread submits - which is why this takes no thread count.
    ///
    /// `devices` are positions in what [`gpu_devices`](crate::gpu_devices) lists (empty: all),
    /// and `gpu_class` pins the class every one of them dispatches as, where `None` derives
    /// theirs. The host decoders take 7/8 of the cores local to `memory_domains` and dispatch
    /// as `cpu_class`, where `None` derives the CPU's own. `streams` is empty, or holds one
    /// CUDA stream per device in `devices` order. Zero `scratch_limit` lets scratch grow as
    /// batches ask.
    ///
    /// Calls `uform_executor_for_vram`.
    ///
    /// # Safety
    /// Every stream must be a live CUDA stream on its device that outlives the executor.
    ///
    /// # Errors
    /// [`Status::NotFound`] without GPUs or for an out-of-range ordinal;
    /// [`Status::InvalidArgument`] for a duplicate device; [`Status::Unsupported`] for borrowed
    /// `streams`, until borrowing is designed; [`Status::DeviceFault`] when a driver fails;
    /// [`Status::Mismatch`] for a linked `libuform` of another version, as [`Executor::for_ram`].
    pub unsafe fn for_vram(
        devices: &[i32],
        gpu_class: Option<GPUClass>,
        memory_domains: &[i32],
        cpu_class: Option<CPUClass>,
        streams: &[*mut c_void],
        scratch_limit: usize,
        deferred_limit: usize,
    ) -> Result<Self> {
        linked_library()?;
        let (devices, devices_count) = slice_raw(devices);
        let (domains, domains_count) = slice_raw(memory_domains);
        let (streams, streams_count) = slice_raw(streams);
        let mut raw = ptr::null_mut();
        // SAFETY: every slice is live for the call; the caller vouches for the streams.
        check(unsafe {
            ffi::uform_executor_for_vram(
                devices,
                devices_count,
                gpu_class_raw(gpu_class),
                domains,
                domains_count,
                cpu_class_raw(cpu_class),
                streams,
                streams_count,
                scratch_limit,
                deferred_limit,
                &mut raw,
            )
        })?;
        Self::from_out(raw)
    }

    /// Waits for every call submitted to this executor before the drain began, then adopts
    /// `mood` whenever it next goes idle; a failure is the executor's own, such as a device
    /// fault, never one of a drained call.
    ///
    /// Calls `uform_executor_drain`.
    ///
    /// # Errors
    /// [`Status::DeviceFault`] for a device that failed; [`Status::Forked`] for an executor
    /// inherited across `fork()`.
    pub fn drain(&self, mood: Mood) -> Result<()> {
        // SAFETY: `raw` is NULL or a live executor this value owns.
        check(unsafe { ffi::uform_executor_drain(self.raw, mood.to_raw()) })
    }

    /// Makes `stream`, a stream of the caller's own on the executor's device `device` (a
    /// framework's), wait on the device for the work of every call submitted before this one,
    /// deferred calls still queued included: the host waits only for what those calls have not
    /// yet queued on the device's stream, then an event and `cuStreamWaitEvent` /
    /// `hipStreamWaitEvent` order `stream` after it. A null `stream` is the default stream
    /// (CUDA: the legacy one; `CU_STREAM_LEGACY` (1) and `CU_STREAM_PER_THREAD` (2) are taken
    /// too).
    ///
    /// Calls `uform_executor_order_stream`.
    ///
    /// # Safety
    /// `stream` must be null, one of CUDA's special handles, or a live stream of the device's
    /// runtime (a `CUstream` of its primary context, a `hipStream_t` of the device).
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for the null or a RAM executor, a device out of range, a call
    /// from one of its own callbacks, or a stream the driver refuses; [`Status::Contended`]
    /// while another thread's synchronous call holds it; [`Status::DeviceFault`];
    /// [`Status::Forked`].
    pub unsafe fn order_stream(&self, device: usize, stream: *mut c_void) -> Result<()> {
        // SAFETY: `raw` is NULL or a live executor this value owns; the caller vouches for `stream`.
        check(unsafe { ffi::uform_executor_order_stream(self.raw, device, stream) })
    }

    /// Threads a call runs on: 1 for the null executor.
    pub fn threads(&self) -> usize {
        // SAFETY: `raw` is NULL or a live executor this value owns.
        unsafe { ffi::uform_executor_threads(self.raw) }
    }

    /// The class its device calls dispatch as: the pin, or the devices' common class (NVIDIA
    /// devices of several classes share [`GPUClass::NvidiaAmpere`], the floor they all run);
    /// `None` for the null executor, RAM executors and devices without a common class.
    ///
    /// Calls `uform_executor_gpu_class`.
    pub fn gpu_class(&self) -> Option<GPUClass> {
        // SAFETY: `raw` is NULL or a live executor this value owns.
        GPUClass::from_raw(unsafe { ffi::uform_executor_gpu_class(self.raw) })
    }

    /// Devices it drives: 0 for the null executor and RAM executors.
    ///
    /// Calls `uform_executor_devices`.
    pub fn devices(&self) -> usize {
        // SAFETY: `raw` is NULL or a live executor this value owns.
        unsafe { ffi::uform_executor_devices(self.raw) }
    }

    /// The class its calls dispatch as: the pin, or the CPU's own.
    pub fn cpu_class(&self) -> Option<CPUClass> {
        // SAFETY: `raw` is NULL or a live executor this value owns.
        CPUClass::from_raw(unsafe { ffi::uform_executor_cpu_class(self.raw) })
    }

    /// The C handle, NULL for the null executor.
    pub(crate) fn as_raw(&self) -> *mut ffi::uform_executor_t {
        self.raw
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // SAFETY: `raw` is a live executor this value owns. FORKED still releases its memory,
        // and there is nothing to report it to.
        let status = unsafe { ffi::uform_executor_free(self.raw) };
        // The one other refusal this value can meet: it was dropped inside one of its own
        // callbacks (a deferred closure took it out of a `Mutex`), where C frees nothing, since
        // joining its threads from one of them would never end. Another thread closes it once
        // that call ends; "already being freed" cannot happen, as this value owns the handle.
        if status == ffi::UFORM_STATUS_INVALID_ARGUMENT {
            close_elsewhere(Closing(self.raw));
        }
    }
}

/// An executor handed to another thread to close.
struct Closing(*mut ffi::uform_executor_t);

// SAFETY: an executor may move between threads (see Executor's Send); the value that owned this
// handle gave it up, so the closing thread is its only user.
unsafe impl Send for Closing {}

impl Closing {
    fn free(self) {
        // SAFETY: a live executor nothing else uses any more, freed once. From a thread that is
        // not one of its own, free waits for the call running (and every call queued), then
        // joins its threads.
        unsafe { ffi::uform_executor_free(self.0) };
    }
}

/// Closes an executor dropped inside its own callback on a thread of its own, so the close
/// happens once that call (and every call queued behind it) has ended, without blocking the
/// callback.
fn close_elsewhere(closing: Closing) {
    let spawned = std::thread::Builder::new().name("uform:closer".to_string()).spawn(move || closing.free());
    if let Err(error) = spawned {
        // Nothing to return an error to from a Drop, and no thread left to close it: say so
        // rather than leak in silence.
        eprintln!(
            "uform: an Executor dropped inside one of its own callbacks could not be closed \
             (no thread to close it on: {error}); its threads and memory stay until the process exits"
        );
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.raw.is_null() {
            return f.write_str("Executor(null)");
        }
        let mut debug = f.debug_struct("Executor");
        debug.field("threads", &self.threads()).field("cpu_class", &self.cpu_class());
        if self.devices() > 0 {
            debug.field("devices", &self.devices()).field("gpu_class", &self.gpu_class());
        }
        debug.finish()
    }
}
