//! Vector database presets (`run --preset vectordb:CONFIG`): MLPerf
//! Storage's VectorDB benchmark (mlcommons/storage, `vdb_benchmark/`) as
//! its storage sees it, a DiskANN index under query processes (see
//! `storbench_workload::vectordb`).
//!
//! Each config is the reference's collection (`vdbbench/configs/*.yaml`:
//! vectors, dimension, shards, `max_degree`, `search_list_size`), as Milvus
//! lays it out and searches it: its rows sealed in segments of at most
//! 2,048 MiB each per shard (`dataCoord.segment.diskSegmentMaxSize`, for
//! collections with a disk index), each segment its own index searched by
//! every query with the config's search list, a beam of
//! `min(4 x CPUs, 16)` reads (`beamwidth_ratio` 4.0, capped at 16: a
//! query node of 4 CPUs or more). `--scale` keeps that share of the
//! vectors in as many segments (so a query reads what the full
//! collection's does, from a smaller index), and no less than a search
//! list of nodes a segment. The runs are the reference's:
//! `--accelerators N` query processes (its `--num-query-processes`,
//! default 1), `--query-batch N` queries a request (its `--batch-size`,
//! default 1), `--runtime` (default 120 s, its README's).

use super::preset::{base, objects, one_target, set, Sizing};
use crate::error::CliError;
use crate::sources::Pairs;
use storbench_workload::vectordb::VdbSpec;
use storbench_workload::JobSpec;

/// A reference collection: `vdbbench/configs/<file>.yaml` at mlcommons/storage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collection {
    pub name: &'static str,
    /// The config it is (`vdb_benchmark/vdbbench/configs/`).
    pub file: &'static str,
    pub vectors: u64,
    pub dimension: u32,
    pub shards: u32,
    pub max_degree: u32,
    pub search_list: u32,
}

pub const COLLECTIONS: &[Collection] = &[
    Collection { name: "1m", file: "1m_diskann.yaml", vectors: 1_000_000, dimension: 1536, shards: 1, max_degree: 64, search_list: 200 },
    Collection {
        name: "10m",
        file: "10m_diskann.yaml",
        vectors: 10_000_000,
        dimension: 1536,
        shards: 10,
        max_degree: 64,
        search_list: 200,
    },
    Collection {
        name: "1m-512",
        file: "1m_diskann_512dim.yaml",
        vectors: 1_000_000,
        dimension: 512,
        shards: 1,
        max_degree: 32,
        search_list: 100,
    },
];

/// Milvus's largest sealed segment of a collection with a disk index, bytes.
const SEGMENT_MAX: u64 = 2048 << 20;
/// Milvus's beam: `beamwidth_ratio` x CPUs, at most this.
const BEAM: u32 = 16;
/// The run's seconds when none is given (the reference README's `--runtime 120`).
const SECONDS: u64 = 120;

/// The config named `name`.
pub fn find(name: &str) -> Option<&'static Collection> {
    COLLECTIONS.iter().find(|c| c.name == name)
}

/// Every preset name, for help and errors.
pub fn names() -> impl Iterator<Item = String> {
    COLLECTIONS.iter().map(|c| format!("vectordb:{}", c.name))
}

/// Segments the collection's rows are sealed in: each shard's rows (a
/// float32 vector and an int64 key each) in segments of at most 2 GiB.
pub fn segments(c: &Collection) -> u32 {
    let row = u64::from(c.dimension) * 4 + 8;
    let per_shard = c.vectors.div_ceil(u64::from(c.shards.max(1)));
    (per_shard * row).div_ceil(SEGMENT_MAX) as u32 * c.shards.max(1)
}

/// The query job of a collection: its index on the job's file, device,
/// image or export, searched by the query processes for the run's time.
pub fn specs(c: &Collection, sizing: &Sizing, global: &Pairs) -> Result<Vec<JobSpec>, CliError> {
    let mut s = base(global)?;
    if objects(&s) {
        return Err(CliError::usage(format!(
            "--preset vectordb: the index is read in place (a file, a device, rbd, nbd), not from {}: give --filename or --directory",
            s.ioengine
        )));
    }
    let vectors = ((c.vectors as f64 * sizing.scale).round() as u64).max(1);
    let spec = VdbSpec {
        config: c.name.to_string(),
        index: "diskann".into(),
        vectors,
        dimension: c.dimension,
        max_degree: c.max_degree,
        segments: segments(c),
        search_list: c.search_list,
        beam_width: BEAM,
        batch: sizing.batch.unwrap_or(1),
        index_written: false,
    };
    // A segment of fewer nodes than the search list would read each of
    // them and stop short: a query would ask less of storage than the
    // collection's does.
    if spec.segment_nodes() < u64::from(spec.search_list) {
        let least = (u64::from(spec.search_list) * u64::from(spec.segments)) as f64 / c.vectors as f64;
        return Err(CliError::usage(format!(
            "--scale {}: {} vectors in {} segments leave {} nodes a segment, fewer than the search list of {}: raise --scale to {least:.6} at least",
            sizing.scale,
            spec.vectors,
            spec.segments,
            spec.segment_nodes(),
            spec.search_list
        )));
    }
    s.name = format!("vectordb-{}", c.name);
    s.numjobs = sizing.workers.unwrap_or(1);
    let given = |k: &str| global.iter().any(|(g, _)| g == k);
    // Every search of a request may have its beam in flight.
    if !given("iodepth") {
        s.iodepth = spec.batch * spec.segments * spec.beam_width;
    }
    set(&mut s, "rw", "randread")?;
    // DiskANN reads its sectors with direct I/O.
    if storbench_engine::find(&s.ioengine).is_some_and(|f| f.capabilities().direct_io) && !given("direct") {
        s.direct = true;
    }
    // A read is a node's sectors (the index's writes are 1 MiB each).
    set(&mut s, "bs", &spec.read_bytes().to_string())?;
    // One index, shared by the processes: a file of its own in the
    // directory, or the file, device, image or export given.
    if !one_target(&s) {
        s.filenames = vec![format!("vectordb-{}.index", c.name)];
    }
    s.size = Some(spec.index_bytes());
    if s.runtime.is_none() {
        s.runtime = Some(std::time::Duration::from_secs(SECONDS));
    }
    s.time_based = true;
    s.kind.set_vectordb(spec).map_err(|e| CliError::usage(format!("--preset: {e}")))?;
    Ok(vec![s])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizing(scale: f64) -> Sizing {
        Sizing { scale, workers: None, epochs: None, users: None, batch: None }
    }

    #[test]
    fn every_collection_is_its_reference_config() {
        // mlcommons/storage vdb_benchmark/vdbbench/configs/1m_diskann.yaml,
        // 10m_diskann.yaml and 1m_diskann_512dim.yaml (num_vectors,
        // dimension, num_shards, max_degree, search_list_size).
        let want = [("1m", 1_000_000, 1536, 1, 64, 200), ("10m", 10_000_000, 1536, 10, 64, 200), ("1m-512", 1_000_000, 512, 1, 32, 100)];
        for (name, vectors, dimension, shards, degree, list) in want {
            let c = find(name).unwrap();
            assert_eq!(
                (c.vectors, c.dimension, c.shards, c.max_degree, c.search_list),
                (vectors, dimension, shards, degree, list),
                "{name}"
            );
        }
        // 1M rows of 6,152 bytes = 5,867 MiB: 3 segments of at most 2,048 MiB;
        // 10 shards of 1M rows: 3 each; 1M rows of 2,056 bytes = 1,961 MiB: one.
        let seg: Vec<u32> = COLLECTIONS.iter().map(segments).collect();
        assert_eq!(seg, [3, 30, 1]);
    }

    #[test]
    fn a_query_job_shares_one_index_with_direct_reads_for_its_runtime() {
        let global = vec![("directory".to_string(), "/tmp/v".to_string())];
        let s = specs(find("1m").unwrap(), &Sizing { workers: Some(4), batch: Some(10), ..sizing(0.01) }, &global).unwrap();
        let j = &s[0];
        let v = j.kind.vectordb().unwrap();
        assert_eq!((v.vectors, v.segments, v.search_list, v.beam_width, v.batch), (10_000, 3, 200, 16, 10));
        assert_eq!(j.filenames, ["vectordb-1m.index"], "one index for every process");
        assert_eq!((j.numjobs, j.iodepth, j.size, j.bs.max()), (4, 10 * 3 * 16, Some(v.index_bytes()), 8192));
        assert!(j.time_based && j.runtime == Some(std::time::Duration::from_secs(120)));
        // 3,334 nodes of 8 KiB a segment after its metadata sector.
        assert_eq!(v.index_bytes(), 3 * (4096 + 3334 * 8192));
        // On a device given, the device is the index.
        let dev = specs(find("1m-512").unwrap(), &sizing(0.001), &vec![("filename".into(), "/dev/x".into())]).unwrap();
        assert_eq!((dev[0].filenames.clone(), dev[0].iodepth), (vec!["/dev/x".to_string()], 16));
        // A file or device is not written: its slots are a node's. An image
        // written first takes 1 MiB writes while the slots stay within 64 MiB.
        assert_eq!((j.dataset_write_len(), dev[0].buffer_len()), (8192, 4096));
        let rbd = |batch| {
            let g = vec![("ioengine".to_string(), "rbd".to_string()), ("rbdname".into(), "i".into()), ("pool".into(), "rbd".into())];
            specs(find("1m").unwrap(), &Sizing { batch: Some(batch), ..sizing(0.01) }, &g).unwrap().remove(0)
        };
        assert_eq!((rbd(1).iodepth, rbd(1).dataset_write_len(), rbd(1).buffer_len()), (48, 1 << 20, 1 << 20));
        assert_eq!((rbd(10).iodepth, rbd(10).dataset_write_len()), (480, 139_264));
        let mut kept = rbd(1);
        storbench_workload::apply_option(&mut kept, "dataset_exists", "1").unwrap();
        assert_eq!(kept.buffer_len(), 8192, "an index read as it is needs no write slots");
    }

    #[test]
    fn a_scale_that_leaves_a_segment_fewer_nodes_than_the_search_list_is_refused() {
        // 10m: 30 segments x 200 nodes = 6,000 vectors at least, a share of 0.0006.
        let e = specs(find("10m").unwrap(), &sizing(0.0005), &Vec::new()).unwrap_err().to_string();
        assert!(e.contains("167 nodes a segment") && e.contains("raise --scale to 0.000600"), "{e}");
        assert!(specs(find("10m").unwrap(), &sizing(0.0006), &Vec::new()).is_ok());
    }

    #[test]
    fn object_stores_are_refused_by_name() {
        let e = specs(find("1m").unwrap(), &sizing(0.01), &vec![("ioengine".into(), "s3".into())]).unwrap_err().to_string();
        assert!(e.contains("read in place") && e.contains("s3"), "{e}");
    }
}
