//! The text of a fio job file before its options are read: `include` lines
//! replaced by the files they name, comments dropped, `${VAR}` and fio's
//! `$pagesize`, `$ncpus`, `$mb_memory` substituted, as fio does.
//!
//! An included file is read with a bound (a job file's) and only if it is a
//! regular file; it must look like a fio job file (every line a comment, a
//! `[section]`, an `include` or an option name with or without `=value`),
//! else it is refused by name and line number alone: `include /etc/shadow`
//! must not put the file's lines into an error, a note or the results.
//! An unset `${VAR}` is an error naming the variable: fio puts nothing
//! there, and `filename=${DIR}/f.dat` would then write at the root.

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
            let inner = read_included(&path, &at)?;
            let first = out.len();
            walk(&inner, &path, depth + 1, out)?;
            if let Some(l) = out[first..].iter().find(|l| l.text.starts_with('[')) {
                return Err(CliError::usage(format!("{}: an included file may not start sections (fio refuses it too)", l.at)));
            }
            continue;
        }
        let text = substitute(line).map_err(|var| CliError::usage(format!("{at}: ${{{var}}} is not set{UNSET}")))?;
        out.push(Line { at, text });
    }
    Ok(())
}

/// Why an unset variable is refused (fio substitutes nothing).
const UNSET: &str = "; set it in the environment (fio would put nothing there, and a path such as ${DIR}/f.dat would become /f.dat)";

/// An included file's text, if it is a regular file of a job file's size
/// and every line has a job file's shape. Nothing of its text is quoted.
fn read_included(path: &Path, at: &str) -> Result<String, CliError> {
    let text = storbench_workload::input::read_text(path, "fio job file", storbench_workload::input::JOB_FILE_LIMIT)
        .map_err(|e| CliError::usage(format!("{at}: cannot include {}: {e}", path.display())))?;
    if let Some(n) = text.lines().position(|l| !job_file_shaped(l)) {
        return Err(CliError::usage(format!(
            "{at}: {} is not a fio job file (its line {} is neither a comment, a [section], an include nor an option); \
             nothing of it is shown or used",
            path.display(),
            n + 1
        )));
    }
    Ok(text)
}

/// A line a fio job file may hold: blank or a comment, `[section]`,
/// `include FILE`, or an option name (letters, digits, `_`, `-`) alone or
/// followed by `=value`.
fn job_file_shaped(raw: &str) -> bool {
    let line = raw.split(['#', ';']).next().unwrap_or("").trim();
    let include = line.strip_prefix("include").is_some_and(|r| r.starts_with(char::is_whitespace));
    if line.is_empty() || (line.starts_with('[') && line.ends_with(']')) || include {
        return true;
    }
    let name = line.split_once('=').map_or(line, |(k, _)| k).trim();
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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

/// `${VAR}` from the environment, then fio's keywords; an unset variable
/// is the error (its name).
fn substitute(line: &str) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            Some(end) => {
                let name = &rest[start + 2..start + 2 + end];
                out.push_str(&std::env::var(name).map_err(|_| name.to_string())?);
                rest = &rest[start + 3 + end..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    Ok(keywords(&out))
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
        let got = lines("[a] # job\ninclude common.fio\nrw=read ; trailing\nfilename=${SB_TEST_BS}x\n", &main).unwrap();
        let texts: Vec<&str> = got.iter().map(|l| l.text.as_str()).collect();
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        assert_eq!(texts, vec!["[a]".to_string(), "bs=8k".into(), format!("size={page}"), "rw=read".into(), "filename=8kx".into()]);
        let e = lines("[a]\nfilename=${SB_TEST_UNSET}/f.dat\n", &main).err().unwrap();
        assert!(e.message.starts_with(&format!("{} line 2: ${{SB_TEST_UNSET}} is not set;", main.display())), "{}", e.message);
        assert!(got[1].at.ends_with("common.fio line 2"), "{}", got[1].at);
        std::fs::write(d.join("loop.fio"), "include loop.fio\n").unwrap();
        let e = lines("[a]\ninclude loop.fio\n", &main).err().unwrap();
        assert!(e.message.contains("nest deeper"), "{}", e.message);
        std::fs::write(d.join("sect.fio"), "[b]\n").unwrap();
        let e = lines("[a]\ninclude sect.fio\n", &main).err().unwrap();
        assert!(e.message.contains("may not start sections"), "{}", e.message);
        // A file that is not a job file is named with the line that shows it, never quoted.
        std::fs::write(d.join("shadow"), "[a]\nroot:$6$salt$hash:19000:0:99999:7:::\n").unwrap();
        let e = lines("[a]\ninclude shadow\n", &main).err().unwrap();
        assert!(e.message.contains("shadow is not a fio job file (its line 2"), "{}", e.message);
        assert!(!e.message.contains("root") && !e.message.contains("hash"), "{}", e.message);
        let e = lines("[a]\ninclude /dev/zero\n", &main).err().unwrap();
        assert!(e.message.contains("cannot include /dev/zero: it is a character device"), "{}", e.message);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
