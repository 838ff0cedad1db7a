//! The text of a fio job file before its options are read: `include` lines
//! replaced by the files they name, comments dropped, `${VAR}` and fio's
//! `$pagesize`, `$ncpus`, `$mb_memory` substituted, as fio does. An
//! included file is read with a bound (a job file's) and only if it is a
//! regular file: `include /dev/zero` read until allocation failed.

use crate::error::CliError;
use std::path::{Path, PathBuf};

/// One line that carries a section or an option, and where it came from.
pub struct Line {
    /// "job.fio line 12" (or "inc.fio line 3, included from ...").
    pub at: String,
    pub text: String,
}

/// Includes nest at most this deep (a file that includes itself stops here).
const MAX_DEPTH: usize = 16;

/// Every meaningful line of `text` (read from `file`), includes expanded.
pub fn lines(text: &str, file: &Path) -> Result<Vec<Line>, CliError> {
    let mut out = Vec::new();
    walk(text, file, 0, &mut out)?;
    Ok(out)
}

fn walk(text: &str, file: &Path, depth: usize, out: &mut Vec<Line>) -> Result<(), CliError> {
    let name = file.display().to_string();
    for (n, raw) in text.lines().enumerate() {
        let at = format!("{name} line {}", n + 1);
        // As in fio: everything after the first ';' or '#' is a comment.
        let line = raw.split(['#', ';']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("include").filter(|r| r.starts_with(char::is_whitespace)) {
            if depth >= MAX_DEPTH {
                return Err(CliError::usage(format!("{at}: includes nest deeper than {MAX_DEPTH} (does a file include itself?)")));
            }
            let path = include_path(rest.trim(), file);
            let inner = storbench_workload::input::read_text(&path, "fio job file", storbench_workload::input::JOB_FILE_LIMIT)
                .map_err(|e| CliError::usage(format!("{at}: cannot include {}: {e}", path.display())))?;
            let first = out.len();
            walk(&inner, &path, depth + 1, out)?;
            if let Some(l) = out[first..].iter().find(|l| l.text.starts_with('[')) {
                return Err(CliError::usage(format!("{}: an included file may not start sections (fio refuses it too)", l.at)));
            }
            continue;
        }
        out.push(Line { at, text: substitute(line) });
    }
    Ok(())
}

/// fio looks a relative include up from the current directory, then next to
/// the including file.
fn include_path(name: &str, from: &Path) -> PathBuf {
    let p = PathBuf::from(name);
    if p.is_absolute() || p.exists() {
        return p;
    }
    from.parent().map(|d| d.join(&p)).unwrap_or(p)
}

/// `${VAR}` from the environment (unset: empty, as in fio), then fio's
/// keywords.
fn substitute(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            Some(end) => {
                out.push_str(&std::env::var(&rest[start + 2..start + 2 + end]).unwrap_or_default());
                rest = &rest[start + 3 + end..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    keywords(&out)
}

fn keywords(line: &str) -> String {
    if !line.contains('$') {
        return line.to_string();
    }
    // SAFETY: sysconf has no memory arguments.
    let pagesize = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096);
    let ncpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mb_memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find(|l| l.starts_with("MemTotal:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(0, |kib| kib / 1024);
    line.replace("$pagesize", &pagesize.to_string()).replace("$ncpus", &ncpus.to_string()).replace("$mb_memory", &mb_memory.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_comments_and_variables() {
        let d = std::env::temp_dir().join(format!("sb-fio-text-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("common.fio"), "; shared\nbs=${SB_TEST_BS}\nsize=$pagesize\n").unwrap();
        std::env::set_var("SB_TEST_BS", "8k");
        let main = d.join("main.fio");
        let got = lines("[a] # job\ninclude common.fio\nrw=read ; trailing\nfilename=${SB_TEST_UNSET}x\n", &main).unwrap();
        let texts: Vec<&str> = got.iter().map(|l| l.text.as_str()).collect();
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        assert_eq!(texts, vec!["[a]".to_string(), "bs=8k".into(), format!("size={page}"), "rw=read".into(), "filename=x".into()]);
        assert!(got[1].at.ends_with("common.fio line 2"), "{}", got[1].at);
        std::fs::write(d.join("loop.fio"), "include loop.fio\n").unwrap();
        let e = lines("[a]\ninclude loop.fio\n", &main).err().unwrap();
        assert!(e.message.contains("nest deeper"), "{}", e.message);
        std::fs::write(d.join("sect.fio"), "[b]\n").unwrap();
        let e = lines("[a]\ninclude sect.fio\n", &main).err().unwrap();
        assert!(e.message.contains("may not start sections"), "{}", e.message);
        let e = lines("[a]\ninclude /dev/zero\n", &main).err().unwrap();
        assert!(e.message.contains("cannot include /dev/zero: it is a character device"), "{}", e.message);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
