//! Fuzz target for the posture model reader (`PostureModel::from_json`): never panic; what
//! parses writes back to the same model, and on the built-in humanoid (when the joints fit)
//! decodes and encodes a posture without a NaN.
#![no_main]

use ikarus_core::humanoid::builtin_humanoid;
use ikarus_solve::example_based::PostureModel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(model) = PostureModel::from_json(&text) else {
        return;
    };
    let again = PostureModel::from_json(&model.to_json()).expect("a written model parses");
    assert_eq!(again, model);
    let skeleton = builtin_humanoid();
    if let Ok(joints) = model.bind(&skeleton) {
        let mut x = vec![0.0; model.len()];
        let z = vec![0.5; model.dims()];
        model.posture(&z, &mut x);
        let mut pose = skeleton.rest_pose();
        if x.iter().all(|v| v.is_finite() && v.abs() < 1e6) {
            model.decode(&x, &joints, &mut pose);
            assert!(pose.is_finite());
            model.encode(&pose, &joints, &mut x);
            assert!(x.iter().all(|v| v.is_finite()));
        }
    }
});
