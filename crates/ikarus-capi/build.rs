//! Generates `ikarus.h` from this crate's `extern "C"` functions with cbindgen, into `OUT_DIR`
//! and beside the built libraries as `<target>/<profile>/include/ikarus.h`.

use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("crates/ikarus-capi/cbindgen.toml is valid");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads crates/ikarus-capi/src");
    let header = out_dir.join("ikarus.h");
    bindings.write_to_file(&header);
    // OUT_DIR is <target>/<profile>/build/ikarus-capi-<hash>/out: the libraries are three up.
    if let Some(profile_dir) = out_dir.ancestors().nth(3) {
        let include = profile_dir.join("include");
        std::fs::create_dir_all(&include).expect("the target directory is writable");
        copy_if_changed(&header, &include.join("ikarus.h"));
    }
    println!("cargo:rustc-env=IKARUS_CAPI_HEADER={}", header.display());
}

/// Copies `from` to `to` unless `to` already holds the same bytes (keeping its time stamp for
/// builds that depend on it).
fn copy_if_changed(from: &Path, to: &Path) {
    let new = std::fs::read(from).expect("the header was just written");
    if std::fs::read(to).ok().as_deref() != Some(new.as_slice()) {
        std::fs::write(to, new).expect("the target directory is writable");
    }
}
