//! Builds the librados C++ shim (cxx/rados_shim.cc) into a shared object the
//! rados engine embeds and loads at run time, when Ceph's C++ development
//! headers are here (Debian: libradospp-dev). Without them storbench builds
//! as before and writes through librados' C API, which copies each write
//! (the engine says which path it takes).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(storbench_rados_shim)");
    println!("cargo::rerun-if-changed=cxx/rados_shim.cc");
    println!("cargo::rerun-if-changed=/usr/include/rados/librados.hpp");
    println!("cargo::rerun-if-env-changed=STORBENCH_NO_RADOS_SHIM");
    if std::env::var_os("STORBENCH_NO_RADOS_SHIM").is_some() {
        return;
    }
    if !Path::new("/usr/include/rados/librados.hpp").exists() {
        println!("cargo::warning=librados C++ headers missing (apt-get install libradospp-dev): rados writes go through the C API, which copies each write");
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("librados_shim.so");
    match build(&out) {
        Ok(()) => println!("cargo::rustc-cfg=storbench_rados_shim"),
        Err(e) => println!("cargo::warning=the librados C++ shim did not build ({e}): rados writes go through the C API"),
    }
}

/// The C++ compiler cc would use, asked for a shared object.
fn build(out: &Path) -> Result<(), String> {
    let compiler = cc::Build::new().cpp(true).get_compiler();
    let status = Command::new(compiler.path())
        .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-Wno-unused-parameter"])
        .arg("cxx/rados_shim.cc")
        .arg("-o")
        .arg(out)
        .arg("-lrados")
        .status()
        .map_err(|e| format!("cannot run {}: {e}", compiler.path().display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} exited with {status}", compiler.path().display()))
    }
}
