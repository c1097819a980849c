//! `ikarus track` end to end: trackers made from a walk's own bones (saved as JSON), solved
//! back onto the same skeleton from 6 points put the head, hands, hips and feet where the
//! trackers are in every frame of the written BVH; 3 points step; the JSON and a CSV of the
//! same trackers give the same motion; malformed files are refused naming file and line.

use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use std::fmt::Write as _;

use ikarus_core::{ModelPose, fk};

mod common;

use common::{data_file, fails, ok, temp_dir};

#[test]
fn six_points_put_the_bones_on_their_trackers() {
    let Some(walk) = data_file("bvh", "track_walk", "bandainamco_ds1_walk_normal_002.bvh") else {
        return;
    };
    let out = temp_dir("track");
    let trackers = out.join("walk.json");
    let bvh = out.join("six.bvh");
    let text = ok(&[
        "track",
        &walk,
        "--scale",
        "0.01",
        "--to",
        &walk,
        "--save-trackers",
        trackers.to_str().unwrap(),
        "--out",
        bvh.to_str().unwrap(),
    ]);
    assert!(
        text.contains("from 6 trackers") && text.contains("0 frames with a tracker held over"),
        "{text}"
    );
    let recording = ikarus_formats::trackers::read(&trackers).unwrap();
    // The avatar was read unscaled (centimetres) while the trackers are in metres: the
    // calibration's scale is the ratio.
    let written = ikarus_formats::open(bvh.to_str().unwrap(), 0.01).unwrap();
    let motion = written.motion.as_ref().unwrap();
    assert_eq!(motion.len(), recording.len());
    let map = HumanoidMap::recognise(&written.skeleton);
    let mut model = ModelPose::new(&written.skeleton);
    let mut worst = 0.0_f64;
    for (f, pose) in motion.frames().iter().enumerate().skip(1) {
        fk::forward_kinematics(&written.skeleton, pose, &mut model);
        for track in &recording.tracks {
            let j = map.joint(track.bone).unwrap();
            worst = worst.max(model.position(j).distance(track.samples[f].position));
        }
    }
    // Every tracked bone within 1 cm of its tracker (measured 6.8 mm at worst: the spine
    // between a 6-D hips and a 6-D head, bent by four shared groups, misses by millimetres).
    assert!(worst < 1e-2, "worst {worst} m");

    // The same trackers as CSV.
    let mut csv = String::from("time");
    for t in &recording.tracks {
        for c in ["x", "y", "z", "qx", "qy", "qz", "qw"] {
            let _ = write!(csv, ",{}.{c}", t.bone.vrm_name());
        }
    }
    csv.push('\n');
    for f in 0..recording.len() {
        #[allow(clippy::cast_precision_loss)] // frame numbers
        let _ = write!(csv, "{}", f as f64 / recording.fps);
        for t in &recording.tracks {
            for v in t.samples[f].to_row() {
                let _ = write!(csv, ",{v:?}");
            }
        }
        csv.push('\n');
    }
    std::fs::write(out.join("walk.csv"), csv).unwrap();
    let from_csv = out.join("csv.bvh");
    ok(&[
        "track",
        out.join("walk.csv").to_str().unwrap(),
        "--to",
        &walk,
        "--out",
        from_csv.to_str().unwrap(),
    ]);
    let a = ikarus_formats::open(bvh.to_str().unwrap(), 1.0).unwrap();
    let b = ikarus_formats::open(from_csv.to_str().unwrap(), 1.0).unwrap();
    let (ma, mb) = (a.motion.unwrap(), b.motion.unwrap());
    for (pa, pb) in ma.frames().iter().zip(mb.frames()) {
        for (ta, tb) in pa.transforms().iter().zip(pb.transforms()) {
            assert!(ta.translation.distance(tb.translation) < 1e-4);
            assert!(ta.rotation.angle_between(tb.rotation) < 1e-4);
        }
    }

    // 3 points: the feet step.
    let three = out.join("three.bvh");
    let text = ok(&[
        "track",
        trackers.to_str().unwrap(),
        "--to",
        &walk,
        "--points",
        "3",
        "--out",
        three.to_str().unwrap(),
    ]);
    assert!(!text.contains(" 0 steps"), "{text}");
    let head = map.joint(HumanoidBone::Head).unwrap();
    let t = ikarus_formats::open(three.to_str().unwrap(), 0.01).unwrap();
    let last = t.motion.as_ref().unwrap().frames().last().unwrap().clone();
    fk::forward_kinematics(&t.skeleton, &last, &mut model);
    let want = recording
        .track(HumanoidBone::Head)
        .unwrap()
        .samples
        .last()
        .unwrap()
        .position;
    let miss = model.position(head).distance(want);
    assert!(miss < 0.02, "the head {miss} m from its tracker");
}

#[test]
fn malformed_recordings_are_refused() {
    let out = temp_dir("track_bad");
    let x = out.join("x.bvh");
    for (name, content, more, expected) in [
        (
            "bad.json",
            "{\"fps\": 60,\n \"trackers\": {\"head\": [[0, 1.6]]}}",
            &[][..],
            "bad.json: line 2, column",
        ),
        (
            "bad.csv",
            "time,head.x\n0,1\n",
            &[],
            "bad.csv: line 1: no column `head.y`",
        ),
        // Head and hands but no hips for 4 points.
        (
            "three.json",
            r#"{"fps": 60, "trackers": {"head": [[0,1.6,0,0,0,0,1]], "leftHand": [[0.8,1.4,0,0,0,0,1]], "rightHand": [[-0.8,1.4,0,0,0,0,1]]}}"#,
            &["--points", "4"],
            "4-point tracking needs a `hips` tracker",
        ),
    ] {
        let file = out.join(name);
        std::fs::write(&file, content).unwrap();
        let mut args = vec!["track", file.to_str().unwrap(), "--to", "builtin:humanoid"];
        args.extend_from_slice(more);
        args.extend(["--out", x.to_str().unwrap()]);
        let text = fails(&args);
        assert!(text.contains(expected), "{text}");
    }
}
