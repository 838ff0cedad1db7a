//! What libblkid (util-linux, the library behind `blkid` and `wipefs`)
//! finds on a device: file systems, partition tables, RAID and LVM members,
//! encrypted volumes, swap; about a hundred signatures, kept up to date by
//! util-linux rather than by us. Loaded at run time (dlopen), like the Ceph
//! libraries: where it is missing, the device check falls back to its own
//! short table and says so.

use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::OnceLock;

type Probe = *mut c_void;

/// The few calls of libblkid's low-level probing API that the check needs.
struct Api {
    _lib: Library,
    new_probe_from_filename: unsafe extern "C" fn(*const c_char) -> Probe,
    free_probe: unsafe extern "C" fn(Probe),
    enable_superblocks: unsafe extern "C" fn(Probe, c_int) -> c_int,
    enable_partitions: unsafe extern "C" fn(Probe, c_int) -> c_int,
    do_safeprobe: unsafe extern "C" fn(Probe) -> c_int,
    lookup_value: unsafe extern "C" fn(Probe, *const c_char, *mut *const c_char, *mut usize) -> c_int,
}

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: libblkid's initialisers have no preconditions; the symbols
        // are looked up with the signatures of blkid.h (util-linux 2.x, stable ABI).
        unsafe {
            let lib = Library::new("libblkid.so.1").ok()?;
            let new_probe_from_filename = *lib.get(b"blkid_new_probe_from_filename\0").ok()?;
            let free_probe = *lib.get(b"blkid_free_probe\0").ok()?;
            let enable_superblocks = *lib.get(b"blkid_probe_enable_superblocks\0").ok()?;
            let enable_partitions = *lib.get(b"blkid_probe_enable_partitions\0").ok()?;
            let do_safeprobe = *lib.get(b"blkid_do_safeprobe\0").ok()?;
            let lookup_value = *lib.get(b"blkid_probe_lookup_value\0").ok()?;
            Some(Api { _lib: lib, new_probe_from_filename, free_probe, enable_superblocks, enable_partitions, do_safeprobe, lookup_value })
        }
    })
    .as_ref()
}

/// What libblkid's probe said of a device.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// No signature it knows.
    Nothing,
    /// A signature, in words (e.g. "an ext4 filesystem", "a dos partition table").
    Signature(String),
    /// libblkid is not installed, or could not open the device.
    Unavailable(String),
}

/// Probe `path` for file systems, RAID/LVM/crypto members and partition tables.
pub fn probe(path: &Path) -> Found {
    let Some(api) = api() else { return Found::Unavailable("libblkid.so.1 is not installed".into()) };
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else { return Found::Unavailable("the path has a NUL byte".into()) };
    // SAFETY: a valid C string; the probe is freed below on every path.
    let pr = unsafe { (api.new_probe_from_filename)(c.as_ptr()) };
    if pr.is_null() {
        return Found::Unavailable(format!("libblkid could not open it: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `pr` is a live probe until free_probe.
    let found = unsafe {
        (api.enable_superblocks)(pr, 1);
        (api.enable_partitions)(pr, 1);
        match (api.do_safeprobe)(pr) {
            0 => Found::Signature(describe(api, pr)),
            // Several signatures that contradict each other: still somebody's data.
            -2 => Found::Signature("more than one file system or volume signature (libblkid calls it ambivalent)".into()),
            1 => Found::Nothing,
            _ => Found::Unavailable("libblkid's probe failed".into()),
        }
    };
    // SAFETY: freed once, not used after.
    unsafe { (api.free_probe)(pr) };
    found
}

/// The probe's result in words, from its TYPE / PTTYPE and USAGE values.
///
/// # Safety
/// `pr` must be a live probe on which a probe succeeded.
unsafe fn describe(api: &Api, pr: Probe) -> String {
    // SAFETY: forwarded from the caller.
    let value = |name: &CStr| unsafe { lookup(api, pr, name) };
    if let Some(t) = value(c"TYPE") {
        let usage = value(c"USAGE").unwrap_or_else(|| "filesystem".into());
        let what = match usage.as_str() {
            "filesystem" => "filesystem".to_string(),
            "raid" => "RAID or volume-manager member".to_string(),
            "crypto" => "encrypted volume".to_string(),
            _ => "signature".to_string(),
        };
        return format!("{} {t} {what}", article(&t));
    }
    if let Some(pt) = value(c"PTTYPE") {
        return format!("a {pt} partition table");
    }
    "a signature libblkid recognises".into()
}

/// # Safety
/// `pr` must be a live probe.
unsafe fn lookup(api: &Api, pr: Probe, name: &CStr) -> Option<String> {
    let mut data: *const c_char = std::ptr::null();
    let mut len = 0usize;
    // SAFETY: out-pointers to locals; the value lives as long as the probe.
    let rc = unsafe { (api.lookup_value)(pr, name.as_ptr(), &mut data, &mut len) };
    if rc != 0 || data.is_null() {
        return None;
    }
    // SAFETY: libblkid returns a NUL-terminated string.
    Some(unsafe { CStr::from_ptr(data) }.to_string_lossy().into_owned())
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u', 'x']) {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_of_zeros_has_no_signature_and_a_luks_header_is_named() {
        if api().is_none() {
            eprintln!("skipped: libblkid.so.1 is not installed");
            return;
        }
        let p = std::env::temp_dir().join(format!("storbench-blkid-{}", std::process::id()));
        std::fs::write(&p, vec![0u8; 4 << 20]).unwrap();
        assert_eq!(probe(&p), Found::Nothing);
        // An ext2 superblock's magic alone is not enough for libblkid (it
        // checks the superblock); a LUKS header's magic and version are.
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all(b"LUKS\xba\xbe\x00\x01").unwrap();
        drop(f);
        match probe(&p) {
            Found::Signature(s) => assert!(s.contains("crypto_LUKS"), "{s}"),
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(&p).unwrap();
    }
}
