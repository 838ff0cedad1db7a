//! S3's signed streaming upload (STREAMING-AWS4-HMAC-SHA256-PAYLOAD): the body
//! goes in aws-chunked encoding, each chunk signed with the signature of the
//! one before, starting from the request's own ("seed") signature. Each chunk
//! costs a SHA-256 of its data and an HMAC; the data itself is not copied.

use aws_sigv4::sign::v4::{calculate_signature, generate_signing_key};
use bytes::Bytes;
use std::time::{SystemTime, UNIX_EPOCH};

/// The x-amz-content-sha256 value that announces it.
pub const STREAMING: &str = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/// "1000;chunk-signature=" + 64 hex digits + CRLF, per chunk, plus CRLF after the data.
const SIGNATURE_LEN: usize = 64;

/// The signing context of one request.
pub struct Signer<'a> {
    pub secret: &'a str,
    pub region: &'a str,
    pub time: SystemTime,
}

/// Length of the encoded body for `len` bytes of data in `chunk` pieces.
pub fn encoded_len(len: u64, chunk: u64) -> u64 {
    let hex_digits = |n: u64| u64::from((64 - n.leading_zeros()).div_ceil(4).max(1));
    let piece = |n: u64| hex_digits(n) + ";chunk-signature=".len() as u64 + SIGNATURE_LEN as u64 + 4 + n;
    let full = len / chunk;
    let rest = len % chunk;
    full * piece(chunk) + if rest > 0 { piece(rest) } else { 0 } + piece(0)
}

/// The encoded body: headers and data slices in order (data not copied).
pub fn encode(data: &Bytes, chunk: usize, seed_signature: &str, s: &Signer) -> Vec<Bytes> {
    let stamp = amz_date(s.time);
    let scope = format!("{}/{}/s3/aws4_request", &stamp[..8], s.region);
    let key = generate_signing_key(s.secret, s.time, s.region, "s3");
    let mut previous = seed_signature.to_string();
    let mut out = Vec::with_capacity(3 * (data.len() / chunk.max(1) + 2));
    let mut at = 0;
    loop {
        let end = (at + chunk).min(data.len());
        let piece = data.slice(at..end);
        let sts = format!("AWS4-HMAC-SHA256-PAYLOAD\n{stamp}\n{scope}\n{previous}\n{EMPTY_SHA256}\n{}", sha256_hex(&piece));
        previous = calculate_signature(key.as_ref(), sts.as_bytes());
        out.push(Bytes::from(format!("{:x};chunk-signature={previous}\r\n", piece.len())));
        let last = piece.is_empty();
        out.push(piece);
        out.push(Bytes::from_static(b"\r\n"));
        if last {
            return out;
        }
        at = end;
    }
}

fn sha256_hex(data: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, data);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for b in d.as_ref() {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    out
}

/// `YYYYMMDDTHHMMSSZ`, as SigV4 writes times.
pub fn amz_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (y, m, d, hh, mm, ss) = storbench_workload::units::utc_fields(secs);
    format!("{y:04}{m:02}{d:02}T{hh:02}{mm:02}{ss:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_as_sigv4_writes_them() {
        assert_eq!(amz_date(UNIX_EPOCH + Duration::from_secs(1_440_938_160)), "20150830T123600Z");
        assert_eq!(amz_date(UNIX_EPOCH + Duration::from_secs(951_782_400)), "20000229T000000Z");
        assert_eq!(amz_date(UNIX_EPOCH), "19700101T000000Z");
    }

    /// The example in AWS's "Signature Calculations for the Authorization
    /// Header: Transferring Payload in Multiple Chunks": 65 KiB of 'a' in
    /// 64 KiB chunks, with its seed signature and published chunk signatures.
    #[test]
    fn chunk_signatures_match_the_aws_example() {
        let s = Signer {
            secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            region: "us-east-1",
            time: UNIX_EPOCH + Duration::from_secs(1_369_353_600),
        };
        let data = Bytes::from(vec![b'a'; 66_560]);
        let seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
        let pieces = encode(&data, 65_536, seed, &s);
        let heads: Vec<String> = pieces.iter().step_by(3).map(|p| String::from_utf8_lossy(p).to_string()).collect();
        assert_eq!(heads[0], "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n");
        assert_eq!(heads[1], "400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n");
        assert_eq!(heads[2], "0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n");
        let total: u64 = pieces.iter().map(|p| p.len() as u64).sum();
        assert_eq!(total, encoded_len(66_560, 65_536));
        assert_eq!(total, 66_824, "the Content-Length in AWS's example");
    }
}
