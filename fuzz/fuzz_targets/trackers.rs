//! Fuzz target for tracker recordings (JSON and CSV) and the tracker solve behind them: the
//! readers never panic; a recording that reads has tracks of one length, and solving its
//! first frames onto the built-in humanoid never panics and never gives a non-finite pose.
#![no_main]

use ikarus_anim::retarget::Character;
use ikarus_anim::track::{TrackConfig, track};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_formats::trackers::{from_csv, from_json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for parsed in [from_json(&text, "fuzz"), from_csv(&text, "fuzz")] {
        let Ok(mut trackers) = parsed else { continue };
        let frames = trackers.len();
        assert!(trackers.tracks.iter().all(|t| t.samples.len() == frames));
        for t in &mut trackers.tracks {
            t.samples.truncate(30);
        }
        let skeleton = builtin_humanoid();
        let map = HumanoidMap::recognise(&skeleton);
        let character = Character {
            skeleton: &skeleton,
            map: &map,
        };
        if let Ok(tracked) = track(character, &trackers, &TrackConfig::default(), None) {
            assert!(tracked.motion.frames().iter().all(|p| p.is_finite()));
        }
    }
});
