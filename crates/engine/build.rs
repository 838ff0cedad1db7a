//! Builds the librados C++ shim (cxx/rados_shim.cc) into a shared object the
//! rados engine embeds and loads at run time, when Ceph's C++ development
//! headers are here (Debian: libradospp-dev). Without them storbench builds
//! as before and writes through librados' C API, which copies each write
//! (the engine says which path it takes).

use std::path::{Path, PathBuf};
use std::process::Command;

const HEADER: &str = "/usr/include/rados/librados.hpp";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(storbench_rados_shim)");
    println!("cargo::rerun-if-changed=cxx/rados_shim.cc");
    println!("cargo::rerun-if-env-changed=STORBENCH_NO_RADOS_SHIM");
    // A missing file counts as changed on every build: watch the header
    // when it is there, else the directory the package would add it under.
    let header = Path::new(HEADER).exists();
    println!("cargo::rerun-if-changed={}", if header { HEADER } else { "/usr/include" });
    if std::env::var_os("STORBENCH_NO_RADOS_SHIM").is_some() {
        return;
    }
    if std::env::var("TARGET").ok() != std::env::var("HOST").ok() {
        println!("cargo::warning=cross build: no librados C++ shim (rados writes go through the C API)");
        return;
    }
    if !header {
        println!("cargo::warning=librados C++ headers missing (apt-get install libradospp-dev): rados writes go through the C API, which copies each write");
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("librados_shim.so");
    match build(&out) {
        Ok(()) => println!("cargo::rustc-cfg=storbench_rados_shim"),
        Err(e) => println!("cargo::warning=the librados C++ shim did not build ({e}): rados writes go through the C API"),
    }
}

/// The C++ compiler cc would use (with its flags), asked for a shared
/// object whose every symbol is bound when it is loaded (`-z now`): a
/// librados that lacks one then fails the load, and writes fall back to the
/// C API, instead of the first write dying on a lookup error.
fn build(out: &Path) -> Result<(), String> {
    let compiler = cc::Build::new().cpp(true).try_get_compiler().map_err(|e| format!("no C++ compiler: {e}"))?;
    let status = Command::new(compiler.path())
        .args(compiler.args())
        .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-Wno-unused-parameter"])
        .arg("cxx/rados_shim.cc")
        .arg("-o")
        .arg(out)
        .args(["-lrados", "-Wl,-z,now", "-Wl,--no-undefined"])
        .status()
        .map_err(|e| format!("cannot run {}: {e}", compiler.path().display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} exited with {status}", compiler.path().display()))
    }
}
