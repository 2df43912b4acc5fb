//! The hardware vocabulary: CPU and GPU classes, GPU vendors, and what idle workers do.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result, Status};

c_enum! {
    /// What an executor's idle workers do between calls.
    ///
    /// Mirrors `uform_mood_t`. New executors start [`Mood::Parked`].
    #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
    pub enum Mood {
        /// Busy-poll and never sleep: the lowest latency, a core per worker.
        Spinning = 1 => "spinning",
        /// Spin for a short time budget (`UFORM_SPIN_MICROSECONDS`, 50 µs by default), then
        /// sleep in the kernel, woken at once by the next call. The caller joining a call spins
        /// up to 20 times as long for its workers after short waits, unless the cores are shared.
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

/// The Rust names against the C library's own, so neither side drifts.
#[cfg(test)]
mod agree_with_c {
    use super::*;
    use crate::ffi;
    use std::ffi::{CStr, CString};

    fn c_str(pointer: *const std::os::raw::c_char) -> Option<&'static str> {
        // SAFETY: the library answers NULL or static strings it owns.
        (!pointer.is_null()).then(|| unsafe { CStr::from_ptr(pointer) }.to_str().unwrap())
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
}
