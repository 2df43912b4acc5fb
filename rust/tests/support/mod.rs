//! Helpers shared by several test binaries.

pub mod cuda_double;
