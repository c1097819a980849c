"""learn, PostureModel and the example-based solver against ikarus_anim::posture /
ikarus_solve::solve on the same inputs (the calls `ikarus learn` and `ikarus solve` make)."""

import json
import pickle

import numpy as np
import pytest

import ikarus


@pytest.fixture(scope="module")
def carried(posture_ref):
    # Two walks of other skeletons carried onto the built-in humanoid, every 3rd frame.
    return ikarus.learn([posture_ref["walk"], posture_ref["pfnn"]], skeleton="builtin:humanoid", dims=12, every=3)


def test_learn_bit_equal(posture_ref, carried):
    assert carried.to_json() == posture_ref["carried_model"]
    # On the motion's own skeleton (the default), from objects rather than a path.
    walk = ikarus.read(posture_ref["walk"])
    own = ikarus.learn([walk], dims=8, every=2)
    assert own.to_json() == posture_ref["own_model"]
    assert ikarus.learn([posture_ref["walk"]], skeleton=walk[0], dims=8, every=2) == own


def test_model_properties_are_the_pca(posture_ref):
    # Independent check: the model's variances are the top eigenvalues of the covariance of
    # the rotation vectors about the model's means, computed here with numpy.
    skeleton, motion = ikarus.read(posture_ref["walk"])
    model = ikarus.learn([(skeleton, motion)], dims=8, every=2)
    assert model.dims == 8 and len(model.variances) == 8
    assert model.frames == len(range(0, len(motion), 2))
    rotations = motion.rotations[::2][:, [skeleton.joint(j) for j in model.joints]]
    mean = model.mean_rotations

    def conj_mul(a, b):  # conj(a) * b, xyzw
        av, aw = -a[..., :3], a[..., 3:]
        bv, bw = b[..., :3], b[..., 3:]
        v = aw * bv + bw * av + np.cross(av, bv)
        w = aw * bw - np.sum(av * bv, axis=-1, keepdims=True)
        return np.concatenate([v, w], axis=-1)

    rel = conj_mul(np.broadcast_to(mean, rotations.shape), rotations)
    rel *= np.where(rel[..., 3:] < 0, -1.0, 1.0)
    s = np.linalg.norm(rel[..., :3], axis=-1, keepdims=True)
    angle = 2 * np.arctan2(s, rel[..., 3:])
    vec = np.where(s > 1e-300, rel[..., :3] / np.maximum(s, 1e-300) * angle, 0.0)
    data = vec.reshape(len(vec), -1)
    data = data - data.mean(axis=0)
    eig = np.sort(np.linalg.eigvalsh(data.T @ data / len(data)))[::-1]
    np.testing.assert_allclose(model.variances, eig[:8], rtol=1e-6, atol=1e-12)


def test_model_files_and_pickle(carried, tmp_path):
    path = tmp_path / "model.json"
    carried.save(str(path))
    assert json.loads(path.read_text())  # the JSON `ikarus learn` writes
    loaded = ikarus.PostureModel.load(str(path))
    assert loaded == carried and loaded.to_json() == carried.to_json()
    assert ikarus.PostureModel.from_json(carried.to_json()) == carried
    again = pickle.loads(pickle.dumps(carried))
    assert again == carried
    np.testing.assert_array_equal(again.variances, carried.variances)
    assert carried.joints and "leftHand" in carried.joints and "hips" not in carried.joints


def test_example_solve_bit_equal(posture_ref, carried, tmp_path):
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    goal = [0.35, 0.95, 0.12]
    effectors = [{"joint": "leftHand", "position": goal}]
    expected = posture_ref["example_report"]
    path = tmp_path / "model.json"
    carried.save(str(path))
    for model in (carried, str(path)):
        pose, report = ikarus.solve(humanoid, effectors, solver={"kind": "example", "model": model})
        assert report.status == expected["status"]
        assert report.position_error == expected["position_error"]
        assert report.iterations == expected["iterations"]
        np.testing.assert_array_equal(pose.rotations, np.array(posture_ref["example_rotations"]))
    # Independent check: the residual is FK's distance to the goal.
    positions, _ = ikarus.fk(humanoid, pose)
    assert np.linalg.norm(positions[humanoid.joint("leftHand")] - goal) == pytest.approx(report.position_error, abs=1e-12)
    # Keyword form, and the shipped model by name.
    a, _ = ikarus.solve(humanoid, effectors, solver="example", model=carried)
    np.testing.assert_array_equal(a.rotations, pose.rotations)
    _, builtin = ikarus.solve(humanoid, effectors, solver={"kind": "example", "model": "builtin:humanoid"})
    assert builtin.solver == "example" and builtin.status != "invalid_input"


def test_learn_and_model_errors(posture_ref, data_dir, tmp_path):
    with pytest.raises(ValueError, match=r"builtin:humanoid: has no motion frames"):
        ikarus.learn(["builtin:humanoid"])
    with pytest.raises(ValueError, match=r"dims: .*at least 1"):
        ikarus.learn([posture_ref["walk"]], dims=0)
    with pytest.raises(ValueError, match=r"every: .*at least 1"):
        ikarus.learn([posture_ref["walk"]], every=0)
    with pytest.raises(ValueError, match=r"motions: give at least one"):
        ikarus.learn([])
    with pytest.raises(ValueError, match=r"motions\[0\]: expected a file name"):
        ikarus.learn([3])
    with pytest.raises(ValueError, match=r"nope.bvh"):
        ikarus.learn(["nope.bvh"])
    # A robot arm shares no humanoid bones with the humanoid: named by its index.
    robot = ikarus.Skeleton.open(str(data_dir / "urdf" / "panda.urdf"))
    rest = robot.rest_pose()
    still = ikarus.Motion(robot, np.stack([rest.rotations] * 3), np.stack([rest.translations] * 3), 1 / 30)
    with pytest.raises(ValueError, match=r"motions\[1\]: its skeleton differs .*\(0, at least 10"):
        ikarus.learn([posture_ref["walk"], (robot, still)], skeleton="builtin:humanoid")
    with pytest.raises(ValueError, match=r"motions\[0\]: has no motion"):
        ikarus.learn([(robot, None)])
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  \"format\": 1,\n")
    with pytest.raises(ValueError, match=r"bad.json: not a posture model"):
        ikarus.PostureModel.load(str(bad))
    with pytest.raises(ValueError, match=r"solver: model: .*missing.json: cannot read the posture model"):
        ikarus.solve(ikarus.Skeleton.open("builtin:humanoid"), [{"joint": "leftHand", "position": [0, 1, 0]}],
                     solver={"kind": "example", "model": str(tmp_path / "missing.json")})
