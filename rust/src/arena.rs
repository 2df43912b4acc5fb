//! Arenas: memory placed where an executor computes, bump-allocated and freed whole.

use std::fmt;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::{check, ffi, linked_library, Error, Executor, Result, Status};

/// Memory placed where an executor computes, taken piece by piece and freed whole.
///
/// [`Arena::new_in`] on a RAM executor (or the null one) reserves host memory bound to its
/// NUMA nodes, backed by transparent huge pages from 2 MiB up; it may outlive that executor.
/// On a VRAM executor it reserves `capacity` bytes of device memory on every one of its
/// devices: the arena is symmetric, every allocation takes the same offset on each device, and
/// [`device_pointer`](Arena::device_pointer) turns device 0's pointer into another device's. A
/// device arena holds its executor: dropping the [`Executor`] then drains it, and the last
/// device arena's drop closes it.
///
/// ```
/// let executor = uform::Executor::for_ram(&[], None, 1, 0)?;
/// let arena = uform::Arena::new_in(&executor, 1 << 20)?;
/// drop(executor); // a host arena outlives its executor
/// let words = arena.allocate(4096, 64)?;
/// assert_eq!(words.as_ptr() as usize % 64, 0);
/// // SAFETY: the arena's 4096 bytes at `words`, valid until it drops, and no one else's.
/// let words = unsafe { std::slice::from_raw_parts_mut(words.as_ptr().cast::<u64>(), 512) };
/// words.fill(7);
/// assert_eq!(arena.usage(), (4096, 1 << 20));
/// # Ok::<(), uform::Error>(())
/// ```
///
/// Allocation is lock-free, so an arena is `Send` and `Sync`: threads may allocate from one
/// arena at once.
///
/// Mirrors `uform_arena_t`; dropping it calls `uform_arena_free`, after which every pointer it
/// gave is invalid.
pub struct Arena {
    raw: NonNull<ffi::uform_arena_t>,
}

// SAFETY: the C arena keeps no tie to the thread that made it: it may be freed from any thread
// (a device arena's free, closing its executor, too, as an executor may move between threads).
unsafe impl Send for Arena {}
// SAFETY: uform_arena_allocate takes its bytes with an atomic compare-and-swap, and usage,
// devices and device_pointer only read; nothing else is reachable through a shared reference.
unsafe impl Sync for Arena {}

impl Arena {
    /// Reserves `capacity` bytes where `executor` computes: host memory for a RAM or the null
    /// executor, device memory on each device of a VRAM executor. A host arena may outlive its
    /// executor; a device arena holds it until the arena drops.
    ///
    /// Calls `uform_arena_new_in`.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for zero `capacity`; [`Status::OutOfMemory`] when the
    /// memory cannot be had (naming the driver's error for device memory);
    /// [`Status::DeviceFault`] for an executor whose device faulted;
    /// [`Status::Forked`] for an executor inherited across `fork()`; [`Status::Mismatch`] for
    /// a linked `libuform` of another version, as [`Executor::for_ram`].
    pub fn new_in(executor: &Executor, capacity: usize) -> Result<Arena> {
        linked_library()?;
        let mut raw = ptr::null_mut();
        // SAFETY: the executor is NULL or live for the call; `raw` is a valid output.
        check(unsafe { ffi::uform_arena_new_in(executor.as_raw(), capacity, &mut raw) })?;
        let raw =
            NonNull::new(raw).ok_or_else(|| Error::new(Status::Malformed, "libuform answered OK without an arena"))?;
        Ok(Arena { raw })
    }

    /// Takes `bytes` from the arena, aligned to `alignment` (a power of two; zero means 64).
    ///
    /// The pointer stays valid until the arena drops; reading or writing through it is the
    /// caller's `unsafe`, as with any raw allocation. For a device arena it is device 0's
    /// device pointer, not host memory: hand it to the device verbs as `pointer.as_ptr().cast()`
    /// and never dereference it on the host.
    ///
    /// Calls `uform_arena_allocate`.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for an alignment that is not a power of two;
    /// [`Status::OutOfMemory`] when the arena is full (nothing else changes). For a device
    /// arena also [`Status::InvalidArgument`] for an alignment above 256 that another device's
    /// reservation does not keep (every offset must name an equally aligned slot on each).
    pub fn allocate(&self, bytes: usize, alignment: usize) -> Result<NonNull<u8>> {
        let mut pointer = ptr::null_mut();
        // SAFETY: a live arena this value owns; C allocates atomically, so shared use is fine.
        check(unsafe { ffi::uform_arena_allocate(self.raw.as_ptr(), bytes, alignment, &mut pointer) })?;
        NonNull::new(pointer.cast()).ok_or_else(|| Error::new(Status::Malformed, "libuform allocated a null pointer"))
    }

    /// Bytes taken so far, alignment padding included, and the capacity.
    ///
    /// Calls `uform_arena_usage`.
    pub fn usage(&self) -> (usize, usize) {
        let (mut used, mut capacity) = (0, 0);
        // SAFETY: a live arena this value owns; the outputs are valid.
        unsafe { ffi::uform_arena_usage(self.raw.as_ptr(), &mut used, &mut capacity) };
        (used, capacity)
    }

    /// Devices the arena spans: 0 for a host arena.
    ///
    /// Calls `uform_arena_devices`.
    pub fn devices(&self) -> usize {
        // SAFETY: a live arena this value owns.
        unsafe { ffi::uform_arena_devices(self.raw.as_ptr()) }
    }

    /// The twin on device `device` of `pointer`, a pointer into device 0's reservation (as
    /// [`allocate`](Self::allocate) gave it, or any address inside it): the same offset in
    /// device `device`'s reservation.
    ///
    /// Calls `uform_arena_device_pointer`.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] for a host arena, a device out of range, or a pointer
    /// outside the reservation.
    pub fn device_pointer(&self, device: usize, pointer: *const c_void) -> Result<*mut c_void> {
        let mut twin = ptr::null_mut();
        // SAFETY: a live arena this value owns; C only compares `pointer`, never reads it.
        check(unsafe { ffi::uform_arena_device_pointer(self.raw.as_ptr(), device, pointer, &mut twin) })?;
        Ok(twin)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: a live arena this value owns, freed once.
        unsafe { ffi::uform_arena_free(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (used, capacity) = self.usage();
        f.debug_struct("Arena")
            .field("used", &used)
            .field("capacity", &capacity)
            .field("devices", &self.devices())
            .finish()
    }
}
