//! `gpu_devices` against the CUDA driver test double (`tests/doubles/cuda_emulated`, see its
//! README.md): a host emulation of the CUDA driver's ABI, never a real GPU.
//!
//! Every check runs in a child process (see `support/cuda_double.rs`), since libuform loads the
//! driver once per process.

mod support;

use std::path::Path;

use support::cuda_double::{cuda_double, CHILD_ROLE};
use uform::{gpu_devices, GPUClass, GPUDevice, GPUVendor, Status};

const CHILD_TEST: &str = "cuda_double_child_runs_a_scenario";

/// Runs `scenario` in a child with uform pointed at `library` configured by `config`.
fn run_child(scenario: &str, library: &Path, config: Option<&str>, extra: &[(&str, &str)]) {
    support::cuda_double::run_child(CHILD_TEST, scenario, library, config, extra);
}

const TWO_SOCKET: &str = "device pci=0000:C1:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3
device pci=0000:41:00.0 cc=8.9 sms=142 memory=48G name=NVIDIA L40S
device pci=0000:02:00.0 cc=8.6 sms=84 memory=24G name=NVIDIA GeForce RTX 3090
device pci=0000:81:00.0 cc=7.0 sms=80 memory=32G name=Tesla V100-SXM2-32GB
device pci=0000:03:00.0 cc=12.0 sms=188 memory=96G name=NVIDIA RTX PRO 6000 Blackwell
device pci=0000:04:00.0 cc=10.0 sms=148 memory=180G name=NVIDIA B200
";

#[test]
fn gpu_devices_cuda_double_lists_devices_in_pci_bus_order() {
    run_child("devices", cuda_double(), Some(TWO_SOCKET), &[]);
}

#[test]
fn gpu_devices_cuda_double_pci_bus_order_whatever_cuda_device_order() {
    let config = "device pci=0001:00:00.0 name=second domain\ndevice pci=0000:02:00.1 name=function 1\n";
    for order in ["FASTEST_FIRST", "PCI_BUS_ID"] {
        run_child("pci_order", cuda_double(), Some(config), &[("CUDA_DEVICE_ORDER", order)]);
    }
}

#[test]
fn gpu_devices_cuda_double_without_driver_is_empty() {
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such").join("libcuda.so.1");
    run_child("empty", &missing, None, &[]);
}

#[test]
fn gpu_devices_cuda_double_with_no_device_is_empty() {
    run_child("empty", cuda_double(), Some("driver version=12080"), &[]);
}

#[test]
fn gpu_devices_cuda_double_stub_library_is_empty() {
    run_child("empty", cuda_double(), Some("device name=never-seen\nfault init=CUDA_ERROR_STUB_LIBRARY"), &[]);
}

#[test]
fn gpu_devices_real_toolkit_stub_is_empty() {
    // The toolkit's own stub libcuda.so (every entry, cuGetProcAddress_v2 included, answers
    // CUDA_ERROR_STUB_LIBRARY): no device and no error. Skipped where the toolkit is absent.
    let stub = Path::new("/usr/local/cuda/lib64/stubs/libcuda.so");
    if !stub.exists() {
        eprintln!("skipped: no CUDA toolkit stub libcuda.so here");
        return;
    }
    run_child("empty", stub, None, &[("UFORM_HIP_LIBRARY", "/nonexistent/libamdhip64.so")]);
}

#[test]
fn gpu_devices_cuda_double_driver_fault_is_device_fault() {
    let config = "device name=unreachable\nfault init=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    run_child("driver_fault", cuda_double(), Some(config), &[]);
}

#[test]
fn gpu_devices_cuda_double_missing_entry_point_is_unsupported() {
    let config = "device name=any\nfault missing=cuDeviceGetPCIBusId";
    run_child("missing_entry_point", cuda_double(), Some(config), &[]);
}

/// The child's half: does nothing unless a parent above selected a scenario.
#[test]
#[ignore = "the child role of the CUDA driver test double tests, which run it in a process of its own"]
fn cuda_double_child_runs_a_scenario() {
    let Ok(scenario) = std::env::var(CHILD_ROLE) else { return };
    match scenario.as_str() {
        "devices" => devices(),
        "pci_order" => pci_order(),
        "empty" => empty(),
        "driver_fault" => failure(Status::DeviceFault, &["cuInit", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"]),
        "missing_entry_point" => failure(Status::Unsupported, &["lacks cuDeviceGetPCIBusId"]),
        other => panic!("unknown scenario {other}"),
    }
    println!("scenario {scenario}: passed");
}

fn devices() {
    let expected: [(Option<GPUClass>, u32, u64, &str); 6] = [
        (Some(GPUClass::NvidiaAmpere), 84, 24 << 30, "NVIDIA GeForce RTX 3090"),
        (Some(GPUClass::NvidiaBlackwellRtx), 188, 96 << 30, "NVIDIA RTX PRO 6000 Blackwell"),
        (Some(GPUClass::NvidiaBlackwell), 148, 180 << 30, "NVIDIA B200"),
        (Some(GPUClass::NvidiaAda), 142, 48 << 30, "NVIDIA L40S"),
        (None, 80, 32 << 30, "Tesla V100-SXM2-32GB"),
        (Some(GPUClass::NvidiaHopper), 132, 80 << 30, "NVIDIA H100 80GB HBM3"),
    ];
    // An empty slice answers the count.
    assert_eq!(gpu_devices(&mut []).unwrap(), expected.len());
    let mut devices = [GPUDevice::default(); 8];
    assert_eq!(gpu_devices(&mut devices).unwrap(), expected.len());
    for (ordinal, (device, &(gpu_class, sms, memory, name))) in devices.iter().zip(expected.iter()).enumerate() {
        println!("{device:?}");
        assert_eq!(device.vendor(), Some(GPUVendor::Nvidia), "{device:?}");
        assert_eq!(device.vendor_ordinal() as usize, ordinal, "{device:?}");
        assert_eq!(device.gpu_class(), gpu_class, "{device:?}");
        assert_eq!(device.compute_units(), sms, "{device:?}");
        assert_eq!(device.memory_bytes(), memory, "{device:?}");
        assert_eq!(device.name(), name, "{device:?}");
    }
    // Entries past the count stay as they were.
    assert_eq!(devices[6].name(), "");
    assert_eq!(devices[6].vendor(), None);
    // A slice too short for every device answers the full count, holding the first ones.
    let mut first_two = [GPUDevice::default(); 2];
    assert_eq!(gpu_devices(&mut first_two).unwrap(), expected.len());
    assert_eq!(first_two[0].name(), "NVIDIA GeForce RTX 3090");
    assert_eq!(first_two[1].name(), "NVIDIA RTX PRO 6000 Blackwell");
    assert_eq!(first_two[1].vendor_ordinal(), 1);
}

fn pci_order() {
    let mut devices = [GPUDevice::default(); 2];
    assert_eq!(gpu_devices(&mut devices).unwrap(), 2);
    let names: Vec<&str> = devices.iter().map(GPUDevice::name).collect();
    assert_eq!(names, ["function 1", "second domain"]);
    assert_eq!(devices.map(|device| device.vendor_ordinal()), [0, 1]);
}

fn empty() {
    assert_eq!(gpu_devices(&mut []).unwrap(), 0);
    let mut devices = [GPUDevice::default(); 2];
    assert_eq!(gpu_devices(&mut devices).unwrap(), 0);
    assert_eq!(devices[0].name(), "");
}

fn failure(status: Status, names: &[&str]) {
    // The driver is read once per process: every call answers the same failure.
    for _ in 0..2 {
        let error = gpu_devices(&mut []).expect_err("the driver failure is an error");
        println!("{error}");
        assert_eq!(error.status(), status, "{error}");
        for name in names {
            assert!(error.message().contains(name), "{error} does not name {name}");
        }
    }
    let mut devices = [GPUDevice::default(); 2];
    assert_eq!(gpu_devices(&mut devices).expect_err("the same failure").status(), status);
}
