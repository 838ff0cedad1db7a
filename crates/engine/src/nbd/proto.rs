//! The NBD wire protocol (doc/proto.md of the NBD project): the fixed
//! newstyle handshake, done with blocking I/O over any `Read + Write`, and
//! the encoding and decoding of transmission requests and replies, which
//! the non-blocking connection (`conn.rs`) drives. Everything here works on
//! bytes, so it is tested without a server. All integers are big-endian.

use std::io::{Read, Write};

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
/// The second magic of an oldstyle server (no options, no export names).
pub const OLDSTYLE: u64 = 0x0000_4202_8186_1253;
pub const REPLY_MAGIC_OPT: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// Transmission flags.
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const OPT_SET_META_CONTEXT: u32 = 10;

// Option replies.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_META_CONTEXT: u32 = 4;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
pub const REP_ERR_TLS_REQD: u32 = (1 << 31) + 5;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;

pub const INFO_EXPORT: u16 = 0;
pub const INFO_BLOCK_SIZE: u16 = 3;

// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_BLOCK_STATUS: u16 = 7;

// Structured replies.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
pub const REPLY_TYPE_NONE: u16 = 0;
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
pub const REPLY_TYPE_OFFSET_HOLE: u16 = 2;
pub const REPLY_TYPE_BLOCK_STATUS: u16 = 5;
pub const REPLY_TYPE_ERROR: u16 = (1 << 15) + 1;
pub const REPLY_TYPE_ERROR_OFFSET: u16 = (1 << 15) + 2;

// base:allocation status bits.
pub const STATE_HOLE: u32 = 1 << 0;
pub const STATE_ZERO: u32 = 1 << 1;

pub const BASE_ALLOCATION: &str = "base:allocation";

pub const REQUEST_LEN: usize = 28;
pub const SIMPLE_REPLY_LEN: usize = 16;
pub const STRUCTURED_REPLY_LEN: usize = 20;
/// The most an option reply may carry (a long export list is far less);
/// more is a broken or hostile server, not a reason to allocate gigabytes.
const MAX_OPTION_REPLY: u32 = 16 << 20;

/// An NBD error number as the errno a completion carries. The protocol's
/// values are Linux's; anything else is an I/O error.
pub fn errno(nbd: u32) -> i32 {
    match nbd {
        1 | 5 | 12 | 22 | 28 | 75 | 95 | 108 => nbd as i32,
        _ => libc::EIO,
    }
}

/// A transmission request header (28 bytes); the cookie identifies the
/// reply that answers it.
pub fn request(cmd: u16, flags: u16, cookie: u64, offset: u64, len: u32) -> [u8; REQUEST_LEN] {
    let mut h = [0u8; REQUEST_LEN];
    h[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    h[4..6].copy_from_slice(&flags.to_be_bytes());
    h[6..8].copy_from_slice(&cmd.to_be_bytes());
    h[8..16].copy_from_slice(&cookie.to_be_bytes());
    h[16..24].copy_from_slice(&offset.to_be_bytes());
    h[24..28].copy_from_slice(&len.to_be_bytes());
    h
}

/// A reply header: simple (16 bytes) or a structured chunk's (20 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyHeader {
    Simple { error: u32, cookie: u64 },
    Chunk { flags: u16, kind: u16, cookie: u64, len: u32 },
}

/// How many header bytes the reply starting with these 4 bytes has.
pub fn reply_header_len(magic: [u8; 4]) -> Result<usize, String> {
    match u32::from_be_bytes(magic) {
        SIMPLE_REPLY_MAGIC => Ok(SIMPLE_REPLY_LEN),
        STRUCTURED_REPLY_MAGIC => Ok(STRUCTURED_REPLY_LEN),
        m => Err(format!("a reply with bad magic {m:#010x}")),
    }
}

/// Decode a whole reply header (its length from [`reply_header_len`]).
pub fn reply_header(b: &[u8]) -> Result<ReplyHeader, String> {
    let magic = b.get(0..4).and_then(|m| m.try_into().ok()).ok_or("a short reply header")?;
    let need = reply_header_len(magic)?;
    if b.len() < need {
        return Err("a short reply header".into());
    }
    Ok(match need {
        SIMPLE_REPLY_LEN => ReplyHeader::Simple { error: be32(&b[4..8]), cookie: be64(&b[8..16]) },
        _ => ReplyHeader::Chunk { flags: be16(&b[4..6]), kind: be16(&b[6..8]), cookie: be64(&b[8..16]), len: be32(&b[16..20]) },
    })
}

/// An error chunk's payload: the NBD error, the server's message, and the
/// offset for NBD_REPLY_TYPE_ERROR_OFFSET.
pub fn error_chunk(kind: u16, p: &[u8]) -> Result<(u32, String, Option<u64>), String> {
    if p.len() < 6 {
        return Err(format!("an error chunk of {} bytes (at least 6)", p.len()));
    }
    let (error, mlen) = (be32(&p[0..4]), be16(&p[4..6]) as usize);
    let rest = &p[6..];
    let tail = if kind == REPLY_TYPE_ERROR_OFFSET { 8 } else { 0 };
    if mlen + tail > rest.len() {
        return Err(format!("an error chunk whose message ({mlen} bytes) overruns its length ({})", p.len()));
    }
    let message = String::from_utf8_lossy(&rest[..mlen]).into_owned();
    let offset = (kind == REPLY_TYPE_ERROR_OFFSET).then(|| be64(&rest[mlen..mlen + 8]));
    if error == 0 {
        return Err("an error chunk with error 0".into());
    }
    Ok((error, message, offset))
}

/// A block status chunk's payload: its context id and (length, flags) extents.
pub fn block_status_chunk(p: &[u8]) -> Result<(u32, Vec<(u32, u32)>), String> {
    if p.len() < 12 || !(p.len() - 4).is_multiple_of(8) {
        return Err(format!("a block status chunk of {} bytes (4 + a multiple of 8)", p.len()));
    }
    let extents: Vec<(u32, u32)> = p[4..].chunks_exact(8).map(|d| (be32(&d[0..4]), be32(&d[4..8]))).collect();
    if extents.iter().any(|e| e.0 == 0) {
        return Err("a block status extent of length 0".into());
    }
    Ok((be32(&p[0..4]), extents))
}

pub fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
pub fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
pub fn be64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

// ---- the handshake --------------------------------------------------------

/// What the client wants from the handshake.
pub struct Wants<'a> {
    pub export: &'a str,
    pub structured: bool,
    /// Ask for the base:allocation context (for NBD_CMD_BLOCK_STATUS).
    pub allocation: bool,
}

/// What was agreed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Negotiated {
    pub size: u64,
    pub flags: u16,
    pub structured: bool,
    /// base:allocation's context id, if the server gave one.
    pub allocation: Option<u32>,
    /// Minimum, preferred and maximum block sizes, if the server said.
    pub block_size: Option<(u32, u32, u32)>,
}

/// Why a handshake failed.
#[derive(Debug)]
pub enum HandshakeError {
    Io(&'static str, std::io::Error),
    /// The server broke the protocol; says how.
    Protocol(String),
    TlsRequired,
    /// No export of that name: the server's message, and its exports if it lists them.
    UnknownExport {
        message: String,
        exports: Option<Vec<String>>,
    },
    /// The server refused the export for another reason (its message).
    Refused(String),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::Io(what, e) => write!(f, "{what}: {e}"),
            HandshakeError::Protocol(m) => write!(f, "protocol error: {m}"),
            HandshakeError::TlsRequired => write!(f, "the server requires TLS, which storbench's nbd engine does not support"),
            HandshakeError::UnknownExport { message, .. } => write!(f, "unknown export: {message}"),
            HandshakeError::Refused(m) => write!(f, "the server refused the export: {m}"),
        }
    }
}

type Hs<T> = Result<T, HandshakeError>;

/// One option reply: its type and data.
struct OptReply {
    kind: u32,
    data: Vec<u8>,
}

/// The fixed newstyle handshake, up to the transmission phase: structured
/// replies and base:allocation when wanted and offered, then NBD_OPT_GO
/// (NBD_OPT_EXPORT_NAME if the server does not know GO).
pub fn handshake<S: Read + Write>(s: &mut S, want: &Wants) -> Hs<Negotiated> {
    let mut greeting = [0u8; 18];
    read(s, &mut greeting, "reading the server's greeting")?;
    if be64(&greeting[0..8]) != NBDMAGIC {
        return Err(HandshakeError::Protocol("not an NBD server (no NBDMAGIC in its greeting)".into()));
    }
    match be64(&greeting[8..16]) {
        IHAVEOPT => {}
        OLDSTYLE => return Err(HandshakeError::Protocol("an oldstyle server (no export names); it is not supported".into())),
        m => return Err(HandshakeError::Protocol(format!("unknown handshake magic {m:#x}"))),
    }
    let server = be16(&greeting[16..18]);
    let no_zeroes = server & FLAG_NO_ZEROES != 0;
    let client = FLAG_C_FIXED_NEWSTYLE | if no_zeroes { FLAG_C_NO_ZEROES } else { 0 };
    write(s, &client.to_be_bytes())?;
    if server & FLAG_FIXED_NEWSTYLE == 0 {
        // Only NBD_OPT_EXPORT_NAME may be sent to a server without fixed newstyle.
        return export_name(s, want.export, no_zeroes);
    }
    let mut got = Negotiated { structured: want.structured && structured_replies(s)?, ..Negotiated::default() };
    if want.allocation && got.structured {
        got.allocation = meta_context(s, want.export)?;
    }
    match go(s, want.export, &mut got)? {
        true => Ok(got),
        false => export_name(s, want.export, no_zeroes).map(|n| Negotiated { structured: got.structured, allocation: None, ..n }),
    }
}

fn structured_replies<S: Read + Write>(s: &mut S) -> Hs<bool> {
    send_option(s, OPT_STRUCTURED_REPLY, &[])?;
    let r = option_reply(s, OPT_STRUCTURED_REPLY)?;
    match r.kind {
        REP_ACK => Ok(true),
        REP_ERR_TLS_REQD => Err(HandshakeError::TlsRequired),
        k if k & (1 << 31) != 0 => Ok(false),
        k => Err(HandshakeError::Protocol(format!("reply type {k} to NBD_OPT_STRUCTURED_REPLY"))),
    }
}

/// NBD_OPT_SET_META_CONTEXT for base:allocation; its id, if selected.
fn meta_context<S: Read + Write>(s: &mut S, export: &str) -> Hs<Option<u32>> {
    send_option(s, OPT_SET_META_CONTEXT, &meta_context_data(export, &[BASE_ALLOCATION]))?;
    let mut id = None;
    loop {
        let r = option_reply(s, OPT_SET_META_CONTEXT)?;
        match r.kind {
            REP_META_CONTEXT if r.data.len() >= 4 => {
                if &r.data[4..] == BASE_ALLOCATION.as_bytes() {
                    id = Some(be32(&r.data[0..4]));
                }
            }
            REP_META_CONTEXT => return Err(HandshakeError::Protocol("a metadata context reply shorter than its id".into())),
            REP_ACK => return Ok(id),
            REP_ERR_TLS_REQD => return Err(HandshakeError::TlsRequired),
            // Not offered (or not for this export): the caller samples data instead.
            k if k & (1 << 31) != 0 => return Ok(None),
            k => return Err(HandshakeError::Protocol(format!("reply type {k} to NBD_OPT_SET_META_CONTEXT"))),
        }
    }
}

pub fn meta_context_data(export: &str, queries: &[&str]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&(export.len() as u32).to_be_bytes());
    d.extend_from_slice(export.as_bytes());
    d.extend_from_slice(&(queries.len() as u32).to_be_bytes());
    for q in queries {
        d.extend_from_slice(&(q.len() as u32).to_be_bytes());
        d.extend_from_slice(q.as_bytes());
    }
    d
}

pub fn go_data(export: &str, infos: &[u16]) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&(export.len() as u32).to_be_bytes());
    d.extend_from_slice(export.as_bytes());
    d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
    for i in infos {
        d.extend_from_slice(&i.to_be_bytes());
    }
    d
}

/// NBD_OPT_GO: true once in transmission, false if the server does not
/// know the option (the caller falls back to NBD_OPT_EXPORT_NAME).
fn go<S: Read + Write>(s: &mut S, export: &str, got: &mut Negotiated) -> Hs<bool> {
    send_option(s, OPT_GO, &go_data(export, &[INFO_BLOCK_SIZE]))?;
    let mut have_export = false;
    loop {
        let r = option_reply(s, OPT_GO)?;
        match r.kind {
            REP_INFO => have_export |= info(&r.data, got)?,
            REP_ACK if have_export => return Ok(true),
            REP_ACK => return Err(HandshakeError::Protocol("NBD_OPT_GO succeeded without NBD_INFO_EXPORT".into())),
            REP_ERR_UNSUP => return Ok(false),
            REP_ERR_TLS_REQD => return Err(HandshakeError::TlsRequired),
            REP_ERR_UNKNOWN => {
                let message = text(&r.data);
                let exports = list(s).ok();
                return Err(HandshakeError::UnknownExport { message, exports });
            }
            k if k & (1 << 31) != 0 => return Err(HandshakeError::Refused(error_text(k, &r.data))),
            k => return Err(HandshakeError::Protocol(format!("reply type {k} to NBD_OPT_GO"))),
        }
    }
}

/// One NBD_REP_INFO; true if it was NBD_INFO_EXPORT.
pub fn info(d: &[u8], got: &mut Negotiated) -> Hs<bool> {
    if d.len() < 2 {
        return Err(HandshakeError::Protocol("an NBD_REP_INFO without a type".into()));
    }
    match be16(&d[0..2]) {
        INFO_EXPORT if d.len() == 12 => {
            got.size = be64(&d[2..10]);
            got.flags = be16(&d[10..12]);
            Ok(true)
        }
        INFO_EXPORT => Err(HandshakeError::Protocol(format!("NBD_INFO_EXPORT of {} bytes (12)", d.len()))),
        INFO_BLOCK_SIZE if d.len() == 14 => {
            got.block_size = Some((be32(&d[2..6]), be32(&d[6..10]), be32(&d[10..14])));
            Ok(false)
        }
        INFO_BLOCK_SIZE => Err(HandshakeError::Protocol(format!("NBD_INFO_BLOCK_SIZE of {} bytes (14)", d.len()))),
        // Other information (name, description) is not needed.
        _ => Ok(false),
    }
}

/// NBD_OPT_LIST: the server's export names (best effort, for a message).
fn list<S: Read + Write>(s: &mut S) -> Hs<Vec<String>> {
    send_option(s, OPT_LIST, &[])?;
    let mut names = Vec::new();
    loop {
        let r = option_reply(s, OPT_LIST)?;
        match r.kind {
            REP_SERVER if r.data.len() >= 4 => {
                let n = (be32(&r.data[0..4]) as usize).min(r.data.len() - 4);
                names.push(String::from_utf8_lossy(&r.data[4..4 + n]).into_owned());
            }
            REP_ACK => return Ok(names),
            k => return Err(HandshakeError::Refused(error_text(k, &r.data))),
        }
    }
}

/// NBD_OPT_EXPORT_NAME: no reply on failure, the server just hangs up.
fn export_name<S: Read + Write>(s: &mut S, export: &str, no_zeroes: bool) -> Hs<Negotiated> {
    send_option(s, OPT_EXPORT_NAME, export.as_bytes())?;
    let mut b = [0u8; 10 + 124];
    let n = if no_zeroes { 10 } else { b.len() };
    match s.read_exact(&mut b[..n]) {
        Ok(()) => Ok(Negotiated { size: be64(&b[0..8]), flags: be16(&b[8..10]), ..Negotiated::default() }),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(HandshakeError::UnknownExport { message: "the server closed the connection on NBD_OPT_EXPORT_NAME".into(), exports: None })
        }
        Err(e) => Err(HandshakeError::Io("reading the export's size", e)),
    }
}

pub fn option_request(option: u32, data: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(16 + data.len());
    m.extend_from_slice(&IHAVEOPT.to_be_bytes());
    m.extend_from_slice(&option.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    m
}

fn send_option<S: Write>(s: &mut S, option: u32, data: &[u8]) -> Hs<()> {
    write(s, &option_request(option, data))
}

fn option_reply<S: Read>(s: &mut S, option: u32) -> Hs<OptReply> {
    let mut h = [0u8; 20];
    read(s, &mut h, "reading an option reply")?;
    if be64(&h[0..8]) != REPLY_MAGIC_OPT {
        return Err(HandshakeError::Protocol("an option reply with bad magic".into()));
    }
    if be32(&h[8..12]) != option {
        return Err(HandshakeError::Protocol(format!("a reply to option {} where {option} was asked", be32(&h[8..12]))));
    }
    let len = be32(&h[16..20]);
    if len > MAX_OPTION_REPLY {
        return Err(HandshakeError::Protocol(format!("an option reply of {len} bytes")));
    }
    let mut data = vec![0u8; len as usize];
    read(s, &mut data, "reading an option reply")?;
    Ok(OptReply { kind: be32(&h[12..16]), data })
}

fn error_text(kind: u32, data: &[u8]) -> String {
    let name = match kind {
        REP_ERR_UNSUP => "unsupported",
        REP_ERR_POLICY => "forbidden by the server's policy",
        REP_ERR_TLS_REQD => "TLS required",
        REP_ERR_UNKNOWN => "unknown export",
        _ => "error",
    };
    match text(data) {
        t if t.is_empty() => format!("{name} (reply {kind:#x})"),
        t => format!("{name}: {t}"),
    }
}

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).trim().to_string()
}

fn read<S: Read>(s: &mut S, b: &mut [u8], what: &'static str) -> Hs<()> {
    s.read_exact(b).map_err(|e| HandshakeError::Io(what, e))
}

fn write<S: Write>(s: &mut S, b: &[u8]) -> Hs<()> {
    s.write_all(b).map_err(|e| HandshakeError::Io("sending to the server", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted server: it answers from canned bytes and records what the
    /// client sent.
    struct Script {
        input: std::io::Cursor<Vec<u8>>,
        sent: Vec<u8>,
    }
    impl Read for Script {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            self.input.read(b)
        }
    }
    impl Write for Script {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.sent.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn greeting(flags: u16) -> Vec<u8> {
        [&NBDMAGIC.to_be_bytes()[..], &IHAVEOPT.to_be_bytes(), &flags.to_be_bytes()].concat()
    }
    fn rep(option: u32, kind: u32, data: &[u8]) -> Vec<u8> {
        [&REPLY_MAGIC_OPT.to_be_bytes()[..], &option.to_be_bytes(), &kind.to_be_bytes(), &(data.len() as u32).to_be_bytes(), data].concat()
    }
    fn export_info(size: u64, flags: u16) -> Vec<u8> {
        [&INFO_EXPORT.to_be_bytes()[..], &size.to_be_bytes(), &flags.to_be_bytes()].concat()
    }
    fn script(parts: &[Vec<u8>]) -> Script {
        Script { input: std::io::Cursor::new(parts.concat()), sent: Vec::new() }
    }
    fn wants(export: &str) -> Wants<'_> {
        Wants { export, structured: true, allocation: true }
    }

    #[test]
    fn go_with_structured_replies_and_allocation() {
        let mut ctx = 7u32.to_be_bytes().to_vec();
        ctx.extend_from_slice(BASE_ALLOCATION.as_bytes());
        let bs = [&INFO_BLOCK_SIZE.to_be_bytes()[..], &1u32.to_be_bytes(), &4096u32.to_be_bytes(), &(32u32 << 20).to_be_bytes()].concat();
        let mut s = script(&[
            greeting(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES),
            rep(OPT_STRUCTURED_REPLY, REP_ACK, &[]),
            rep(OPT_SET_META_CONTEXT, REP_META_CONTEXT, &ctx),
            rep(OPT_SET_META_CONTEXT, REP_ACK, &[]),
            rep(OPT_GO, REP_INFO, &bs),
            rep(OPT_GO, REP_INFO, &export_info(64 << 20, 1 | FLAG_SEND_FLUSH | FLAG_CAN_MULTI_CONN)),
            rep(OPT_GO, REP_ACK, &[]),
        ]);
        let n = handshake(&mut s, &wants("disk")).unwrap();
        assert_eq!(n.size, 64 << 20);
        assert_eq!(n.flags & FLAG_CAN_MULTI_CONN, FLAG_CAN_MULTI_CONN);
        assert!(n.structured);
        assert_eq!(n.allocation, Some(7));
        assert_eq!(n.block_size, Some((1, 4096, 32 << 20)));
        // Client flags, then the three options in order.
        assert_eq!(be32(&s.sent[0..4]), FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
        assert_eq!(&s.sent[4..20], &option_request(OPT_STRUCTURED_REPLY, &[])[..]);
        let go = option_request(OPT_GO, &go_data("disk", &[INFO_BLOCK_SIZE]));
        assert!(s.sent.ends_with(&go));
    }

    #[test]
    fn go_unsupported_falls_back_to_export_name() {
        let mut s = script(&[
            greeting(FLAG_FIXED_NEWSTYLE),
            rep(OPT_STRUCTURED_REPLY, REP_ERR_UNSUP, &[]),
            rep(OPT_GO, REP_ERR_UNSUP, &[]),
            [&(1u64 << 30).to_be_bytes()[..], &(1 | FLAG_READ_ONLY).to_be_bytes(), &[0u8; 124]].concat(),
        ]);
        let n = handshake(&mut s, &wants("x")).unwrap();
        assert_eq!((n.size, n.flags & FLAG_READ_ONLY, n.structured), (1 << 30, FLAG_READ_ONLY, false));
        assert_eq!(be32(&s.sent[0..4]), FLAG_C_FIXED_NEWSTYLE, "no NO_ZEROES unless the server offers it");
        assert!(s.sent.ends_with(&option_request(OPT_EXPORT_NAME, b"x")));
    }

    #[test]
    fn unknown_export_lists_what_there_is() {
        let server = |name: &str| [&(name.len() as u32).to_be_bytes()[..], name.as_bytes()].concat();
        let mut s = script(&[
            greeting(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES),
            rep(OPT_GO, REP_ERR_UNKNOWN, b"no such export"),
            rep(OPT_LIST, REP_SERVER, &server("a")),
            rep(OPT_LIST, REP_SERVER, &server("b")),
            rep(OPT_LIST, REP_ACK, &[]),
        ]);
        let w = Wants { export: "zz", structured: false, allocation: false };
        match handshake(&mut s, &w) {
            Err(HandshakeError::UnknownExport { message, exports }) => {
                assert_eq!(message, "no such export");
                assert_eq!(exports, Some(vec!["a".to_string(), "b".to_string()]));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tls_required_and_malformed_servers_are_errors_not_panics() {
        let mut s = script(&[greeting(FLAG_FIXED_NEWSTYLE), rep(OPT_STRUCTURED_REPLY, REP_ERR_TLS_REQD, &[])]);
        assert!(matches!(handshake(&mut s, &wants("")), Err(HandshakeError::TlsRequired)));
        let mut s = script(&[greeting(FLAG_FIXED_NEWSTYLE), rep(OPT_GO, REP_ERR_TLS_REQD, &[])]);
        let w = Wants { export: "", structured: false, allocation: false };
        assert!(matches!(handshake(&mut s, &w), Err(HandshakeError::TlsRequired)));
        // Truncated greeting, wrong magic, an oversized reply, a short NBD_INFO_EXPORT.
        let cases: Vec<Vec<Vec<u8>>> = vec![
            vec![NBDMAGIC.to_be_bytes().to_vec()],
            vec![[&b"HTTP/1.1"[..], &[0u8; 10]].concat()],
            vec![
                greeting(FLAG_FIXED_NEWSTYLE),
                [&REPLY_MAGIC_OPT.to_be_bytes()[..], &OPT_GO.to_be_bytes(), &REP_ACK.to_be_bytes(), &u32::MAX.to_be_bytes()].concat(),
            ],
            vec![greeting(FLAG_FIXED_NEWSTYLE), rep(OPT_GO, REP_INFO, &[0, 0, 1])],
            vec![greeting(FLAG_FIXED_NEWSTYLE), rep(OPT_GO, REP_ACK, &[])],
        ];
        for parts in cases {
            let mut s = script(&parts);
            let e = handshake(&mut s, &w).unwrap_err();
            assert!(matches!(e, HandshakeError::Io(..) | HandshakeError::Protocol(_)), "{e:?}");
        }
    }

    #[test]
    fn requests_and_replies_round_trip() {
        let r = request(CMD_WRITE, 0, 0x0102_0304_0506_0708, 4096, 512);
        assert_eq!(be32(&r[0..4]), REQUEST_MAGIC);
        assert_eq!((be16(&r[6..8]), be64(&r[8..16]), be64(&r[16..24]), be32(&r[24..28])), (CMD_WRITE, 0x0102_0304_0506_0708, 4096, 512));
        let simple = [&SIMPLE_REPLY_MAGIC.to_be_bytes()[..], &5u32.to_be_bytes(), &9u64.to_be_bytes()].concat();
        assert_eq!(reply_header(&simple).unwrap(), ReplyHeader::Simple { error: 5, cookie: 9 });
        let chunk = [
            &STRUCTURED_REPLY_MAGIC.to_be_bytes()[..],
            &1u16.to_be_bytes(),
            &2u16.to_be_bytes(),
            &3u64.to_be_bytes(),
            &12u32.to_be_bytes(),
        ]
        .concat();
        assert_eq!(reply_header(&chunk).unwrap(), ReplyHeader::Chunk { flags: 1, kind: 2, cookie: 3, len: 12 });
        assert!(reply_header(&chunk[..16]).is_err());
        assert!(reply_header(&[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err().contains("bad magic"));
    }

    #[test]
    fn error_and_block_status_chunks() {
        let e = [&22u32.to_be_bytes()[..], &3u16.to_be_bytes(), b"bad"].concat();
        assert_eq!(error_chunk(REPLY_TYPE_ERROR, &e).unwrap(), (22, "bad".into(), None));
        let eo = [&e[..], &4096u64.to_be_bytes()].concat();
        assert_eq!(error_chunk(REPLY_TYPE_ERROR_OFFSET, &eo).unwrap(), (22, "bad".into(), Some(4096)));
        assert!(error_chunk(REPLY_TYPE_ERROR_OFFSET, &e).is_err(), "offset missing");
        assert!(error_chunk(REPLY_TYPE_ERROR, &[0, 0, 0, 5, 0, 200]).is_err(), "message overruns");
        let bs =
            [&1u32.to_be_bytes()[..], &4096u32.to_be_bytes(), &3u32.to_be_bytes(), &512u32.to_be_bytes(), &0u32.to_be_bytes()].concat();
        assert_eq!(block_status_chunk(&bs).unwrap(), (1, vec![(4096, 3), (512, 0)]));
        assert!(block_status_chunk(&bs[..10]).is_err());
        assert_eq!(errno(95), libc::ENOTSUP);
        assert_eq!(errno(108), libc::ESHUTDOWN);
        assert_eq!(errno(12345), libc::EIO);
    }
}
