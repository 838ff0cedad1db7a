//! What a verified block holds, and how a block read back is judged.
//!
//! Every unit (`verify_interval` bytes, by default the job's smallest block)
//! of a verified write starts with an 80-byte header: a magic, the unit's own
//! offset, the write's generation number, the job and worker that wrote it,
//! a seed, and a checksum of the whole unit (the checksum field counted as
//! zeros). The rest of the unit is a function of the seed (or the job's
//! `verify_pattern`), so a unit whose checksum fails can be regenerated and
//! the first wrong byte named. `meta` (fio's `verify=meta`) checksums the
//! header alone and judges no data, except against a `verify_pattern`. Which generation is the right one is not this
//! module's business: the runner's table of acknowledged writes says that
//! (without one, a unit is judged by its header alone: checksum and offset).
//! Blocks fio wrote with its own `verify=` headers are read in `fio`.

use sha2::Digest;

pub mod fio;

/// Bytes of header at the start of every unit.
pub const HEADER: usize = 80;
/// The smallest unit: the header and some data.
pub const MIN_UNIT: u32 = 512;
const MAGIC: [u8; 4] = *b"SBVF";
const VERSION: u8 = 1;
const SUM_AT: usize = 48;
const SUM_LEN: usize = 32;

/// The checksum a job's units carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Checksum {
    Crc32c,
    Xxhash,
    Sha256,
    /// fio's `meta`: the header's own fields under a CRC32C of the header;
    /// the data is not checksummed (only compared with a `verify_pattern`).
    Meta,
}

impl Checksum {
    /// storbench's names.
    pub const NAMES: &'static [&'static str] = &["crc32c", "xxhash", "sha256", "meta"];
    const ALL: [Checksum; 4] = [Checksum::Crc32c, Checksum::Xxhash, Checksum::Sha256, Checksum::Meta];

    pub fn parse(v: &str) -> Result<Checksum, String> {
        match v {
            "crc32c" => Ok(Checksum::Crc32c),
            "xxhash" => Ok(Checksum::Xxhash),
            "sha256" => Ok(Checksum::Sha256),
            "meta" => Ok(Checksum::Meta),
            _ => Err(format!("'{v}': give crc32c, xxhash, sha256 or meta")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Checksum::Crc32c => "crc32c",
            Checksum::Xxhash => "xxhash",
            Checksum::Sha256 => "sha256",
            Checksum::Meta => "meta",
        }
    }

    /// Whether the checksum covers the unit's data (all but `meta`).
    pub fn covers_data(self) -> bool {
        self != Checksum::Meta
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }

    /// The checksum of `unit` (`meta`: of its header) with its checksum
    /// field counted as zeros.
    fn of(self, unit: &[u8]) -> [u8; SUM_LEN] {
        let covered = if self.covers_data() { unit } else { &unit[..HEADER] };
        let (head, rest) = covered.split_at(SUM_AT);
        let tail = &rest[SUM_LEN..];
        let zeros = [0u8; SUM_LEN];
        let mut out = [0u8; SUM_LEN];
        match self {
            Checksum::Crc32c | Checksum::Meta => {
                let c = crc32c::crc32c_append(crc32c::crc32c_append(crc32c::crc32c(head), &zeros), tail);
                out[..4].copy_from_slice(&c.to_le_bytes());
            }
            Checksum::Xxhash => {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                h.update(head);
                h.update(&zeros);
                h.update(tail);
                out[..16].copy_from_slice(&h.digest128().to_le_bytes());
            }
            Checksum::Sha256 => {
                let mut h = sha2::Sha256::new();
                h.update(head);
                h.update(zeros);
                h.update(tail);
                out.copy_from_slice(&h.finalize());
            }
        }
        out
    }
}

/// The job's verification settings (fio's `verify` family).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VerifySpec {
    /// `None` until `verify` names one: the other options alone check nothing (as in fio).
    pub checksum: Option<Checksum>,
    /// Bytes per header; `None`: the job's smallest block size.
    #[serde(default)]
    pub interval: Option<u32>,
    /// Read everything written back after the measured phase (fio `do_verify`).
    pub after: bool,
    /// Read back every N acknowledged writes during the run (fio `verify_backlog`).
    #[serde(default)]
    pub backlog: u32,
    /// End the worker at the first failure (fio `verify_fatal`).
    #[serde(default)]
    pub fatal: bool,
    /// The data after each header (fio `verify_pattern`); `None`: from the seed.
    #[serde(default)]
    pub pattern: Option<Vec<u8>>,
    /// Do not run the workload: only check what an earlier run left (fio `verify_only`).
    #[serde(default)]
    pub only: bool,
    /// Where the table of acknowledged writes is kept between runs.
    #[serde(default)]
    pub state: Option<std::path::PathBuf>,
    /// Set by the plan, never an option: no state is kept and nothing in the
    /// run writes the target before or beside this job, so a unit no write
    /// of the run reached is an earlier run's, judged by its own header.
    #[serde(default)]
    pub by_header: bool,
}

impl Default for VerifySpec {
    fn default() -> Self {
        VerifySpec {
            checksum: None,
            interval: None,
            after: true,
            backlog: 0,
            fatal: false,
            pattern: None,
            only: false,
            state: None,
            by_header: false,
        }
    }
}

/// The unit a block job is verified in: `verify_interval`, else its smallest
/// block; every block size, rw skip and stripe must be whole units.
pub fn block_unit(spec: &crate::JobSpec) -> Result<u32, String> {
    let v = spec.verify.as_ref().ok_or("not verified")?;
    let unit = v.interval.map_or(spec.bs.min(), u64::from);
    if unit < MIN_UNIT as u64 || unit > u32::MAX as u64 {
        return Err(format!("verify: blocks of {unit} bytes cannot hold a header; raise bs or give verify_interval (at least {MIN_UNIT})"));
    }
    for size in spec.bs.read.0.iter().chain(&spec.bs.write.0).map(|e| e.0) {
        if !size.is_multiple_of(unit) {
            return Err(format!(
                "verify: block size {size} is not a multiple of verify_interval {unit}; give one that divides every block size"
            ));
        }
    }
    if !spec.seq_skip.unsigned_abs().is_multiple_of(unit) {
        return Err(format!("verify: the rw skip {} is not a multiple of the {unit}-byte unit; give a skip of whole units", spec.seq_skip));
    }
    if let Some(ba) = spec.blockalign.filter(|ba| !ba.is_multiple_of(unit)) {
        return Err(format!("verify: blockalign {ba} is not a multiple of the {unit}-byte unit; give an alignment of whole units"));
    }
    if !spec.offset_increment.is_multiple_of(unit) {
        return Err(format!("verify: offset_increment {} is not a multiple of the {unit}-byte unit", spec.offset_increment));
    }
    Ok(unit as u32)
}

/// fio's `verify_pattern`: a hex number (0x...), or a quoted string.
pub fn parse_pattern(v: &str) -> Result<Vec<u8>, String> {
    let v = v.trim();
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        let hex = if hex.len() % 2 == 1 { format!("0{hex}") } else { hex.to_string() };
        return (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| format!("'{v}': not a hex number")))
            .collect();
    }
    let quoted = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')).or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')));
    match quoted {
        Some(s) if !s.is_empty() => Ok(s.as_bytes().to_vec()),
        _ => Err(format!("'{v}': give a hex number (0xdeadbeef) or a quoted string (\"abc\")")),
    }
}

/// `pattern` repeated over a whole unit's data, made once per job: each
/// unit stamped or checked is then one copy or one comparison (fio fills
/// its buffer once too), not the pattern doubled up again per unit. It
/// ends on a whole pattern, so it is the pattern's own period and serves
/// units of any length (an earlier run's, judged by their headers).
pub fn unit_pattern(pattern: &[u8], unit: usize) -> Vec<u8> {
    let whole = unit.saturating_sub(HEADER).div_ceil(pattern.len().max(1)) * pattern.len();
    let mut data = vec![0; whole];
    fill(&mut data, 0, Some(pattern));
    data
}

/// Who wrote a unit, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The unit's own byte offset in its target.
    pub offset: u64,
    pub generation: u64,
    pub seed: u64,
    pub job: u32,
    pub worker: u32,
}

/// Write one unit: header, data, checksum.
pub fn stamp(unit: &mut [u8], s: &Stamp, sum: Checksum, pattern: Option<&[u8]>) {
    let len = unit.len();
    debug_assert!(len >= MIN_UNIT as usize);
    unit[..4].copy_from_slice(&MAGIC);
    unit[4] = VERSION;
    unit[5] = sum.code();
    unit[6..8].fill(0);
    unit[8..16].copy_from_slice(&s.offset.to_le_bytes());
    unit[16..24].copy_from_slice(&s.generation.to_le_bytes());
    unit[24..32].copy_from_slice(&s.seed.to_le_bytes());
    unit[32..36].copy_from_slice(&s.job.to_le_bytes());
    unit[36..40].copy_from_slice(&s.worker.to_le_bytes());
    unit[40..44].copy_from_slice(&(len as u32).to_le_bytes());
    unit[44..48].fill(0);
    // `meta` judges no data, so none is made (fio's meta fills its buffer
    // too, but checks only the header): the job's own data stays, unless
    // a pattern is to be compared.
    if sum.covers_data() || pattern.is_some() {
        fill(&mut unit[HEADER..], s.seed, pattern);
    }
    let c = sum.of(unit);
    unit[SUM_AT..SUM_AT + SUM_LEN].copy_from_slice(&c);
}

/// The length of the unit `head` starts, if it starts with storbench's
/// header (the length is checked with the rest, by the unit's checksum).
pub fn unit_len(head: &[u8]) -> Option<usize> {
    if head.len() < HEADER || head[..4] != MAGIC || head[4] != VERSION {
        return None;
    }
    let len = u32::from_le_bytes(head[40..44].try_into().expect("4 bytes")) as usize;
    (len >= MIN_UNIT as usize).then_some(len)
}

/// What a unit read back holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// A whole unit of this generation, for this offset.
    Intact { generation: u64 },
    /// No header at all; `zeros` if the unit is all zeros (never written, or discarded).
    NoHeader { zeros: bool },
    /// A header for another offset (a misdirected write or read).
    Misplaced { offset: u64, generation: u64 },
    /// The header is there but the checksum fails: the first byte that is not
    /// what the header's seed makes, when that can be told.
    Corrupt { generation: u64, first_bad: Option<u32> },
}

/// Judge one unit read back from `offset`.
pub fn check(unit: &[u8], offset: u64, pattern: Option<&[u8]>) -> Found {
    let u64_at = |at: usize| u64::from_le_bytes(unit[at..at + 8].try_into().expect("8 bytes"));
    if unit.len() < HEADER || unit[..4] != MAGIC || unit[4] != VERSION {
        return Found::NoHeader { zeros: unit.iter().all(|b| *b == 0) };
    }
    let generation = u64_at(16);
    let Some(sum) = Checksum::ALL.into_iter().find(|c| c.code() == unit[5]) else {
        return Found::Corrupt { generation, first_bad: Some(5) };
    };
    if sum.of(unit)[..] != unit[SUM_AT..SUM_AT + SUM_LEN] {
        let data_bad = if sum.covers_data() { first_bad(unit, u64_at(24), pattern) } else { None };
        return Found::Corrupt { generation, first_bad: data_bad };
    }
    if !sum.covers_data() {
        // fio's meta: the header's length must be the unit's, and the data
        // is judged only against a pattern (verify.c, VERIFY_HDR_ONLY).
        let len = u32::from_le_bytes(unit[40..44].try_into().expect("4 bytes")) as usize;
        if len != unit.len() {
            return Found::Corrupt { generation, first_bad: Some(40) };
        }
        if let Some(bad) = pattern.and_then(|p| first_unlike(&unit[HEADER..], p)) {
            return Found::Corrupt { generation, first_bad: Some(bad + HEADER as u32) };
        }
    }
    let written_for = u64_at(8);
    if written_for != offset {
        return Found::Misplaced { offset: written_for, generation };
    }
    Found::Intact { generation }
}

/// The first byte of the data that differs from what the seed makes (the
/// header is trusted for the seed; `None` if the data is right, so the
/// header or checksum itself was hit).
fn first_bad(unit: &[u8], seed: u64, pattern: Option<&[u8]>) -> Option<u32> {
    let mut want = vec![0u8; unit.len() - HEADER];
    fill(&mut want, seed, pattern);
    unit[HEADER..].iter().zip(&want).position(|(a, b)| a != b).map(|p| (p + HEADER) as u32)
}

/// The first byte of `data` that is not `pattern` repeated. Data that
/// starts with the pattern and repeats with its period is the pattern
/// throughout: two comparisons of whole slices, byte by byte only to name
/// a wrong byte.
fn first_unlike(data: &[u8], pattern: &[u8]) -> Option<u32> {
    let k = pattern.len().min(data.len());
    if data[..k] == pattern[..k] && data[k..] == data[..data.len() - k] {
        return None;
    }
    data.iter().zip(pattern.iter().cycle()).position(|(a, b)| a != b).map(|p| p as u32)
}

/// The data after a header: the pattern repeated, or words derived from the
/// seed and their position (SplitMix64 of seed + index), so any part can be
/// regenerated on its own.
fn fill(data: &mut [u8], seed: u64, pattern: Option<&[u8]>) {
    if let Some(p) = pattern {
        // The pattern once, then what is made so far copied after itself.
        let first = p.len().min(data.len());
        data[..first].copy_from_slice(&p[..first]);
        let mut made = first;
        while made > 0 && made < data.len() {
            let n = made.min(data.len() - made);
            data.copy_within(..n, made);
            made += n;
        }
        return;
    }
    let mut chunks = data.chunks_exact_mut(8);
    let mut x = seed;
    for c in &mut chunks {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        c.copy_from_slice(&mix(x).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = mix(x.wrapping_add(0x9E37_79B9_7F4A_7C15)).to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An object version's first word: the magic, then the layout. Layout 0
/// (storbench before 2026-11-29) named the generation only; layout 1 names
/// the key too, so an object read under another key's name is told apart
/// as misplaced rather than merely corrupt.
const OBJECT_MAGIC: [u8; 4] = [b'S', b'B', b'V', b'O'];
const OBJECT_LAYOUT: u8 = 1;

/// What an object version's first bytes say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    pub generation: u64,
    /// The key it was written under (layout 1 and an object of at least 24
    /// bytes; `None` for an earlier build's objects).
    pub key: Option<u64>,
    pub layout: u8,
}

/// Objects: what the bytes `[offset, offset + out.len())` of object `key`'s
/// version `generation` are. The first 24 bytes name the version (a magic
/// with the layout, the generation, the key), the rest are words made from
/// key, generation and their position, so any range can be made, and
/// checked, on its own.
pub fn object_bytes(out: &mut [u8], key: u64, generation: u64, offset: u64) {
    object_bytes_of(out, key, generation, offset, OBJECT_LAYOUT)
}

/// [`object_bytes`] in a given layout (an earlier build's objects are
/// remade in theirs to be judged).
pub fn object_bytes_of(out: &mut [u8], key: u64, generation: u64, offset: u64, layout: u8) {
    let seed = mix(key.wrapping_mul(0xA076_1D64_78BD_642F) ^ generation);
    let word = |i: u64| -> [u8; 8] {
        match i {
            0 => [OBJECT_MAGIC[0], OBJECT_MAGIC[1], OBJECT_MAGIC[2], OBJECT_MAGIC[3], layout, 0, 0, 0],
            1 => generation.to_le_bytes(),
            2 if layout >= 1 => key.to_le_bytes(),
            _ => mix(seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15))).to_le_bytes(),
        }
    };
    let mut p = offset;
    let mut at = 0;
    while at < out.len() {
        let w = word(p / 8);
        let from = (p % 8) as usize;
        let n = (8 - from).min(out.len() - at);
        out[at..at + n].copy_from_slice(&w[from..from + n]);
        at += n;
        p += n as u64;
    }
}

/// The version an object's first bytes name, if they are a version's
/// header of a layout this build knows.
pub fn object_header(head: &[u8]) -> Option<ObjectHeader> {
    if head.len() < 16 || head[..4] != OBJECT_MAGIC || head[5..8] != [0, 0, 0] || head[4] > OBJECT_LAYOUT {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    let layout = head[4];
    let key = (layout >= 1 && head.len() >= 24).then(|| word(16));
    Some(ObjectHeader { generation: word(8), key, layout })
}

/// The generation an object's first 16 bytes name, if they are a version's.
pub fn object_generation(head: &[u8]) -> Option<u64> {
    object_header(head).map(|h| h.generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamped(sum: Checksum, pattern: Option<&[u8]>) -> Vec<u8> {
        let mut u = vec![0u8; 4096];
        stamp(&mut u, &Stamp { offset: 8192, generation: 7, seed: 42, job: 1, worker: 3 }, sum, pattern);
        u
    }

    #[test]
    fn a_pattern_made_once_per_unit_stamps_and_checks_as_the_pattern_itself() {
        let raw: &[u8] = &[0xaa, 0x55, 0x5a];
        // 4016 bytes of data are not whole patterns of 3: 1339 of them.
        let whole = unit_pattern(raw, 4096);
        assert_eq!(whole.len(), 4017);
        assert_eq!(stamped(Checksum::Meta, Some(&whole)), stamped(Checksum::Meta, Some(raw)));
        let mut u = stamped(Checksum::Meta, Some(&whole));
        assert_eq!(check(&u, 8192, Some(&whole)), Found::Intact { generation: 7 });
        u[HEADER + 100] ^= 1;
        assert_eq!(check(&u, 8192, Some(&whole)), Found::Corrupt { generation: 7, first_bad: Some(HEADER as u32 + 100) });
        // A unit of another length (an earlier run's) is judged as the pattern too.
        let small = unit_pattern(raw, 512);
        assert_eq!(check(&stamped(Checksum::Meta, Some(raw)), 8192, Some(&small)), Found::Intact { generation: 7 });
    }

    #[test]
    fn a_stamped_unit_checks_as_intact_with_every_checksum() {
        for sum in [Checksum::Crc32c, Checksum::Xxhash, Checksum::Sha256] {
            assert_eq!(check(&stamped(sum, None), 8192, None), Found::Intact { generation: 7 }, "{sum:?}");
        }
    }

    #[test]
    fn a_flipped_data_byte_is_corrupt_and_named() {
        for sum in [Checksum::Crc32c, Checksum::Xxhash, Checksum::Sha256] {
            let mut u = stamped(sum, None);
            u[1000] ^= 0x10;
            assert_eq!(check(&u, 8192, None), Found::Corrupt { generation: 7, first_bad: Some(1000) }, "{sum:?}");
        }
    }

    #[test]
    fn a_hit_on_the_header_is_corrupt_without_a_data_byte() {
        let mut u = stamped(Checksum::Crc32c, None);
        u[20] ^= 1; // the generation
        assert!(matches!(check(&u, 8192, None), Found::Corrupt { first_bad: None, .. }));
    }

    #[test]
    fn meta_judges_the_header_and_not_the_data() {
        let mut u = vec![7u8; 4096];
        stamp(&mut u, &Stamp { offset: 8192, generation: 7, seed: 42, job: 1, worker: 3 }, Checksum::Meta, None);
        assert_eq!(&u[HEADER..HEADER + 4], &[7u8; 4], "meta leaves the data as it was");
        assert_eq!(check(&u, 8192, None), Found::Intact { generation: 7 });
        u[1000] ^= 0x10;
        assert_eq!(check(&u, 8192, None), Found::Intact { generation: 7 }, "a data byte is not judged");
        assert_eq!(check(&u, 4096, None), Found::Misplaced { offset: 8192, generation: 7 });
        u[20] ^= 1;
        assert_eq!(check(&u, 8192, None), Found::Corrupt { generation: 7 ^ (1 << 32), first_bad: None }, "the header is");
    }

    #[test]
    fn meta_with_a_pattern_compares_the_data_with_it() {
        let p = parse_pattern("0xaa555aa5").unwrap();
        let mut u = vec![0u8; 512];
        stamp(&mut u, &Stamp { offset: 0, generation: 1, seed: 9, job: 0, worker: 0 }, Checksum::Meta, Some(&p));
        assert_eq!(check(&u, 0, Some(&p)), Found::Intact { generation: 1 });
        u[300] = 0;
        assert_eq!(check(&u, 0, Some(&p)), Found::Corrupt { generation: 1, first_bad: Some(300) });
        assert_eq!(Checksum::parse("meta"), Ok(Checksum::Meta));
        let abc = parse_pattern("\"abc\"").unwrap();
        let mut u = stamped(Checksum::Meta, Some(&abc));
        assert!(u[HEADER..].iter().zip(abc.iter().cycle()).all(|(a, b)| a == b), "a pattern of any length, repeated");
        assert_eq!(check(&u, 8192, Some(&abc)), Found::Intact { generation: 7 });
        u[4095] = b'x';
        assert_eq!(check(&u, 8192, Some(&abc)), Found::Corrupt { generation: 7, first_bad: Some(4095) });
    }

    #[test]
    fn a_unit_read_at_another_offset_is_misplaced() {
        assert_eq!(unit_len(&stamped(Checksum::Xxhash, None)), Some(4096), "a header says its unit's length");
        assert_eq!(unit_len(&[0u8; 4096]), None);
        assert_eq!(check(&stamped(Checksum::Xxhash, None), 4096, None), Found::Misplaced { offset: 8192, generation: 7 });
    }

    #[test]
    fn units_without_a_header_say_whether_they_are_zeros() {
        assert_eq!(check(&[0u8; 4096], 0, None), Found::NoHeader { zeros: true });
        assert_eq!(check(&[7u8; 4096], 0, None), Found::NoHeader { zeros: false });
    }

    #[test]
    fn a_pattern_fills_the_data_and_is_checked() {
        let p = parse_pattern("0xdeadbeef").unwrap();
        assert_eq!(p, [0xde, 0xad, 0xbe, 0xef]);
        let mut u = stamped(Checksum::Crc32c, Some(&p));
        assert_eq!(&u[HEADER..HEADER + 4], &p[..]);
        assert_eq!(check(&u, 8192, Some(&p)), Found::Intact { generation: 7 });
        u[2000] = 0;
        assert_eq!(check(&u, 8192, Some(&p)), Found::Corrupt { generation: 7, first_bad: Some(2000) });
        assert_eq!(parse_pattern("\"ab\"").unwrap(), b"ab");
        assert!(parse_pattern("abc").unwrap_err().contains("hex number"));
    }

    #[test]
    fn the_same_seed_makes_the_same_data_and_another_does_not() {
        let (mut a, mut b, mut c) = (vec![0u8; 100], vec![0u8; 100], vec![0u8; 100]);
        fill(&mut a, 1, None);
        fill(&mut b, 1, None);
        fill(&mut c, 2, None);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn object_bytes_of_any_range_agree_with_the_whole_object() {
        let mut whole = vec![0u8; 1000];
        object_bytes(&mut whole, 7, 3, 0);
        assert_eq!(object_generation(&whole), Some(3));
        for (off, len) in [(0usize, 5usize), (13, 100), (517, 483), (999, 1)] {
            let mut part = vec![0u8; len];
            object_bytes(&mut part, 7, 3, off as u64);
            assert_eq!(part, whole[off..off + len], "{off}+{len}");
        }
        let mut other = vec![0u8; 1000];
        object_bytes(&mut other, 7, 4, 0);
        assert_ne!(other[24..], whole[24..], "another version differs beyond its header");
    }

    #[test]
    fn an_objects_header_names_its_key_and_an_earlier_builds_only_its_generation() {
        let mut now = vec![0u8; 64];
        object_bytes(&mut now, 7, 3, 0);
        assert_eq!(object_header(&now), Some(ObjectHeader { generation: 3, key: Some(7), layout: 1 }));
        assert_eq!(object_header(&now[..20]).map(|h| h.key), Some(None), "too short to hold the key");
        let mut before = vec![0u8; 64];
        object_bytes_of(&mut before, 7, 3, 0, 0);
        assert_eq!(object_header(&before), Some(ObjectHeader { generation: 3, key: None, layout: 0 }));
        assert_eq!(before[..16], [&b"SBVO"[..], &[0; 4], &3u64.to_le_bytes()].concat()[..], "layout 0 as earlier builds wrote it");
        assert_eq!(before[24..], now[24..], "the layouts differ only in the key's word");
        now[4] = 9;
        assert_eq!(object_header(&now), None, "a layout this build does not know");
    }
}
