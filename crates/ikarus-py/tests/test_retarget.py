"""retarget and write (.vmd, .vrma) against ikarus_anim::retarget and the formats' writers on
the same inputs (the calls `ikarus retarget` makes)."""

import numpy as np
import pytest

import ikarus


@pytest.fixture(scope="module")
def humanoid():
    return ikarus.Skeleton.open("builtin:humanoid")


@pytest.fixture(scope="module")
def walk(retarget_ref):
    return ikarus.read(retarget_ref["walk"])


@pytest.fixture(scope="module")
def onto_humanoid(walk, humanoid):
    return ikarus.retarget(walk, humanoid)


def test_retarget_objects_bit_equal(retarget_ref, onto_humanoid, humanoid):
    skeleton, motion, report = onto_humanoid
    assert skeleton.names == humanoid.names
    np.testing.assert_array_equal(motion.rotations, np.array(retarget_ref["humanoid_rotations"]))
    np.testing.assert_array_equal(motion.translations, np.array(retarget_ref["humanoid_translations"]))
    assert report["contacts"] == retarget_ref["humanoid_contacts"]
    assert report["unreached"] == retarget_ref["humanoid_unreached"]
    assert report["max_hip_drop"] == retarget_ref["humanoid_max_hip_drop"]
    assert report["slide_max"] == retarget_ref["humanoid_slide_max"]
    assert report["penetration"] == retarget_ref["humanoid_penetration"]
    assert report["frames"] == len(motion) and report["finite"]


def test_retarget_keeps_feet_above_the_floor(onto_humanoid, humanoid):
    # Independent check by FK: the feet never go more than a millimetre below the rest floor
    # (the lowest rest joint, +Y up), and the report's penetration agrees.
    skeleton, motion, report = onto_humanoid
    rest, _ = ikarus.fk(skeleton, skeleton.rest_pose())
    positions, _ = ikarus.fk(skeleton, motion)
    floor = rest[:, 1].min()
    feet = [skeleton.joint(n) for n in ("leftFoot", "rightFoot")]
    lowest = positions[:, feet, 1].min()
    assert lowest > floor - 1e-3, lowest - floor
    assert report["penetration"] < 1e-3


def test_retarget_paths_and_declared_map(retarget_ref, walk):
    # Source by path, target a VRM by path: the VRM's declared humanoid map.
    skeleton, motion, _ = ikarus.retarget(retarget_ref["walk"], retarget_ref["avatar"])
    np.testing.assert_array_equal(motion.rotations, np.array(retarget_ref["avatar_rotations"]))
    assert len(skeleton) == motion.rotations.shape[1]
    # Without contacts onto the PMX: the rotations `ikarus retarget` writes into the VMD.
    pmx, on_pmx, report = ikarus.retarget(walk, retarget_ref["pmx"], contacts=False)
    np.testing.assert_array_equal(on_pmx.rotations, np.array(retarget_ref["pmx_rotations"]))
    assert report["contacts"] == 0


def test_write_vmd_is_the_rust_bytes(retarget_ref, walk, tmp_path):
    pmx, on_pmx, _ = ikarus.retarget(walk, retarget_ref["pmx"], contacts=False)
    out = tmp_path / "walk.vmd"
    ikarus.write(str(out), pmx, on_pmx, model=retarget_ref["pmx"])
    with open(retarget_ref["vmd"], "rb") as f:
        assert out.read_bytes() == f.read()
    with pytest.raises(ValueError, match=r"model: a .vmd is written for a PMX/PMD model"):
        ikarus.write(str(out), pmx, on_pmx)
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    _, on_humanoid, _ = ikarus.retarget(walk, humanoid, contacts=False)
    with pytest.raises(ValueError, match=r"yw_test_model.pmx: the model.s bones are not the skeleton.s joints"):
        ikarus.write(str(out), humanoid, on_humanoid, model=retarget_ref["pmx"])


def test_write_vrma_reads_back(onto_humanoid, tmp_path, assert_same_humanoid_fk):
    # Independent check: the .vrma read back (its own humanoid nodes) puts every bone where FK
    # of the written motion puts it, to f32. The built-in humanoid's joints are VRM bone names.
    skeleton, motion, _ = onto_humanoid
    out = tmp_path / "walk.vrma"
    ikarus.write(str(out), skeleton, motion)
    back, back_motion = ikarus.read(str(out))
    assert len(back_motion) == len(motion)
    assert_same_humanoid_fk(skeleton, motion, back, back_motion)


def test_retarget_errors(walk, humanoid, data_dir):
    with pytest.raises(ValueError, match=r"source: expected a file name or a \(Skeleton, Motion\) pair"):
        ikarus.retarget(3, humanoid)
    with pytest.raises(ValueError, match=r"target: expected a source name or a Skeleton"):
        ikarus.retarget(walk, 3)
    with pytest.raises(ValueError, match=r"source: no animation to retarget"):
        ikarus.retarget((humanoid, None), humanoid)
    robot = str(data_dir / "urdf" / "panda.urdf")
    with pytest.raises(ValueError, match=r"panda.urdf: the humanoid map lacks"):
        ikarus.retarget(walk, robot)
    with pytest.raises(ValueError, match=r"map: expected a dict"):
        ikarus.retarget(walk, humanoid, map="hips")
    with pytest.raises(ValueError, match=r"target: bone map:"):
        ikarus.retarget(walk, humanoid, map={"leftHand": "no such joint"})
    with pytest.raises(ValueError, match=r"unknown output format"):
        ikarus.write("x.fbx", *walk)
    arm = ikarus.Skeleton.open(robot)
    rest = arm.rest_pose()
    still = ikarus.Motion(arm, np.stack([rest.rotations] * 2), np.stack([rest.translations] * 2), 0.1)
    with pytest.raises(ValueError, match=r"x.vrma: VRMA needs a humanoid: no joint recognised as"):
        ikarus.write("x.vrma", arm, still)
