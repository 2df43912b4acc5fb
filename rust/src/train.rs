//! The multi-process mesh: the processes training one model meet through a shared directory.

use std::ffi::{c_void, CString};
use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::str::FromStr;

use crate::{check, ffi, Error, Executor, GPUClass, Result, Status};

c_enum! {
    /// How a mesh's NVLink domains reduce.
    ///
    /// Mirrors `uform_multimem_tier_t`. Displays as the snake-case name (`switch_reduced`);
    /// parses that or the upper-case member name (`SWITCH_REDUCED`), case-insensitive.
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum MultimemTier {
        /// The NVLink switch reduces through multicast memory.
        SwitchReduced = 0 => "switch_reduced",
        /// Every member reads its peers in a fixed order, where multicast is absent;
        /// bit-identical results.
        PeerRead = 1 => "peer_read",
    }
}
named!(MultimemTier, "multimem tier");

/// Where this process sits among the processes training one model, and how they meet.
///
/// Mirrors `uform_mesh_options_t`. The default is a run of one process: no peers, no
/// directory, the derived multicast extent and the 120-second timeout.
///
/// ```
/// use std::path::Path;
/// let options = uform::MeshOptions {
///     host_domain_index: 1,
///     host_domain_count: 4,
///     directory: Path::new("/shared/rendezvous"),
///     job: "llama-pretrain-0042",
///     ..Default::default()
/// };
/// assert_eq!(options.timeout_seconds, 0.0); // zero derives 120 seconds
/// ```
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct MeshOptions<'options> {
    /// This process's index among `host_domain_count`.
    pub host_domain_index: usize,
    /// Processes in the run, one per host; zero derives one, a run with no peers.
    pub host_domain_count: usize,
    /// GPUs one NVLink multicast domain spans, a fabric property no local probe sees; zero
    /// derives the host.
    pub gpus_per_multimem_domain: usize,
    /// The directory every host sees, where processes exchange their facts; required with
    /// peers. Empty means none.
    pub directory: &'options Path,
    /// The run's unique name inside `directory`; required with peers. Empty means none.
    pub job: &'options str,
    /// Seconds any wait for a peer lasts before the call fails; zero derives 120.
    pub timeout_seconds: f64,
}

impl Default for MeshOptions<'_> {
    fn default() -> Self {
        Self {
            host_domain_index: 0,
            host_domain_count: 0,
            gpus_per_multimem_domain: 0,
            directory: Path::new(""),
            job: "",
            timeout_seconds: 0.0,
        }
    }
}

/// A C string for an optional borrowed text: `None` for empty, an error for an interior NUL.
fn c_text(bytes: &[u8], what: &str) -> Result<Option<CString>> {
    if bytes.is_empty() {
        return Ok(None);
    }
    CString::new(bytes)
        .map(Some)
        .map_err(|_| Error::new(Status::InvalidArgument, format!("MeshOptions::{what} holds a NUL byte")))
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Result<&[u8]> {
    use std::os::unix::ffi::OsStrExt;
    Ok(path.as_os_str().as_bytes())
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Result<&[u8]> {
    path.to_str()
        .map(str::as_bytes)
        .ok_or_else(|| Error::new(Status::InvalidArgument, "MeshOptions::directory is not valid UTF-8"))
}

/// What a mesh reports about itself.
///
/// Mirrors `uform_mesh_description_t`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct MeshDescription {
    /// GPUs one process drives.
    pub gpus_per_host_domain: usize,
    /// GPUs one NVLink domain spans.
    pub gpus_per_multimem_domain: usize,
    /// GPUs in the whole run.
    pub gpus_per_colocated_domain: usize,
    /// This process's index among the run's processes.
    pub host_domain_index: usize,
    /// The run-wide index of this process's first GPU, where its share of a sharded dataset
    /// begins.
    pub first_gpu_index: usize,
    /// How its NVLink domains reduce.
    pub multimem_tier: MultimemTier,
    /// The class every GPU of the run dispatches as: the executor's pin, or the devices' own.
    pub gpu_class: Option<GPUClass>,
}

impl MeshDescription {
    /// Checks the numbers C hands over instead of trusting them.
    fn from_raw(raw: &ffi::uform_mesh_description_t) -> Result<Self> {
        let multimem_tier = MultimemTier::from_raw(raw.multimem_tier).ok_or_else(|| {
            Error::new(Status::Malformed, format!("libuform described an unknown multimem tier {}", raw.multimem_tier))
        })?;
        let gpu_class = match raw.gpu_class {
            0 => None,
            number => Some(GPUClass::from_raw(number).ok_or_else(|| {
                Error::new(Status::Malformed, format!("libuform described an unknown GPU class {number}"))
            })?),
        };
        Ok(Self {
            gpus_per_host_domain: raw.gpus_per_host_domain,
            gpus_per_multimem_domain: raw.gpus_per_multimem_domain,
            gpus_per_colocated_domain: raw.gpus_per_colocated_domain,
            host_domain_index: raw.host_domain_index,
            first_gpu_index: raw.first_gpu_index,
            multimem_tier,
            gpu_class,
        })
    }
}

/// One process's place among the processes of a run: the topology every process agreed on
/// at bootstrap, and the InfiniBand domain joining its NVLink domains, borrowed by every
/// trainer.
///
/// Mirrors `uform_mesh_t`; dropping it calls `uform_mesh_free`, after every trainer borrowing
/// it.
///
/// The mesh holds its executor inside the library: the [`Executor`] it was bootstrapped over
/// may be dropped first (that drop answers at once, leaving the executor's threads and streams
/// to the mesh), and dropping the mesh then closes the executor.
pub struct Mesh {
    raw: NonNull<ffi::uform_mesh_t>,
}

// SAFETY: a mesh is immutable once bootstrapped: the verbs reading it, uform_mesh_describe and
// uform_mesh_communicator, take a const pointer and copy the agreed description or a
// communicator's address out, and uform_mesh_free runs only from Drop, which has the value to
// itself. The executor it uses is its own reference, not a borrow of the Executor value. Nothing
// in it is tied to the bootstrapping thread, so it may move (Send) and be read from many threads
// (Sync).
unsafe impl Send for Mesh {}
// SAFETY: see Send above.
unsafe impl Sync for Mesh {}

impl Mesh {
    /// Joins this process to the run's mesh through a one-time rendezvous in
    /// `options.directory`; every process of the run calls it with the same count, multicast
    /// extent, directory and job, over a VRAM executor whose devices are this process's
    /// members.
    ///
    /// Calls `uform_mesh_bootstrap`.
    ///
    /// # Errors
    /// [`Status::InvalidArgument`] over the null or a RAM executor (the mesh needs a VRAM
    /// one) or for bad options (an index out of range, a job that is not a plain name, a NUL
    /// byte in the directory or job); while meeting peers, [`Status::NotFound`],
    /// [`Status::Timeout`] (naming the indices that never arrived), [`Status::Mismatch`]
    /// (peers disagree) or [`Status::IoError`].
    pub fn bootstrap(executor: &Executor, options: &MeshOptions<'_>) -> Result<Self> {
        crate::linked_library()?;
        let directory = c_text(path_bytes(options.directory)?, "directory")?;
        let job = c_text(options.job.as_bytes(), "job")?;
        let raw_options = ffi::uform_mesh_options_t {
            struct_size: std::mem::size_of::<ffi::uform_mesh_options_t>(),
            host_domain_index: options.host_domain_index,
            host_domain_count: options.host_domain_count,
            gpus_per_multimem_domain: options.gpus_per_multimem_domain,
            directory: directory.as_ref().map_or(ptr::null(), |text| text.as_ptr()),
            job: job.as_ref().map_or(ptr::null(), |text| text.as_ptr()),
            timeout_seconds: options.timeout_seconds,
            cancel: std::ptr::null(),
        };
        let mut raw = ptr::null_mut();
        // SAFETY: the options and the strings they borrow live across the call; the executor
        // is NULL or live; `raw` is a valid output.
        check(unsafe { ffi::uform_mesh_bootstrap(executor.as_raw(), &raw_options, &mut raw) })?;
        let raw =
            NonNull::new(raw).ok_or_else(|| Error::new(Status::Malformed, "libuform answered OK without a mesh"))?;
        Ok(Self { raw })
    }

    /// Reports the mesh's shape and this process's place in it.
    ///
    /// Calls `uform_mesh_describe`.
    ///
    /// # Errors
    /// [`Status::Malformed`] should the library describe a tier or class this crate does not
    /// know; otherwise whatever the library answers.
    pub fn describe(&self) -> Result<MeshDescription> {
        let mut raw = ffi::uform_mesh_description_t::default();
        // SAFETY: `self.raw` is a live mesh this value owns; `raw` is a valid output.
        check(unsafe { ffi::uform_mesh_describe(self.raw.as_ptr(), &mut raw) })?;
        MeshDescription::from_raw(&raw)
    }

    /// The NCCL communicator (an `ncclComm_t`) of this process's device `device`, its index
    /// among the executor's devices, spanning every GPU of the run: its rank is
    /// `first_gpu_index + device`, its size `gpus_per_colocated_domain`. Hand it to an NCCL
    /// binding for collectives; they are NCCL's, not uform's.
    ///
    /// Calls `uform_mesh_communicator`.
    ///
    /// # Ownership
    /// Getting the pointer is safe; using it is `unsafe` FFI. It is borrowed from the mesh,
    /// which owns the communicator and destroys it (`ncclCommDestroy`) when it drops: use it
    /// only while this `Mesh` lives, and never destroy or abort it yourself. NCCL calls on one
    /// communicator from several threads at once need the caller's own ordering, as NCCL asks.
    ///
    /// # Errors
    /// [`Status::NotFound`] when the mesh formed without a data plane (no `libnccl.so.2` in
    /// this process or at index 0; the message says "no data plane" and why);
    /// [`Status::InvalidArgument`] for a `device` past the executor's devices.
    pub fn communicator(&self, device: usize) -> Result<*mut c_void> {
        let mut communicator = ptr::null_mut();
        // SAFETY: `self.raw` is a live mesh this value owns; `communicator` is a valid output.
        check(unsafe { ffi::uform_mesh_communicator(self.raw.as_ptr(), device, &mut communicator) })?;
        if communicator.is_null() {
            return Err(Error::new(Status::Malformed, "libuform answered OK without a communicator"));
        }
        Ok(communicator)
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // SAFETY: a live mesh this value owns, freed once.
        unsafe { ffi::uform_mesh_free(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.describe() {
            Ok(description) => f.debug_tuple("Mesh").field(&description).finish(),
            Err(_) => f.debug_tuple("Mesh").field(&self.raw).finish(),
        }
    }
}
