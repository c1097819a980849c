//! BVH against the real files in ../shared/data/bvh, and hand-written malformed input.

use std::fmt::Write as _;

use ikarus_core::{ModelPose, fk};
use ikarus_formats::bvh::{Bvh, BvhError, BvhReadOptions};

fn world_positions(bvh: &Bvh, frame: usize) -> Vec<ikarus_core::glam::DVec3> {
    let mut pose = bvh.skeleton.rest_pose();
    assert!(bvh.frame_pose(frame, &mut pose));
    let mut model = ModelPose::new(&bvh.skeleton);
    fk::forward_kinematics(&bvh.skeleton, &pose, &mut model);
    model.positions().collect()
}

/// Size of the skeleton: the largest joint distance from the origin at rest and frame 0.
fn size(bvh: &Bvh) -> f64 {
    world_positions(bvh, 0)
        .iter()
        .map(|p| p.length())
        .fold(1e-9, f64::max)
}

#[test]
fn round_trip_reproduces_every_shared_file() {
    let files = ikarus_testdata::files("bvh", "bvh", "round_trip_reproduces_every_shared_file");
    if ikarus_testdata::data_dir().is_some() {
        assert_eq!(files.len(), 10, "expected the ten shared BVH files");
    }
    for path in files {
        let original = Bvh::read(&path, &BvhReadOptions::default()).unwrap();
        assert!(original.frame_count > 0, "{}", path.display());
        // Through quaternions and back to each joint's Euler order.
        let motion = original.to_motion().unwrap();
        let written = Bvh::from_motion(&original.skeleton, &motion, original.layout.clone())
            .unwrap()
            .to_bvh_string();
        let reread = Bvh::parse(written.as_bytes(), &BvhReadOptions::default())
            .unwrap_or_else(|e| panic!("{}: re-reading failed: {e}", path.display()));
        assert_eq!(
            reread.skeleton.names(),
            original.skeleton.names(),
            "{}",
            path.display()
        );
        assert_eq!(reread.layout, original.layout, "{}", path.display());
        assert_eq!(reread.frame_count, original.frame_count);
        assert_eq!(reread.frame_time, original.frame_time);
        for j in original.skeleton.joints() {
            assert_eq!(
                reread.skeleton.rest(j).translation,
                original.skeleton.rest(j).translation,
                "{}: offset of {}",
                path.display(),
                original.skeleton.name(j)
            );
        }
        let tolerance = 1e-6 * size(&original);
        let mut worst: f64 = 0.0;
        for frame in 0..original.frame_count {
            let a = world_positions(&original, frame);
            let b = world_positions(&reread, frame);
            for (pa, pb) in a.iter().zip(&b) {
                worst = worst.max((*pa - *pb).length());
            }
        }
        assert!(
            worst <= tolerance,
            "{}: world positions moved by {worst} (tolerance {tolerance})",
            path.display()
        );
    }
}

#[test]
fn shared_files_match_their_documented_headers() {
    // (file, joints incl. End Sites, channels per frame, frames) from ../shared/data/SOURCES.md.
    let expected = [
        ("bandainamco_ds1_run_normal_001.bvh", 22 + 5, 22 * 6, 24),
        ("bandainamco_ds1_walk_normal_002.bvh", 22 + 5, 22 * 6, 31),
        ("bvhmatlab_milad_all6ch_xyz_crlf.bvh", 59 + 13, 59 * 6, 422),
        ("cmu_01_01_jump_cgspeed.bvh", 31 + 7, 6 + 30 * 3, 2752),
        ("cmu_02_01_walk_cgspeed_crlf.bvh", 31 + 7, 6 + 30 * 3, 344),
        ("mass_hik_run_crlf.bvh", 37 + 21, 6 + 36 * 3, 66),
        ("mixamo_rig_test_freebvh.bvh", 55 + 15, 6 + 54 * 3, 69),
        ("mocapbank_zxy_crlf.bvh", 19 + 5, 6 + 18 * 3, 455),
        ("pfnn_hierarchy_30fps_crlf.bvh", 31 + 7, 6 + 30 * 3, 60),
        (
            "pymo_AV_8Walk_Meredith_HVHA_Rep1.bvh",
            23 + 7,
            6 + 22 * 3,
            1064,
        ),
    ];
    let Some(dir) = ikarus_testdata::require("bvh", "shared_files_match_their_documented_headers")
    else {
        return;
    };
    for (file, joints, channels, frames) in expected {
        let bvh = Bvh::read(&dir.join(file), &BvhReadOptions::default()).unwrap();
        assert_eq!(bvh.skeleton.len(), joints, "{file}");
        assert_eq!(bvh.layout.channel_count(), channels, "{file}");
        assert_eq!(bvh.frame_count, frames, "{file}");
        assert_eq!(bvh.values.len(), frames * channels, "{file}");
    }
}

#[test]
fn unit_scaling_scales_lengths_not_angles() {
    let test = "unit_scaling_scales_lengths_not_angles";
    let Some(path) = ikarus_testdata::require_file("bvh", "mocapbank_zxy_crlf.bvh", test) else {
        return;
    };
    let cm = Bvh::read(&path, &BvhReadOptions::default()).unwrap();
    let m = Bvh::read(&path, &BvhReadOptions { scale: 0.01 }).unwrap();
    for frame in [0, 100, 454] {
        for (a, b) in world_positions(&cm, frame)
            .iter()
            .zip(world_positions(&m, frame))
        {
            assert!((*a * 0.01 - b).length() < 1e-12);
        }
    }
}

fn parse(text: &str) -> Result<Bvh, BvhError> {
    Bvh::parse(text.as_bytes(), &BvhReadOptions::default())
}

const SMALL: &str = "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\tJOINT Spine\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 5 0\n\t\t}\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n";

#[test]
fn accepts_layout_variations() {
    let values = "1 2 3 0 0 90 0 0 0\n0 0 0 0 0 0 0 0 0\n";
    let bvh = parse(&format!("{SMALL}{values}")).unwrap();
    assert_eq!(bvh.skeleton.names(), ["Hips", "Spine", "Spine_End"]);
    // Wrapped rows, CRLF, tabs, scientific notation, lowercase keywords.
    let variant = format!("{SMALL}1 2 3\r\n0 0 9.0e1\t0 0 0\n0 0 0 0 0 0 0 0 0")
        .replace('\n', "\r\n")
        .replace("Frame Time:", "frame time:");
    let other = parse(&variant).unwrap();
    assert_eq!(other.values, bvh.values);
    // Root translated to (1, 2, 3), rotated 90° about Y: Spine end at (1, 17, 3).
    let p = world_positions(&bvh, 0);
    assert!(
        (p[2] - ikarus_core::glam::DVec3::new(1.0, 17.0, 3.0)).length() < 1e-12,
        "{p:?}"
    );
    // Zero-channel joints and several roots.
    let forest = "HIERARCHY\nROOT A\n{\nOFFSET 1 0 0\nCHANNELS 0\n}\nROOT B\n{\nOFFSET 0 1 0\nCHANNELS 1 Yrotation\n}\nMOTION\nFrames: 1\nFrame Time: 1\n45\n";
    let bvh = parse(forest).unwrap();
    assert_eq!(bvh.skeleton.roots().count(), 2);
}

#[test]
#[allow(clippy::too_many_lines)] // a table of cases
fn malformed_input_names_line_and_column() {
    let cases: Vec<(String, usize, usize, &str)> = vec![
        (
            SMALL.replace("HIERARCHY", "HIERARCHX"),
            1,
            1,
            "expected HIERARCHY",
        ),
        (
            SMALL.replace("CHANNELS 3 Z", "CHANNELS 4 Z"),
            10,
            3,
            "channel name",
        ),
        (
            SMALL.replace("CHANNELS 3", "CHANNELS 7"),
            9,
            12,
            "channel count",
        ),
        (
            SMALL.replace("OFFSET 0 10 0", "OFFSET 0 ten 0"),
            8,
            12,
            "OFFSET component",
        ),
        (
            format!("{SMALL}1 2 3 0 0 90 0 0 0\n0 0 0 0 x 0 0 0 0\n"),
            20,
            9,
            "frame 1, channel 4",
        ),
        (
            format!("{SMALL}1 2 3 0 0 90 0 0 0\n0 0 0 0 0 0 0 0\n"),
            21,
            1,
            "truncated",
        ),
        (
            format!("{SMALL}1 2 3 0 0 NaN 0 0 0\n0 0 0 0 0 0 0 0 0\n"),
            19,
            11,
            "frame 0, channel 5",
        ),
        (
            format!("{SMALL}1 2 3 0 0 1e999 0 0 0\n0 0 0 0 0 0 0 0 0\n"),
            19,
            11,
            "finite",
        ),
        (
            format!("{SMALL}1 2 3 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 0 7\n"),
            20,
            19,
            "end of file",
        ),
        (
            SMALL.replace("Frames: 2", "Frames: 99999999999999"),
            17,
            9,
            "remaining bytes",
        ),
        (
            SMALL.replace("Frames: 2", "Frames: -2"),
            17,
            9,
            "whole frame count",
        ),
        (
            SMALL.replace("Frame Time: 0.5", "Frame Time: 0"),
            18,
            13,
            "positive frame time",
        ),
        (
            SMALL.replace("\t}\n}\nMOTION", "\t}\nMOTION"),
            15,
            1,
            "expected } to close joint `Hips`",
        ),
        (
            SMALL.replace("JOINT Spine", "JOINT Hips"),
            6,
            8,
            "used twice",
        ),
        (
            SMALL.replace(
                "Xrotation Yrotation\n\tJOINT",
                "Xrotation Xrotation\n\tJOINT",
            ),
            5,
            63,
            "repeated",
        ),
        (
            "HIERARCHY\nROOT A\n{\nOFFSET 0 0\n".into(),
            5,
            1,
            "OFFSET component",
        ),
        (String::new(), 1, 1, "expected HIERARCHY"),
    ];
    let mut wrong = Vec::new();
    for (text, line, column, needle) in cases {
        match parse(&text) {
            Err(BvhError::Parse {
                line: l,
                column: c,
                message,
            }) if message.contains(needle) && (l, c) == (line, column) => {}
            other => wrong.push(format!("{needle} (want {line}:{column}): got {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn deep_nesting_and_huge_joint_counts_fail_cleanly() {
    let depth = 1_000_000;
    let mut text = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\n");
    for i in 0..depth {
        write!(text, "JOINT j{i}\n{{\nOFFSET 0 1 0\n").unwrap();
    }
    let err = parse(&text).unwrap_err();
    assert!(err.to_string().contains("more than 65536 joints"), "{err}");
    // Deep but within the cap: parses without recursion.
    let mut text = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\n");
    for i in 0..60_000 {
        write!(text, "JOINT j{i}\n{{\nOFFSET 0 1 0\n").unwrap();
    }
    text.push_str(&"}\n".repeat(60_001));
    text.push_str("MOTION\nFrames: 0\nFrame Time: 1\n");
    let bvh = parse(&text).unwrap();
    assert_eq!(bvh.skeleton.len(), 60_001);
}

/// BVH has no quoting: names with spaces, tabs or braces are written as one token,
/// unique (a token name already taken keeps its joint), and reported; the written file's
/// `JOINT` lines have exactly one token after the keyword and read back with the same
/// structure, offsets and frames.
#[test]
fn names_that_are_not_tokens_are_written_as_unique_tokens() {
    use ikarus_core::{JointLimit, Motion, RawJoint, SkeletonBuilder, Transform};
    use ikarus_formats::bvh::{BvhLayout, renamed_joints, token_names};

    let names = [
        "Hips",
        "Left leg",
        "Left_leg",
        "Left {knee}",
        "Right  foot",
        "a\tb",
        "a_b",
    ];
    let mut builder = SkeletonBuilder::new();
    for (i, name) in names.iter().enumerate() {
        builder.push(RawJoint {
            name: (*name).to_owned(),
            parent: (i > 0).then(|| names[usize::from(i == 2)].to_owned()),
            rest: Transform::from_translation(ikarus_core::glam::DVec3::new(
                0.0,
                0.1 * i as f64,
                0.0,
            )),
            limit: JointLimit::Free,
        });
    }
    let skeleton = builder.build().expect("distinct names");
    let written = token_names(&skeleton);
    assert_eq!(
        written,
        [
            "Hips",
            "Left_leg_2",
            "Left_leg",
            "Left__knee_",
            "Right__foot",
            "a_b_2",
            "a_b"
        ]
    );
    assert_eq!(
        renamed_joints(&skeleton),
        [
            ("Left leg".to_owned(), "Left_leg_2".to_owned()),
            ("Left {knee}".to_owned(), "Left__knee_".to_owned()),
            ("Right  foot".to_owned(), "Right__foot".to_owned()),
            ("a\tb".to_owned(), "a_b_2".to_owned()),
        ]
    );

    let mut motion = Motion::for_skeleton(&skeleton, 1.0 / 30.0).unwrap();
    let mut pose = skeleton.rest_pose();
    pose.transforms_mut()[3].rotation = ikarus_core::glam::DQuat::from_rotation_x(0.4);
    motion.push(pose).unwrap();
    let layout = BvhLayout::for_motion(&skeleton, Some(&motion));
    let text = Bvh::from_motion(&skeleton, &motion, layout)
        .unwrap()
        .to_bvh_string();
    let joint_lines: Vec<Vec<&str>> = text
        .lines()
        .map(str::split_whitespace)
        .map(Iterator::collect)
        .filter(|t: &Vec<&str>| matches!(t.first(), Some(&"ROOT" | &"JOINT")))
        .collect();
    assert_eq!(joint_lines.len(), names.len());
    assert!(joint_lines.iter().all(|t| t.len() == 2), "{joint_lines:?}");
    let back = Bvh::parse(text.as_bytes(), &BvhReadOptions::default()).unwrap();
    let back_names: Vec<&str> = back
        .skeleton
        .joints()
        .map(|j| back.skeleton.name(j))
        .collect();
    assert_eq!(back_names, written);
    for j in skeleton.joints() {
        assert_eq!(back.skeleton.parent(j), skeleton.parent(j));
        assert_eq!(
            back.skeleton.rest(j).translation,
            skeleton.rest(j).translation
        );
    }
    let expected = world_positions(&back, 0);
    let mut model = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &motion.frames()[0], &mut model);
    for (a, b) in model.positions().zip(&expected) {
        assert!((a - *b).length() < 1e-12, "{a} vs {b}");
    }
}

/// A skeleton with several roots (an MMD model's IK targets beside its centre bone) is written
/// with one channel-less `ROOT` above them: exactly one `ROOT` line, and read back the same
/// joints under it, at the same places in every frame.
#[test]
fn several_roots_are_written_under_one_shared_root() {
    use ikarus_core::{JointLimit, Motion, RawJoint, SkeletonBuilder, Transform};
    use ikarus_formats::bvh::{BvhLayout, shared_root};

    let joints = [
        ("center", None),
        ("upper", Some("center")),
        ("root", None),
        ("ik", None),
    ];
    let mut builder = SkeletonBuilder::new();
    for (i, (name, parent)) in joints.iter().enumerate() {
        builder.push(RawJoint {
            name: (*name).to_owned(),
            parent: parent.map(str::to_owned),
            rest: Transform::from_translation(ikarus_core::glam::DVec3::new(
                0.1 * i as f64,
                1.0,
                0.0,
            )),
            limit: JointLimit::Free,
        });
    }
    let skeleton = builder.build().expect("a forest of three trees");
    // `root` is taken by a joint: the shared root is `root_2`.
    assert_eq!(shared_root(&skeleton).as_deref(), Some("root_2"));
    let mut motion = Motion::for_skeleton(&skeleton, 0.1).unwrap();
    for k in 0..3 {
        let mut pose = skeleton.rest_pose();
        pose.transforms_mut()[0].translation.x += 0.05 * f64::from(k);
        pose.transforms_mut()[1].rotation =
            ikarus_core::glam::DQuat::from_rotation_z(0.3 * f64::from(k));
        pose.transforms_mut()[3].translation.z = -0.2 * f64::from(k);
        motion.push(pose).unwrap();
    }
    let text = Bvh::from_motion(
        &skeleton,
        &motion,
        BvhLayout::for_motion(&skeleton, Some(&motion)),
    )
    .unwrap()
    .to_bvh_string();
    let roots = text
        .lines()
        .filter(|l| l.trim_start().starts_with("ROOT"))
        .count();
    assert_eq!(roots, 1, "{text}");
    let back = Bvh::parse(text.as_bytes(), &BvhReadOptions::default()).unwrap();
    let names: Vec<&str> = back
        .skeleton
        .joints()
        .map(|j| back.skeleton.name(j))
        .collect();
    assert_eq!(names, ["root_2", "center", "upper", "root", "ik"]);
    let shared = back.skeleton.joint("root_2").unwrap();
    for name in ["center", "root", "ik"] {
        assert_eq!(
            back.skeleton.parent(back.skeleton.joint(name).unwrap()),
            Some(shared)
        );
    }
    let mut model = ModelPose::new(&skeleton);
    for (k, frame) in motion.frames().iter().enumerate() {
        fk::forward_kinematics(&skeleton, frame, &mut model);
        let read = world_positions(&back, k);
        assert!(
            read[0].length() < 1e-15,
            "the shared root stays at the origin"
        );
        for (a, b) in model.positions().zip(&read[1..]) {
            assert!((a - *b).length() < 1e-12, "frame {k}: {a} vs {b}");
        }
    }
}
