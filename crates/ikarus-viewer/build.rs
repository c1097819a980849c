//! Fetches the page's front-end packages (three.js, meshoptimizer's simplifier) from npm into
//! `OUT_DIR`, pinned by the
//! committed `web/package-lock.json`, so the binary can embed and serve them. Third-party code
//! is never committed; a fresh machine needs only cargo and npm.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files of the npm packages the page imports, relative to `node_modules/`.
const FILES: [&str; 5] = [
    "three/build/three.module.js",
    "three/build/three.core.js",
    "three/examples/jsm/controls/OrbitControls.js",
    "three/examples/jsm/controls/TransformControls.js",
    "meshoptimizer/meshopt_simplifier.js",
];

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let web = manifest_dir.join("web");
    let npm_dir = out_dir.join("npm");
    for file in ["package.json", "package-lock.json"] {
        println!("cargo::rerun-if-changed=web/{file}");
        std::fs::create_dir_all(&npm_dir).expect("OUT_DIR is writable");
        std::fs::copy(web.join(file), npm_dir.join(file))
            .unwrap_or_else(|e| panic!("cannot copy web/{file} into OUT_DIR: {e}"));
    }
    // `npm ci` runs again whenever the lockfile differs from the one last installed.
    let modules = npm_dir.join("node_modules");
    let lock = std::fs::read(web.join("package-lock.json")).expect("web/package-lock.json");
    let stamp = npm_dir.join("installed-package-lock.json");
    let installed = std::fs::read(&stamp).ok();
    if installed.as_deref() != Some(lock.as_slice())
        || !FILES.iter().all(|f| modules.join(f).is_file())
    {
        npm_ci(&npm_dir);
        std::fs::write(&stamp, &lock).expect("OUT_DIR is writable");
    }
    for file in FILES {
        assert!(
            modules.join(file).is_file(),
            "npm ci did not install node_modules/{file}; check web/package.json"
        );
    }
    println!(
        "cargo::rustc-env=IKARUS_VIEWER_THREE={}",
        modules.join("three").display()
    );
    println!(
        "cargo::rustc-env=IKARUS_VIEWER_MESHOPT={}",
        modules.join("meshoptimizer").display()
    );
}

/// `npm ci --omit=dev` in `dir`: installs exactly the lockfile's runtime packages.
fn npm_ci(dir: &Path) {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    let status = Command::new(npm)
        .args([
            "ci",
            "--omit=dev",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefer-offline",
        ])
        .current_dir(dir)
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => panic!(
            "`npm ci --omit=dev` failed ({status}) in {}: the viewer needs the npm registry (or a \
             warm npm cache) to fetch three.js at the version pinned in \
             crates/ikarus-viewer/web/package-lock.json",
            dir.display()
        ),
        Err(e) => panic!(
            "cannot run npm ({e}): building the ikarus viewer needs Node.js and npm on PATH to \
             fetch three.js (https://nodejs.org, or `apt-get install npm`)"
        ),
    }
}
