//! fio's per-I/O logs (`write_lat_log`, `write_bw_log`, `write_iops_log`
//! with `log_avg_msec=0`, fio's default): one line per completed read or
//! write, in the files and layout fio 3.33 writes (`PREFIX_lat.N.log`,
//! `_clat`, `_slat`, `_bw`, `_iops`; lines `time_ms, value, ddir, bs, prio`,
//! with `offset` before `prio` under `log_offset=1`, and the priority in hex
//! under `log_prio=1`). Values as fio's stat.c computes them: lat and clat in
//! ns, bw as `bytes * 10^6 / clat_ns`, iops 1.
//!
//! Lines are streamed: gathered in a buffer per file and written at 64 KiB,
//! so memory stays bounded whatever the run's length, and what a stopped run
//! (Ctrl-C) completed is on disk when the worker finishes. The slat file
//! has a line per I/O on engines that submit apart (libaio), written as the
//! I/O completes like the others (fio writes it at the submission, so its
//! times are earlier by the clat; in completion order every file's times go
//! forward), and is left empty elsewhere (as fio's is for
//! synchronous engines; io_uring's newest entry goes in with the wait,
//! untimed); lat and clat differ by it, and for paced jobs (lat counts from
//! the scheduled start).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use storbench_workload::JobSpec;

const FLUSH_AT: usize = 64 << 10;

#[derive(Clone, Copy)]
enum Value {
    Lat,
    Clat,
    Slat,
    Bw,
    Iops,
}

struct Out {
    value: Value,
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
}

/// One completed I/O, as the logs need it.
pub struct Sample {
    /// ms since the measured phase began.
    pub t_ms: u64,
    /// 0 read, 1 write.
    pub dir: u8,
    pub bytes: u64,
    pub lat_ns: u64,
    pub clat_ns: u64,
    /// Submission latency, for engines that submit apart.
    pub slat_ns: Option<u64>,
    pub offset: u64,
    /// The kernel's ioprio value the I/O carried (0: none of its own).
    pub ioprio: u16,
}

pub struct UnitLogWriter {
    outs: Vec<Out>,
    offset: bool,
    /// `log_prio`: the priority in hex; else 1 for a real-time I/O, as fio.
    prio: bool,
    failed: Option<String>,
}

impl UnitLogWriter {
    /// Worker `worker`'s per-I/O log files, created (truncated, as fio
    /// does) when the job asks for them.
    pub fn create(spec: &JobSpec, worker: u32) -> Result<Option<UnitLogWriter>, String> {
        let logs = &spec.logs;
        if !logs.per_io() {
            return Ok(None);
        }
        let unit = logs.unit.as_ref().ok_or("per-I/O logs (log_avg_msec=0) have no directory here; give log_avg_msec=N")?;
        let n = unit.first + worker;
        let name = |p: &String| if p.is_empty() { spec.name.clone() } else { p.clone() };
        let mut wanted: Vec<(String, &str, Option<Value>)> = Vec::new();
        if let Some(p) = &logs.lat {
            wanted.extend([(name(p), "lat", Some(Value::Lat)), (name(p), "clat", Some(Value::Clat)), (name(p), "slat", Some(Value::Slat))]);
        }
        if let Some(p) = &logs.bw {
            wanted.push((name(p), "bw", Some(Value::Bw)));
        }
        if let Some(p) = &logs.iops {
            wanted.push((name(p), "iops", Some(Value::Iops)));
        }
        let mut outs = Vec::new();
        for (prefix, kind, value) in wanted {
            let path = unit.dir.join(format!("{prefix}_{kind}.{n}.log"));
            let made = path.parent().map_or(Ok(()), std::fs::create_dir_all);
            let file = made.and_then(|_| File::create(&path)).map_err(|e| format!("fio log {}: {e}", path.display()))?;
            if let Some(value) = value {
                outs.push(Out { value, path, file, buf: Vec::with_capacity(FLUSH_AT + 128) });
            }
        }
        Ok(Some(UnitLogWriter { outs, offset: logs.offset, prio: logs.prio, failed: None }))
    }

    /// One I/O that completed in the measured phase.
    #[inline]
    pub fn completed(&mut self, s: &Sample) {
        let mut num = itoa::Buffer::new();
        for i in 0..self.outs.len() {
            let o = &mut self.outs[i];
            let value = match o.value {
                Value::Lat => s.lat_ns,
                Value::Clat => s.clat_ns,
                Value::Slat => match s.slat_ns {
                    Some(ns) => ns,
                    None => continue,
                },
                Value::Bw => s.bytes.saturating_mul(1_000_000).checked_div(s.clat_ns).unwrap_or(0),
                Value::Iops => 1,
            };
            for v in [s.t_ms, value, s.dir as u64, s.bytes] {
                o.buf.extend_from_slice(num.format(v).as_bytes());
                o.buf.extend_from_slice(b", ");
            }
            if self.offset {
                o.buf.extend_from_slice(num.format(s.offset).as_bytes());
                o.buf.extend_from_slice(b", ");
            }
            if self.prio {
                let _ = writeln!(o.buf, "0x{:04x}", s.ioprio);
            } else {
                // fio's stat.c without log_prio: whether the I/O was of the real-time class.
                o.buf.extend_from_slice(if s.ioprio >> 13 == 1 { b"1\n" } else { b"0\n" });
            }
            if o.buf.len() >= FLUSH_AT {
                flush(o, &mut self.failed);
            }
        }
    }

    /// Write what is buffered; a write that failed on the way is the
    /// worker's error.
    pub fn finish(mut self) -> Result<(), String> {
        for o in &mut self.outs {
            flush(o, &mut self.failed);
        }
        self.failed.map_or(Ok(()), Err)
    }
}

/// After a failed write the log stops growing (the error is kept), but the
/// run goes on: its figures are still measured.
fn flush(o: &mut Out, failed: &mut Option<String>) {
    if failed.is_none() {
        if let Err(e) = o.file.write_all(&o.buf) {
            *failed = Some(format!("fio log {}: {e}", o.path.display()));
        }
    }
    o.buf.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_workload::{apply_option, UnitLogs};

    fn spec(dir: &std::path::Path, opts: &[(&str, &str)]) -> JobSpec {
        let mut s = JobSpec { name: "j".into(), ..JobSpec::default() };
        for (k, v) in opts {
            apply_option(&mut s, k, v).unwrap();
        }
        s.logs.unit = Some(UnitLogs { dir: dir.to_path_buf(), first: 3 });
        s
    }

    fn read(dir: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    #[test]
    fn lines_are_fios_with_and_without_offset_and_prio() {
        let d = std::env::temp_dir().join(format!("storbench-unitlog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let s = spec(&d, &[("write_lat_log", "sub/l"), ("write_bw_log", ""), ("write_iops_log", ""), ("log_offset", "1")]);
        let mut w = UnitLogWriter::create(&s, 1).unwrap().unwrap();
        w.completed(&Sample { t_ms: 7, dir: 1, bytes: 4096, lat_ns: 150_000, clat_ns: 140_000, slat_ns: None, offset: 8192, ioprio: 0 });
        // libaio's, with a slat.
        w.completed(&Sample {
            t_ms: 9,
            dir: 0,
            bytes: 512,
            lat_ns: 2_000_000,
            clat_ns: 1_200_000,
            slat_ns: Some(800_000),
            offset: 0,
            ioprio: 0,
        });
        w.finish().unwrap();
        assert_eq!(read(&d, "sub/l_lat.4.log"), "7, 150000, 1, 4096, 8192, 0\n9, 2000000, 0, 512, 0, 0\n");
        assert_eq!(read(&d, "sub/l_clat.4.log"), "7, 140000, 1, 4096, 8192, 0\n9, 1200000, 0, 512, 0, 0\n");
        assert_eq!(read(&d, "sub/l_slat.4.log"), "9, 800000, 0, 512, 0, 0\n", "none for the engine that does not submit apart");
        // fio: bytes * 1,000,000 / clat_ns = 4096e6 / 140000 = 29257.
        assert_eq!(read(&d, "j_bw.4.log"), "7, 29257, 1, 4096, 8192, 0\n9, 426, 0, 512, 0, 0\n");
        assert_eq!(read(&d, "j_iops.4.log"), "7, 1, 1, 4096, 8192, 0\n9, 1, 0, 512, 0, 0\n");
        let s = spec(&d, &[("write_iops_log", "p"), ("log_prio", "1")]);
        let mut w = UnitLogWriter::create(&s, 0).unwrap().unwrap();
        // Class 1 (real time), level 4: fio's ioprio value 0x2004.
        w.completed(&Sample { t_ms: 0, dir: 0, bytes: 512, lat_ns: 1, clat_ns: 0, slat_ns: None, offset: 0, ioprio: (1 << 13) | 4 });
        w.finish().unwrap();
        assert_eq!(read(&d, "p_iops.3.log"), "0, 1, 0, 512, 0x2004\n");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
