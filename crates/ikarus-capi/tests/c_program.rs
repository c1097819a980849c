//! The C test program (`tests/c/test_capi.c`, linked against the shared library) and the C++
//! example (`examples/cpp/reach.cpp`, linked against the static library), compiled with the
//! system's gcc and g++ against the generated `ikarus.h`, run on the built-in humanoid and a
//! shared BVH file; each must exit 0.
//!
//! Without the compiler the test says `SKIPPED`; in CI (`CI` set) it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

const BVH: &str = "cmu_01_01_jump_cgspeed.bvh";

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The compiler named by `variable` (`CC`, `CXX`) or `default`, if it runs; `None` means
/// SKIPPED (a panic in CI).
fn compiler(variable: &str, default: &str, test: &str) -> Option<String> {
    let name = std::env::var(variable).unwrap_or_else(|_| default.to_owned());
    if Command::new(&name).arg("--version").output().is_ok() {
        return Some(name);
    }
    let message = format!("{test}: `{name}` not found (install gcc and g++, or set {variable})");
    assert!(!in_ci(), "{message}; CI requires it");
    eprintln!("SKIPPED {message}");
    None
}

/// The directory of the libraries built with this test: `cargo test` leaves them beside the
/// test binary in `<target>/<profile>/deps` (`cargo build` also copies them one up).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .expect("the test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

/// The header build.rs generated.
fn include_dir() -> PathBuf {
    PathBuf::from(env!("OUT_DIR"))
}

fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The compiler named by `variable` or `default` (see [`compiler`]) and the shared BVH file,
/// or `None` (SKIPPED; a panic in CI).
fn compiler_and_bvh(variable: &str, default: &str, test: &str) -> Option<(String, PathBuf)> {
    let compiler = compiler(variable, default, test)?;
    let bvh = ikarus_testdata::require_file("bvh", BVH, test)?;
    Some((compiler, bvh))
}

/// `compiler` building `source` (relative to this crate) into `exe` under `standard`, every
/// warning an error, with the generated header on the include path; the caller adds the
/// libraries.
fn build_command(compiler: &str, standard: &str, source: &str, exe: &Path) -> Command {
    let mut command = Command::new(compiler);
    command
        .args([standard, "-Wall", "-Wextra", "-Werror", "-O1", "-o"])
        .arg(exe)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(source))
        .arg("-I")
        .arg(include_dir());
    command
}

#[test]
fn c_test_program_passes() {
    let Some((cc, bvh)) = compiler_and_bvh("CC", "gcc", "c_test_program_passes") else {
        return;
    };
    let libs = library_dir();
    assert!(
        libs.join("libikarus_capi.so").is_file(),
        "{}: the shared library is missing",
        libs.display()
    );
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test_capi");
    let mut compile = build_command(&cc, "-std=c99", "tests/c/test_capi.c", &exe);
    compile
        .arg("-L")
        .arg(&libs)
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .args(["-likarus_capi", "-lm"]);
    run(&mut compile, "compiling tests/c/test_capi.c");
    let stdout = run(Command::new(&exe).arg(&bvh), "tests/c/test_capi.c");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(stdout.contains(BVH), "{stdout}");
}

#[test]
fn cpp_example_runs_against_the_static_library() {
    let test = "cpp_example_runs_against_the_static_library";
    let Some((cxx, bvh)) = compiler_and_bvh("CXX", "g++", test) else {
        return;
    };
    let library = library_dir().join("libikarus_capi.a");
    assert!(library.is_file(), "{}: missing", library.display());
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reach");
    let mut compile = build_command(&cxx, "-std=c++17", "examples/cpp/reach.cpp", &exe);
    compile
        .arg(&library)
        // What a Rust static library needs from the system on Linux.
        .args(["-lpthread", "-ldl", "-lm"]);
    run(&mut compile, "compiling examples/cpp/reach.cpp");
    let stdout = run(Command::new(&exe).arg(&bvh), "examples/cpp/reach.cpp");
    assert!(stdout.contains("30 frames converged"), "{stdout}");
    assert!(stdout.contains(BVH), "{stdout}");
}
