//! A job's kind section as JSON: [`KindResult`] is written as the field of
//! its kind's name in the job (`"replay": {...}`, `"train": {...}`), the
//! shape results of earlier builds have, and read back from it. A job
//! with the sections of two kinds is refused: a job is of one kind.

use crate::result::{KindResult, KvCacheResult, ReplayResult, TrainResult, VectorDbResult};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The fields a kind section takes in a job (a new kind adds its own).
#[derive(Serialize, Deserialize)]
struct Fields<R, T, K, V> {
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    train: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kvcache: Option<K>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vectordb: Option<V>,
}

pub fn serialize<S: Serializer>(kind: &Option<KindResult>, s: S) -> Result<S::Ok, S::Error> {
    let none: Fields<&ReplayResult, &TrainResult, &KvCacheResult, &VectorDbResult> =
        Fields { replay: None, train: None, kvcache: None, vectordb: None };
    let fields = match kind {
        None => none,
        Some(KindResult::Replay(r)) => Fields { replay: Some(r), ..none },
        Some(KindResult::Train(t)) => Fields { train: Some(t), ..none },
        Some(KindResult::KvCache(k)) => Fields { kvcache: Some(k), ..none },
        Some(KindResult::VectorDb(v)) => Fields { vectordb: Some(v), ..none },
    };
    fields.serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<KindResult>, D::Error> {
    let fields: Fields<ReplayResult, TrainResult, KvCacheResult, VectorDbResult> = Fields::deserialize(d)?;
    let mut kinds = [
        fields.replay.map(KindResult::Replay),
        fields.train.map(KindResult::Train),
        fields.kvcache.map(KindResult::KvCache),
        fields.vectordb.map(KindResult::VectorDb),
    ]
    .into_iter()
    .flatten();
    match (kinds.next(), kinds.next()) {
        (k, None) => Ok(k),
        (Some(_), Some(_)) | (None, Some(_)) => {
            Err(serde::de::Error::custom("a job with the sections of two kinds (replay, train, kvcache, vectordb): a job is of one kind"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Job {
        name: String,
        #[serde(flatten, with = "super")]
        kind: Option<KindResult>,
    }

    fn train() -> TrainResult {
        TrainResult {
            model: "resnet50".into(),
            accelerators: 2,
            epochs: 1,
            samples: 800,
            steps: 2,
            runtime_ns: 1_000_000,
            samples_per_sec: 8e5,
            bytes_per_sec: 1e8,
            au: 0.95,
            au_floor: 0.9,
            passed: true,
            stall_ns: 10,
            ranks: None,
        }
    }

    #[test]
    fn a_kind_section_is_the_field_of_its_name_and_reads_back() {
        let job = Job { name: "t".into(), kind: Some(KindResult::Train(train())) };
        let v = serde_json::to_value(&job).unwrap();
        assert_eq!(v["train"]["samples"], 800, "{v}");
        assert!(v.get("replay").is_none(), "{v}");
        let back: Job = serde_json::from_value(v).unwrap();
        assert!(matches!(back.kind, Some(KindResult::Train(t)) if t == train()));
        let none = serde_json::to_value(Job { name: "b".into(), kind: None }).unwrap();
        assert_eq!(none, serde_json::json!({"name": "b"}), "no section, no field");
        assert!(serde_json::from_value::<Job>(none).unwrap().kind.is_none());
    }

    #[test]
    fn a_job_of_two_kinds_or_a_broken_section_is_refused_not_dropped() {
        let mut v = serde_json::to_value(Job { name: "t".into(), kind: Some(KindResult::Train(train())) }).unwrap();
        v["train"]["samples"] = "many".into();
        assert!(serde_json::from_value::<Job>(v.clone()).is_err(), "a broken section is an error, as before");
        v["train"] = serde_json::to_value(train()).unwrap();
        let h = storbench_metrics::LatencyHistogram::new();
        let lag = storbench_metrics::LatencySummary::of(&h);
        let (trace, format) = ("t.log".to_string(), "fio iolog v3".to_string());
        let r = ReplayResult { trace, format, records: 4, issued: 4, left: 0, remapped: 0, speed: Some(1.0), lag, lag_histogram: h };
        let replay = serde_json::to_value(Job { name: "r".into(), kind: Some(KindResult::Replay(r)) }).unwrap();
        assert_eq!(serde_json::from_value::<Job>(replay.clone()).unwrap().kind.map(|k| matches!(k, KindResult::Replay(_))), Some(true));
        v["replay"] = replay["replay"].clone();
        let e = serde_json::from_value::<Job>(v).err().expect("refused").to_string();
        assert!(e.contains("one kind"), "{e}");
    }
}
