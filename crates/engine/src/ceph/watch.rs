//! The Ceph cluster behind a rados or rbd job, as `ceph` itself shows it:
//! its managers' `pg stat` (client operations and bytes, degraded and
//! misplaced objects, PGs not active+clean), `osd pool stats` (client
//! operations by direction, recovery rates, every pool's together) and `osd
//! perf` (each OSD's commit and apply latency), the monitors' `osd stat`
//! (OSDs up and in),
//! read through librados once a second during a run; and the faults a run
//! injects through the monitors (`osd out`, `osd in`, `osd down`), never
//! through a shell.

use super::conn::{Cluster, ConnOptions};
use crate::{ClusterAdmin, EngineError, Watched};
use serde_json::Value as Json;
use storbench_model::disruption::FaultAction;
use storbench_model::telemetry::Value;

/// A connection to the cluster's monitors and managers.
pub struct CephWatch {
    engine: &'static str,
    cluster: Cluster,
}

impl CephWatch {
    /// The cluster a job's connection options reach (its pool is not opened).
    pub fn connect(engine: &'static str, conn: &ConnOptions) -> Result<CephWatch, EngineError> {
        let conn = ConnOptions { pool: String::new(), ..conn.clone() };
        Ok(CephWatch { engine, cluster: Cluster::connect(engine, &conn)? })
    }

    /// The cluster a ceph.conf names, as `client.admin` (`--watch-ceph FILE`,
    /// beside a run on its RADOS Gateway, say).
    pub fn from_conf(conf: &std::path::Path) -> Result<CephWatch, EngineError> {
        let opts = [("conf".to_string(), conf.display().to_string())].into_iter().collect();
        CephWatch::connect("ceph", &ConnOptions::parse("ceph", &opts, "")?)
    }

    fn json(&self, out: &str, what: &str) -> Result<Json, EngineError> {
        serde_json::from_str(out).map_err(|e| EngineError::failed(self.engine, format!("{what}: the cluster's answer is not JSON"), e))
    }
}

impl Watched for CephWatch {
    fn name(&self) -> &str {
        "ceph"
    }

    fn sample(&mut self) -> Result<Vec<Value>, EngineError> {
        let pg = self.cluster.mgr_command(self.engine, r#"{"prefix":"pg stat","format":"json"}"#)?;
        let perf = self.cluster.mgr_command(self.engine, r#"{"prefix":"osd perf","format":"json"}"#)?;
        let pools = self.cluster.mgr_command(self.engine, r#"{"prefix":"osd pool stats","format":"json"}"#)?;
        let stat = self.cluster.mon_command(self.engine, r#"{"prefix":"osd stat","format":"json"}"#)?;
        let mut out = pg_stat(&self.json(&pg, "pg stat")?);
        out.extend(pool_stats(&self.json(&pools, "osd pool stats")?));
        out.extend(osd_perf(&self.json(&perf, "osd perf")?));
        out.extend(osd_stat(&self.json(&stat, "osd stat")?));
        Ok(out)
    }
}

impl ClusterAdmin for CephWatch {
    fn inject(&mut self, action: &FaultAction) -> Result<String, EngineError> {
        let (prefix, id) = match action {
            FaultAction::OsdOut(n) => ("osd out", n),
            FaultAction::OsdIn(n) => ("osd in", n),
            FaultAction::OsdDown(n) => ("osd down", n),
            other => {
                let message = format!("{} is not the cluster's to carry out", other.words());
                return Err(EngineError::Unavailable { engine: self.engine, message });
            }
        };
        let cmd = serde_json::json!({ "prefix": prefix, "ids": [id.to_string()] }).to_string();
        let out = self.cluster.mon_command(self.engine, &cmd)?;
        Ok(if out.trim().is_empty() { format!("{prefix} {id}: done") } else { out.trim().to_string() })
    }
}

/// `pg stat`'s summary: rates and counts Ceph puts there only when they are
/// not zero, so a missing one is 0 (the summary itself must be there).
fn pg_stat(doc: &Json) -> Vec<Value> {
    let Some(s) = doc.get("pg_summary") else { return Vec::new() };
    let n = |key: &str| s.get(key).and_then(Json::as_f64).unwrap_or(0.0);
    let clean = s["num_pg_by_state"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|st| st["name"].as_str().is_some_and(clean_state))
        .filter_map(|st| st["num"].as_f64())
        .sum::<f64>();
    [
        ("cluster_client_ops_per_s", n("io_sec")),
        ("cluster_client_read_bytes_per_s", n("read_bytes_sec")),
        ("cluster_client_write_bytes_per_s", n("write_bytes_sec")),
        ("cluster_degraded_objects", n("degraded_objects")),
        ("cluster_misplaced_objects", n("misplaced_objects")),
        ("cluster_pgs", n("num_pgs")),
        ("cluster_pgs_not_active_clean", (n("num_pgs") - clean).max(0.0)),
    ]
    .into_iter()
    .map(|(metric, v)| Value::new(metric, &[], v))
    .collect()
}

/// A PG state that is not a recovery: active and clean, whatever routine
/// work it adds (`active+clean+scrubbing+deep`, `+snaptrim`), but none of
/// the states of data out of place or short of copies.
fn clean_state(name: &str) -> bool {
    const UNSETTLED: [&str; 12] = [
        "degraded",
        "recovering",
        "recovery_wait",
        "backfilling",
        "backfill_wait",
        "remapped",
        "undersized",
        "peering",
        "down",
        "incomplete",
        "stale",
        "inconsistent",
    ];
    let parts: Vec<&str> = name.split('+').collect();
    parts.contains(&"active") && parts.contains(&"clean") && !parts.iter().any(|p| UNSETTLED.contains(p))
}

/// `osd pool stats`, every pool's together: client operations by direction
/// and recovery (each pool says only the rates that are not zero).
fn pool_stats(doc: &Json) -> Vec<Value> {
    let sum = |group: &str, key: &str| -> f64 { doc.as_array().into_iter().flatten().filter_map(|p| p[group][key].as_f64()).sum() };
    [
        ("cluster_client_read_ops_per_s", sum("client_io_rate", "read_op_per_sec")),
        ("cluster_client_write_ops_per_s", sum("client_io_rate", "write_op_per_sec")),
        ("cluster_recovery_objects_per_s", sum("recovery_rate", "recovering_objects_per_sec")),
        ("cluster_recovery_bytes_per_s", sum("recovery_rate", "recovering_bytes_per_sec")),
    ]
    .into_iter()
    .map(|(metric, v)| Value::new(metric, &[], v))
    .collect()
}

/// `osd perf`: each OSD's commit and apply latency (ms, as Ceph averages them).
fn osd_perf(doc: &Json) -> Vec<Value> {
    let infos = doc.pointer("/osdstats/osd_perf_infos").or_else(|| doc.get("osd_perf_infos"));
    let mut out = Vec::new();
    for info in infos.and_then(Json::as_array).into_iter().flatten() {
        let Some(id) = info["id"].as_u64() else { continue };
        let osd = id.to_string();
        for (key, metric) in [("commit_latency_ms", "osd_commit_latency_ms"), ("apply_latency_ms", "osd_apply_latency_ms")] {
            if let Some(v) = info["perf_stats"][key].as_f64() {
                out.push(Value::new(metric, &[("osd", &osd)], v));
            }
        }
    }
    out
}

/// `osd stat`: OSDs in the map, up and in.
fn osd_stat(doc: &Json) -> Vec<Value> {
    // Pacific answers at the top level; older releases under "osdmap".
    let m = doc.get("osdmap").unwrap_or(doc);
    [("cluster_osds", "num_osds"), ("cluster_osds_up", "num_up_osds"), ("cluster_osds_in", "num_in_osds")]
        .into_iter()
        .filter_map(|(metric, key)| m[key].as_f64().map(|v| Value::new(metric, &[], v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(v: &[Value], metric: &str) -> Option<f64> {
        v.iter().find(|x| x.metric == metric).map(|x| x.value)
    }

    /// Answers as Ceph 16 gives them (the test cluster's, one while an OSD
    /// was out and its PGs recovered).
    #[test]
    fn the_managers_answers_become_series() {
        let clean: Json = serde_json::from_str(
            r#"{"pg_ready":true,"pg_summary":{"num_pg_by_state":[{"name":"active+clean","num":49}],"num_pgs":49,
               "read_bytes_sec":8189,"write_bytes_sec":0,"io_sec":13}}"#,
        )
        .unwrap();
        let v = pg_stat(&clean);
        assert_eq!(get(&v, "cluster_client_read_bytes_per_s"), Some(8189.0));
        assert_eq!((get(&v, "cluster_degraded_objects"), get(&v, "cluster_pgs_not_active_clean")), (Some(0.0), Some(0.0)));
        let moving: Json = serde_json::from_str(
            r#"{"pg_summary":{"num_pg_by_state":[{"name":"active+clean","num":40},{"name":"active+clean+remapped","num":9}],
               "num_pgs":49,"degraded_objects":120,"degraded_total":3000,"misplaced_objects":245,"misplaced_total":735,
               "read_bytes_sec":1479874,"write_bytes_sec":1459571,"io_sec":751}}"#,
        )
        .unwrap();
        let v = pg_stat(&moving);
        assert_eq!((get(&v, "cluster_degraded_objects"), get(&v, "cluster_misplaced_objects")), (Some(120.0), Some(245.0)));
        assert_eq!((get(&v, "cluster_pgs_not_active_clean"), get(&v, "cluster_client_ops_per_s")), (Some(9.0), Some(751.0)));
        assert!(pg_stat(&serde_json::json!({"pg_ready": false})).is_empty(), "no summary, no figures");
        let scrubbing = serde_json::json!({"pg_summary": {"num_pgs": 49, "num_pg_by_state": [
            {"name": "active+clean", "num": 45}, {"name": "active+clean+scrubbing+deep", "num": 3}, {"name": "active+clean+snaptrim", "num": 1}]}});
        assert_eq!(get(&pg_stat(&scrubbing), "cluster_pgs_not_active_clean"), Some(0.0), "routine scrubbing is not a recovery");
        let pools: Json = serde_json::from_str(
            r#"[{"pool_name":"rbd","pool_id":3,"recovery":{},"recovery_rate":{"recovering_objects_per_sec":30,"recovering_bytes_per_sec":125829120},
                "client_io_rate":{"read_bytes_sec":1590049,"write_bytes_sec":2371985,"read_op_per_sec":416,"write_op_per_sec":587}},
               {"pool_name":"storbench","pool_id":2,"recovery":{},"recovery_rate":{},"client_io_rate":{"write_op_per_sec":13}}]"#,
        )
        .unwrap();
        let v = pool_stats(&pools);
        assert_eq!((get(&v, "cluster_client_read_ops_per_s"), get(&v, "cluster_client_write_ops_per_s")), (Some(416.0), Some(600.0)));
        assert_eq!(get(&v, "cluster_recovery_objects_per_s"), Some(30.0));
        let perf: Json = serde_json::from_str(
            r#"{"pg_ready":true,"osdstats":{"osd_perf_infos":[{"id":2,"perf_stats":{"commit_latency_ms":3,"apply_latency_ms":4}},
               {"id":0,"perf_stats":{"commit_latency_ms":0,"apply_latency_ms":0}}]}}"#,
        )
        .unwrap();
        let v = osd_perf(&perf);
        let two = v.iter().find(|x| x.metric == "osd_commit_latency_ms" && x.labels["osd"] == "2").unwrap();
        assert_eq!((two.value, v.len()), (3.0, 4));
        let stat = serde_json::json!({"epoch": 31, "num_osds": 3, "num_up_osds": 3, "num_in_osds": 2});
        assert_eq!(get(&osd_stat(&stat), "cluster_osds_in"), Some(2.0));
    }
}
