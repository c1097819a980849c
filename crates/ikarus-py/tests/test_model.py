"""Skeleton, Pose, Motion, read/write and fk against the Rust results on the same file."""

import pickle
from pathlib import Path

import numpy as np
import pytest

import ikarus


@pytest.fixture(scope="module")
def document(bvh_ref):
    return ikarus.read(bvh_ref["path"])


def test_read_bvh(document, bvh_ref):
    skeleton, motion = document
    assert skeleton.names == bvh_ref["names"]
    assert len(motion) == bvh_ref["frames"]
    assert motion.rotations.shape == (bvh_ref["frames"], bvh_ref["joints"], 4)
    assert motion.root_translations.shape == (bvh_ref["frames"], 3)
    np.testing.assert_array_equal(motion.root_translations, motion.translations[:, 0])
    assert motion.frame_rate == pytest.approx(30.0, rel=1e-5)
    parents = skeleton.parents
    assert parents[0] == -1 and np.all(parents[1:] < np.arange(1, len(skeleton)))


def test_fk_bit_equal(document, bvh_ref):
    skeleton, motion = document
    positions, rotations = ikarus.fk(skeleton, motion)
    np.testing.assert_array_equal(positions[:5], np.array(bvh_ref["fk_positions"]))
    np.testing.assert_array_equal(rotations[:5], np.array(bvh_ref["fk_rotations"]))
    one, _ = ikarus.fk(skeleton, motion.frame(3))
    np.testing.assert_array_equal(one, positions[3])


def test_fk_independent_check(document):
    # World position of a child = parent position + parent rotation · local translation.
    skeleton, motion = document
    pose = motion.frame(7)
    positions, rotations = ikarus.fk(skeleton, pose)
    local = pose.translations
    for j, p in enumerate(skeleton.parents):
        if p < 0:
            continue
        x, y, z, w = rotations[p]
        v = local[j] * skeleton.rest_scales[j] ** 0  # scales are 1 in BVH
        u = np.array([x, y, z])
        rotated = v + 2 * w * np.cross(u, v) + 2 * np.cross(u, np.cross(u, v))
        np.testing.assert_allclose(positions[j], positions[p] + rotated, atol=1e-9)


def test_write_bvh_is_the_rust_text(document, bvh_ref, tmp_path):
    skeleton, motion = document
    out = tmp_path / "out.bvh"
    ikarus.write(str(out), skeleton, motion)
    assert out.read_text() == bvh_ref["bvh_text"]
    again, again_motion = ikarus.read(str(out))
    assert again.names == skeleton.names
    np.testing.assert_allclose(again_motion.rotations, motion.rotations, atol=1e-5)


def test_write_glb_round_trip(document, tmp_path):
    skeleton, motion = document
    out = tmp_path / "out.glb"
    ikarus.write(str(out), skeleton, motion)
    again, again_motion = ikarus.read(str(out))
    assert len(again) == len(skeleton)
    p0, _ = ikarus.fk(skeleton, motion.frame(0))
    p1, _ = ikarus.fk(again, again_motion.frame(0))
    np.testing.assert_allclose(p1, p0, atol=1e-5)


def test_every_format_opens(data_dir):
    urdf = ikarus.Skeleton.open(str(data_dir / "urdf" / "panda.urdf"))
    assert "panda_link0" in urdf.names
    for pattern in ("gltf/*.glb", "gltf/*.vrm", "gltf/*.vrma", "mmd/*.pmx", "mmd/*.pmd"):
        paths = sorted(Path(data_dir).glob(pattern))
        assert paths, pattern
        skeleton, motion = ikarus.read(str(paths[0]))
        assert len(skeleton) > 10, paths[0]
        if pattern.endswith(".vrma"):
            assert motion is not None and len(motion) > 1
            positions, _ = ikarus.fk(skeleton, motion)
            assert np.all(np.isfinite(positions))


def test_bad_inputs(document, tmp_path):
    skeleton, motion = document
    with pytest.raises(ValueError, match=r"unknown output format"):
        ikarus.write(str(tmp_path / "x.txt"), skeleton, motion)
    with pytest.raises(ValueError, match=r"No such file"):
        ikarus.read(str(tmp_path / "missing.bvh"))
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n")
    with pytest.raises(ValueError, match=r"bad.bvh:\d+:\d+"):
        ikarus.read(str(bad))
    n = len(skeleton)
    with pytest.raises(ValueError, match=r"rotations: expected shape \(N, %d, 4\), got \(2, %d, 3\)" % (n, n)):
        ikarus.Motion(skeleton, np.zeros((2, n, 3)), np.zeros((2, 3)), 1 / 30)
    rotations = np.zeros((2, n, 4))
    rotations[..., 3] = 1
    with pytest.raises(ValueError, match=r"translations: non-finite"):
        ikarus.Motion(skeleton, rotations, np.full((2, 3), np.nan), 1 / 30)
    with pytest.raises(ValueError, match=r"rotations: quaternion 0 .* has length 0"):
        ikarus.Pose(np.zeros((n, 4)), np.zeros((n, 3)))
    with pytest.raises(ValueError, match=r"pose: expected an ikarus Pose or Motion"):
        ikarus.fk(skeleton, np.zeros((n, 4)))
    other = ikarus.Skeleton.open("builtin:humanoid")
    with pytest.raises(ValueError, match=r"pose: \d+ joints, the skeleton has 26"):
        ikarus.fk(other, motion)


def test_motion_from_arrays(document):
    skeleton, motion = document
    built = ikarus.Motion(skeleton, motion.rotations, motion.root_translations, motion.frame_time)
    np.testing.assert_array_equal(built.rotations, motion.rotations)
    np.testing.assert_array_equal(built.root_translations, motion.root_translations)
    full = ikarus.Motion(skeleton, motion.rotations, motion.translations, motion.frame_time)
    np.testing.assert_array_equal(full.translations, motion.translations)
    resampled = motion.resampled(60.0)
    assert resampled.frame_rate == pytest.approx(60.0)
    assert abs(len(resampled) - 2 * len(motion)) <= 2


def test_pickling(document):
    skeleton, motion = document
    s2 = pickle.loads(pickle.dumps(skeleton))
    assert s2.names == skeleton.names
    np.testing.assert_array_equal(s2.parents, skeleton.parents)
    np.testing.assert_array_equal(s2.rest_translations, skeleton.rest_translations)
    np.testing.assert_array_equal(s2.rest_rotations, skeleton.rest_rotations)
    assert s2.limits == skeleton.limits
    humanoid = ikarus.Skeleton.open("builtin:humanoid")  # hinge and cone limits
    h2 = pickle.loads(pickle.dumps(humanoid))
    assert h2.limits == humanoid.limits
    np.testing.assert_array_equal(h2.rest_translations, humanoid.rest_translations)
    m2 = pickle.loads(pickle.dumps(motion))
    np.testing.assert_array_equal(m2.rotations, motion.rotations)
    np.testing.assert_array_equal(m2.translations, motion.translations)
    assert m2.frame_time == motion.frame_time
    pose = motion.frame(2)
    p2 = pickle.loads(pickle.dumps(pose))
    np.testing.assert_array_equal(p2.rotations, pose.rotations)
    np.testing.assert_array_equal(ikarus.fk(s2, p2)[0], ikarus.fk(skeleton, pose)[0])
