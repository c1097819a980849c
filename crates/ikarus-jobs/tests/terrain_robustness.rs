//! The terrain reader on broken files (the fuzz target's invariant as a short CI slice):
//! every truncation and many byte flips of valid terrains parse or fail cleanly, and what
//! parses samples to finite heights and upward unit normals, NaN coordinates included.

use ikarus_anim::ground::Ground;
use ikarus_jobs::Terrain;

const VALID: [&str; 3] = [
    r#"{"heightfield": {"origin": [0, 0], "cell": 1e-300, "heights": [[1e308, -1e308], [-1e308, 1e308]]}}"#,
    r#"{"heightfield": {"origin": [-1.5, 2], "cell": 0.25, "heights": [[0, 0.1, 0.2], [0.3, -0.4, 1e3], [0, 0, 0]]}}"#,
    r#"{"plane": {"point": [0, 0.5, -2], "normal": [0.2, 1, -0.1]}}"#,
];

fn check(text: &str) {
    if let Ok(terrain) = Terrain::from_json(text, "t") {
        for (x, z) in [(0.0, 0.0), (-1.4, 2.1), (1e9, -1e9), (f64::NAN, 1.0)] {
            if let Some((h, n)) = terrain.sample(x, z) {
                assert!(h.is_finite(), "{text}: height {h}");
                assert!(
                    (n.length() - 1.0).abs() < 1e-9 && n.y > 0.0,
                    "{text}: normal {n}"
                );
            }
        }
    }
}

#[test]
fn truncations_and_flips_never_panic() {
    let mut rng = ikarus_testdata::Rng(11);
    for valid in VALID {
        assert!(Terrain::from_json(valid, "t").is_ok());
        for end in 0..valid.len() {
            check(&valid[..end]);
        }
        let bytes = valid.as_bytes();
        for _ in 0..2000 {
            let mut broken = bytes.to_vec();
            let at = rng.int(0, broken.len() - 1);
            broken[at] = b"0123456789-.,:[]{}eE \""
                .get(rng.int(0, 21))
                .copied()
                .unwrap_or(b'0');
            check(&String::from_utf8_lossy(&broken));
        }
    }
}
