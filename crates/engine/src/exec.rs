//! The `exec` engine, fio's program runner: a job on it runs `program` for
//! its time (`JobKind::Program`, `runner::exec`) and carries out no operation
//! (see cpuio.rs, the other engine without storage).

use crate::cpuio::NoStorage;
use crate::FioName;

/// Its name (the plan tells a program job from a CPU burner by it).
pub const NAME: &str = "exec";

pub const EXEC: NoStorage = NoStorage {
    name: NAME,
    fio: &[FioName { name: NAME, note: None }],
    description: "no I/O: runs `program` for the job's time, then SIGTERM and SIGKILL (fio's exec; needs --allow-exec)",
};
