//! Every item of the Rust page: enum values, names, round trips, and the exact trait lists.

use std::collections::HashSet;
use std::path::Path;
use uform::*;

/// Whether `$type` implements `$trait`, answered at compile time on stable Rust: an inherent
/// associated const (present only when the bound holds) shadows the blanket trait's `false`.
macro_rules! implements {
    ($type:ty: $($trait:tt)+) => {{
        #[allow(dead_code)]
        trait Fallback {
            const IMPLEMENTS: bool = false;
        }
        impl<T: ?Sized> Fallback for T {}
        #[allow(dead_code)]
        struct Probe<T: ?Sized>(std::marker::PhantomData<T>);
        #[allow(dead_code)]
        impl<T: ?Sized + $($trait)+> Probe<T> {
            const IMPLEMENTS: bool = true;
        }
        <Probe<$type>>::IMPLEMENTS
    }};
}

/// The traits one type implements, out of those a page could list.
macro_rules! traits_of {
    ($type:ty) => {{
        let mut traits = HashSet::new();
        if implements!($type: Clone) { traits.insert("Clone"); }
        if implements!($type: Copy) { traits.insert("Copy"); }
        if implements!($type: PartialEq) { traits.insert("PartialEq"); }
        if implements!($type: Eq) { traits.insert("Eq"); }
        if implements!($type: PartialOrd) { traits.insert("PartialOrd"); }
        if implements!($type: Ord) { traits.insert("Ord"); }
        if implements!($type: std::fmt::Debug) { traits.insert("Debug"); }
        if implements!($type: std::hash::Hash) { traits.insert("Hash"); }
        if implements!($type: std::fmt::Display) { traits.insert("Display"); }
        if implements!($type: std::str::FromStr) { traits.insert("FromStr"); }
        if implements!($type: Default) { traits.insert("Default"); }
        if implements!($type: Send) { traits.insert("Send"); }
        if implements!($type: Sync) { traits.insert("Sync"); }
        traits
    }};
}

fn set(names: &[&'static str]) -> HashSet<&'static str> {
    names.iter().copied().collect()
}

#[test]
fn trait_lists_are_the_pages() {
    // Enums are Send and Sync automatically; rustdoc lists those apart, so they are added here.
    let enum_traits = ["Clone", "Copy", "PartialEq", "Eq", "Debug", "Hash", "Display", "FromStr", "Send", "Sync"];
    assert_eq!(traits_of!(CPUClass), set(&enum_traits));
    assert_eq!(traits_of!(GPUClass), set(&enum_traits));
    assert_eq!(traits_of!(MultimemTier), set(&enum_traits));
    assert_eq!(traits_of!(GPUVendor), set(&["Clone", "Copy", "PartialEq", "Eq", "Debug", "Hash", "Send", "Sync"]));
    assert_eq!(traits_of!(GPUDevice), set(&["Clone", "Copy", "Default", "Debug", "Send", "Sync"]));
    assert_eq!(
        traits_of!(MeshDescription),
        set(&["Clone", "Copy", "PartialEq", "Eq", "Debug", "Hash", "Send", "Sync"])
    );
    assert_eq!(
        traits_of!(MeshOptions<'static>),
        set(&["Clone", "Copy", "PartialEq", "Debug", "Default", "Send", "Sync"])
    );
    assert_eq!(traits_of!(Executor), set(&["Debug", "Send", "Default"]));
    assert_eq!(traits_of!(Mesh), set(&["Debug", "Send", "Sync"]));
    assert!(std::mem::needs_drop::<Executor>() && std::mem::needs_drop::<Mesh>());
    // What the page leaves to us: errors travel between threads, deferred handles move.
    assert!(implements!(Error: std::error::Error + Send + Sync + Clone + PartialEq));
    assert!(implements!(Deferred: Send));
    assert!(!implements!(Executor: Sync));
}

#[test]
fn cpu_class_values() {
    let expected = [
        (CPUClass::Serial, 1, "serial", "SERIAL"),
        (CPUClass::IntelHaswell, 2, "intel_haswell", "INTEL_HASWELL"),
        (CPUClass::IntelSierra, 3, "intel_sierra", "INTEL_SIERRA"),
        (CPUClass::IntelSkylake, 4, "intel_skylake", "INTEL_SKYLAKE"),
        (CPUClass::IntelIcelake, 5, "intel_icelake", "INTEL_ICELAKE"),
        (CPUClass::AmdGenoa, 6, "amd_genoa", "AMD_GENOA"),
        (CPUClass::IntelSapphire, 7, "intel_sapphire", "INTEL_SAPPHIRE"),
        (CPUClass::IntelGranite, 8, "intel_granite", "INTEL_GRANITE"),
        (CPUClass::IntelDiamond, 9, "intel_diamond", "INTEL_DIAMOND"),
        (CPUClass::AwsG2, 10, "aws_g2", "AWS_G2"),
        (CPUClass::AppleM2, 11, "apple_m2", "APPLE_M2"),
        (CPUClass::AppleM4, 12, "apple_m4", "APPLE_M4"),
        (CPUClass::AwsG5, 13, "aws_g5", "AWS_G5"),
        (CPUClass::NvidiaVera, 14, "nvidia_vera", "NVIDIA_VERA"),
        (CPUClass::AlibabaC930, 15, "alibaba_c930", "ALIBABA_C930"),
        (CPUClass::Wasm32V128, 16, "wasm32_v128", "WASM32_V128"),
        (CPUClass::Wasm64Extended, 17, "wasm64_extended", "WASM64_EXTENDED"),
        (CPUClass::Monoversioned, 18, "monoversioned", "MONOVERSIONED"),
    ];
    for (class, number, snake, member) in expected {
        assert_eq!(class as u32, number);
        assert_eq!(class.to_string(), snake);
        assert_eq!(snake.parse::<CPUClass>().unwrap(), class);
        assert_eq!(member.parse::<CPUClass>().unwrap(), class);
        assert_eq!(member.to_ascii_lowercase().parse::<CPUClass>().unwrap(), class);
    }
    let error = "amd genoa".parse::<CPUClass>().unwrap_err();
    assert_eq!(error.status(), Status::NotFound);
    assert!(error.message().contains("amd genoa"), "{error}");
    assert!("".parse::<CPUClass>().is_err());
}

#[test]
fn gpu_class_values() {
    let expected = [
        (GPUClass::NvidiaAmpere, 1, "nvidia_ampere"),
        (GPUClass::NvidiaAda, 2, "nvidia_ada"),
        (GPUClass::NvidiaHopper, 3, "nvidia_hopper"),
        (GPUClass::NvidiaBlackwell, 4, "nvidia_blackwell"),
        (GPUClass::NvidiaBlackwellRtx, 5, "nvidia_blackwellrtx"),
        (GPUClass::NvidiaRubin, 6, "nvidia_rubin"),
        (GPUClass::AmdCdna3, 7, "amd_cdna3"),
        (GPUClass::AmdCdna4, 8, "amd_cdna4"),
        (GPUClass::AmdCdna5, 9, "amd_cdna5"),
        (GPUClass::AppleMetal7, 10, "apple_metal7"),
        (GPUClass::AppleMetal9, 11, "apple_metal9"),
        (GPUClass::AppleMetal10, 12, "apple_metal10"),
    ];
    for (class, number, snake) in expected {
        assert_eq!(class as u32, number);
        assert_eq!(class.to_string(), snake);
        assert_eq!(snake.parse::<GPUClass>().unwrap(), class);
        assert_eq!(snake.to_ascii_uppercase().parse::<GPUClass>().unwrap(), class);
    }
    assert_eq!("nvidia_volta".parse::<GPUClass>().unwrap_err().status(), Status::NotFound);
}

#[test]
fn gpu_vendor_values() {
    assert_eq!(GPUVendor::Nvidia as u32, 1);
    assert_eq!(GPUVendor::Amd as u32, 2);
    assert_eq!(GPUVendor::Apple as u32, 3);
    assert_eq!(format!("{:?}", GPUVendor::Amd), "Amd");
}

#[test]
fn multimem_tier_values() {
    for (tier, number, snake) in
        [(MultimemTier::SwitchReduced, 0, "switch_reduced"), (MultimemTier::PeerRead, 1, "peer_read")]
    {
        assert_eq!(tier as u32, number);
        assert_eq!(tier.to_string(), snake);
        assert_eq!(snake.parse::<MultimemTier>().unwrap(), tier);
        assert_eq!(snake.to_ascii_uppercase().parse::<MultimemTier>().unwrap(), tier);
    }
    assert!("multicast".parse::<MultimemTier>().is_err());
}

#[test]
fn mood_and_status_values() {
    assert_eq!(Mood::Spinning as u32, 1);
    assert_eq!(Mood::Parked as u32, 2);
    let statuses = [
        (Status::Ok, 0, "OK"),
        (Status::Unsupported, 1, "UNSUPPORTED"),
        (Status::Contended, 2, "CONTENDED"),
        (Status::InvalidArgument, 3, "INVALID_ARGUMENT"),
        (Status::OutOfMemory, 4, "OUT_OF_MEMORY"),
        (Status::NotFound, 5, "NOT_FOUND"),
        (Status::DeviceFault, 6, "DEVICE_FAULT"),
        (Status::Timeout, 7, "TIMEOUT"),
        (Status::Mismatch, 8, "MISMATCH"),
        (Status::IoError, 9, "IO_ERROR"),
        (Status::Interrupted, 10, "INTERRUPTED"),
        (Status::Forked, 11, "FORKED"),
        (Status::CallbackFailed, 12, "CALLBACK_FAILED"),
        (Status::Malformed, 13, "MALFORMED"),
    ];
    for (status, number, name) in statuses {
        assert_eq!(status as u32, number);
        assert_eq!(status.name(), name);
        assert!(!status.to_string().is_empty());
    }
    assert_eq!(Status::Timeout.to_string(), "the wait timed out");
}

#[test]
fn errors_read_well() {
    let error = Error::new(Status::NotFound, "NUMA node 7 does not exist");
    assert_eq!(error.status(), Status::NotFound);
    assert_eq!(error.message(), "NUMA node 7 does not exist");
    assert_eq!(error.to_string(), "no such device, domain or entry (NOT_FOUND): NUMA node 7 does not exist");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    assert!(boxed.to_string().contains("NOT_FOUND"));
}

#[test]
fn mesh_options_default_and_fields() {
    let options = MeshOptions::default();
    assert_eq!(options.host_domain_index, 0);
    assert_eq!(options.host_domain_count, 0);
    assert_eq!(options.gpus_per_multimem_domain, 0);
    assert_eq!(options.directory, Path::new(""));
    assert_eq!(options.job, "");
    assert_eq!(options.timeout_seconds, 0.0);
    let directory = std::env::temp_dir();
    let custom =
        MeshOptions { host_domain_count: 2, directory: &directory, job: "run-1", timeout_seconds: 5.0, ..options };
    let copy = custom;
    assert_eq!(copy, custom);
    assert_ne!(copy, options);
}

#[test]
fn mesh_description_fields() {
    let description = MeshDescription {
        gpus_per_host_domain: 8,
        gpus_per_multimem_domain: 72,
        gpus_per_colocated_domain: 144,
        host_domain_index: 1,
        first_gpu_index: 8,
        multimem_tier: MultimemTier::SwitchReduced,
        gpu_class: Some(GPUClass::NvidiaBlackwell),
    };
    let copy = description;
    assert_eq!(copy, description);
    let mut seen = HashSet::new();
    assert!(seen.insert(description));
    assert!(!seen.insert(copy));
}

#[test]
fn gpu_device_default_is_empty() {
    let device = GPUDevice::default();
    assert_eq!(device.vendor(), None);
    assert_eq!(device.vendor_ordinal(), 0);
    assert_eq!(device.gpu_class(), None);
    assert_eq!(device.compute_units(), 0);
    assert_eq!(device.memory_bytes(), 0);
    assert_eq!(device.name(), "");
    assert!(format!("{device:?}").starts_with("GPUDevice"));
}

#[test]
fn capabilities_and_version() {
    let compiled: Vec<&str> = capabilities_compiled().split(',').collect();
    let available: Vec<&str> = capabilities_available().split(',').filter(|token| !token.is_empty()).collect();
    assert!(compiled.contains(&"serial"), "{compiled:?}");
    assert!(available.contains(&"serial"), "{available:?}");
    for token in &available {
        assert!(compiled.contains(token), "available {token} was not compiled");
        if let Ok(class) = token.parse::<CPUClass>() {
            assert_eq!(class.to_string(), *token);
        }
    }
    assert_eq!(version(), env!("CARGO_PKG_VERSION"), "the crate and the library it links agree");
}

#[test]
fn gpu_devices_answers_a_count() {
    let count = gpu_devices(&mut []).unwrap();
    let mut devices = vec![GPUDevice::default(); count + 1];
    assert_eq!(gpu_devices(&mut devices).unwrap(), count);
    for device in &devices[..count] {
        assert!(device.vendor().is_some(), "{device:?}");
    }
    if std::env::var_os("UFORM_EXPECT_GPUS").is_none()
        && !Path::new("/dev/nvidiactl").exists()
        && !Path::new("/dev/kfd").exists()
    {
        assert_eq!(count, 0, "a machine without GPUs lists none");
    }
}
