//! UForm places compute on hardware: an [`Executor`] owns host threads or device streams, the
//! activation scratch, and the pinned buffers staging passes through, grown to a high-water
//! mark. One executor serves any number of models of its residency.
//!
//! This crate is a thin, safe layer over `libuform`'s C interface (`include/uform.h`): every
//! fallible call answers a [`Result`] whose [`Error`] carries the C [`Status`] and the detail
//! the library left in its thread-local last-error message.
//!
//! ```
//! use uform::*;
//!
//! # fn main() -> uform::Result<()> {
//! let threads = Executor::for_ram(&[], None, 8, 0)?; // eight threads, where zero takes 7/8 of the cores
//! let serial = Executor::for_ram(&[], Some(CPUClass::Serial), 0, 0)?; // dispatches as the portable floor
//! let local = Executor::default(); // owns nothing, runs on the calling thread
//!
//! threads.drain(Mood::Spinning)?; // waits until no call holds it, then keeps spinning
//!
//! // The verbs run through an `On`, naming the executor and how the call runs.
//! let sum = std::sync::atomic::AtomicUsize::new(0);
//! On::new(&serial).for_n(100, |task, _thread| {
//!     sum.fetch_add(task, std::sync::atomic::Ordering::Relaxed);
//! })?;
//! assert_eq!(sum.into_inner(), 4950);
//! On::new(&local).for_threads(|thread| assert_eq!(thread, 0))?;
//! # Ok(())
//! # }
//! ```
//!
//! Executors over NUMA nodes, GPUs and borrowed pools need the hardware to exist, so on a
//! machine with one NUMA node and no GPU these answer errors rather than executors:
//!
//! ```
//! use uform::*;
//!
//! // Threads interleaved across two NUMA nodes: NotFound where node 1 does not exist.
//! match Executor::for_ram(&[0, 1], None, 0, 0) {
//!     Ok(domains) => drop(domains),
//!     Err(error) => assert_eq!(error.status(), Status::NotFound),
//! }
//! // One stream per device: NotFound without GPUs.
//! match unsafe { Executor::for_vram(&[0, 1], None, &[], None, &[], 0, 0) } {
//!     Ok(streams) => drop(streams),
//!     Err(error) => assert_eq!(error.status(), Status::NotFound),
//! }
//! ```

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::CStr;
use std::fmt;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

#[macro_use]
mod c_enum;
mod arena;
mod callback;
mod cancel;
mod deferred;
mod device;
mod executor;
mod ffi;
mod on;
mod status;
mod train;
mod vocabulary;
mod vram;

pub use arena::Arena;
pub use cancel::CancelFlag;
pub use deferred::Deferred;
pub use device::GPUDevice;
pub use executor::Executor;
pub use on::{Later, Now, On};
pub use status::Status;
pub use train::{Mesh, MeshDescription, MeshOptions, MultimemTier};
pub use vocabulary::{CPUClass, GPUClass, GPUVendor, Mood};
pub use vram::{DeferredCopy, DeviceSlot};

/// What every fallible call of this crate answers.
pub type Result<T> = std::result::Result<T, Error>;

/// A failure: the C library's [`Status`] and the detail it gave, or the message of the
/// callback that panicked.
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// An error of `status` carrying `message`.
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Self { status, message: message.into() }
    }

    /// The status the call answered; never [`Status::Ok`].
    pub fn status(&self) -> Status {
        self.status
    }

    /// The detail: which argument, the errno text, the missing CPU feature, the panic message.
    /// May be empty when the library gave none.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error for a non-OK C status, with the calling thread's `uform_last_error()`.
    pub(crate) fn from_raw(raw: ffi::uform_status_t) -> Self {
        // SAFETY: uform_last_error never answers NULL and its buffer stays valid until this
        // thread's next failing call; it is copied at once.
        let detail = unsafe { string_from(ffi::uform_last_error()) }.unwrap_or_default();
        match Status::from_raw(raw) {
            Some(status) => Self::new(status, detail),
            // A number a newer library added: keep it visible rather than guess.
            None => Self::new(Status::Malformed, format!("libuform answered unknown status {raw}: {detail}")),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{} ({})", self.status, self.status.name())
        } else {
            write!(f, "{} ({}): {}", self.status, self.status.name(), self.message)
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `UFORM_STATUS_OK`, else the error with the calling thread's detail.
pub(crate) fn check(raw: ffi::uform_status_t) -> Result<()> {
    if raw == ffi::UFORM_STATUS_OK {
        Ok(())
    } else {
        Err(Error::from_raw(raw))
    }
}

/// Copies a C string, `None` for NULL. Invalid UTF-8 is replaced, never trusted.
///
/// # Safety
/// `pointer` is NULL or addresses a NUL-terminated string valid for the call.
pub(crate) unsafe fn string_from(pointer: *const c_char) -> Option<String> {
    if pointer.is_null() {
        return None;
    }
    // SAFETY: the caller vouches for a NUL-terminated string.
    Some(unsafe { CStr::from_ptr(pointer) }.to_string_lossy().into_owned())
}

/// A static string the library owns, as `&'static str`; empty for NULL or non-UTF-8 text.
///
/// # Safety
/// `pointer` is NULL or addresses a NUL-terminated string that lives as long as the process.
unsafe fn static_str(pointer: *const c_char) -> &'static str {
    if pointer.is_null() {
        return "";
    }
    // SAFETY: the caller vouches for a static, NUL-terminated string.
    unsafe { CStr::from_ptr(pointer) }.to_str().unwrap_or("")
}

/// Comma-separated hardware capabilities the library was compiled with: the CPU classes it
/// has kernels for (snake-case, as [`CPUClass`] displays them), then the backends (`cuda`,
/// `hip`, `nccl`, `numa`).
///
/// Calls `uform_capabilities_compiled`.
pub fn capabilities_compiled() -> &'static str {
    // SAFETY: the library answers a static string it owns for the whole process.
    unsafe { static_str(ffi::uform_capabilities_compiled()) }
}

/// Comma-separated hardware capabilities this machine offers at runtime: the subset of
/// [`capabilities_compiled`] it can run, in the same order and vocabulary.
///
/// Calls `uform_capabilities_available`.
pub fn capabilities_available() -> &'static str {
    // SAFETY: the library answers a static string it owns for the whole process.
    unsafe { static_str(ffi::uform_capabilities_available()) }
}

/// Lists every GPU this process can drive into `devices`, NVIDIA devices first, then AMD,
/// and answers how many there are, which may exceed what `devices` holds (only that many
/// entries are written).
///
/// A vendor this build does not compile, or whose runtime is absent, lists no devices, so a
/// machine without GPUs answers zero.
///
/// ```
/// let mut devices = [uform::GPUDevice::default(); 8];
/// let count = uform::gpu_devices(&mut devices)?;
/// for device in &devices[..count.min(devices.len())] {
///     println!("{}: {} bytes", device.name(), device.memory_bytes());
/// }
/// # Ok::<(), uform::Error>(())
/// ```
///
/// Calls `uform_gpu_devices`.
///
/// # Errors
/// Whatever the library answers while probing the drivers.
pub fn gpu_devices(devices: &mut [GPUDevice]) -> Result<usize> {
    linked_library()?;
    let mut count = 0usize;
    let pointer =
        if devices.is_empty() { std::ptr::null_mut() } else { devices.as_mut_ptr().cast::<ffi::uform_gpu_device_t>() };
    // SAFETY: GPUDevice is repr(transparent) over uform_gpu_device_t, so `pointer` addresses
    // `devices.len()` writable entries of the C layout (or is NULL with capacity 0).
    check(unsafe { ffi::uform_gpu_devices(pointer, devices.len(), &mut count) })?;
    Ok(count)
}

/// The version of the `libuform` actually linked, e.g. `"4.0.0-rc.1"`: this crate's own.
///
/// A library of any other version is refused: constructors, verbs and
/// [`gpu_devices`] then answer [`Status::Mismatch`], naming both versions.
pub fn version() -> &'static str {
    // SAFETY: the library answers a static string it owns for the whole process.
    unsafe { static_str(ffi::uform_version()) }
}

/// `Ok(())` when the linked `libuform` is the version whose header this crate's declarations
/// mirror, checked once per process; otherwise the [`Status::Mismatch`] every entry point
/// answers, since calling a library of another version through these declarations could
/// misread its structures.
pub(crate) fn linked_library() -> Result<()> {
    static CHECKED: OnceLock<Result<()>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            // SAFETY: a plain query of a number.
            let number = unsafe { ffi::uform_version_number() };
            check_version(version(), number)
        })
        .clone()
}

/// Compares what the linked library reports about itself with the header this crate mirrors.
fn check_version(linked: &str, linked_number: c_int) -> Result<()> {
    if linked == ffi::UFORM_VERSION_STRING && linked_number == ffi::UFORM_VERSION_NUMBER {
        return Ok(());
    }
    Err(Error::new(
        Status::Mismatch,
        format!(
            "the uform crate {} is built for libuform {} ({}), but the process linked libuform {:?} ({}); \
             rebuild the crate against the library it links, or point UFORM_LIB_DIR at a libuform {}",
            env!("CARGO_PKG_VERSION"),
            ffi::UFORM_VERSION_STRING,
            ffi::UFORM_VERSION_NUMBER,
            linked,
            linked_number,
            ffi::UFORM_VERSION_STRING,
        ),
    ))
}

#[cfg(test)]
mod linked_version {
    use super::*;

    #[test]
    fn the_linked_library_is_the_one_the_crate_mirrors() {
        assert_eq!(linked_library(), Ok(()));
        // SAFETY: a plain query of a number.
        assert_eq!(check_version(version(), unsafe { ffi::uform_version_number() }), Ok(()));
    }

    #[test]
    fn another_version_is_refused_naming_both() {
        for (linked, number) in [("4.1.0", 40100), ("4.0.0-rc.1", 40001), ("4.0.0", 40000), ("", 0)] {
            let error = check_version(linked, number).unwrap_err();
            assert_eq!(error.status(), Status::Mismatch, "{linked} {number}");
            let message = error.message();
            assert!(message.contains(ffi::UFORM_VERSION_STRING), "{message}");
            assert!(message.contains(&format!("{linked:?} ({number})")), "{message}");
            assert!(message.contains("UFORM_LIB_DIR"), "{message}");
        }
    }
}
