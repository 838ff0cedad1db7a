//! fio's verified blocks, as fio 3.x lays them out (verify.h's
//! `verify_header`), so a file fio wrote with `verify=` can be checked by a
//! storbench read run, and is never called corruption for being fio's.
//!
//! Each block (or `verify_interval`) starts with 40 bytes: magic 0xacca,
//! the checksum type, the block's length, a seed, the block's own offset,
//! a time, thread and number, and a CRC32C of those 36 bytes; then the
//! type's checksum of the data that follows. fio's CRC32C is the usual
//! Castagnoli CRC without the final inversion.

/// What a block with fio's header holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FioFound {
    /// Header and data checksums hold, for this offset.
    Intact,
    /// An intact block fio wrote for another offset.
    Misplaced { offset: u64 },
    /// The header's own CRC fails (`in_header`), or the data's checksum.
    Corrupt { checksum: &'static str, in_header: bool },
    /// An intact header whose data storbench cannot check: another unit
    /// length, or a checksum type it does not compute.
    Unchecked { why: String },
}

const MAGIC: u16 = 0xacca;
/// fio's `verify=meta` (VERIFY_HDR_ONLY): a header and no data checksum.
const HDR_ONLY: u16 = 1;
/// Bytes of fio's `verify_header`; its CRC covers the 36 before it.
const HEADER: usize = 40;
const HEADER_CRC_AT: usize = 36;

/// Whether `unit` starts with fio's verify magic (the rest unchecked).
pub fn is_fio(unit: &[u8]) -> bool {
    unit.len() >= HEADER && u16::from_le_bytes([unit[0], unit[1]]) == MAGIC
}

/// The length of the block `head` starts, if it starts with fio's header
/// and that header's own CRC holds (so the length can be trusted).
pub fn unit_len(head: &[u8]) -> Option<usize> {
    if !is_fio(head) || fio_crc32c(&head[..HEADER_CRC_AT]).to_le_bytes() != head[HEADER_CRC_AT..HEADER] {
        return None;
    }
    let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as usize;
    (len > HEADER).then_some(len)
}

/// fio's CRC32C: the table CRC from all ones, without the final inversion.
fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// fio's checksum types (verify.h's enum in fio 3.x) storbench computes:
/// name, and the check of the type's header (after fio's) against the data.
/// (fio's sha256 is not the standard digest of the data, and md5 and the
/// rest are not computed here: those blocks are counted as not checked.)
#[derive(Clone, Copy)]
enum FioSum {
    Crc32c(&'static str),
    Xxhash,
}

impl FioSum {
    fn of(kind: u16) -> Option<FioSum> {
        match kind {
            5 => Some(FioSum::Crc32c("crc32c")),
            6 => Some(FioSum::Crc32c("crc32c-intel")),
            15 => Some(FioSum::Xxhash),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            FioSum::Crc32c(name) => name,
            FioSum::Xxhash => "xxhash",
        }
    }

    /// Whether `rest` (what follows fio's header) holds this checksum of its data.
    fn holds(self, rest: &[u8]) -> bool {
        let Some((sum, data)) = rest.split_first_chunk::<4>() else { return false };
        let want = match self {
            FioSum::Crc32c(_) => fio_crc32c(data),
            FioSum::Xxhash => xxhash_rust::xxh32::xxh32(data, 1),
        };
        *sum == want.to_le_bytes()
    }
}

/// Judge a block with fio's magic read back from `offset`.
pub fn check(unit: &[u8], offset: u64) -> FioFound {
    let u16_at = |at: usize| u16::from_le_bytes(unit[at..at + 2].try_into().expect("2 bytes"));
    let u32_at = |at: usize| u32::from_le_bytes(unit[at..at + 4].try_into().expect("4 bytes"));
    let kind = u16_at(2);
    if fio_crc32c(&unit[..HEADER_CRC_AT]).to_le_bytes() != unit[HEADER_CRC_AT..HEADER] {
        return FioFound::Corrupt { checksum: "fio's header crc32c", in_header: true };
    }
    let len = u32_at(4) as usize;
    if len != unit.len() {
        return FioFound::Unchecked {
            why: format!("fio's header for a {len}-byte block; give verify_interval={len} to check fio's blocks"),
        };
    }
    // fio's meta: the header, checked above, is all fio checks (a pattern aside).
    if kind != HDR_ONLY {
        let Some(sum) = FioSum::of(kind) else {
            return FioFound::Unchecked { why: format!("fio's checksum type {kind}: storbench checks fio's crc32c, xxhash and meta") };
        };
        if !sum.holds(&unit[HEADER..]) {
            return FioFound::Corrupt { checksum: sum.name(), in_header: false };
        }
    }
    let written_for = u64::from_le_bytes(unit[16..24].try_into().expect("8 bytes"));
    if written_for != offset {
        return FioFound::Misplaced { offset: written_for };
    }
    FioFound::Intact
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block as fio 3.33 writes it with verify=crc32c.
    fn fio_block(offset: u64, len: usize) -> Vec<u8> {
        fio_block_of(5, offset, len)
    }

    /// The same with fio's checksum type `kind` in its header.
    fn fio_block_of(kind: u16, offset: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[0..2].copy_from_slice(&MAGIC.to_le_bytes());
        b[2..4].copy_from_slice(&kind.to_le_bytes());
        b[4..8].copy_from_slice(&(len as u32).to_le_bytes());
        b[8..16].copy_from_slice(&0x1234u64.to_le_bytes());
        b[16..24].copy_from_slice(&offset.to_le_bytes());
        for (i, x) in b[44..].iter_mut().enumerate() {
            *x = (i * 7) as u8;
        }
        let data = fio_crc32c(&b[44..]);
        b[40..44].copy_from_slice(&data.to_le_bytes());
        let head = fio_crc32c(&b[..36]);
        b[36..40].copy_from_slice(&head.to_le_bytes());
        b
    }

    #[test]
    fn fios_crc32c_is_the_uninverted_castagnoli_crc() {
        // The standard check value of CRC-32C for "123456789" is 0xe3069283.
        assert_eq!(fio_crc32c(b"123456789"), !0xe306_9283);
    }

    #[test]
    fn a_fio_block_is_intact_misplaced_or_corrupt() {
        let b = fio_block(8192, 4096);
        assert!(is_fio(&b));
        assert_eq!(check(&b, 8192), FioFound::Intact);
        assert_eq!(check(&b, 4096), FioFound::Misplaced { offset: 8192 });
        let mut d = b.clone();
        d[3000] ^= 1;
        assert_eq!(check(&d, 8192), FioFound::Corrupt { checksum: "crc32c", in_header: false });
        let mut h = b.clone();
        h[17] ^= 1;
        assert_eq!(check(&h, 8192), FioFound::Corrupt { checksum: "fio's header crc32c", in_header: true });
        assert!(matches!(check(&fio_block(0, 8192)[..4096], 0), FioFound::Unchecked { .. }), "another block length");
        assert_eq!((unit_len(&fio_block(0, 8192)), unit_len(&h)), (Some(8192), None), "a length is trusted only under its crc");
    }

    #[test]
    fn a_fio_meta_block_is_judged_by_its_header_alone() {
        let mut b = fio_block_of(HDR_ONLY, 8192, 4096);
        b[3000] ^= 1;
        assert_eq!(check(&b, 8192), FioFound::Intact, "fio's meta checks no data");
        b[17] ^= 1;
        assert_eq!(check(&b, 8192), FioFound::Corrupt { checksum: "fio's header crc32c", in_header: true });
    }
}
