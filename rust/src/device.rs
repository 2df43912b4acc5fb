//! One GPU as UForm numbers it: [`GPUDevice`].

use std::fmt;

use crate::{ffi, GPUClass, GPUVendor};

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

/// The Rust reading of the C device record against its fields.
#[cfg(test)]
mod agree_with_c {
    use super::*;

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
