//! Standard output and error, written without panics and without hiding a
//! failure.
//!
//! A reader that has gone (`storbench engines | head -1`) is no failure: what
//! it no longer takes is dropped, and a run's results are in its directory.
//! Any other error (a full disk under `> FILE`, an I/O error) means the
//! output is cut short: the first one is kept here, and `main` turns it into
//! one line on standard error and exit code 3 instead of a silent 0 with a
//! truncated file. Results already written (a run's directory) stay.

use std::io::{ErrorKind, Write as _};
use std::sync::OnceLock;

/// A standard stream, as an error names it.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "standard output",
            Stream::Stderr => "standard error",
        }
    }
}

/// The first failed write, in words: the stream and the error.
static FAILED: OnceLock<String> = OnceLock::new();

/// A write to a standard stream: a closed pipe is ignored, anything else
/// is kept for `main` (the first only: the rest follow from it).
pub fn checked(stream: Stream, result: std::io::Result<()>) {
    if let Err(e) = result {
        if e.kind() != ErrorKind::BrokenPipe {
            let _ = FAILED.set(format!("{} could not be written ({e})", stream.name()));
        }
    }
}

/// The first write to a standard stream that failed, after flushing what
/// standard output still buffers (an `out_part!` without its line's end).
pub fn failure() -> Option<&'static str> {
    checked(Stream::Stdout, std::io::stdout().flush());
    FAILED.get().map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_not_a_failure_but_a_full_disk_is() {
        checked(Stream::Stdout, Err(std::io::Error::from(ErrorKind::BrokenPipe)));
        assert!(FAILED.get().is_none());
        checked(Stream::Stderr, Err(std::io::Error::from_raw_os_error(libc::ENOSPC)));
        checked(Stream::Stdout, Err(std::io::Error::from_raw_os_error(libc::EIO)));
        let kept = FAILED.get().expect("kept");
        assert!(kept.starts_with("standard error could not be written (No space left on device"), "{kept}");
    }
}
