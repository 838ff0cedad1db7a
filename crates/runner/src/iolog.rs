//! fio's `write_iolog`: what a worker issues, as a version 3 iolog that fio
//! and storbench both replay. Lines are gathered in memory and written in
//! large pieces, so logging costs a formatted line per operation and a
//! write per 256 KiB, not a system call per operation.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use storbench_workload::trace::iolog::{action, line, HEADER_V3};
use storbench_workload::{JobSpec, OpKind};

const FLUSH_AT: usize = 256 << 10;

pub struct IologWriter {
    path: PathBuf,
    file: File,
    names: Vec<String>,
    buf: String,
    failed: Option<String>,
}

impl IologWriter {
    /// The log of `worker` (FILE, or FILE.N when the job has several
    /// workers), its targets named as `names`.
    pub fn create(spec: &JobSpec, worker: u32, names: Vec<String>) -> Result<Option<IologWriter>, String> {
        let Some(base) = &spec.write_iolog else { return Ok(None) };
        let path = match spec.numjobs {
            1 => base.clone(),
            _ => PathBuf::from(format!("{}.{worker}", base.display())),
        };
        let file = File::create(&path).map_err(|e| format!("write_iolog {}: {e}", path.display()))?;
        let mut buf = format!("{HEADER_V3}\n");
        for n in &names {
            line_action(&mut buf, 0, n, "add");
            line_action(&mut buf, 0, n, "open");
        }
        Ok(Some(IologWriter { path, file, names, buf, failed: None }))
    }

    /// One operation, issued `t_ns` after the job started.
    #[inline]
    pub fn issued(&mut self, t_ns: u64, op: OpKind, data_only: bool, file: u32, offset: u64, len: u32) {
        let name = self.names.get(file as usize).map_or("?", String::as_str);
        line(&mut self.buf, t_ns / 1000, name, action(op, data_only), offset, len as u64);
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.failed.is_none() {
            if let Err(e) = self.file.write_all(self.buf.as_bytes()) {
                self.failed = Some(format!("write_iolog {}: {e}", self.path.display()));
            }
        }
        self.buf.clear();
    }

    /// Close the files in the log and write the rest; a write that failed
    /// on the way is the worker's error.
    pub fn finish(mut self, t_ns: u64) -> Result<(), String> {
        for n in std::mem::take(&mut self.names) {
            line_action(&mut self.buf, t_ns / 1000, &n, "close");
        }
        self.flush();
        self.failed.map_or(Ok(()), Err)
    }
}

fn line_action(buf: &mut String, t_us: u64, name: &str, act: &str) {
    buf.push_str(&format!("{t_us} {name} {act}\n"));
}
