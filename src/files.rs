//! Reading files a user or another process may have put in a folder: a fifo or a device
//! where a file belongs would block a read forever, so it is refused as "not a file".

use std::io::{Error, ErrorKind};
use std::path::Path;

/// The bytes of `path`, a regular file (or a link to one).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a file"));
    }
    std::fs::read(path)
}

/// [`read_regular`] as text.
pub fn read_regular_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_regular(path)?).map_err(|e| Error::new(ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("outcome.json");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let e = super::read_regular(&fifo).unwrap_err();
        assert_eq!(e.to_string(), "not a file");
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert_eq!(super::read_regular_text(&dir.path().join("f")).unwrap(), "x");
    }
}
