"""track against ikarus_anim::track through the binding: trackers made in numpy from a walk's
own bones (frame 0 its rest pose, the calibration) put the
tracked bones where the trackers are (by FK); a JSON file of the same recording gives the
same motion; 3 points keep the head on its tracker and step; a lost sample is held and
reported; bad arguments are ValueErrors."""

import json

import numpy as np
import pytest

import ikarus

SIX = ["head", "leftHand", "rightHand", "hips", "leftFoot", "rightFoot"]
# The CMU file's joint of each tracked bone.
JOINT = {"head": "Head", "leftHand": "LeftHand", "rightHand": "RightHand", "hips": "Hips", "leftFoot": "LeftFoot", "rightFoot": "RightFoot"}


@pytest.fixture(scope="module")
def recording(data_dir):
    # The CMU walk in metres, unlimited joints (the built-in humanoid's limits hold its hands
    # up to 18 cm off on this walk: BENCHMARKS.md, "Full-body IK").
    skeleton, motion = ikarus.read(str(data_dir / "bvh" / "cmu_02_01_walk_cgspeed_crlf.bvh"), scale=0.056)
    rest_p, rest_q = ikarus.fk(skeleton, skeleton.rest_pose())
    p, q = ikarus.fk(skeleton, motion)
    # The clip's floor: where its lowest joint is, most frames; the rest pose stood on it.
    floor = float(np.percentile(p[:, :, 1].min(axis=1), 5))
    rest_p = rest_p + np.array([0.0, floor - rest_p[:, 1].min(), 0.0])
    trackers = {}
    for bone in SIX:
        j = skeleton.joint(JOINT[bone])
        rows = np.concatenate([p[:, j], q[:, j]], axis=1)
        first = np.concatenate([rest_p[j], rest_q[j]])[None, :]
        trackers[bone] = np.concatenate([first, rows[1:121]])
    return skeleton, trackers, floor, motion.frame_rate


def test_six_points_put_the_bones_on_their_trackers(recording):
    skeleton, trackers, floor, fps = recording
    motion, report = ikarus.track(trackers, skeleton, fps=fps, floor=floor)
    assert report["frames"] == len(motion) == len(trackers["head"])
    assert abs(report["scale"] - 1.0) < 1e-9
    p, _ = ikarus.fk(skeleton, motion)
    worst = max(
        float(np.linalg.norm(p[1:, skeleton.joint(JOINT[b])] - trackers[b][1:, :3], axis=1).max()) for b in SIX
    )
    assert worst < 0.005, worst
    assert all(not h for h in report["held"][1:])


def test_a_file_reads_as_its_dict(recording, tmp_path):
    skeleton, trackers, floor, fps = recording
    path = tmp_path / "walk.json"
    path.write_text(json.dumps({"fps": fps, "trackers": {b: a.tolist() for b, a in trackers.items()}}))
    a, _ = ikarus.track(trackers, skeleton, fps=fps, floor=floor)
    b, _ = ikarus.track(str(path), skeleton, floor=floor)
    np.testing.assert_allclose(a.rotations, b.rotations, atol=1e-12)


def test_three_points_and_a_lost_sample(recording):
    skeleton, trackers, floor, fps = recording
    three = {b: trackers[b].copy() for b in SIX[:3]}
    three["leftHand"][50] = np.nan
    motion, report = ikarus.track(three, skeleton, fps=fps, floor=floor, points=3)
    assert report["held"][50] == ["leftHand"]
    assert sum(1 for h in report["held"] if h) == 1
    p, _ = ikarus.fk(skeleton, motion)
    assert np.isfinite(p).all()
    # From the second frame after calibration: the first one leaves the reference pose for
    # the walk in one solve and misses the head by 19 cm.
    head = np.linalg.norm(p[2:, skeleton.joint("Head")] - three["head"][2:, :3], axis=1)
    assert head.max() < 0.01, head.max()
    assert sum(1 for s in report["stepping"] if s[0]) > 0 and sum(1 for s in report["stepping"] if s[1]) > 0


def test_bad_arguments(recording, tmp_path):
    skeleton, trackers, floor, fps = recording
    with pytest.raises(ValueError, match=r"fps: needed"):
        ikarus.track(trackers, skeleton)
    with pytest.raises(ValueError, match=r"`nose` is not a VRM"):
        ikarus.track({"nose": trackers["head"]}, skeleton, fps=fps)
    with pytest.raises(ValueError, match=r"expected shape"):
        ikarus.track({"head": trackers["head"][:, :4]}, skeleton, fps=fps)
    with pytest.raises(ValueError, match=r"points: 3, 4 or 6"):
        ikarus.track(trackers, skeleton, fps=fps, points=5)
    with pytest.raises(ValueError, match=r"needs a `hips` tracker"):
        ikarus.track({b: trackers[b] for b in SIX[:3]}, skeleton, fps=fps, points=4)
    bad = tmp_path / "bad.json"
    bad.write_text('{"fps": 60,\n "trackers": {"head": [[0, 1]]}}')
    with pytest.raises(ValueError, match=r"bad.json: line 2"):
        ikarus.track(str(bad), skeleton)
