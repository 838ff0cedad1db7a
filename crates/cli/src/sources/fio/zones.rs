//! fio's `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`) on any
//! file or device: `zonesize` bytes of I/O inside a zone of `zonerange`
//! bytes (default `zonesize`), then the next zone `zoneskip` bytes on
//! (init.c and io_u.c `setup_strided_zone_mode`). A `zonesize` alone means
//! strided, as in fio; with several files fio drops the zones, and so does
//! storbench. `zonemode=zbd` (zoned devices: writes at each zone's write
//! pointer, zone resets) is refused by name in the option table.

use storbench_workload::spec::StridedZones;
use storbench_workload::units::parse_size;
use storbench_workload::JobSpec;

fn size(key: &str, v: Option<&str>) -> Result<u64, String> {
    v.map_or(Ok(0), |v| parse_size(v).map_err(|e| format!("{key}={v}: {e}")))
}

/// Settle the job's zones from fio's four options (`get` finds each).
pub fn apply(spec: &mut JobSpec, get: &super::http::Get, files: u64) -> Result<(), String> {
    let mode = get("zonemode");
    let zonesize = size("zonesize", get("zonesize"))?;
    match mode {
        None if zonesize == 0 => return Ok(()),
        None | Some("strided") => {}
        Some("none") => return Ok(()),
        // Refused by the option table; dropped there with --fio-allow-unsupported.
        Some("zbd") => return Ok(()),
        Some(m) => return Err(format!("zonemode={m}: give none, strided or zbd")),
    }
    if zonesize == 0 {
        return Err("zonemode=strided needs zonesize= (the bytes of I/O in each zone)".into());
    }
    if files > 1 {
        return Ok(());
    }
    let range = match size("zonerange", get("zonerange"))? {
        0 => zonesize,
        r => r,
    };
    if range < spec.bs.max() {
        return Err(format!("zonerange {range} is smaller than the largest block ({}); give a zone that holds a block", spec.bs.max()));
    }
    spec.zones = Some(StridedZones { size: zonesize, range, skip: size("zoneskip", get("zoneskip"))? });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(opts: &[(&str, &str)]) -> Result<Option<StridedZones>, String> {
        let mut spec = JobSpec::default();
        let get = |k: &str| opts.iter().find(|o| o.0 == k).map(|o| o.1);
        apply(&mut spec, &get, 1).map(|_| spec.zones)
    }

    #[test]
    fn fio_defaults_and_refusals() {
        // disk-zone-profile.fio
        let z = zones(&[("zonemode", "strided"), ("zonesize", "256m"), ("zoneskip", "2g")]).unwrap().unwrap();
        assert_eq!((z.size, z.range, z.skip), (256 << 20, 256 << 20, 2 << 30));
        let z = zones(&[("zonesize", "1m"), ("zonerange", "4m")]).unwrap().unwrap();
        assert_eq!((z.size, z.range, z.skip), (1 << 20, 4 << 20, 0));
        assert_eq!(zones(&[("zonemode", "none"), ("zonesize", "1m")]).unwrap(), None);
        assert_eq!(zones(&[("zonemode", "zbd"), ("zonesize", "1m")]).unwrap(), None);
        assert!(zones(&[("zonemode", "strided")]).unwrap_err().contains("needs zonesize"));
        assert!(zones(&[("zonemode", "stripy"), ("zonesize", "1m")]).unwrap_err().contains("give none, strided or zbd"));
        assert!(zones(&[("zonesize", "1k")]).unwrap_err().contains("smaller than the largest block"));
    }
}
