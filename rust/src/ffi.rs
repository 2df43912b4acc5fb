//! Hand-written declarations of the C interface in `include/uform.h`, one for one.
//!
//! Nothing here is checked: the safe layer around it ([`crate::executor`], [`crate::on`],
//! [`crate::train`] and the other modules) validates every value on its way in and out. C
//! enums cross as `u32` (a C enum whose values are all non-negative and fit an `int` has the
//! size and alignment of `unsigned int` on every ABI we target), so a number the library might
//! add later is never transmuted into a Rust enum.
//! `tests/layout.rs` compiles a C program against the real header and compares every
//! `#[repr(C)]` struct's size, alignment and field offsets with these.

#![allow(non_camel_case_types, dead_code)]

use std::os::raw::{c_char, c_double, c_int, c_void};

/// `uform_status_t`: one of the `UFORM_STATUS_*` numbers.
pub type uform_status_t = u32;
/// `uform_cpu_class_t`: 0 (none / derive) or a class number.
pub type uform_cpu_class_t = u32;
/// `uform_gpu_class_t`: 0 (none / derive) or a class number.
pub type uform_gpu_class_t = u32;
/// `uform_mood_t`.
pub type uform_mood_t = u32;

/// `UFORM_VERSION_STRING` of the header these declarations mirror: the library this crate is
/// built for, which `crate::linked_library` compares with the one it links.
pub const UFORM_VERSION_STRING: &str = "4.0.0-rc.1";
/// `UFORM_VERSION_NUMBER` of that header: major * 10000 + minor * 100 + patch.
pub const UFORM_VERSION_NUMBER: c_int = 40000;

pub const UFORM_STATUS_OK: uform_status_t = 0;
pub const UFORM_STATUS_INVALID_ARGUMENT: uform_status_t = 3;
pub const UFORM_STATUS_CALLBACK_FAILED: uform_status_t = 12;
/// `UFORM_STATUS_COUNT_`: one past the highest status number.
pub const UFORM_STATUS_COUNT: uform_status_t = 14;
/// `UFORM_GPU_NAME_CAPACITY`.
pub const UFORM_GPU_NAME_CAPACITY: usize = 256;
/// `UFORM_DEFERRED_LIMIT_DEFAULT`.
pub const UFORM_DEFERRED_LIMIT_DEFAULT: usize = 64;
/// `UFORM_THREADS_MAX`.
pub const UFORM_THREADS_MAX: usize = 4096;

/// Opaque `uform_executor_t`.
#[repr(C)]
pub struct uform_executor_t {
    _opaque: [u8; 0],
}
/// Opaque `uform_deferred_t`.
#[repr(C)]
pub struct uform_deferred_t {
    _opaque: [u8; 0],
}
/// Opaque `uform_arena_t`.
#[repr(C)]
pub struct uform_arena_t {
    _opaque: [u8; 0],
}
/// Opaque `uform_mesh_t`.
#[repr(C)]
pub struct uform_mesh_t {
    _opaque: [u8; 0],
}

/// `uform_gpu_device_t`: size 280, alignment 8 on LP64.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct uform_gpu_device_t {
    pub vendor: u32,
    pub vendor_ordinal: u32,
    pub gpu_class: u32,
    pub compute_units: u32,
    pub memory_bytes: u64,
    pub name: [c_char; UFORM_GPU_NAME_CAPACITY],
}

impl Default for uform_gpu_device_t {
    fn default() -> Self {
        Self {
            vendor: 0,
            vendor_ordinal: 0,
            gpu_class: 0,
            compute_units: 0,
            memory_bytes: 0,
            name: [0; UFORM_GPU_NAME_CAPACITY],
        }
    }
}

/// `uform_mesh_options_t`; `struct_size` must be `size_of::<uform_mesh_options_t>()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct uform_mesh_options_t {
    pub struct_size: usize,
    pub host_domain_index: usize,
    pub host_domain_count: usize,
    pub gpus_per_multimem_domain: usize,
    pub directory: *const c_char,
    pub job: *const c_char,
    pub timeout_seconds: c_double,
    pub cancel: *const c_int,
}

/// `uform_mesh_description_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct uform_mesh_description_t {
    pub gpus_per_host_domain: usize,
    pub gpus_per_multimem_domain: usize,
    pub gpus_per_colocated_domain: usize,
    pub host_domain_index: usize,
    pub first_gpu_index: usize,
    pub multimem_tier: u32,
    pub gpu_class: u32,
}

/// `uform_device_slot_t`: one device of a VRAM executor, as a device function is given it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct uform_device_slot_t {
    pub device: usize,
    pub ordinal: i32,
    pub vendor: u32,
    pub native_device: i32,
    pub native_context: *mut c_void,
    pub stream: *mut c_void,
    pub thread: usize,
}

/// `uform_device_function_t`.
pub type uform_device_function_t =
    Option<unsafe extern "C" fn(context: *mut c_void, device: *const uform_device_slot_t) -> uform_status_t>;

/// `uform_task_t`.
pub type uform_task_t =
    Option<unsafe extern "C" fn(context: *mut c_void, task: usize, thread: usize) -> uform_status_t>;
/// `uform_slice_t`.
pub type uform_slice_t =
    Option<unsafe extern "C" fn(context: *mut c_void, first: usize, count: usize, thread: usize) -> uform_status_t>;
/// `uform_progress_t`.
pub type uform_progress_t = Option<unsafe extern "C" fn(context: *mut c_void, done: usize, total: usize)>;

/// `uform_call_t`; `struct_size` must be `size_of::<uform_call_t>()` (`UFORM_CALL_INIT`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct uform_call_t {
    pub struct_size: usize,
    pub deferred: *mut *mut uform_deferred_t,
    pub progress: uform_progress_t,
    pub progress_context: *mut c_void,
    /// `const volatile int *cancel`: non-NULL, the call is cancelled once it reads nonzero.
    pub cancel: *const c_int,
}

impl uform_call_t {
    /// `UFORM_CALL_INIT`.
    pub const INIT: Self = Self {
        struct_size: std::mem::size_of::<Self>(),
        deferred: std::ptr::null_mut(),
        progress: None,
        progress_context: std::ptr::null_mut(),
        cancel: std::ptr::null(),
    };
}

extern "C" {
    // uform.h
    pub fn uform_version() -> *const c_char;
    pub fn uform_version_number() -> c_int;

    // uform/status.h
    pub fn uform_status_message(status: uform_status_t) -> *const c_char;
    pub fn uform_status_name(status: uform_status_t) -> *const c_char;
    pub fn uform_last_error() -> *const c_char;

    // uform/hardware.h
    pub fn uform_gpu_devices(devices: *mut uform_gpu_device_t, capacity: usize, count: *mut usize) -> uform_status_t;
    pub fn uform_capabilities_compiled() -> *const c_char;
    pub fn uform_capabilities_available() -> *const c_char;
    pub fn uform_cpu_class_derived() -> uform_cpu_class_t;
    pub fn uform_cpu_class_name(cpu_class: uform_cpu_class_t) -> *const c_char;
    pub fn uform_cpu_class_parse(name: *const c_char, cpu_class: *mut uform_cpu_class_t) -> uform_status_t;
    pub fn uform_gpu_class_name(gpu_class: uform_gpu_class_t) -> *const c_char;
    pub fn uform_gpu_class_parse(name: *const c_char, gpu_class: *mut uform_gpu_class_t) -> uform_status_t;

    // uform/executor.h
    pub fn uform_executor_for_ram(
        memory_domains: *const i32,
        memory_domains_count: usize,
        cpu_class: uform_cpu_class_t,
        threads: usize,
        deferred_limit: usize,
        executor: *mut *mut uform_executor_t,
    ) -> uform_status_t;
    pub fn uform_executor_on_pool(
        memory_domains: *const i32,
        memory_domains_count: usize,
        cpu_class: uform_cpu_class_t,
        pool: *mut c_void,
        deferred_limit: usize,
        executor: *mut *mut uform_executor_t,
    ) -> uform_status_t;
    pub fn uform_executor_for_vram(
        devices: *const i32,
        devices_count: usize,
        gpu_class: uform_gpu_class_t,
        memory_domains: *const i32,
        memory_domains_count: usize,
        cpu_class: uform_cpu_class_t,
        streams: *const *mut c_void,
        streams_count: usize,
        scratch_limit: usize,
        deferred_limit: usize,
        executor: *mut *mut uform_executor_t,
    ) -> uform_status_t;
    pub fn uform_executor_drain(executor: *mut uform_executor_t, mood: uform_mood_t) -> uform_status_t;
    pub fn uform_executor_free(executor: *mut uform_executor_t) -> uform_status_t;
    pub fn uform_executor_threads(executor: *const uform_executor_t) -> usize;
    pub fn uform_executor_cpu_class(executor: *const uform_executor_t) -> uform_cpu_class_t;
    pub fn uform_executor_mood(executor: *const uform_executor_t) -> uform_mood_t;

    pub fn uform_executor_for_n(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        n: usize,
        task: uform_task_t,
        context: *mut c_void,
    ) -> uform_status_t;
    pub fn uform_executor_for_n_dynamic(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        n: usize,
        task: uform_task_t,
        context: *mut c_void,
    ) -> uform_status_t;
    pub fn uform_executor_for_threads(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        task: uform_task_t,
        context: *mut c_void,
    ) -> uform_status_t;
    pub fn uform_executor_for_slices(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        n: usize,
        slice: uform_slice_t,
        context: *mut c_void,
    ) -> uform_status_t;

    pub fn uform_deferred_poll(deferred: *const uform_deferred_t) -> uform_status_t;
    pub fn uform_deferred_cancel(deferred: *mut uform_deferred_t) -> uform_status_t;
    pub fn uform_deferred_wait(deferred: *mut uform_deferred_t, timeout_seconds: c_double) -> uform_status_t;
    pub fn uform_deferred_progress(
        deferred: *const uform_deferred_t,
        done: *mut usize,
        total: *mut usize,
    ) -> uform_status_t;
    pub fn uform_deferred_free(deferred: *mut uform_deferred_t);

    pub fn uform_arena_new_in(
        executor: *mut uform_executor_t,
        capacity: usize,
        arena: *mut *mut uform_arena_t,
    ) -> uform_status_t;
    pub fn uform_arena_allocate(
        arena: *mut uform_arena_t,
        bytes: usize,
        alignment: usize,
        pointer: *mut *mut c_void,
    ) -> uform_status_t;
    pub fn uform_arena_usage(arena: *const uform_arena_t, used: *mut usize, capacity: *mut usize) -> uform_status_t;
    pub fn uform_arena_free(arena: *mut uform_arena_t);

    // uform/vram.h
    pub fn uform_executor_devices(executor: *const uform_executor_t) -> usize;
    pub fn uform_executor_gpu_class(executor: *const uform_executor_t) -> uform_gpu_class_t;
    pub fn uform_executor_for_devices(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        function: uform_device_function_t,
        context: *mut c_void,
    ) -> uform_status_t;
    pub fn uform_executor_copy_to_device(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        device: usize,
        device_pointer: *mut c_void,
        host: *const c_void,
        bytes: usize,
    ) -> uform_status_t;
    pub fn uform_executor_copy_to_host(
        executor: *mut uform_executor_t,
        call: *const uform_call_t,
        host: *mut c_void,
        device: usize,
        device_pointer: *const c_void,
        bytes: usize,
    ) -> uform_status_t;
    pub fn uform_executor_order_stream(executor: *mut uform_executor_t, device: usize, stream: *mut c_void)
        -> uform_status_t;
    pub fn uform_executor_device_scratch(
        executor: *mut uform_executor_t,
        device: usize,
        bytes: usize,
        scratch: *mut *mut c_void,
    ) -> uform_status_t;
    pub fn uform_executor_staging(
        executor: *mut uform_executor_t,
        device: usize,
        bytes: usize,
        staging: *mut *mut c_void,
    ) -> uform_status_t;
    pub fn uform_arena_devices(arena: *const uform_arena_t) -> usize;
    pub fn uform_arena_device_pointer(
        arena: *const uform_arena_t,
        device: usize,
        pointer: *const c_void,
        device_pointer: *mut *mut c_void,
    ) -> uform_status_t;

    // uform/mesh.h
    pub fn uform_mesh_bootstrap(
        executor: *mut uform_executor_t,
        options: *const uform_mesh_options_t,
        mesh: *mut *mut uform_mesh_t,
    ) -> uform_status_t;
    pub fn uform_mesh_describe(mesh: *const uform_mesh_t, description: *mut uform_mesh_description_t)
        -> uform_status_t;
    pub fn uform_mesh_communicator(
        mesh: *const uform_mesh_t,
        device: usize,
        communicator: *mut *mut c_void,
    ) -> uform_status_t;
    pub fn uform_mesh_free(mesh: *mut uform_mesh_t);
}

// The LP64 layouts the header documents, checked at compile time; tests/layout.rs checks them
// against the C compiler's own answer.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<uform_gpu_device_t>() == 280);
    assert!(std::mem::align_of::<uform_gpu_device_t>() == 8);
    assert!(std::mem::size_of::<uform_mesh_options_t>() == 64);
    assert!(std::mem::size_of::<uform_mesh_description_t>() == 48);
    assert!(std::mem::size_of::<uform_call_t>() == 40);
    assert!(std::mem::size_of::<uform_device_slot_t>() == 48);
};

/// Checks these declarations against the C compiler's reading of the real header, by compiling
/// and running `tests/layout.c`, so the mirrors cannot drift from `include/uform.h`.
#[cfg(test)]
mod layout {
    use super::*;
    use crate::{CPUClass, GPUClass, GPUVendor, Mood, MultimemTier, Status};
    use std::collections::HashMap;
    use std::mem::{align_of, offset_of, size_of, MaybeUninit};
    use std::process::Command;
    use std::sync::OnceLock;

    /// "struct T" -> [size, align], "field T.f" -> [offset, size], "enum T" -> [size, align],
    /// "constant NAME" -> [value]; "string NAME" -> the text, one byte a number. None where no
    /// C compiler runs.
    fn facts() -> Option<&'static HashMap<String, Vec<i64>>> {
        static FACTS: OnceLock<Option<HashMap<String, Vec<i64>>>> = OnceLock::new();
        FACTS
            .get_or_init(|| {
                let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
                let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/layout.c");
                let program = std::env::temp_dir().join(format!("uform-layout-{}", std::process::id()));
                let built = Command::new(&compiler)
                    .args(["-std=c11", "-I", env!("UFORM_INCLUDE_DIR"), source, "-o"])
                    .arg(&program)
                    .status();
                match built {
                    Err(error) => {
                        eprintln!(
                            "layout: no C compiler ({compiler}: {error}); the compile-time LP64 checks still hold"
                        );
                        return None;
                    }
                    Ok(status) => assert!(status.success(), "{compiler} failed to compile {source}"),
                }
                let output = Command::new(&program).output().expect("the layout program runs");
                let _ = std::fs::remove_file(&program);
                assert!(output.status.success());
                let text = String::from_utf8(output.stdout).expect("ASCII output");
                let mut facts = HashMap::new();
                for line in text.lines() {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    let numbers = if words[0] == "string" {
                        words[2..].join(" ").bytes().map(i64::from).collect()
                    } else {
                        words[2..].iter().map(|word| word.parse().expect("a number")).collect()
                    };
                    facts.insert(format!("{} {}", words[0], words[1]), numbers);
                }
                Some(facts)
            })
            .as_ref()
    }

    fn fact(key: &str) -> &'static [i64] {
        facts().unwrap().get(key).unwrap_or_else(|| panic!("layout.c printed no {key:?}"))
    }

    fn size_of_pointee<F>(_: *const F) -> usize {
        size_of::<F>()
    }

    macro_rules! check_struct {
        ($type:ident { $($field:ident),+ $(,)? }) => {{
            let key = concat!("struct ", stringify!($type));
            assert_eq!(fact(key), [size_of::<$type>() as i64, align_of::<$type>() as i64], "{key}: [size, align] C vs Rust");
            let mut covered = 0;
            $(
                let key = concat!("field ", stringify!($type), ".", stringify!($field));
                let probe = MaybeUninit::<$type>::uninit();
                // SAFETY: addr_of! only computes the field's address; nothing is read.
                let size = size_of_pointee(unsafe { std::ptr::addr_of!((*probe.as_ptr()).$field) });
                assert_eq!(fact(key), [offset_of!($type, $field) as i64, size as i64], "{key}: [offset, size] C vs Rust");
                covered += 1;
            )+
            let c_fields = facts().unwrap().keys().filter(|key| key.starts_with(concat!("field ", stringify!($type), "."))).count();
            assert_eq!(covered, c_fields, "every field of {} is mirrored", stringify!($type));
        }};
    }

    #[test]
    fn structs_match_the_header() {
        if facts().is_none() {
            return;
        }
        check_struct!(uform_gpu_device_t { vendor, vendor_ordinal, gpu_class, compute_units, memory_bytes, name });
        check_struct!(uform_mesh_options_t {
            struct_size,
            host_domain_index,
            host_domain_count,
            gpus_per_multimem_domain,
            directory,
            job,
            timeout_seconds,
            cancel,
        });
        check_struct!(uform_mesh_description_t {
            gpus_per_host_domain,
            gpus_per_multimem_domain,
            gpus_per_colocated_domain,
            host_domain_index,
            first_gpu_index,
            multimem_tier,
            gpu_class,
        });
        check_struct!(uform_call_t { struct_size, deferred, progress, progress_context, cancel });
        check_struct!(uform_device_slot_t { device, ordinal, vendor, native_device, native_context, stream, thread });
    }

    #[test]
    fn enums_cross_as_u32() {
        if facts().is_none() {
            return;
        }
        let expected = [size_of::<u32>() as i64, align_of::<u32>() as i64];
        for name in [
            "uform_status_t",
            "uform_cpu_class_t",
            "uform_gpu_class_t",
            "uform_gpu_vendor_t",
            "uform_mood_t",
            "uform_multimem_tier_t",
        ] {
            assert_eq!(fact(&format!("enum {name}")), expected, "{name} is a u32 in Rust");
        }
    }

    #[test]
    fn constants_match_the_header() {
        if facts().is_none() {
            return;
        }
        let constant = |name: String| fact(&format!("constant {name}"))[0];
        for &status in Status::ALL {
            assert_eq!(constant(format!("UFORM_STATUS_{}", status.name())), status as i64, "{status:?}");
        }
        assert_eq!(constant("UFORM_STATUS_COUNT_".into()), Status::ALL.len() as i64, "Status has every C status");
        assert_eq!(constant("UFORM_STATUS_COUNT_".into()), UFORM_STATUS_COUNT as i64);
        let upper = |snake: &str| snake.to_ascii_uppercase();
        for &class in CPUClass::ALL {
            assert_eq!(constant(format!("UFORM_CPU_CLASS_{}", upper(class.snake_name()))), class as i64, "{class:?}");
        }
        for &class in GPUClass::ALL {
            assert_eq!(constant(format!("UFORM_GPU_CLASS_{}", upper(class.snake_name()))), class as i64, "{class:?}");
        }
        for &vendor in GPUVendor::ALL {
            assert_eq!(
                constant(format!("UFORM_GPU_VENDOR_{}", upper(vendor.snake_name()))),
                vendor as i64,
                "{vendor:?}"
            );
        }
        for &mood in Mood::ALL {
            assert_eq!(constant(format!("UFORM_MOOD_{}", upper(mood.snake_name()))), mood as i64, "{mood:?}");
        }
        for &tier in MultimemTier::ALL {
            assert_eq!(constant(format!("UFORM_MULTIMEM_TIER_{}", upper(tier.snake_name()))), tier as i64, "{tier:?}");
        }
        assert_eq!(constant("UFORM_GPU_NAME_CAPACITY".into()), UFORM_GPU_NAME_CAPACITY as i64);
        assert_eq!(constant("UFORM_DEFERRED_LIMIT_DEFAULT".into()), UFORM_DEFERRED_LIMIT_DEFAULT as i64);
        assert_eq!(constant("UFORM_THREADS_MAX".into()), UFORM_THREADS_MAX as i64);
    }

    #[test]
    fn the_version_is_the_headers() {
        if facts().is_none() {
            return;
        }
        assert_eq!(fact("constant UFORM_VERSION_NUMBER"), [UFORM_VERSION_NUMBER as i64]);
        let text: Vec<i64> = UFORM_VERSION_STRING.bytes().map(i64::from).collect();
        assert_eq!(fact("string UFORM_VERSION_STRING"), text, "UFORM_VERSION_STRING is {UFORM_VERSION_STRING:?}");
        assert_eq!(UFORM_VERSION_STRING, env!("CARGO_PKG_VERSION"), "the crate is versioned as the library it mirrors");
    }
}
