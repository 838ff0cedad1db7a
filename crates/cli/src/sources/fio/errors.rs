//! fio's `continue_on_error` and `ignore_error`: which I/O errors a job
//! goes on past, counted, without failing (td_error.c). storbench always
//! goes on past I/O errors and counts them by kind; what these options
//! change is whether the job counts as failed (fio's `error` and exit code).
//!
//! `continue_on_error` names the directions (`read`, `write`, `io` for both,
//! `verify`, `all`/`1`, `none`/`0`); in those, fio's non-fatal errors are
//! EIO and EILSEQ unless `ignore_error=READ,WRITE,VERIFY` lists others
//! (names or numbers, `:` between them). Verification failures always fail
//! a storbench job (they are judged apart from I/O errors).

use storbench_metrics::errors::errno_name;
use storbench_workload::spec::ToleratedErrors;

/// fio's default non-fatal errors.
const NON_FATAL: &[i32] = &[libc::EIO, libc::EILSEQ];

/// The names fio's `ignore_error` takes (options.c `str2error`): errnos 1
/// to 34, in order; others are given as numbers.
const NAMES: &[&str] = &[
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT",
    "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG",
    "ENOSPC", "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// (reads, writes) that continue_on_error lets a job go on past.
fn directions(v: &str) -> Result<(bool, bool), String> {
    Ok(match v.trim().to_ascii_lowercase().as_str() {
        "none" | "0" | "verify" => (false, false),
        "read" => (true, false),
        "write" => (false, true),
        "io" | "all" | "1" => (true, true),
        _ => return Err(format!("continue_on_error={v}: give none, read, write, io, verify or all")),
    })
}

/// One list of `ignore_error` (`ENOSPC:122`) as the names results key
/// errors by.
fn names(list: &str) -> Result<Vec<String>, String> {
    list.split(':')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            let code = match e.parse::<i32>() {
                Ok(code) if code > 0 => Some(code),
                _ => NAMES.iter().position(|n| *n == e).map(|i| i as i32 + 1),
            };
            code.map(errno_name).ok_or_else(|| format!("ignore_error: '{e}' is not one of fio's errno names (EPERM..ERANGE) or a number"))
        })
        .collect()
}

/// The job's tolerated errors from the two options' values (either may be
/// absent); None when no direction goes on.
pub fn tolerated(continue_on_error: Option<&str>, ignore_error: Option<&str>) -> Result<Option<ToleratedErrors>, String> {
    let lists: Vec<Vec<String>> = match ignore_error {
        Some(v) => v.split(',').map(names).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let (reads, writes) = match continue_on_error {
        Some(v) => directions(v)?,
        None => return Ok(None),
    };
    let list = |i: usize, on: bool| -> Vec<String> {
        match (on, lists.get(i).filter(|l| !l.is_empty())) {
            (false, _) => Vec::new(),
            (true, Some(l)) => l.clone(),
            (true, None) => NON_FATAL.iter().map(|c| errno_name(*c)).collect(),
        }
    };
    if !reads && !writes {
        return Ok(None);
    }
    Ok(Some(ToleratedErrors { read: list(0, reads), write: list(1, writes) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_meanings_of_the_two_options() {
        // enospc-pressure.fio: writes go on past ENOSPC.
        let t = tolerated(Some("write"), Some(",ENOSPC")).unwrap().unwrap();
        assert_eq!((t.read, t.write), (vec![], vec![errno_name(libc::ENOSPC)]));
        let t = tolerated(Some("all"), Some("EAGAIN,ENOSPC:122")).unwrap().unwrap();
        assert!(t.write[0].starts_with("ENOSPC"), "{:?}", t.write);
        assert_eq!((t.read, t.write), (vec![errno_name(libc::EAGAIN)], vec![errno_name(libc::ENOSPC), errno_name(libc::EDQUOT)]));
        let t = tolerated(Some("1"), None).unwrap().unwrap();
        assert_eq!(t.write, vec![errno_name(libc::EIO), errno_name(libc::EILSEQ)]);
        assert_eq!(tolerated(None, Some(",ENOSPC")).unwrap(), None, "ignore_error alone changes nothing in fio");
        assert_eq!(tolerated(Some("none"), None).unwrap(), None);
        assert!(tolerated(Some("sometimes"), None).unwrap_err().contains("give none, read"));
        assert!(tolerated(Some("all"), Some("EWHAT")).unwrap_err().contains("'EWHAT' is not one of fio's errno names"));
    }
}
