//! URDF loading: every file in ../shared/data/urdf loads; chains, `q` and forward kinematics
//! agree with an independent product of the URDF joints' own transforms; errors name the line.

#![allow(clippy::disallowed_methods)] // tests read the shared data files

use std::f64::consts::{PI, TAU};

use glam::{DAffine3, DQuat, DVec3};
use ikarus_core::{JointLimit, ModelPose, fk};
use ikarus_formats::urdf::{Urdf, UrdfError, UrdfJointKind};

use ikarus_testdata::Rng;

fn load(name: &str) -> Option<Urdf> {
    let dir = ikarus_testdata::require("urdf", name)?;
    let text = std::fs::read_to_string(dir.join(name)).expect("readable");
    Some(Urdf::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// `base_from_tip` as the product of the URDF joints from `base` to `tip`, each
/// `origin · motion(q)`: no skeleton, no offsets, no limits involved.
fn urdf_product(robot: &Urdf, base: &str, tip: &str, q: &[f64]) -> DAffine3 {
    let mut links = vec![tip.to_owned()];
    while links.last().map(String::as_str) != Some(base) {
        let child = links.last().unwrap();
        let joint = robot.joints.iter().find(|j| &j.child == child).unwrap();
        links.push(joint.parent.clone());
    }
    links.reverse();
    let mut qi = q.iter();
    let mut t = DAffine3::IDENTITY;
    for child in &links[1..] {
        let joint = robot.joints.iter().find(|j| &j.child == child).unwrap();
        let origin =
            DAffine3::from_rotation_translation(joint.origin.rotation, joint.origin.translation);
        let motion = match joint.kind {
            UrdfJointKind::Revolute | UrdfJointKind::Continuous => {
                DAffine3::from_quat(DQuat::from_axis_angle(joint.axis, *qi.next().unwrap()))
            }
            UrdfJointKind::Prismatic => {
                DAffine3::from_translation(joint.axis * *qi.next().unwrap())
            }
            _ => DAffine3::IDENTITY,
        };
        t = t * origin * motion;
    }
    assert!(qi.next().is_none());
    t
}

fn random_q(lower: &[f64], upper: &[f64], rng: &mut Rng) -> Vec<f64> {
    lower
        .iter()
        .zip(upper)
        .map(|(&l, &u)| {
            let (l, u) = if l.is_finite() { (l, u) } else { (-PI, PI) };
            l + (u - l) * rng.unit()
        })
        .collect()
}

#[test]
fn every_shared_urdf_loads_with_one_joint_per_link() {
    let files = ikarus_testdata::files("urdf", "urdf", "every_shared_urdf_loads");
    if ikarus_testdata::require("urdf", "every_shared_urdf_loads").is_some() {
        assert!(files.len() >= 9, "{} URDF files", files.len());
    }
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let robot = Urdf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let links = without_comments(&text).matches("<link ").count();
        assert_eq!(robot.skeleton.len(), links, "{}", path.display());
        assert_eq!(
            robot.joints.len(),
            robot.skeleton.len() - robot.skeleton.roots().count()
        );
        // The rest pose is q = 0 (or the middle of a centred wide range); it violates exactly
        // the revolute ranges that exclude 0, by their distance from 0.
        let expected = robot
            .joints
            .iter()
            .filter(|j| j.kind == UrdfJointKind::Revolute && j.offset == 0.0)
            .map(|j| j.lower.max(0.0) - j.upper.min(0.0))
            .fold(0.0, f64::max);
        let found = robot
            .skeleton
            .limit_violation(&robot.skeleton.rest_pose())
            .map_or(0.0, |(_, v)| v);
        assert!(
            (found - expected).abs() < 1e-9,
            "{}: {found} vs {expected}",
            path.display()
        );
    }
}

/// `text` with `<!-- ... -->` removed.
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("-->")
            .map_or("", |end| &rest[start + end + 3..]);
    }
    out.push_str(rest);
    out
}

/// The TRAC-IK benchmark chains, with their degrees of freedom.
const CHAINS: [(&str, &str, &str, usize); 5] = [
    ("panda.urdf", "panda_link0", "panda_link8", 7),
    ("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee", 7),
    ("iiwa14_no_collision.urdf", "base", "iiwa_link_ee", 7),
    ("ur5_robot.urdf", "base_link", "ee_link", 6),
    ("universalUR5e.urdf", "base_link", "tool0", 6),
];

#[test]
fn chain_fk_matches_the_product_of_urdf_joints_and_q_round_trips() {
    let mut rng = Rng(7);
    for (file, base, tip, dof) in CHAINS {
        let Some(robot) = load(file) else { return };
        let chain = robot.chain(base, tip).unwrap();
        assert_eq!(chain.dof(), dof, "{file}");
        let s = &robot.skeleton;
        let mut pose = s.rest_pose();
        let mut model = ModelPose::new(s);
        let mut back = vec![0.0; dof];
        for _ in 0..500 {
            let q = random_q(chain.lower(), chain.upper(), &mut rng);
            chain.set_q(s, &q, &mut pose).unwrap();
            assert_eq!(s.limit_violation(&pose), None, "{file} {q:?}");
            fk::forward_kinematics(s, &pose, &mut model);
            let ours = chain.tip_in_base(&model);
            let reference = urdf_product(&robot, base, tip, &q);
            let dp = (ours.translation - reference.translation).length();
            let dr = (ours.matrix3 - reference.matrix3)
                .abs()
                .to_cols_array()
                .into_iter()
                .fold(0.0, f64::max);
            assert!(dp < 1e-12 && dr < 1e-12, "{file}: {dp:e} m {dr:e}");
            chain.q_from_pose(s, &pose, &mut back);
            for (a, b) in q.iter().zip(&back) {
                // Continuous or full-turn joints come back modulo a turn.
                let d = (a - b).rem_euclid(TAU);
                assert!(d.min(TAU - d) < 1e-9, "{file}: {a} vs {b}");
            }
            assert!(chain.within_limits(&back, 1e-9));
        }
    }
}

#[test]
fn the_panda_chain_has_the_published_limits_and_the_gripper_is_prismatic() {
    let Some(robot) = load("panda.urdf") else {
        return;
    };
    let chain = robot.chain("panda_link0", "panda_link8").unwrap();
    assert_eq!(
        chain.names().collect::<Vec<_>>(),
        (1..=7)
            .map(|i| format!("panda_joint{i}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(chain.lower()[3], -3.0718);
    assert_eq!(chain.upper()[3], -0.0698);
    assert_eq!(chain.middle()[3], 0.5 * (-3.0718 - 0.0698));
    // The finger slides 0..0.04 m along its axis through q.
    let fingers = robot.chain("panda_hand", "panda_leftfinger").unwrap();
    assert_eq!(fingers.dof(), 1);
    let s = &robot.skeleton;
    let mut pose = s.rest_pose();
    fingers.set_q(s, &[0.03], &mut pose).unwrap();
    let mut model = ModelPose::new(s);
    fk::forward_kinematics(s, &pose, &mut model);
    let moved = fingers.tip_in_base(&model).translation;
    let reference = urdf_product(&robot, "panda_hand", "panda_leftfinger", &[0.03]).translation;
    assert!((moved - reference).length() < 1e-15);
    let mut q = [0.0];
    fingers.q_from_pose(s, &pose, &mut q);
    assert!((q[0] - 0.03).abs() < 1e-15);
    let finger = s.joint("panda_leftfinger").unwrap();
    assert_eq!(*s.limit(finger), JointLimit::Locked);
}

const TWO_LINKS: &str = r#"<?xml version="1.0"?>
<robot name="r">
  <link name="a"/>
  <link name="b"/>
  <joint name="j" type="revolute">
    <origin xyz="0 0 0.5" rpy="0 0 1.5707963267948966"/>
    <parent link="a"/>
    <child link="b"/>
    <axis xyz="0 0 2"/>
    <limit lower="-4.0" upper="1.0" effort="1" velocity="1"/>
  </joint>
</robot>"#;

#[test]
fn a_wide_range_is_centred_and_q_is_still_the_urdf_angle() {
    let robot = Urdf::parse(TWO_LINKS).unwrap();
    let joint = &robot.joints[0];
    assert_eq!(joint.axis, DVec3::Z);
    assert_eq!(joint.offset, -1.5);
    let s = &robot.skeleton;
    let b = s.joint("b").unwrap();
    let JointLimit::Hinge(h) = *s.limit(b) else {
        panic!("hinge expected")
    };
    assert_eq!((h.min, h.max), (-2.5, 2.5));
    let chain = robot.chain("a", "b").unwrap();
    let mut pose = s.rest_pose();
    let mut model = ModelPose::new(s);
    let mut back = [0.0];
    for q in [-4.0, -3.5, -1.0, 0.0, 1.0] {
        chain.set_q(s, &[q], &mut pose).unwrap();
        assert_eq!(s.limit_violation(&pose), None);
        chain.q_from_pose(s, &pose, &mut back);
        assert!((back[0] - q).abs() < 1e-12, "{q} -> {}", back[0]);
        fk::forward_kinematics(s, &pose, &mut model);
        let reference = urdf_product(&robot, "a", "b", &[q]);
        assert!(chain.tip_in_base(&model).abs_diff_eq(reference, 1e-14));
    }
    // The rest pose is q = -1.5, the middle of the range.
    chain.q_from_pose(s, &s.rest_pose(), &mut back);
    assert_eq!(back[0], -1.5);
    assert!(chain.set_q(s, &[f64::NAN], &mut pose).is_err());
    assert!(chain.set_q(s, &[0.0, 1.0], &mut pose).is_err());
    assert!(robot.chain("b", "a").is_err());
    assert!(robot.chain("a", "nowhere").is_err());
}

fn error_of(text: &str) -> UrdfError {
    Urdf::parse(text).expect_err("must be rejected")
}

#[test]
fn malformed_urdf_reports_line_column_and_what_was_expected() {
    let e = error_of("<robot name=\"r\">\n  <link name=\"a\">\n</robot>");
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("malformed XML"), "{e}");

    let e = error_of(&TWO_LINKS.replace("<child link=\"b\"/>", "<child link=\"c\"/>"));
    assert_eq!((e.line, e.column), (5, 3), "{e}");
    assert!(e.message.contains("link `c`"), "{e}");

    let e = error_of(&TWO_LINKS.replace("type=\"revolute\"", "type=\"hinge\""));
    assert_eq!(e.line, 5, "{e}");
    assert!(e.message.contains("expected one of"), "{e}");

    let e = error_of(&TWO_LINKS.replace("lower=\"-4.0\"", "lower=\"2.0\""));
    assert_eq!(e.line, 5, "{e}");
    assert!(e.message.contains("lower <= upper"), "{e}");

    let e = error_of(&TWO_LINKS.replace("xyz=\"0 0 2\"", "xyz=\"0 0 0\""));
    assert!(e.message.contains("zero length"), "{e}");

    let e = error_of(&TWO_LINKS.replace("lower=\"-4.0\"", "lower=\"minus four\""));
    assert_eq!(e.line, 5, "{e}");

    let e = error_of(&TWO_LINKS.replace("<origin xyz=\"0 0 0.5\"", "<origin xyz=\"0 0\""));
    assert_eq!(e.line, 5, "{e}");

    let e = error_of("<model/>");
    assert!(e.message.contains("<robot>"), "{e}");

    // A second parent for `b`.
    let twice = TWO_LINKS.replace(
        "</robot>",
        "<joint name=\"k\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n</robot>",
    );
    let e = error_of(&twice);
    assert!(e.message.contains("one parent"), "{e}");

    // A cycle: a is b's parent and b is a's.
    let cycle = TWO_LINKS.replace(
        "</robot>",
        "<joint name=\"k\" type=\"fixed\"><parent link=\"b\"/><child link=\"a\"/></joint>\n</robot>",
    );
    assert!(Urdf::parse(&cycle).is_err());
}

/// The fuzz target's invariant on every prefix and many byte-mutations of a small robot:
/// no panic, and whatever parses has a consistent skeleton.
#[test]
fn truncated_and_mutated_urdf_never_panics() {
    let text = TWO_LINKS.replace(
        "</robot>",
        "<link name=\"c\"/><joint name=\"p\" type=\"prismatic\"><parent link=\"b\"/><child link=\"c\"/><axis xyz=\"1 0 0\"/><limit lower=\"0\" upper=\"0.1\" effort=\"1\" velocity=\"1\"/></joint>\n</robot>",
    );
    let bytes = text.as_bytes();
    let check = |candidate: &[u8]| {
        let Ok(s) = std::str::from_utf8(candidate) else {
            return;
        };
        if let Ok(robot) = Urdf::parse(s) {
            assert_eq!(
                robot.joints.len(),
                robot.skeleton.len() - robot.skeleton.roots().count()
            );
        }
    };
    for end in 0..=bytes.len() {
        check(&bytes[..end]);
    }
    let mut rng = Rng(3);
    let alphabet = b"<>/=\" 0-1e.xyzabc";
    for _ in 0..3000 {
        let mut mutated = bytes.to_vec();
        for _ in 0..=((rng.unit() * 3.0) as usize) {
            let at = (rng.unit() * mutated.len() as f64) as usize;
            mutated[at] = alphabet[(rng.unit() * alphabet.len() as f64) as usize];
        }
        check(&mutated);
    }
}
