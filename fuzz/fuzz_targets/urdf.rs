//! `cargo fuzz run urdf`: any text either parses into a consistent robot or returns an error
//! with a line; never a panic.
#![no_main]

use ikarus_formats::urdf::Urdf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Urdf::parse(text) {
        Ok(robot) => {
            let s = &robot.skeleton;
            assert_eq!(robot.joints.len(), s.len() - s.roots().count());
            // Every chain from a root to a link has a q interface that round-trips the rest pose.
            for tip in s.joints() {
                let root = s.path_to_root(tip).last().unwrap();
                let chain = robot.chain(s.name(root), s.name(tip)).unwrap();
                let mut q = vec![0.0; chain.dof()];
                chain.q_from_pose(s, &s.rest_pose(), &mut q);
                let mut pose = s.rest_pose();
                chain.set_q(s, &q, &mut pose).unwrap();
            }
        }
        Err(e) => assert!(e.line >= 1),
    }
});
