//! The viewer in a real browser: runs the Playwright spec in `crates/ikarus-viewer/web/tests`
//! against `ikarus serve` (this package's binary) in Debian's chromium. Says SKIPPED when
//! chromium or the npm packages are missing, unless `CI` is set, when it fails instead. The
//! shared data's BVH walk and panda URDF are passed as `IKARUS_BVH` and `IKARUS_URDF`, the
//! Godette VRM and a VRMA as `IKARUS_VRM` / `IKARUS_VRMA`, the Miku PMD and kishimen VMD as
//! `IKARUS_PMX` / `IKARUS_VMD`.

use std::path::{Path, PathBuf};
use std::process::Command;

const TEST: &str = "viewer_in_chromium";

/// Why the browser test cannot run here, if it cannot.
fn missing(web: &Path, chromium: &Path) -> Option<String> {
    if !chromium.is_file() {
        return Some(format!(
            "{} not found (apt-get install chromium)",
            chromium.display()
        ));
    }
    if !web.join("node_modules/@playwright/test").is_dir() {
        return Some(format!(
            "npm packages missing (npm ci in {})",
            web.display()
        ));
    }
    None
}

#[test]
fn viewer_in_chromium() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ikarus-viewer/web");
    let chromium = PathBuf::from(
        std::env::var("CHROMIUM_PATH").unwrap_or_else(|_| "/usr/bin/chromium".to_owned()),
    );
    if let Some(reason) = missing(&web, &chromium) {
        assert!(
            std::env::var_os("CI").is_none(),
            "{TEST}: {reason} (CI is set, so this fails)"
        );
        eprintln!("SKIPPED {TEST}: {reason}");
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer-screenshots");
    // Fresh each run: a screenshot left by an earlier run must not pass for this one's.
    let _ = std::fs::remove_dir_all(&screenshots);
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut command = Command::new("npx");
    command
        .args(["--no-install", "playwright", "test"])
        .current_dir(&web)
        .env("IKARUS_BIN", env!("CARGO_BIN_EXE_ikarus"))
        .env("IKARUS_VIEWER_PORT", port.to_string())
        .env("IKARUS_SCREENSHOTS", &screenshots)
        .env("CHROMIUM_PATH", &chromium);
    match ikarus_testdata::require("bvh", TEST) {
        Some(dir) => command.env(
            "IKARUS_BVH",
            dir.join("bandainamco_ds1_walk_normal_002.bvh"),
        ),
        None => command.env_remove("IKARUS_BVH"),
    };
    let urdf = ikarus_testdata::require("urdf", TEST).map(|dir| dir.join("panda.urdf"));
    match &urdf {
        Some(path) => command.env("IKARUS_URDF", path),
        None => command.env_remove("IKARUS_URDF"),
    };
    let vrm = ikarus_testdata::require("gltf", TEST).map(|dir| dir.join("Godette_vrm_v4.vrm"));
    match ikarus_testdata::require("gltf", TEST) {
        Some(dir) => command
            .env("IKARUS_VRM", dir.join("Godette_vrm_v4.vrm"))
            .env("IKARUS_VRMA", dir.join("three-vrm_test.vrma")),
        None => command.env_remove("IKARUS_VRM").env_remove("IKARUS_VRMA"),
    };
    let mmd = ikarus_testdata::require("mmd", TEST);
    match &mmd {
        Some(dir) => command
            .env("IKARUS_PMX", dir.join("Miku_Hatsune_Ver2.pmd"))
            .env("IKARUS_VMD", dir.join("kishimen.vmd")),
        None => command.env_remove("IKARUS_PMX").env_remove("IKARUS_VMD"),
    };
    let output = command.output().expect("npx runs (Node.js installed)");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{log}\nscreenshots in {}", screenshots.display());
    assert!(output.status.success(), "playwright failed:\n{log}");
    assert!(screenshots.join("viewer-drag-body.png").is_file());
    if urdf.is_some() {
        assert!(screenshots.join("viewer-urdf.png").is_file());
    }
    assert!(screenshots.join("body-reach.png").is_file());
    assert!(screenshots.join("body-stairs.png").is_file());
    if vrm.is_some() {
        assert!(screenshots.join("vrm-drag.png").is_file());
    }
    if mmd.is_some() {
        assert!(screenshots.join("mmd-ik-drag.png").is_file());
        assert!(screenshots.join("retarget-mmd.png").is_file());
    }
}
