"""solve and mocap against ikarus_solve::solve / ikarus_anim::mocap on the same inputs."""

import pickle

import numpy as np
import pytest

import ikarus


@pytest.fixture(scope="module")
def humanoid():
    return ikarus.Skeleton.open("builtin:humanoid")


def _float(v):
    return np.inf if v is None else v


def test_solve_bit_equal(humanoid, reference):
    for case in reference["solve"]:
        task = case["task"]
        pose, report = ikarus.solve(
            humanoid,
            task["effectors"],
            solver=task["solver"],
            base=task.get("base"),
            tolerance=task.get("tolerance"),
        )
        expected = case["report"]
        assert report.status == expected["status"], task
        assert report.position_error == _float(expected["position_error"])
        assert report.rotation_error == _float(expected["rotation_error"])
        assert report.iterations == expected["iterations"]
        assert report.restarts == expected.get("restarts", 0)
        assert report.limits_active == expected["limits_active"]
        assert report.active_limits == expected.get("active_limits", [])
        np.testing.assert_array_equal(pose.rotations, np.array(case["rotations"]))
        np.testing.assert_array_equal(pose.translations, np.array(case["translations"]))
        # Independent check: the reported residual is FK's.
        positions, _ = ikarus.fk(humanoid, pose)
        errors = [
            np.linalg.norm(positions[humanoid.joint(e["joint"])] - e["position"]) for e in task["effectors"]
        ]
        if len(errors) == 1 and task["solver"]["kind"] != "fabrik":
            assert max(errors) == pytest.approx(report.position_error, abs=1e-12)


def test_solve_kwargs_and_start_pose(humanoid):
    effectors = [{"joint": "leftHand", "position": [0.5, 1.2, 0.3]}]
    a, ra = ikarus.solve(humanoid, effectors, solver={"kind": "lm", "iteration": {"max_iterations": 5}})
    b, rb = ikarus.solve(humanoid, effectors, solver="lm", iteration={"max_iterations": 5})
    np.testing.assert_array_equal(a.rotations, b.rotations)
    assert ra.iterations == rb.iterations <= 5
    c, rc = ikarus.solve(humanoid, effectors, pose=a, solver="lm")
    assert rc.converged
    none_pose, none_report = ikarus.solve(humanoid, effectors, pose=c)
    assert none_report.solver == "none"
    assert none_report.position_error == rc.position_error
    assert pickle.loads(pickle.dumps(rc)).to_dict() == rc.to_dict()


def test_solve_errors(humanoid):
    with pytest.raises(ValueError, match=r"effectors: no joint named `nope`|effectors: .*nope"):
        ikarus.solve(humanoid, [{"joint": "nope", "position": [0, 1, 0]}])
    with pytest.raises(ValueError, match=r"effectors: unknown field `pos`"):
        ikarus.solve(humanoid, [{"joint": "leftHand", "pos": [0, 1, 0]}])
    with pytest.raises(ValueError, match=r"effectors:"):
        ikarus.solve(humanoid, [{"joint": "leftHand", "position": [float("nan"), 1, 0]}])
    with pytest.raises(ValueError, match=r"solver: unknown variant `magic`"):
        ikarus.solve(humanoid, [{"joint": "leftHand", "position": [0, 1, 0]}], solver="magic")
    with pytest.raises(ValueError, match=r"base:"):
        ikarus.solve(humanoid, [{"joint": "leftHand", "position": [0, 1, 0]}], base="nope")
    # A task the solver rejects is an honest report, not an exception.
    pose, report = ikarus.solve(humanoid, [{"joint": "leftHand", "position": [0, 1, 0], "weight": -1}], solver="lm")
    assert report.status == "invalid_input" and report.message


def test_mocap_bit_equal(bvh_ref):
    skeleton, _ = ikarus.read(bvh_ref["path"])
    points = np.array(bvh_ref["mocap_points"]).reshape(-1, len(skeleton), 3)
    solved, motion, report = ikarus.mocap(skeleton, points, skeleton.names, fps=bvh_ref["mocap_fps"], up="y")
    np.testing.assert_array_equal(motion.rotations, np.array(bvh_ref["mocap_rotations"]))
    np.testing.assert_array_equal(solved.rest_translations, np.array(bvh_ref["mocap_rest_translations"]))
    assert report["mean_error"] == bvh_ref["mocap_mean_error"]
    assert report["frames"] == len(points)
    # Independent check: FK of the result lands on the input points.
    positions, _ = ikarus.fk(solved, motion)
    assert np.nanmax(np.linalg.norm(positions - points, axis=2)) < 0.05
    # The foot-contact cleanup, as ikarus_anim runs it.
    _, planted, report = ikarus.mocap(skeleton, points, skeleton.names, fps=bvh_ref["mocap_fps"], up="y", contacts=True)
    np.testing.assert_array_equal(planted.rotations, np.array(bvh_ref["mocap_contacts_rotations"]))
    assert report["contacts"] == bvh_ref["mocap_contacts"]


def test_mocap_errors(humanoid):
    with pytest.raises(ValueError, match=r"layout:"):
        ikarus.mocap(humanoid, np.zeros((2, 17, 3)), "no_such_layout")
    with pytest.raises(ValueError, match=r"points: expected shape \(N, 17, 3\), got \(2, 16, 3\)"):
        ikarus.mocap(humanoid, np.zeros((2, 16, 3)), "h36m")
    with pytest.raises(ValueError, match=r"fps:"):
        ikarus.mocap(humanoid, np.zeros((2, 17, 3)), "h36m", fps=-1)


def test_read_keypoints_then_mocap(bvh_ref, tmp_path):
    """A keypoint file in each format (written here with numpy and the csv/json modules, not by
    ikarus) reads back as the same arrays, and mocap on them equals mocap on the arrays."""
    import json

    skeleton, _ = ikarus.read(bvh_ref["path"])
    points = np.array(bvh_ref["mocap_points"]).reshape(-1, len(skeleton), 3)
    frames, count = points.shape[:2]
    np.save(tmp_path / "clip.npy", points)
    (tmp_path / "clip.json").write_text(
        json.dumps({"layout": "skeleton", "names": skeleton.names, "fps": 30.0, "frames": points.tolist()})
    )
    header = ",".join(f"{n}_{a}" for n in skeleton.names for a in "xyz")
    rows = [",".join(repr(float(v)) for v in frame.ravel()) for frame in points]
    (tmp_path / "clip.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    for name in ["clip.npy", "clip.json", "clip.csv"]:
        got = ikarus.read_keypoints(tmp_path / name)
        assert got["points"].shape == (frames, count, 3), name
        np.testing.assert_array_equal(got["points"], points)
        assert got["confidence"] is None
    got = ikarus.read_keypoints(tmp_path / "clip.json")
    assert got["layout"] == "skeleton" and got["fps"] == 30.0 and got["names"] == skeleton.names
    _, a, _ = ikarus.mocap(skeleton, got["points"], got["names"], fps=bvh_ref["mocap_fps"], up="y")
    np.testing.assert_array_equal(a.rotations, np.array(bvh_ref["mocap_rotations"]))
    (tmp_path / "bad.json").write_text('{"layout": "h36m", "frames": [[[0, 0]]]}')
    with pytest.raises(ValueError, match="bad.json"):
        ikarus.read_keypoints(tmp_path / "bad.json")
