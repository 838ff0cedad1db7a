//! Files storbench reads whole (job files and their includes, ssbench
//! scenarios, agent lists, results, credentials): only regular files, and
//! only up to a bound. `/dev/zero`, `/dev/urandom` or a FIFO never end, and
//! reading one whole took memory until the allocation failed; a file larger
//! than anything of its kind is refused by its size before it is read.

use crate::units::format_amount;
use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// A job file (TOML or fio, an include, an ssbench scenario, an agents
/// file) is at most this: the largest real ones are a few hundred KiB.
pub const JOB_FILE_LIMIT: u64 = 4 << 20;

/// Credentials and certificates (a CA bundle is a few hundred KiB).
pub const CREDENTIALS_LIMIT: u64 = 16 << 20;

/// storbench's own results files (result.json, sweep.json, slo.json): far
/// above what a run keeps (its series are per second), below what would
/// take a machine's memory to parse.
pub const RESULTS_LIMIT: u64 = 4 << 30;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// What the path is instead of a regular file ("a character device").
    NotAFile(&'static str),
    TooLarge {
        size: u64,
        limit: u64,
        what: &'static str,
    },
    NotText,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotAFile(kind) => write!(f, "it is {kind}, not a regular file"),
            ReadError::TooLarge { size, limit, what } => {
                write!(f, "it holds {}, more than a {what} can (at most {})", format_amount(*size), format_amount(*limit))
            }
            ReadError::NotText => write!(f, "it is not text (not UTF-8)"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> std::io::Error {
        match e {
            ReadError::Io(e) => e,
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// The whole of `path` as text, if it is a regular file of at most `limit`
/// bytes (`what` names the kind of file in the refusal: "job file").
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(path, what, limit)?).map_err(|_| ReadError::NotText)
}

/// The whole of `path`, if it is a regular file of at most `limit` bytes.
pub fn read_bytes(path: &Path, what: &'static str, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_regular(path)?;
    if size > limit {
        return Err(ReadError::TooLarge { size, limit, what });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow while it is read: never past the bound.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { size: bytes.len() as u64, limit, what });
    }
    Ok(bytes)
}

/// `path` opened for reading if it is a regular file, and its size. It is
/// looked at before it is opened (opening a FIFO waits for a writer) and
/// again once open (it may have been replaced in between; the open does not
/// wait, whatever it is).
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let kind = std::fs::metadata(path).map_err(ReadError::Io)?.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotAFile(describe(kind)));
    }
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotAFile(describe(meta.file_type())));
    }
    Ok((file, meta.len()))
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_large_files_are_refused_without_reading_them() {
        let e = read_text(Path::new("/dev/zero"), "job file", JOB_FILE_LIMIT).unwrap_err();
        assert_eq!(e.to_string(), "it is a character device, not a regular file");
        let d = std::env::temp_dir().join(format!("sb-input-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Opening a FIFO for reading would wait for a writer: it is never opened.
        assert_eq!(read_text(&fifo, "job file", JOB_FILE_LIMIT).unwrap_err().to_string(), "it is a FIFO, not a regular file");
        assert!(read_text(&d, "job file", JOB_FILE_LIMIT).unwrap_err().to_string().contains("a directory"));
        let big = d.join("big");
        std::fs::write(&big, vec![b'#'; 5000]).unwrap();
        let e = read_text(&big, "job file", 4096).unwrap_err().to_string();
        assert_eq!(e, "it holds 4.9 KiB, more than a job file can (at most 4.0 KiB)");
        assert_eq!(read_text(&big, "job file", 5000).unwrap().len(), 5000);
        std::fs::write(&big, [0xff, 0xfe]).unwrap();
        assert_eq!(read_text(&big, "job file", 10).unwrap_err().to_string(), "it is not text (not UTF-8)");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
