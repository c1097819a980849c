//! `ikarus ground` end to end: a walk grounded on two flat planes 10 cm apart comes out 10 cm
//! apart in every joint of every frame (read back from the written BVH files), and bad
//! terrain files are refused naming the file.

use std::path::Path;

use ikarus_testdata::assert::largest_fk_gap;

mod common;

use common::{data_file, fails, ok, temp_dir};

/// `ikarus ground <walk> --terrain <terrain> <more…> --out <out>`.
fn ground<'a>(walk: &'a str, terrain: &'a Path, more: &[&'a str], out: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["ground", walk, "--terrain", terrain.to_str().unwrap()];
    args.extend_from_slice(more);
    args.extend(["--out", out.to_str().unwrap()]);
    args
}

#[test]
fn a_raised_plane_raises_the_whole_walk() {
    let Some(walk) = data_file(
        "bvh",
        "ground_raises_the_walk",
        "bandainamco_ds1_walk_normal_002.bvh",
    ) else {
        return;
    };
    let out = temp_dir("ground");
    let mut read = Vec::new();
    for (name, height) in [("low", 0.0), ("high", 0.1)] {
        let terrain = out.join(format!("{name}.json"));
        std::fs::write(
            &terrain,
            format!(r#"{{"plane": {{"point": [0, {height}, 0], "normal": [0, 1, 0]}}}}"#),
        )
        .unwrap();
        let bvh = out.join(format!("{name}.bvh"));
        let text = ok(&ground(&walk, &terrain, &["--scale", "0.01"], &bvh));
        assert!(
            text.contains("contacts")
                && text.contains("0 frames with a foot out of reach")
                && text.contains("0 contacts moved off a step's edge"),
            "{text}"
        );
        read.push(ikarus_formats::open(bvh.to_str().unwrap(), 1.0).unwrap());
    }
    let (low, high) = (&read[0], &read[1]);
    let (a, b) = (low.motion.as_ref().unwrap(), high.motion.as_ref().unwrap());
    assert_eq!(a.len(), b.len());
    let worst = largest_fk_gap((&low.skeleton, a), (&high.skeleton, b), |ma, mb| {
        // Every joint but the ground-projected root above the hips.
        ma.positions()
            .zip(mb.positions())
            .skip(1)
            .map(|(x, y)| (y - x - glam::DVec3::Y * 0.1).length())
            .fold(0.0, f64::max)
    });
    // The BVH text keeps six decimals of centimetres.
    assert!(worst < 1e-5, "{worst} m");
}

#[test]
fn bad_terrain_files_are_refused() {
    let Some(walk) = data_file(
        "bvh",
        "ground_bad_terrain",
        "bandainamco_ds1_walk_normal_002.bvh",
    ) else {
        return;
    };
    let out = temp_dir("ground_bad");
    for (body, expected) in [
        (
            r#"{"plane": {"point": [0, 0], "normal": [0, 1, 0]}}"#,
            "line 1",
        ),
        (
            r#"{"heightfield": {"origin": [0, 0], "cell": 0.1, "heights": [[0, 1], [0]]}}"#,
            "row 1",
        ),
        (
            r#"{"plane": {"point": [0, 0, 0], "normal": [0, -1, 0]}}"#,
            "normal point up",
        ),
        (r#"{"hill": 3}"#, "expected"),
    ] {
        let terrain = out.join("terrain.json");
        std::fs::write(&terrain, body).unwrap();
        let error = fails(&ground(&walk, &terrain, &[], &out.join("x.bvh")));
        assert!(
            error.contains("terrain.json") && error.contains(expected),
            "{body}: {error}"
        );
    }
}

/// On terraces 18 cm high and 30 cm deep each way (a heightfield of 2 cm cells, each step's
/// edge a 2 cm ramp), feet the walk plants across an edge are moved off it, and the report
/// says how many contacts and how far.
#[test]
fn the_report_counts_feet_moved_off_steps_edges() {
    let Some(walk) = data_file(
        "bvh",
        "ground_steps_edges",
        "bandainamco_ds1_walk_normal_002.bvh",
    ) else {
        return;
    };
    let out = temp_dir("ground_edges");
    let (cell, n) = (0.02, 300_i32);
    let rows: Vec<String> = (0..n)
        .map(|i| {
            let z = -3.0 + f64::from(i) * cell;
            let row: Vec<String> = (0..n)
                .map(|j| {
                    let x = -3.0 + f64::from(j) * cell;
                    format!("{:.2}", 0.18 * ((x / 0.3).floor() + (z / 0.3).floor()))
                })
                .collect();
            format!("[{}]", row.join(","))
        })
        .collect();
    let terrain = out.join("terraces.json");
    std::fs::write(
        &terrain,
        format!(
            r#"{{"heightfield": {{"origin": [-3, -3], "cell": {cell}, "heights": [{}]}}}}"#,
            rows.join(",")
        ),
    )
    .unwrap();
    let text = ok(&ground(
        &walk,
        &terrain,
        &["--scale", "0.01"],
        &out.join("g.bvh"),
    ));
    // "…, N contacts moved off a step's edge (up to X cm)"
    let tail = text
        .split(", ")
        .find(|part| part.contains("moved off a step's edge"))
        .unwrap_or_else(|| panic!("{text}"));
    let moved: usize = tail.split(' ').next().unwrap().parse().unwrap();
    let up_to: f64 = tail
        .split("up to ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(moved > 0 && up_to > 0.0 && up_to < 30.0, "{text}");
}
