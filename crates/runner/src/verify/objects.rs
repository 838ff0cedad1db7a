//! Judging an object read back: its bytes against the version (generation)
//! the table says is right. A read from the object's start sees the
//! version's header, so an older intact version is told apart (a lost
//! write); a ranged read elsewhere can only say the bytes are not right.

use super::HeaderFailure;
use storbench_metrics::VerifyKind;
use storbench_workload::verify::{object_bytes, object_bytes_of, object_header, ObjectHeader};

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

fn failure(kind: VerifyKind, found: Option<u64>, byte: Option<u32>, what: String) -> Option<HeaderFailure> {
    Some(HeaderFailure { kind, found, byte, what, misplaced: false })
}

/// Whether `got` (read from `offset` of object `key`) is one of the
/// `expected` generations; if not: kind, the generation it holds, the first
/// wrong byte and what was seen.
pub(super) fn judge(got: &[u8], key: u64, offset: u64, expected: [u64; 2], scratch: &mut [u8]) -> Option<HeaderFailure> {
    let want = generations(expected);
    let scratch = &mut scratch[..got.len()];
    if offset == 0 && got.len() >= 16 {
        let Some(h) = object_header(got) else {
            let kind = if got.iter().all(|b| *b == 0) { VerifyKind::Missing } else { VerifyKind::Corrupt };
            return failure(kind, None, Some(0), format!("not a version storbench wrote (expected generation {want})"));
        };
        if let Some(f) = as_written(got, key, h, scratch) {
            return Some(f);
        }
        let g = h.generation;
        return match g {
            g if g < expected[0] => {
                failure(VerifyKind::LostWrite, Some(g), None, format!("an older version: generation {g}, expected {want}"))
            }
            g if g > expected[1] => {
                failure(VerifyKind::Corrupt, Some(g), None, format!("generation {g} was never acknowledged (expected {want})"))
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
    failure(
        VerifyKind::Corrupt,
        None,
        bad,
        format!("bytes {offset}.. are not generation {want}'s (a ranged read cannot tell an older version from damage)"),
    )
}

/// An object no table speaks for, read whole, against the version its
/// own first bytes name; `None`: intact.
pub(super) fn judge_alone(got: &[u8], key: u64, scratch: &mut [u8]) -> Option<HeaderFailure> {
    let Some(h) = object_header(got) else {
        let what = if got.iter().all(|b| *b == 0) { "zeros" } else { "no header" };
        return failure(VerifyKind::Missing, None, Some(0), format!("{what}: not a version storbench wrote"));
    };
    as_written(got, key, h, &mut scratch[..got.len()])
}

/// A whole object against the version its header `h` names: another key's
/// intact version is misplaced (a read or write that went to the wrong
/// name), any byte that version would not hold is damage. An earlier
/// build's object (no key in its header) is made from the key read.
fn as_written(got: &[u8], key: u64, h: ObjectHeader, scratch: &mut [u8]) -> Option<HeaderFailure> {
    let g = h.generation;
    let written_for = h.key.unwrap_or(key);
    object_bytes_of(scratch, written_for, g, 0, h.layout);
    let bad = first_difference(got, scratch);
    match (bad, written_for == key) {
        (None, true) => None,
        (None, false) => Some(HeaderFailure {
            kind: VerifyKind::Corrupt,
            found: Some(g),
            byte: Some(16),
            what: format!("misplaced: an intact version of key {written_for} (generation {g})"),
            misplaced: true,
        }),
        (Some(bad), true) => {
            failure(VerifyKind::Corrupt, Some(g), Some(bad), format!("differs at byte {bad} from generation {g}, which its header names"))
        }
        (Some(bad), false) => failure(
            VerifyKind::Corrupt,
            Some(g),
            Some(bad.min(16)),
            format!("its header names key {written_for} (generation {g}), and it differs from that version at byte {bad}"),
        ),
    }
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
        assert!(judge(&version(5, 9, 4096), 5, 0, [9, 9], &mut scratch).is_none());
        let older = judge(&version(5, 7, 4096), 5, 0, [9, 9], &mut scratch).unwrap();
        assert_eq!((older.kind, older.found), (VerifyKind::LostWrite, Some(7)));
        let mut hit = version(5, 9, 4096);
        hit[3000] ^= 1;
        let damaged = judge(&hit, 5, 0, [9, 9], &mut scratch).unwrap();
        assert_eq!((damaged.kind, damaged.byte, damaged.misplaced), (VerifyKind::Corrupt, Some(3000), false));
        assert_eq!(judge(&[0u8; 4096], 5, 0, [9, 9], &mut scratch).unwrap().kind, VerifyKind::Missing);
        let other = judge(&version(6, 9, 4096), 5, 0, [9, 9], &mut scratch).unwrap();
        assert_eq!((other.kind, other.misplaced), (VerifyKind::Corrupt, true), "another key's object: {}", other.what);
        assert!(other.what.contains("key 6"), "{}", other.what);
    }

    #[test]
    fn alone_an_object_is_judged_by_the_version_it_names() {
        let mut scratch = vec![0u8; 4096];
        assert!(judge_alone(&version(5, 7, 4096), 5, &mut scratch).is_none(), "any generation, intact");
        let mut hit = version(5, 7, 4096);
        hit[100] ^= 1;
        assert_eq!(
            judge_alone(&hit, 5, &mut scratch).map(|f| (f.kind, f.byte, f.misplaced)),
            Some((VerifyKind::Corrupt, Some(100), false))
        );
        let other = judge_alone(&version(6, 7, 4096), 5, &mut scratch).unwrap();
        assert_eq!((other.kind, other.found, other.misplaced), (VerifyKind::Corrupt, Some(7), true), "another key's bytes");
        let mut hit = version(6, 7, 4096);
        hit[100] ^= 1;
        let both = judge_alone(&hit, 5, &mut scratch).unwrap();
        assert_eq!((both.kind, both.misplaced), (VerifyKind::Corrupt, false), "another key's, damaged: {}", both.what);
        assert_eq!(judge_alone(&[0u8; 64], 5, &mut scratch).unwrap().kind, VerifyKind::Missing);
    }

    #[test]
    fn an_earlier_builds_object_is_judged_in_its_own_layout() {
        let mut scratch = vec![0u8; 4096];
        let mut before = vec![0u8; 4096];
        object_bytes_of(&mut before, 5, 7, 0, 0);
        assert!(judge_alone(&before, 5, &mut scratch).is_none());
        assert!(judge(&before, 5, 0, [7, 7], &mut scratch).is_none());
        before[2000] ^= 1;
        assert_eq!(judge_alone(&before, 5, &mut scratch).and_then(|f| f.byte), Some(2000));
    }

    #[test]
    fn ranged_reads_accept_any_overlapping_generation_and_name_the_damage() {
        let mut scratch = vec![0u8; 4096];
        let v8 = version(5, 8, 4096);
        assert_eq!(judge(&v8[100..600], 5, 100, [8, 9], &mut scratch), None);
        let bad = judge(&v8[100..600], 5, 100, [9, 9], &mut scratch).unwrap();
        assert_eq!(bad.kind, VerifyKind::Corrupt);
        assert!(bad.byte.is_some_and(|b| (100..120).contains(&b)), "the first wrong byte, counted from the object's start: {}", bad.what);
    }
}
