//! Judging an object read back: its bytes against the version (generation)
//! the table says is right. A read from the object's start sees the
//! version's header, so an older intact version is told apart (a lost
//! write); a ranged read elsewhere can only say the bytes are not right.

use storbench_metrics::VerifyKind;
use storbench_workload::verify::{object_bytes, object_generation};

/// Ranged reads try at most this many of the acceptable generations.
const RANGED_TRIES: u64 = 8;

/// `lo` or `lo..hi`, for messages.
pub(super) fn generations(expected: [u64; 2]) -> String {
    if expected[0] == expected[1] {
        expected[1].to_string()
    } else {
        format!("{}..{}", expected[0], expected[1])
    }
}

/// Whether `got` (read from `offset` of object `key`) is one of the
/// `expected` generations; if not: kind, the generation it holds, the first
/// wrong byte and what was seen.
pub(super) fn judge(
    got: &[u8],
    key: u64,
    offset: u64,
    expected: [u64; 2],
    scratch: &mut [u8],
) -> Option<(VerifyKind, Option<u64>, Option<u32>, String)> {
    let want = generations(expected);
    let scratch = &mut scratch[..got.len()];
    if offset == 0 && got.len() >= 16 {
        let Some(g) = object_generation(got) else {
            let zeros = got.iter().all(|b| *b == 0);
            let kind = if zeros { VerifyKind::Missing } else { VerifyKind::Corrupt };
            return Some((kind, None, Some(0), format!("not a version storbench wrote (expected generation {want})")));
        };
        object_bytes(scratch, key, g, 0);
        if let Some(bad) = first_difference(got, scratch) {
            return Some((VerifyKind::Corrupt, Some(g), Some(bad), format!("differs from generation {g} at byte {bad} (expected {want})")));
        }
        return match g {
            g if g < expected[0] => {
                Some((VerifyKind::LostWrite, Some(g), None, format!("an older version: generation {g}, expected {want}")))
            }
            g if g > expected[1] => {
                Some((VerifyKind::Corrupt, Some(g), None, format!("generation {g} was never acknowledged (expected {want})")))
            }
            _ => None,
        };
    }
    if expected[1] - expected[0] >= RANGED_TRIES {
        // Too many versions may be there to try each: not judged.
        return None;
    }
    for g in (expected[0]..=expected[1]).rev() {
        object_bytes(scratch, key, g, offset);
        if got == scratch {
            return None;
        }
    }
    object_bytes(scratch, key, expected[1], offset);
    let bad = first_difference(got, scratch).map(|b| b + offset as u32);
    Some((
        VerifyKind::Corrupt,
        None,
        bad,
        format!("bytes {offset}.. are not generation {want}'s (a ranged read cannot tell an older version from damage)"),
    ))
}

/// An object no table speaks for, read whole, against the version its
/// own first bytes name (its data is made from key and generation, so
/// another key's object fails too); `None`: intact.
pub(super) fn judge_alone(got: &[u8], key: u64, scratch: &mut [u8]) -> Option<(VerifyKind, Option<u64>, Option<u32>, String)> {
    let Some(g) = object_generation(got) else {
        let what = if got.iter().all(|b| *b == 0) { "zeros" } else { "no header" };
        return Some((VerifyKind::Missing, None, Some(0), format!("{what}: not a version storbench wrote")));
    };
    let scratch = &mut scratch[..got.len()];
    object_bytes(scratch, key, g, 0);
    let bad = first_difference(got, scratch)?;
    Some((
        VerifyKind::Corrupt,
        Some(g),
        Some(bad),
        format!("differs at byte {bad} from generation {g} of key {key}, which its header names"),
    ))
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<u32> {
    a.iter().zip(b).position(|(x, y)| x != y).map(|p| p as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(key: u64, g: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        object_bytes(&mut v, key, g, 0);
        v
    }

    #[test]
    fn whole_reads_tell_right_older_damaged_and_missing_apart() {
        let mut scratch = vec![0u8; 4096];
        assert_eq!(judge(&version(5, 9, 4096), 5, 0, [9, 9], &mut scratch), None);
        let older = judge(&version(5, 7, 4096), 5, 0, [9, 9], &mut scratch).unwrap();
        assert_eq!((older.0, older.1), (VerifyKind::LostWrite, Some(7)));
        let mut hit = version(5, 9, 4096);
        hit[3000] ^= 1;
        let damaged = judge(&hit, 5, 0, [9, 9], &mut scratch).unwrap();
        assert_eq!((damaged.0, damaged.2), (VerifyKind::Corrupt, Some(3000)));
        assert_eq!(judge(&[0u8; 4096], 5, 0, [9, 9], &mut scratch).unwrap().0, VerifyKind::Missing);
        assert_eq!(judge(&version(6, 9, 4096), 5, 0, [9, 9], &mut scratch).unwrap().0, VerifyKind::Corrupt, "another key's object");
    }

    #[test]
    fn alone_an_object_is_judged_by_the_version_it_names() {
        let mut scratch = vec![0u8; 4096];
        assert_eq!(judge_alone(&version(5, 7, 4096), 5, &mut scratch), None, "any generation, intact");
        let mut hit = version(5, 7, 4096);
        hit[100] ^= 1;
        assert_eq!(judge_alone(&hit, 5, &mut scratch).map(|f| (f.0, f.2)), Some((VerifyKind::Corrupt, Some(100))));
        assert_eq!(judge_alone(&version(6, 7, 4096), 5, &mut scratch).unwrap().0, VerifyKind::Corrupt, "another key's bytes");
        assert_eq!(judge_alone(&[0u8; 64], 5, &mut scratch).unwrap().0, VerifyKind::Missing);
    }

    #[test]
    fn ranged_reads_accept_any_overlapping_generation_and_name_the_damage() {
        let mut scratch = vec![0u8; 4096];
        let v8 = version(5, 8, 4096);
        assert_eq!(judge(&v8[100..600], 5, 100, [8, 9], &mut scratch), None);
        let bad = judge(&v8[100..600], 5, 100, [9, 9], &mut scratch).unwrap();
        assert_eq!(bad.0, VerifyKind::Corrupt);
        assert!(bad.2.is_some_and(|b| (100..120).contains(&b)), "the first wrong byte, counted from the object's start: {bad:?}");
    }
}
