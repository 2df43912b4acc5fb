//! What a VRAM executor adds to the verbs: device functions, staged copies, and the device
//! scratch and pinned staging a device function may use.
//!
//! Device memory is named by raw `*mut c_void` device pointers (a `CUdeviceptr` or a HIP device
//! pointer, cast), as the C interface names it. Every verb taking a `device` takes the position
//! among the executor's own devices (`0..Executor::devices()`), not the position in
//! [`gpu_devices`](crate::gpu_devices).
//!
//! Faults: a driver error becomes an [`Error`] naming the driver's error. Out of device memory
//! is [`Status::OutOfMemory`] and nothing else changes. A sticky fault (an illegal address, a
//! failed launch, an uncorrectable ECC error, ...) is [`Status::DeviceFault`], and from then on
//! every call, drain and arena of that executor answers [`Status::DeviceFault`] until it is
//! dropped; dropping it still releases everything.

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};
use std::time::Duration;

use crate::callback::Context;
use crate::{check, ffi, Deferred, Error, GPUVendor, Later, Now, On, Result, Status};

/// One device of a VRAM executor, as [`On::for_devices`] hands it to its closure: the device's
/// indices, its runtime handles, and the way to its scratch and staging. Valid during that
/// closure's call only, which is why the closure is lent it by reference.
///
/// It is neither `Send` nor `Sync`: its scratch and staging belong to the thread running the
/// device function.
///
/// Mirrors `uform_device_slot_t`.
pub struct DeviceSlot {
    raw: ffi::uform_device_slot_t,
    executor: *mut ffi::uform_executor_t,
}

impl DeviceSlot {
    /// Its index among the executor's devices: what the copy verbs and the arena's
    /// [`device_pointer`](crate::Arena::device_pointer) take.
    pub fn device(&self) -> usize {
        self.raw.device
    }

    /// Its position in what [`gpu_devices`](crate::gpu_devices) lists, the ordinal
    /// [`Executor::for_vram`](crate::Executor::for_vram) named it by.
    pub fn ordinal(&self) -> i32 {
        self.raw.ordinal
    }

    /// The runtime the handles below belong to; `None` for a vendor this crate does not know.
    pub fn vendor(&self) -> Option<GPUVendor> {
        GPUVendor::from_raw(self.raw.vendor)
    }

    /// The `CUdevice`, or the HIP device id.
    pub fn native_device(&self) -> i32 {
        self.raw.native_device
    }

    /// CUDA: the device's primary `CUcontext`, current on this thread during the call; HIP:
    /// null (the device is current through `hipSetDevice`).
    pub fn native_context(&self) -> *mut c_void {
        self.raw.native_context
    }

    /// The executor's `CUstream` or `hipStream_t` on this device. Work the closure enqueues on
    /// it is part of the call: the call finishes only once the stream has drained it.
    pub fn stream(&self) -> *mut c_void {
        self.raw.stream
    }

    /// The host thread (a logical slot, as the other verbs' `thread`) running the closure.
    pub fn thread(&self) -> usize {
        self.raw.thread
    }

    /// At least `bytes` of device memory on this device, 256-byte aligned, grown to a
    /// high-water mark and kept until the executor is dropped: a device pointer for the work
    /// the closure enqueues on [`stream`](Self::stream).
    ///
    /// Growing first waits for the stream, then replaces the buffer, so a pointer from an
    /// earlier, smaller request is invalid from then on.
    ///
    /// Calls `uform_executor_device_scratch`.
    ///
    /// # Errors
    /// [`Status::OutOfMemory`] past the executor's `scratch_limit` or when the device is full
    /// (the earlier buffer stays valid then); [`Status::DeviceFault`].
    pub fn device_scratch(&self, bytes: usize) -> Result<*mut c_void> {
        let mut scratch = ptr::null_mut();
        // SAFETY: the executor is live during the device function this slot was lent to, and
        // the slot cannot leave that function's thread (it is neither Send nor Sync).
        check(unsafe { ffi::uform_executor_device_scratch(self.executor, self.raw.device, bytes, &mut scratch) })?;
        Ok(scratch)
    }

    /// At least `bytes` of pinned host memory for this device, grown to a high-water mark and
    /// kept until the executor is dropped, as [`device_scratch`](Self::device_scratch). The
    /// executor's staged copies use the same buffers between calls, never during one: what the
    /// function leaves there does not survive the next copy, and a copy needing more staging
    /// replaces the buffer, invalidating the pointer.
    ///
    /// Calls `uform_executor_staging`.
    ///
    /// # Errors
    /// [`Status::OutOfMemory`] when no more pinned memory can be had (the earlier buffer stays
    /// valid then); [`Status::DeviceFault`].
    pub fn staging(&self, bytes: usize) -> Result<NonNull<u8>> {
        let mut staging = ptr::null_mut();
        // SAFETY: as in device_scratch.
        check(unsafe { ffi::uform_executor_staging(self.executor, self.raw.device, bytes, &mut staging) })?;
        NonNull::new(staging.cast())
            .ok_or_else(|| Error::new(Status::Malformed, "libuform answered OK without staging"))
    }
}

impl fmt::Debug for DeviceSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceSlot")
            .field("device", &self.device())
            .field("ordinal", &self.ordinal())
            .field("vendor", &self.vendor())
            .field("native_device", &self.native_device())
            .field("native_context", &self.native_context())
            .field("stream", &self.stream())
            .field("thread", &self.thread())
            .finish()
    }
}

/// A device function and the executor its slots reach scratch and staging through.
struct DeviceFunction<F> {
    function: F,
    executor: ExecutorHandle,
}

/// The executor a [`DeviceSlot`] calls into.
struct ExecutorHandle(*mut ffi::uform_executor_t);

// SAFETY: the handle is only read, to make a DeviceSlot inside a device function running on one
// of the executor's own threads, which the C interface allows; it is never freed through here.
unsafe impl Send for ExecutorHandle {}
// SAFETY: as above.
unsafe impl Sync for ExecutorHandle {}

unsafe extern "C" fn device_trampoline<F: Fn(&DeviceSlot) -> Result<()> + Sync>(
    context: *mut c_void,
    slot: *const ffi::uform_device_slot_t,
) -> ffi::uform_status_t {
    // SAFETY: `context` is the Context<DeviceFunction<F>> this crate handed to the verb, alive
    // until the call finishes, and only shared references to it are made.
    let context = unsafe { &*context.cast::<Context<DeviceFunction<F>>>() };
    // SAFETY: C hands a slot valid for the duration of this call, or NULL.
    let Some(raw) = (unsafe { slot.as_ref() }) else {
        return ffi::UFORM_STATUS_INVALID_ARGUMENT;
    };
    let slot = DeviceSlot { raw: *raw, executor: context.body.executor.0 };
    context.guard_result(|body| (body.function)(&slot))
}

impl<P: Fn(usize, usize) + Sync> On<'_, Now, P> {
    /// Runs `function(slot)` once for every device of a VRAM executor, in parallel on the host
    /// threads (devices split over them as [`On::for_n`] splits tasks;
    /// [`slot.thread()`](DeviceSlot::thread) says which), with that device's context current on
    /// the thread running it while it runs (the thread gets back the context it had afterwards). The
    /// function may enqueue any work on [`slot.stream()`](DeviceSlot::stream) (its own kernels,
    /// cuBLAS, a framework's external-stream wrapper); the call returns only once every function
    /// returned and every device's stream has drained what was enqueued, whatever the functions
    /// returned. Progress counts devices finished.
    ///
    /// ```
    /// # fn main() -> uform::Result<()> {
    /// # let Ok(executor) = (unsafe { uform::Executor::for_vram(&[], None, &[], None, &[], 0, 0) }) else { return Ok(()) };
    /// uform::On::new(&executor).for_devices(|slot| {
    ///     let scratch = slot.device_scratch(1 << 20)?;
    ///     println!("device {} streams on {:?} with scratch at {scratch:?}", slot.device(), slot.stream());
    ///     Ok(())
    /// })?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Calls `uform_executor_for_devices`.
    ///
    /// # Errors
    /// The first error a function returned (the streams are still drained);
    /// [`Status::CallbackFailed`] with the panic's message when one panicked;
    /// [`Status::DeviceFault`] when a stream faulted (sticky); [`Status::InvalidArgument`] for
    /// a RAM or null executor; [`Status::Contended`]; [`Status::Forked`].
    pub fn for_devices<F>(&self, function: F) -> Result<()>
    where
        F: Fn(&DeviceSlot) -> Result<()> + Sync,
    {
        let body = DeviceFunction { function, executor: ExecutorHandle(self.executor().as_raw()) };
        // SAFETY: the trampoline reads the context as the Context<DeviceFunction<F>> made of
        // `body`.
        unsafe {
            self.submit(body, |executor, call, context| {
                ffi::uform_executor_for_devices(executor, call, Some(device_trampoline::<F>), context)
            })
        }
    }

    /// Copies `host` to `device_pointer` on the executor's device `device`. Pageable memory is
    /// staged through the executor's pinned buffers in chunks (8 MiB, or
    /// `UFORM_STAGING_CHUNK_BYTES`), double-buffered so the host-side copy of one chunk (spread
    /// over the host threads from 1 MiB up) overlaps the DMA of the other; memory already pinned
    /// or registered with the driver over the whole range goes straight. One copy uses one
    /// device; copies to several devices are several calls (deferred, they queue in submission
    /// order). Progress counts bytes copied. An empty `host` does nothing.
    ///
    /// Calls `uform_executor_copy_to_device`.
    ///
    /// # Safety
    /// `device_pointer .. device_pointer + host.len()` must lie in device memory of device
    /// `device` (an [`Arena`](crate::Arena)'s, [device scratch](DeviceSlot::device_scratch),
    /// or the caller's own) that stays allocated until the call returns, and no other work may
    /// read or write that range meanwhile. Where device pointers are also host addresses
    /// (unified memory, or a host-emulated driver), a wrong pointer writes over host memory.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for a device out of range or a device range the driver
    /// refuses; [`Status::OutOfMemory`] when no pinned staging can be had;
    /// [`Status::DeviceFault`]; [`Status::Contended`]; [`Status::Forked`];
    /// [`Status::CallbackFailed`] when the progress callback panicked.
    pub unsafe fn copy_to_device(&self, device: usize, device_pointer: *mut c_void, host: &[u8]) -> Result<()> {
        // SAFETY: no trampoline reads the task context; `host` is borrowed for the whole
        // synchronous call, and the caller vouches for the device range.
        unsafe {
            self.submit((), |executor, call, _| {
                ffi::uform_executor_copy_to_device(
                    executor,
                    call,
                    device,
                    device_pointer,
                    host.as_ptr().cast(),
                    host.len(),
                )
            })
        }
    }

    /// Copies `host.len()` bytes from `device_pointer` on the executor's device `device` into
    /// `host`, staged as [`On::copy_to_device`]. Progress counts bytes copied.
    ///
    /// Calls `uform_executor_copy_to_host`.
    ///
    /// # Safety
    /// `device_pointer .. device_pointer + host.len()` must lie in device memory of device
    /// `device` that stays allocated until the call returns, and no other work may write that
    /// range meanwhile.
    ///
    /// # Errors
    /// As [`On::copy_to_device`].
    pub unsafe fn copy_to_host(&self, host: &mut [u8], device: usize, device_pointer: *const c_void) -> Result<()> {
        let (pointer, bytes) = (host.as_mut_ptr(), host.len());
        // SAFETY: as in copy_to_device, with `host` borrowed mutably for the call.
        unsafe {
            self.submit((), |executor, call, _| {
                ffi::uform_executor_copy_to_host(executor, call, pointer.cast(), device, device_pointer, bytes)
            })
        }
    }
}

impl<P: Fn(usize, usize) + Send + Sync + 'static> On<'_, Later, P> {
    /// Queues [`On::for_devices`]'s call and returns its handle at once.
    ///
    /// Calls `uform_executor_for_devices` with a deferred `uform_call_t`.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for a RAM or null executor; [`Status::Contended`] when the
    /// deferred table is full; [`Status::Forked`]. The call's own failure comes from
    /// [`Deferred::wait`].
    pub fn for_devices<F>(&self, function: F) -> Result<Deferred>
    where
        F: Fn(&DeviceSlot) -> Result<()> + Send + Sync + 'static,
    {
        let body = DeviceFunction { function, executor: ExecutorHandle(self.executor().as_raw()) };
        // SAFETY: as in the synchronous for_devices; the context lives in the handle.
        let (deferred, _) = unsafe {
            self.submit(body, |executor, call, context| {
                ffi::uform_executor_for_devices(executor, call, Some(device_trampoline::<F>), context)
            })
        }?;
        Ok(deferred)
    }

    /// Queues [`On::copy_to_device`]'s copy of `host` and returns its handle at once. The
    /// handle owns `host` until the copy has finished, and
    /// [`DeferredCopy::into_host`] hands it back.
    ///
    /// Calls `uform_executor_copy_to_device` with a deferred `uform_call_t`.
    ///
    /// # Safety
    /// As [`On::copy_to_device`], until the copy has finished (not just until this returns).
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for a device out of range; [`Status::Contended`] when the
    /// deferred table is full; [`Status::Forked`]. `host` is dropped then. The copy's own
    /// failure comes from [`DeferredCopy::wait`].
    pub unsafe fn copy_to_device(
        &self,
        device: usize,
        device_pointer: *mut c_void,
        host: Vec<u8>,
    ) -> Result<DeferredCopy> {
        let (pointer, bytes) = (host.as_ptr(), host.len());
        // SAFETY: no trampoline reads the task context. The vector moves into the handle's
        // context, which keeps its heap buffer (which `pointer` addresses, and which moving the
        // vector does not move) alive and untouched until the copy has finished; the caller
        // vouches for the device range.
        let (deferred, host) = unsafe {
            self.submit(host, |executor, call, _| {
                ffi::uform_executor_copy_to_device(executor, call, device, device_pointer, pointer.cast(), bytes)
            })
        }?;
        Ok(DeferredCopy { deferred, host })
    }

    /// Queues [`On::copy_to_host`]'s copy into `host` and returns its handle at once. The
    /// handle owns `host` until the copy has finished, and [`DeferredCopy::into_host`] hands it
    /// back filled.
    ///
    /// Calls `uform_executor_copy_to_host` with a deferred `uform_call_t`.
    ///
    /// # Safety
    /// As [`On::copy_to_host`], until the copy has finished (not just until this returns).
    ///
    /// # Errors
    /// As the deferred [`On::copy_to_device`].
    pub unsafe fn copy_to_host(
        &self,
        mut host: Vec<u8>,
        device: usize,
        device_pointer: *const c_void,
    ) -> Result<DeferredCopy> {
        let (pointer, bytes) = (host.as_mut_ptr(), host.len());
        // SAFETY: as in the deferred copy_to_device; nothing reads the vector's contents until
        // the copy has finished.
        let (deferred, host) = unsafe {
            self.submit(host, |executor, call, _| {
                ffi::uform_executor_copy_to_host(executor, call, pointer.cast(), device, device_pointer, bytes)
            })
        }?;
        Ok(DeferredCopy { deferred, host })
    }
}

/// A deferred copy in flight or finished, returned by the deferred
/// [`On::copy_to_device`] and [`On::copy_to_host`]: a [`Deferred`] that also owns the host
/// buffer, since the copy reads or writes it until it finishes.
///
/// [`into_host`](Self::into_host) waits for the copy and hands the buffer back. Dropping it
/// waits for the copy, as a [`Deferred`] does, and only then frees the buffer; a leaked handle
/// leaks the buffer.
#[must_use = "dropping a DeferredCopy waits for its copy, making it synchronous"]
pub struct DeferredCopy {
    deferred: Deferred,
    /// The buffer's context, owned (and freed) by `deferred`.
    host: NonNull<Context<Vec<u8>>>,
}

// SAFETY: a Deferred is Send; the buffer it owns is a Vec<u8>, touched through `host` only by
// the thread holding this value, once the copy has finished.
unsafe impl Send for DeferredCopy {}

impl DeferredCopy {
    /// Whether the copy finished, whatever its outcome. Never blocks.
    ///
    /// Calls `uform_deferred_poll`.
    pub fn poll(&self) -> bool {
        self.deferred.poll()
    }

    /// Waits up to `timeout` (`None`: for as long as it takes) for the copy to finish, and
    /// answers its outcome, as [`Deferred::wait`].
    ///
    /// Calls `uform_deferred_wait`.
    ///
    /// # Errors
    /// [`Status::Timeout`] while the copy still runs; once it finished, its own failure.
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<()> {
        self.deferred.wait(timeout)
    }

    /// Bytes copied so far, and in total.
    ///
    /// Calls `uform_deferred_progress`.
    pub fn progress(&self) -> (usize, usize) {
        self.deferred.progress()
    }

    /// Waits for the copy to finish, whatever its outcome (see [`wait`](Self::wait) for that),
    /// and hands back the host buffer: for a copy to the host, filled.
    ///
    /// Calls `uform_deferred_wait` and `uform_deferred_poll`.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] inside a callback of the executor that has yet to run the
    /// copy, where waiting would never end; [`Status::Forked`] in a child process. The buffer
    /// is then released with the handle, once the copy no longer uses it.
    pub fn into_host(self) -> Result<Vec<u8>> {
        // SAFETY: a live handle `deferred` owns; a negative timeout waits for as long as it
        // takes, or refuses at once.
        let raw = unsafe { ffi::uform_deferred_wait(self.deferred.raw(), -1.0) };
        let refused = (raw != ffi::UFORM_STATUS_OK).then(|| Error::from_raw(raw));
        if !self.deferred.poll() {
            return Err(refused.unwrap_or_else(|| Error::new(Status::Malformed, "the copy finished yet still runs")));
        }
        // SAFETY: the copy finished, so C no longer touches the buffer, and `deferred` keeps the
        // context alive until this value drops, after the buffer was taken out.
        Ok(std::mem::take(unsafe { &mut (*self.host.as_ptr()).body }))
    }
}

impl fmt::Debug for DeferredCopy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (done, total) = self.progress();
        f.debug_struct("DeferredCopy")
            .field("finished", &self.poll())
            .field("done", &done)
            .field("total", &total)
            .finish()
    }
}
