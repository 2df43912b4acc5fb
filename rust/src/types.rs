//! Hardware vocabulary, statuses, executors and the verbs that run on them.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::os::raw::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{check, ffi, linked_library, Error, Result};

/// Declares a C enum's Rust twin: the enum with the C numbers as discriminants, and the
/// private checked conversion from the number C hands over, so no value is transmuted.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $value:literal => $snake:literal, )+
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $( $(#[$variant_meta])* $variant = $value, )+
        }

        impl $name {
            /// The variant whose C number is `raw`; `None` for 0 or a number this crate does not know.
            #[allow(dead_code)]
            pub(crate) fn from_raw(raw: u32) -> Option<Self> {
                match raw {
                    $( $value => Some(Self::$variant), )+
                    _ => None,
                }
            }

            /// The C number.
            #[allow(dead_code)]
            pub(crate) fn to_raw(self) -> u32 {
                self as u32
            }

            /// The snake-case name, the C library's own.
            #[allow(dead_code)]
            pub(crate) fn snake_name(self) -> &'static str {
                match self {
                    $( Self::$variant => $snake, )+
                }
            }

            /// Parses the snake-case name or the upper-case C/Python member name, case-insensitive.
            #[allow(dead_code)]
            pub(crate) fn parse_name(text: &str) -> Option<Self> {
                let text = text.trim();
                $( if text.eq_ignore_ascii_case($snake) { return Some(Self::$variant); } )+
                None
            }

            /// Every variant, in number order.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [Self] = &[ $( Self::$variant, )+ ];
        }
    };
}

/// Implements Display (the snake-case name) and FromStr (snake-case or the upper-case member
/// name, case-insensitive; anything else is [`Status::NotFound`], as the C parser answers).
macro_rules! named {
    ($name:ident, $what:literal) => {
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.snake_name())
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(text: &str) -> Result<Self> {
                Self::parse_name(text)
                    .ok_or_else(|| Error::new(Status::NotFound, format!("unknown {} name {:?}", $what, text)))
            }
        }
    };
}

c_enum! {
    /// What a call of the C library answered: [`Status::Ok`] or the reason it failed.
    ///
    /// Mirrors `uform_status_t`, whose numbers are pinned forever; a library newer than this
    /// crate may add statuses, hence `non_exhaustive`. Displays as the C library's message.
    #[non_exhaustive]
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum Status {
        /// Success.
        Ok = 0 => "ok",
        /// Not supported by this build, this machine or this design.
        Unsupported = 1 => "unsupported",
        /// Another call holds the executor, or its deferred table is full.
        Contended = 2 => "contended",
        /// An argument was invalid.
        InvalidArgument = 3 => "invalid_argument",
        /// Memory ran out.
        OutOfMemory = 4 => "out_of_memory",
        /// No such device, domain or entry.
        NotFound = 5 => "not_found",
        /// The device or its driver failed.
        DeviceFault = 6 => "device_fault",
        /// The wait timed out.
        Timeout = 7 => "timeout",
        /// Peers or inputs disagree.
        Mismatch = 8 => "mismatch",
        /// An input/output error.
        IoError = 9 => "io_error",
        /// Interrupted.
        Interrupted = 10 => "interrupted",
        /// The object was inherited across `fork()` and cannot be used in the child.
        Forked = 11 => "forked",
        /// A callback reported a failure: in Rust, a closure panicked.
        CallbackFailed = 12 => "callback_failed",
        /// A malformed hardware description or input text.
        Malformed = 13 => "malformed",
    }
}

impl Status {
    /// The C name without prefix: `"OK"`, `"TIMEOUT"`, ... as `uform_status_name` answers.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Unsupported => "UNSUPPORTED",
            Status::Contended => "CONTENDED",
            Status::InvalidArgument => "INVALID_ARGUMENT",
            Status::OutOfMemory => "OUT_OF_MEMORY",
            Status::NotFound => "NOT_FOUND",
            Status::DeviceFault => "DEVICE_FAULT",
            Status::Timeout => "TIMEOUT",
            Status::Mismatch => "MISMATCH",
            Status::IoError => "IO_ERROR",
            Status::Interrupted => "INTERRUPTED",
            Status::Forked => "FORKED",
            Status::CallbackFailed => "CALLBACK_FAILED",
            Status::Malformed => "MALFORMED",
        }
    }

    /// The static, human-readable message, as `uform_status_message` answers.
    pub fn message(self) -> &'static str {
        match self {
            Status::Ok => "success",
            Status::Unsupported => "not supported by this build, this machine or this design",
            Status::Contended => "another call holds the executor, or its deferred table is full",
            Status::InvalidArgument => "invalid argument",
            Status::OutOfMemory => "out of memory",
            Status::NotFound => "no such device, domain or entry",
            Status::DeviceFault => "the device or its driver failed",
            Status::Timeout => "the wait timed out",
            Status::Mismatch => "peers or inputs disagree",
            Status::IoError => "input/output error",
            Status::Interrupted => "interrupted",
            Status::Forked => "the object was inherited across fork() and cannot be used in the child",
            Status::CallbackFailed => "a callback reported a failure",
            Status::Malformed => "malformed hardware description or input text",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

c_enum! {
    /// What an executor's idle workers do between calls.
    ///
    /// Mirrors `uform_mood_t`. New executors start [`Mood::Parked`].
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum Mood {
        /// Busy-poll and never sleep: the lowest latency, a core per worker.
        Spinning = 1 => "spinning",
        /// Spin for a short time budget (`UFORM_SPIN_MICROSECONDS`, 50 µs by default), then
        /// sleep in the kernel, woken at once by the next call.
        Parked = 2 => "parked",
    }
}

c_enum! {
    /// The CPU families UForm ships tuned variants for: dispatch reports its pick in this
    /// vocabulary, and a RAM placement may pin one.
    ///
    /// Mirrors `uform_cpu_class_t`. Displays as the snake-case name (`amd_genoa`); parses
    /// that or the upper-case member name (`AMD_GENOA`), case-insensitive.
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum CPUClass {
        /// The portable floor: no SIMD assumptions.
        Serial = 1 => "serial",
        /// Haswell-class x86: AVX2 & FMA, the 256-bit floor.
        IntelHaswell = 2 => "intel_haswell",
        /// Sierra Forest-class x86 - the E-core Xeons: AVX-VNNI and its successors without AVX-512.
        IntelSierra = 3 => "intel_sierra",
        /// Skylake-class x86: the AVX-512 foundation tier.
        IntelSkylake = 4 => "intel_skylake",
        /// Icelake-class x86: AVX-512 VNNI & VPOPCNT.
        IntelIcelake = 5 => "intel_icelake",
        /// Genoa-class x86 - Zen 4 and newer: native bf16 dot products over AVX-512.
        AmdGenoa = 6 => "amd_genoa",
        /// Sapphire Rapids-class x86: the Genoa bundle plus AVX-512 FP16 and the AMX-BF16 & AMX-INT8 tiles.
        IntelSapphire = 7 => "intel_sapphire",
        /// Granite Rapids-class x86: the Sapphire Rapids bundle plus the AMX-FP16 tiles.
        IntelGranite = 8 => "intel_granite",
        /// Diamond Rapids-class x86: the Granite Rapids bundle plus AVX10.2's FP8 conversions.
        IntelDiamond = 9 => "intel_diamond",
        /// Graviton2-class Arm - Neoverse N1, the bare NEON floor; phones predating Armv8.6 land here too.
        AwsG2 = 10 => "aws_g2",
        /// Armv8.6+ NEON: dot products, bf16 & f16 fused multiplies - Apple M2, Cortex-A710 & X2 class silicon.
        AppleM2 = 11 => "apple_m2",
        /// Apple M4-class Arm: the Armv8.6 NEON bundle plus the SME outer-product tiles.
        AppleM4 = 12 => "apple_m4",
        /// Graviton5-class Arm - Neoverse V3, Armv9.2.
        AwsG5 = 13 => "aws_g5",
        /// Vera-class Arm - NVIDIA's Armv9.2-generation cores with FP8 dot products.
        NvidiaVera = 14 => "nvidia_vera",
        /// Alibaba C930-class RISC-V - T-Head's XuanTie core, RVA23 vectors.
        AlibabaC930 = 15 => "alibaba_c930",
        /// WebAssembly every engine loads: 32-bit, single-threaded, the fixed-width simd128 tier.
        Wasm32V128 = 16 => "wasm32_v128",
        /// WebAssembly with relaxed SIMD, shared memory for real thread pools, and 64-bit addressing.
        Wasm64Extended = 17 => "wasm64_extended",
        /// The one class of a monoversioned build: every capability its floor implies or its
        /// preset vouches for, as the kernel libraries compiled them.
        Monoversioned = 18 => "monoversioned",
    }
}
named!(CPUClass, "CPU class");

c_enum! {
    /// The GPU families UForm ships tuned variants for, the device twin of [`CPUClass`]:
    /// dispatch reports its pick in this vocabulary, and a VRAM placement may pin one.
    ///
    /// Mirrors `uform_gpu_class_t`. Displays as the snake-case name (`nvidia_hopper`); parses
    /// that or the upper-case member name (`NVIDIA_HOPPER`), case-insensitive.
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum GPUClass {
        /// Ampere-class NVIDIA and every GPU without a class of its own - A100, A10 & RTX 30.
        NvidiaAmpere = 1 => "nvidia_ampere",
        /// Ada-class NVIDIA - L4, L40S & RTX 40: the fp8 conversions.
        NvidiaAda = 2 => "nvidia_ada",
        /// Hopper-class NVIDIA - H100 & H200.
        NvidiaHopper = 3 => "nvidia_hopper",
        /// Blackwell-class NVIDIA - B200, B300 & GB300.
        NvidiaBlackwell = 4 => "nvidia_blackwell",
        /// Consumer Blackwell NVIDIA - RTX 50, RTX PRO 6000 & DGX Spark.
        NvidiaBlackwellRtx = 5 => "nvidia_blackwellrtx",
        /// Rubin-class NVIDIA - the Vera-Rubin platform's device half.
        NvidiaRubin = 6 => "nvidia_rubin",
        /// CDNA3 AMD - MI300X & MI325X: gfx942, FNUZ fp8.
        AmdCdna3 = 7 => "amd_cdna3",
        /// CDNA4 AMD - MI350X & MI355X: gfx950, OCP fp8.
        AmdCdna4 = 8 => "amd_cdna4",
        /// CDNA5 AMD - MI400: gfx1250.
        AmdCdna5 = 9 => "amd_cdna5",
        /// Apple7-family GPUs and every Apple GPU without a class of its own - M1 & M2.
        AppleMetal7 = 10 => "apple_metal7",
        /// Apple9-family GPUs - M3 & M4.
        AppleMetal9 = 11 => "apple_metal9",
        /// Apple10-family GPUs - M5.
        AppleMetal10 = 12 => "apple_metal10",
    }
}
named!(GPUClass, "GPU class");

c_enum! {
    /// The GPU vendors one binary drives at once.
    ///
    /// Mirrors `uform_gpu_vendor_t`.
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum GPUVendor {
        /// NVIDIA, through the CUDA driver.
        Nvidia = 1 => "nvidia",
        /// AMD, through the HIP runtime.
        Amd = 2 => "amd",
        /// Apple, through Metal.
        Apple = 3 => "apple",
    }
}

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

/// One GPU as UForm numbers it: its position in what [`gpu_devices`](crate::gpu_devices)
/// lists is the ordinal every VRAM placement names it by.
///
/// Mirrors `uform_gpu_device_t`.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct GPUDevice(ffi::uform_gpu_device_t);

impl GPUDevice {
    /// The vendor whose runtime drives the device; `None` for a vendor this crate does not know.
    pub fn vendor(&self) -> Option<GPUVendor> {
        GPUVendor::from_raw(self.0.vendor)
    }

    /// The device's ordinal in its vendor's runtime, as `nvidia-smi` or `rocm-smi` list it.
    pub fn vendor_ordinal(&self) -> u32 {
        self.0.vendor_ordinal
    }

    /// The class whose kernels run on it; `None` for a device without a class.
    pub fn gpu_class(&self) -> Option<GPUClass> {
        GPUClass::from_raw(self.0.gpu_class)
    }

    /// Streaming multiprocessors or compute units.
    pub fn compute_units(&self) -> u32 {
        self.0.compute_units
    }

    /// Device memory in bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.0.memory_bytes
    }

    /// The vendor's own name for the device, cut before a character the truncation split.
    pub fn name(&self) -> &str {
        let bytes: &[u8] = {
            let name = &self.0.name;
            // SAFETY: c_char and u8 have one size and alignment; the array outlives the slice.
            unsafe { std::slice::from_raw_parts(name.as_ptr().cast::<u8>(), name.len()) }
        };
        let end = bytes.iter().position(|&byte| byte == 0).unwrap_or(bytes.len());
        let bytes = &bytes[..end];
        match std::str::from_utf8(bytes) {
            Ok(text) => text,
            // Keep the longest valid prefix: a name the driver truncated mid-character, or
            // anything else not UTF-8, never reaches the caller as invalid text.
            Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or(""),
        }
    }
}

impl fmt::Debug for GPUDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GPUDevice")
            .field("vendor", &self.vendor())
            .field("vendor_ordinal", &self.vendor_ordinal())
            .field("gpu_class", &self.gpu_class())
            .field("compute_units", &self.compute_units())
            .field("memory_bytes", &self.memory_bytes())
            .field("name", &self.name())
            .finish()
    }
}

/// The host threads or device streams an [`On`] runs its calls on, with the activation scratch
/// and the staging buffers each of them uses.
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

// ------------------------------------------------------------------------------------------
// Verbs

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
    _mode: PhantomData<M>,
}

impl<'e> On<'e> {
    /// Synchronous calls on `executor`, without progress.
    pub fn new(executor: &'e Executor) -> Self {
        Self { executor, progress: None, _mode: PhantomData }
    }
}

impl<'e, P> On<'e, Now, P> {
    /// Makes the calls deferred: each returns a [`Deferred`] at once. Deferred closures (and
    /// the progress callback) must be `'static`, since a handle may be leaked while the call
    /// still runs.
    pub fn deferred(self) -> On<'e, Later, P> {
        On { executor: self.executor, progress: self.progress, _mode: PhantomData }
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
        On { executor: self.executor, progress: Some(Arc::new(progress)), _mode: PhantomData }
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
            .finish()
    }
}

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

unsafe extern "C" fn progress_trampoline<R, P>(context: *mut c_void, done: usize, total: usize)
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
type Submit =
    unsafe fn(*mut ffi::uform_executor_t, *const ffi::uform_call_t, usize, *mut c_void) -> ffi::uform_status_t;

unsafe fn submit_for_n<F: Fn(usize, usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: forwarded from the caller, which keeps `context` alive as the call needs.
    unsafe { ffi::uform_executor_for_n(executor, call, n, Some(task_trampoline::<F>), context) }
}

unsafe fn submit_for_n_dynamic<F: Fn(usize, usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_n_dynamic(executor, call, n, Some(task_trampoline::<F>), context) }
}

unsafe fn submit_for_threads<F: Fn(usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    _: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_threads(executor, call, Some(thread_trampoline::<F>), context) }
}

unsafe fn submit_for_slices<F: Fn(Range<usize>, usize) + Sync>(
    executor: *mut ffi::uform_executor_t,
    call: *const ffi::uform_call_t,
    n: usize,
    context: *mut c_void,
) -> ffi::uform_status_t {
    // SAFETY: as in submit_for_n.
    unsafe { ffi::uform_executor_for_slices(executor, call, n, Some(slice_trampoline::<F>), context) }
}

/// The error a finished call answers, preferring a closure's own failure (its panic, or the
/// error a device function returned) over C's generic detail.
fn outcome(raw: ffi::uform_status_t, task: Option<Error>, progress: Option<Error>) -> Result<()> {
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

    /// As [`On::for_n`], but threads take tasks one at a time from a shared counter, for tasks
    /// of uneven cost.
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
        let mut deferred = Deferred { raw: None, task: task as NonNull<dyn Captured>, progress };
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
}

/// A deferred call in flight or finished, returned by an [`On`] made
/// [`deferred`](On::deferred).
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
    raw: Option<NonNull<ffi::uform_deferred_t>>,
    task: NonNull<dyn Captured>,
    progress: Option<NonNull<dyn Captured>>,
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
        let owned = Owned { raw: self.raw, task: self.task, progress: self.progress };
        if let Some(raw) = self.raw {
            // SAFETY: a live handle this value owns. A zero wait never blocks; it answers
            // INVALID_ARGUMENT exactly when the call has yet to finish and this thread runs a
            // callback of the executor that must run it. There uform_deferred_free would let
            // the handle go without waiting, and freeing the closures now would free them
            // while this call (or a call queued behind it) still uses them.
            let unwaitable = unsafe { ffi::uform_deferred_wait(raw.as_ptr(), 0.0) };
            if unwaitable == ffi::UFORM_STATUS_INVALID_ARGUMENT {
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

/// The Rust names and messages against the C library's own, so neither side drifts.
#[cfg(test)]
mod agree_with_c {
    use super::*;
    use std::ffi::{CStr, CString};

    fn c_str(pointer: *const std::os::raw::c_char) -> Option<&'static str> {
        // SAFETY: the library answers NULL or static strings it owns.
        (!pointer.is_null()).then(|| unsafe { CStr::from_ptr(pointer) }.to_str().unwrap())
    }

    #[test]
    fn status_names_and_messages() {
        for &status in Status::ALL {
            // SAFETY: plain queries of static strings.
            unsafe {
                assert_eq!(c_str(ffi::uform_status_name(status.to_raw())), Some(status.name()));
                assert_eq!(c_str(ffi::uform_status_message(status.to_raw())), Some(status.message()));
            }
            assert_eq!(Status::from_raw(status.to_raw()), Some(status));
        }
        assert_eq!(Status::from_raw(ffi::UFORM_STATUS_COUNT), None);
    }

    #[test]
    fn cpu_class_names_and_parsing() {
        for &class in CPUClass::ALL {
            // SAFETY: plain queries of static strings.
            assert_eq!(c_str(unsafe { ffi::uform_cpu_class_name(class.to_raw()) }), Some(class.snake_name()));
            for spelling in [class.snake_name().to_string(), class.snake_name().to_ascii_uppercase()] {
                let text = CString::new(spelling.clone()).unwrap();
                let mut parsed = 0;
                // SAFETY: a valid string and output.
                assert_eq!(unsafe { ffi::uform_cpu_class_parse(text.as_ptr(), &mut parsed) }, ffi::UFORM_STATUS_OK);
                assert_eq!(parsed, class.to_raw());
                assert_eq!(spelling.parse::<CPUClass>().unwrap(), class);
            }
        }
        // SAFETY: plain queries.
        unsafe {
            assert!(ffi::uform_cpu_class_name(0).is_null());
            assert!(CPUClass::from_raw(ffi::uform_cpu_class_derived()).is_some(), "the derived class is a class");
        }
    }

    #[test]
    fn gpu_class_names_and_parsing() {
        for &class in GPUClass::ALL {
            // SAFETY: plain queries of static strings.
            assert_eq!(c_str(unsafe { ffi::uform_gpu_class_name(class.to_raw()) }), Some(class.snake_name()));
            for spelling in [class.snake_name().to_string(), class.snake_name().to_ascii_uppercase()] {
                let text = CString::new(spelling.clone()).unwrap();
                let mut parsed = 0;
                // SAFETY: a valid string and output.
                assert_eq!(unsafe { ffi::uform_gpu_class_parse(text.as_ptr(), &mut parsed) }, ffi::UFORM_STATUS_OK);
                assert_eq!(parsed, class.to_raw());
                assert_eq!(spelling.parse::<GPUClass>().unwrap(), class);
            }
        }
    }

    #[test]
    fn unknown_numbers_are_refused() {
        assert_eq!(CPUClass::from_raw(0), None);
        assert_eq!(CPUClass::from_raw(19), None);
        assert_eq!(GPUClass::from_raw(0), None);
        assert_eq!(GPUClass::from_raw(13), None);
        assert_eq!(GPUVendor::from_raw(0), None);
        assert_eq!(GPUVendor::from_raw(4), None);
        assert_eq!(Mood::from_raw(0), None);
        assert_eq!(Mood::from_raw(3), None);
    }

    #[test]
    fn gpu_device_fields_are_checked() {
        let mut raw = ffi::uform_gpu_device_t { vendor: 9, gpu_class: 99, ..Default::default() };
        assert_eq!(GPUDevice(raw).vendor(), None);
        assert_eq!(GPUDevice(raw).gpu_class(), None);
        raw.vendor = 1;
        raw.gpu_class = 3;
        raw.vendor_ordinal = 2;
        raw.compute_units = 132;
        raw.memory_bytes = 141 << 30;
        // "NVIDIA H200 é" cut inside the two-byte é: the name stops before it.
        let name = "NVIDIA H200 \u{e9}".as_bytes();
        for (slot, &byte) in raw.name.iter_mut().zip(&name[..name.len() - 1]) {
            *slot = byte as std::os::raw::c_char;
        }
        let device = GPUDevice(raw);
        assert_eq!(device.vendor(), Some(GPUVendor::Nvidia));
        assert_eq!(device.gpu_class(), Some(GPUClass::NvidiaHopper));
        assert_eq!(device.vendor_ordinal(), 2);
        assert_eq!(device.compute_units(), 132);
        assert_eq!(device.memory_bytes(), 141 << 30);
        assert_eq!(device.name(), "NVIDIA H200 ");
        // A full buffer without a terminator is still read within bounds.
        raw.name = [b'x' as std::os::raw::c_char; ffi::UFORM_GPU_NAME_CAPACITY];
        assert_eq!(GPUDevice(raw).name().len(), ffi::UFORM_GPU_NAME_CAPACITY);
    }
}
