//! A librados connection from engine options (fio's names where fio has them),
//! monitor commands, and a pool's figures as `ceph df detail` gives them.

use super::ffi::{self, Api, IoCtx, Rados};
use crate::{EngineError, EngineOptions, Kind, OptionInfo, Room};
use std::path::Path;
use std::ptr;

/// Connection options shared by the Ceph engines.
pub const CONN_OPTIONS: &[OptionInfo] = &[
    OptionInfo { name: "conf", kind: Kind::Text, default: "", help: "ceph.conf path (default: $CEPH_CONF or /etc/ceph/ceph.conf)" },
    OptionInfo { name: "clientname", kind: Kind::Text, default: "", help: "cephx client id, without 'client.' (default admin)" },
    OptionInfo { name: "keyring", kind: Kind::Text, default: "", help: "keyring path (default: from ceph.conf)" },
    OptionInfo { name: "pool", kind: Kind::Text, default: "", help: "pool name" },
    OptionInfo { name: "namespace", kind: Kind::Text, default: "", help: "RADOS namespace within the pool" },
    OptionInfo {
        name: "connect_timeout",
        kind: Kind::Duration,
        default: "",
        help: "seconds to wait for the monitors before failing (default 10)",
    },
    OptionInfo {
        name: "op_timeout",
        kind: Kind::Duration,
        default: "",
        help: "seconds before an operation the cluster does not answer fails with ETIMEDOUT (default 30; 0 waits forever)",
    },
];

/// The connection options, parsed once.
#[derive(Clone, Debug)]
pub struct ConnOptions {
    /// ceph.conf to read (None: $CEPH_CONF, else librados's search path).
    pub conf: Option<String>,
    pub client: String,
    pub keyring: Option<String>,
    pub pool: String,
    pub namespace: Option<String>,
    /// Seconds, as librados takes them.
    pub connect_timeout: String,
    pub op_timeout: String,
}

impl ConnOptions {
    /// From the engine options; `default_pool` when none is named.
    pub fn parse(engine: &'static str, opts: &EngineOptions, default_pool: &str) -> Result<ConnOptions, EngineError> {
        // 0 is Ceph's "no timeout": meant for operations (op_timeout=0 waits
        // forever, documented), never for reaching the monitors.
        let seconds = |key: &str, default: &str, zero: bool| -> Result<String, EngineError> {
            let v = opts.get(key).map(String::as_str).unwrap_or(default);
            let low = if zero { "from 0" } else { "above 0 and" };
            match v.trim().parse::<f64>() {
                Ok(s) if (s > 0.0 || (zero && s == 0.0)) && s <= crate::MAX_TIMEOUT_SECS => Ok(v.trim().to_string()),
                _ => Err(EngineError::BadOption {
                    engine,
                    option: key.into(),
                    message: format!("'{v}' is not a number of seconds {low} up to 86400 (a day)"),
                }),
            }
        };
        let o = ConnOptions {
            conf: opts.get("conf").cloned().or_else(|| std::env::var("CEPH_CONF").ok()),
            client: format!("client.{}", opts.get("clientname").map(String::as_str).unwrap_or("admin")),
            keyring: opts.get("keyring").cloned(),
            pool: opts.get("pool").cloned().unwrap_or_else(|| default_pool.to_string()),
            namespace: opts.get("namespace").cloned(),
            connect_timeout: seconds("connect_timeout", "10", false)?,
            op_timeout: seconds("op_timeout", "30", true)?,
        };
        for (what, file) in [("conf", &o.conf), ("keyring", &o.keyring)] {
            if let Some(f) = file.as_deref().filter(|f| !Path::new(f).exists()) {
                return Err(EngineError::BadOption { engine, option: what.into(), message: format!("'{f}' does not exist") });
            }
        }
        // Strings go to C: refuse NUL bytes now rather than at connection.
        for (what, v) in
            [("clientname", Some(&o.client)), ("conf", o.conf.as_ref()), ("keyring", o.keyring.as_ref()), ("pool", Some(&o.pool))]
        {
            if let Some(v) = v {
                ffi::cstr(engine, what, v)?;
            }
        }
        Ok(o)
    }
}

/// A connected cluster handle with an I/O context on one pool.
pub struct Cluster {
    pub api: &'static Api,
    rados: Rados,
    pub ioctx: IoCtx,
}

// SAFETY: a rados handle and its ioctx may be used from any one thread at a time.
unsafe impl Send for Cluster {}

impl Cluster {
    pub fn connect(engine: &'static str, o: &ConnOptions) -> Result<Cluster, EngineError> {
        let api = ffi::api(engine)?;
        let cluster_name = ffi::cstr(engine, "cluster", "ceph")?;
        let user = ffi::cstr(engine, "clientname", &o.client)?;
        let mut rados: Rados = ptr::null_mut();
        // SAFETY: valid out-pointer and C strings; flags 0.
        ffi::check(engine, "rados_create2", unsafe { (api.rados_create2)(&mut rados, cluster_name.as_ptr(), user.as_ptr(), 0) })?;
        let mut c = Cluster { api, rados, ioctx: ptr::null_mut() };
        c.configure(engine, o)?;
        // SAFETY: the handle was created above and configured.
        ffi::check(engine, "rados_connect", unsafe { (api.rados_connect)(c.rados) })?;
        if o.pool.is_empty() {
            // The monitors and managers only (a cluster watched, not used).
            return Ok(c);
        }
        let cpool = ffi::cstr(engine, "pool", &o.pool)?;
        // SAFETY: connected handle, valid out-pointer.
        let rc = unsafe { (api.rados_ioctx_create)(c.rados, cpool.as_ptr(), &mut c.ioctx) };
        if rc == -libc::ENOENT {
            return Err(EngineError::BadOption { engine, option: "pool".into(), message: format!("pool '{}' does not exist", o.pool) });
        }
        ffi::check(engine, "rados_ioctx_create", rc)?;
        if let Some(ns) = &o.namespace {
            let cns = ffi::cstr(engine, "namespace", ns)?;
            // SAFETY: valid ioctx and C string.
            unsafe { (api.rados_ioctx_set_namespace)(c.ioctx, cns.as_ptr()) };
        }
        Ok(c)
    }

    fn configure(&mut self, engine: &'static str, o: &ConnOptions) -> Result<(), EngineError> {
        let cconf = o.conf.as_deref().map(|c| ffi::cstr(engine, "conf", c)).transpose()?;
        let conf_ptr = cconf.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        // SAFETY: valid handle; NULL means the default search path.
        let rc = unsafe { (self.api.rados_conf_read_file)(self.rados, conf_ptr) };
        if rc == -libc::ENOENT && o.conf.is_none() {
            return Err(EngineError::BadOption {
                engine,
                option: "conf".into(),
                message:
                    "no ceph.conf found ($CEPH_CONF, /etc/ceph/ceph.conf, ~/.ceph/config, ./ceph.conf); pass --conf FILE or set CEPH_CONF"
                        .into(),
            });
        }
        ffi::check(engine, "rados_conf_read_file", rc)?;
        self.set(engine, "client_mount_timeout", &o.connect_timeout)?;
        self.set(engine, "rados_mon_op_timeout", &o.connect_timeout)?;
        // A dead or paused cluster must not hang the run: operations fail
        // (counted as ETIMEDOUT) and the results of the elapsed time are kept.
        self.set(engine, "rados_osd_op_timeout", &o.op_timeout)?;
        if let Some(k) = &o.keyring {
            self.set(engine, "keyring", k)?;
        }
        Ok(())
    }

    pub fn set(&mut self, engine: &'static str, key: &str, value: &str) -> Result<(), EngineError> {
        let (k, v) = (ffi::cstr(engine, key, key)?, ffi::cstr(engine, key, value)?);
        // SAFETY: valid handle and C strings.
        ffi::check(engine, "rados_conf_set", unsafe { (self.api.rados_conf_set)(self.rados, k.as_ptr(), v.as_ptr()) }).map(|_| ())
    }
}

impl Cluster {
    /// Run a monitor command (JSON) and return its output.
    pub fn mon_command(&self, engine: &'static str, json: &str) -> Result<String, EngineError> {
        self.command(engine, "rados_mon_command", self.api.rados_mon_command, json)
    }

    /// Run a manager command (JSON: `pg stat`, `osd perf`, `osd pool stats`)
    /// and return its output.
    pub fn mgr_command(&self, engine: &'static str, json: &str) -> Result<String, EngineError> {
        self.command(engine, "rados_mgr_command", self.api.rados_mgr_command, json)
    }

    /// One command through librados's monitor or manager call (they share a
    /// signature); a failure carries the cluster's own words.
    fn command(&self, engine: &'static str, call: &'static str, f: ffi::CommandFn, json: &str) -> Result<String, EngineError> {
        let cmd = ffi::cstr(engine, "command", json)?;
        let cmds = [cmd.as_ptr()];
        let (mut out, mut outlen, mut status, mut statuslen) = (ptr::null_mut(), 0usize, ptr::null_mut(), 0usize);
        // SAFETY: one valid command string; librados allocates the out buffers,
        // freed below with rados_buffer_free.
        let rc = unsafe { f(self.rados, cmds.as_ptr(), 1, ptr::null(), 0, &mut out, &mut outlen, &mut status, &mut statuslen) };
        let text = |p: *mut std::ffi::c_char, len: usize| {
            if p.is_null() {
                return String::new();
            }
            // SAFETY: librados returned `len` bytes at `p`.
            let s = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p as *const u8, len) }).into_owned();
            // SAFETY: allocated by librados for this call.
            unsafe { (self.api.rados_buffer_free)(p) };
            s
        };
        let (out, status) = (text(out, outlen), text(status, statuslen));
        if rc < 0 && !status.trim().is_empty() {
            return Err(EngineError::failed(engine, format!("{call} '{json}': {}", status.trim()), std::io::Error::from_raw_os_error(-rc)));
        }
        ffi::check(engine, call, rc)?;
        Ok(out)
    }

    /// The OSDs' largest object (`osd_max_object_size`), as the monitors' config
    /// database has it; Ceph's default (128 MiB) when it cannot be asked.
    pub fn max_object_size(&self, engine: &'static str) -> u64 {
        const DEFAULT: u64 = 128 << 20;
        let cmd = r#"{"prefix": "config get", "who": "osd", "key": "osd_max_object_size", "format": "json"}"#;
        self.mon_command(engine, cmd).ok().and_then(|out| out.trim().trim_matches('"').parse().ok()).unwrap_or(DEFAULT)
    }
}

impl Cluster {
    /// `pool`'s line of `ceph df detail`.
    pub fn pool_df(&self, engine: &'static str, pool: &str) -> Result<PoolDf, EngineError> {
        let out = self.mon_command(engine, r#"{"prefix":"df","detail":"detail","format":"json"}"#)?;
        PoolDf::parse(engine, &out, pool)
    }

    /// What `pool` can still take; `None` while df does not list it yet (a
    /// pool made moments ago: the managers report it within seconds).
    pub fn pool_room(&self, engine: &'static str, pool: &str) -> Result<Option<Room>, EngineError> {
        match self.pool_df(engine, pool) {
            Ok(df) => Ok(Some(df.room(pool))),
            Err(EngineError::Rejected { kind: storbench_metrics::ErrorKind::NotFound, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A pool's line of `ceph df detail`: stored bytes (before replication),
/// objects, what it can still take (`max_avail`, replication counted) and
/// its quotas (0: none).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PoolDf {
    pub stored: u64,
    pub objects: u64,
    pub max_avail: u64,
    pub quota_bytes: u64,
    pub quota_objects: u64,
}

impl PoolDf {
    fn parse(engine: &'static str, json: &str, pool: &str) -> Result<PoolDf, EngineError> {
        let doc: serde_json::Value = serde_json::from_str(json).map_err(|e| EngineError::failed(engine, "the monitors' df answer", e))?;
        let entry = doc["pools"].as_array().and_then(|p| p.iter().find(|p| p["name"] == pool));
        let stats = entry.map(|p| &p["stats"]).ok_or_else(|| EngineError::Rejected {
            engine,
            message: format!("the monitors' df does not list pool '{pool}'"),
            kind: storbench_metrics::ErrorKind::NotFound,
        })?;
        let n = |k: &str| stats[k].as_u64().unwrap_or(0);
        Ok(PoolDf {
            stored: n("stored"),
            objects: n("objects"),
            max_avail: n("max_avail"),
            quota_bytes: n("quota_bytes"),
            quota_objects: n("quota_objects"),
        })
    }

    /// What the pool can still take: the least of MAX AVAIL and what its
    /// quotas leave.
    pub fn room(&self, pool: &str) -> Room {
        let by_quota = (self.quota_bytes > 0).then(|| self.quota_bytes.saturating_sub(self.stored));
        let (bytes, source) = match by_quota {
            Some(q) if q < self.max_avail => (q, format!("pool '{pool}''s quota (ceph osd pool get-quota)")),
            _ => (self.max_avail, format!("pool '{pool}' (MAX AVAIL in ceph df)")),
        };
        let objects = (self.quota_objects > 0).then(|| self.quota_objects.saturating_sub(self.objects));
        Room { bytes: Some(bytes), objects, source }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SAFETY: destroy what connect created, in reverse order.
        unsafe {
            if !self.ioctx.is_null() {
                (self.api.rados_ioctx_destroy)(self.ioctx);
            }
            (self.api.rados_shutdown)(self.rados);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DF: &str = r#"{"pools":[{"name":"other","stats":{"stored":1}},
        {"name":"p","stats":{"stored":1000,"objects":10,"max_avail":8000,"quota_objects":0,"quota_bytes":0}}]}"#;

    #[test]
    fn a_pools_room_is_max_avail_or_what_its_quota_leaves_whichever_is_less() {
        let df = PoolDf::parse("rados", DF, "p").unwrap();
        assert_eq!((df.stored, df.objects, df.max_avail), (1000, 10, 8000));
        let room = df.room("p");
        assert_eq!((room.bytes, room.objects), (Some(8000), None));
        assert!(room.source.contains("MAX AVAIL"), "{}", room.source);
        let quota = PoolDf { quota_bytes: 3000, quota_objects: 12, ..df };
        let room = quota.room("p");
        assert_eq!((room.bytes, room.objects), (Some(2000), Some(2)));
        assert!(room.source.contains("quota"), "{}", room.source);
        assert!(PoolDf::parse("rados", DF, "nope").unwrap_err().to_string().contains("'nope'"));
    }
}
