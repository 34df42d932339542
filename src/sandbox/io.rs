//! What the parent and its children share besides the wire format: the in-memory files a
//! child writes to, and the signal that asks a child where it hangs.

use std::fs::File;
use std::os::fd::FromRawFd;
use std::os::unix::fs::FileExt;

/// What a child stopped at its optimizer's deadline is sent first: its handler reports
/// the stack, where the optimizer loops, as a crash's handler does, and ends the child.
pub(super) const HANG_SIGNAL: i32 = libc::SIGXCPU;

/// An anonymous file in memory, closed on exec: what a child writes its output to.
pub(crate) fn memfd(name: &std::ffi::CStr) -> std::io::Result<File> {
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The start of `file`, at most `cap` bytes, as text.
pub(super) fn read_capped(file: &File, cap: usize) -> String {
    let len = file.metadata().map(|m| m.len() as usize).unwrap_or(0).min(cap);
    let mut buf = vec![0u8; len];
    let n = file.read_at(&mut buf, 0).unwrap_or(0);
    buf.truncate(n);
    String::from_utf8_lossy(&buf).into_owned()
}
