//! What a call of the C library answered: [`Status`], its C names and messages.

use std::fmt;

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

/// The Rust names and messages against the C library's own, so neither side drifts.
#[cfg(test)]
mod agree_with_c {
    use super::*;
    use crate::ffi;
    use std::ffi::CStr;

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
}
