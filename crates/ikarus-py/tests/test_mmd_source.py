"""VMD motions as sources: ``read(..., model=)``, ``retarget(..., source_model=)`` and the VMD
written back, against the VMD played on its model by the formats' sampler and the anim crate's
evaluator called directly (the loop ``ikarus fk/convert --motion`` ran before it moved into
``ikarus_jobs::MmdPlayer``), bit for bit; the IK checked by forward kinematics."""

from pathlib import Path

import numpy as np
import pytest

import ikarus


@pytest.fixture(scope="module")
def played(mmd_ref):
    return ikarus.read(mmd_ref["vmd"], model=mmd_ref["model"])


def _same_frames(skeleton, motion, ref):
    assert len(motion) == ref["count"]
    picks = ref["frames"]
    np.testing.assert_array_equal(motion.rotations[picks], np.array(ref["rotations"]))
    np.testing.assert_array_equal(motion.translations[picks], np.array(ref["translations"]))
    positions, _ = ikarus.fk(skeleton, motion)
    np.testing.assert_array_equal(positions[picks], np.array(ref["positions"]))


def test_read_vmd_on_its_model_bit_equal(mmd_ref, played):
    skeleton, motion = played
    assert skeleton.names == mmd_ref["names"]
    assert motion.frame_time == 1.0 / 30.0
    _same_frames(skeleton, motion, mmd_ref["compatible"])
    # The CLI's form (`ikarus convert MODEL --motion VMD`): the model with the motion on it.
    _, same = ikarus.read(mmd_ref["model"], motion=mmd_ref["vmd"])
    np.testing.assert_array_equal(same.rotations, motion.rotations)
    np.testing.assert_array_equal(same.translations, motion.translations)


def test_read_vmd_exact_mode_and_60_fps(mmd_ref, played):
    skeleton, exact = ikarus.read(mmd_ref["vmd"], model=mmd_ref["model"], mode="exact")
    _same_frames(skeleton, exact, mmd_ref["exact"])
    _, at_60 = ikarus.read(mmd_ref["vmd"], model=mmd_ref["model"], fps=60)
    assert at_60.frame_time == 0.5 / 30.0
    _same_frames(skeleton, at_60, mmd_ref["fps60"])
    # Every second frame at 60 fps is a VMD frame, evaluated as at 30 fps.
    np.testing.assert_array_equal(at_60.rotations[::2], played[1].rotations)


def test_read_vmd_on_a_pmx(mmd_ref):
    skeleton, motion = ikarus.read(mmd_ref["pmx_vmd"], model=mmd_ref["pmx_model"], mode="exact")
    _same_frames(skeleton, motion, mmd_ref["pmx_exact"])
    # A motion made for another model: the bones this PMX lacks are named in a warning.
    with pytest.warns(UserWarning, match=r"kishimen.vmd: \d+ keyed bones are not in .*yw_test_model.pmx and are ignored: "):
        _, on_other = ikarus.read(mmd_ref["vmd"], model=mmd_ref["pmx_lacks"])
    assert len(on_other) == mmd_ref["compatible"]["count"]


def test_ik_puts_the_ankles_on_their_goals(mmd_ref, played):
    # Independent of the Rust references, by FK: on every frame where a leg IK bone (the goal)
    # lies within the leg's length (hip to knee to ankle, less 1 mm) of the hip, exact mode
    # puts the ankle (the chain's effector) on it to its tolerance, 1e-4 MMD units (8 µm);
    # MMD's compatible budget leaves up to centimetres there.
    skeleton, compatible = played
    _, exact = ikarus.read(mmd_ref["vmd"], model=mmd_ref["model"], mode="exact")
    rest, _ = ikarus.fk(skeleton, skeleton.rest_pose())
    exact_at, _ = ikarus.fk(skeleton, exact)
    compatible_at, _ = ikarus.fk(skeleton, compatible)
    for side in "左右":
        hip, knee, ankle, goal = (skeleton.joint(side + n) for n in ("足", "ひざ", "足首", "足ＩＫ"))
        length = np.linalg.norm(rest[knee] - rest[hip]) + np.linalg.norm(rest[ankle] - rest[knee])
        reachable = np.linalg.norm(exact_at[:, goal] - exact_at[:, hip], axis=1) < length - 1e-3
        assert reachable.mean() > 0.5
        exact_gap = np.linalg.norm(exact_at[:, ankle] - exact_at[:, goal], axis=1)[reachable]
        compatible_gap = np.linalg.norm(
            compatible_at[:, ankle] - compatible_at[:, goal], axis=1
        )[reachable]
        assert exact_gap.max() < 8e-6, (side, exact_gap.max())
        assert compatible_gap.max() > 1e-3, (side, compatible_gap.max())


def test_vmd_written_back_and_converted(mmd_ref, played, tmp_path):
    skeleton, motion = played
    expected = Path(mmd_ref["vmd_written"]).read_bytes()
    out = tmp_path / "dance.vmd"
    ikarus.write(str(out), skeleton, motion, model=mmd_ref["model"])
    assert out.read_bytes() == expected
    # `ikarus convert DANCE.vmd OUT.vmd --model MODEL` in one call: the same bytes.
    again = tmp_path / "again.vmd"
    summary = ikarus.convert(mmd_ref["vmd"], str(again), model=mmd_ref["model"])
    assert again.read_bytes() == expected
    assert summary["frames"] == len(motion) and summary["joints"] == len(skeleton)
    # To BVH (`ikarus convert MODEL --motion VMD OUT.bvh`): read back, FK within the text's
    # precision of the played frames. Miku's three root bones are written under one shared,
    # channel-less ROOT (BVH has one root), read back as a first joint at the origin.
    bvh = tmp_path / "dance.bvh"
    summary = ikarus.convert(mmd_ref["model"], str(bvh), motion=mmd_ref["vmd"])
    assert summary["bvh_root"] == "root"
    back, back_motion = ikarus.read(str(bvh))
    assert back.names == ["root"] + skeleton.names and len(back_motion) == len(motion)
    found, _ = ikarus.fk(back, back_motion)
    assert np.abs(found[:, 0]).max() == 0.0
    picks = mmd_ref["compatible"]["frames"]
    assert np.abs(found[picks][:, 1:] - np.array(mmd_ref["compatible"]["positions"])).max() < 1e-6


def test_process_file_takes_a_vmd(mmd_ref, tmp_path):
    from ikarus.jobs import process_file

    out = tmp_path / "dance.bvh"
    summary = process_file(mmd_ref["vmd"], str(out), model=mmd_ref["model"], fps=10.0)
    assert summary["frames"] == 210 and summary["frame_time"] == 0.1
    same = tmp_path / "same.bvh"
    ikarus.convert(mmd_ref["vmd"], str(same), model=mmd_ref["model"], fps=10.0)
    assert out.read_bytes() == same.read_bytes()
    baked = tmp_path / "dance.vmd"
    process_file(mmd_ref["vmd"], str(baked), model=mmd_ref["model"])
    assert baked.read_bytes() == Path(mmd_ref["vmd_written"]).read_bytes()


def test_retarget_a_vmd_source(mmd_ref, played):
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    skeleton, motion, report = ikarus.retarget(
        mmd_ref["vmd"], humanoid, source_model=mmd_ref["model"]
    )
    assert skeleton.names == humanoid.names
    np.testing.assert_array_equal(motion.rotations, np.array(mmd_ref["dance_rotations"]))
    np.testing.assert_array_equal(motion.translations, np.array(mmd_ref["dance_translations"]))
    assert report["contacts"] == mmd_ref["dance_contacts"] and report["finite"]
    # The played objects retarget the same.
    _, from_objects, _ = ikarus.retarget(played, humanoid)
    np.testing.assert_array_equal(from_objects.rotations, motion.rotations)


def test_vmd_source_errors(mmd_ref, played):
    vmd, model = mmd_ref["vmd"], mmd_ref["model"]
    with pytest.raises(ValueError, match=r"kishimen.vmd: a .vmd motion plays on its .pmx or .pmd model"):
        ikarus.read(vmd)
    with pytest.raises(ValueError, match=r"kishimen.vmd: a VMD motion plays on a .pmx or .pmd model"):
        ikarus.read(vmd, model=vmd)
    with pytest.raises(ValueError, match=r"a model is given for a .vmd source only"):
        ikarus.read(model, model=model)
    with pytest.raises(ValueError, match=r"a motion plays on a .pmx/.pmd model, not on a .vmd"):
        ikarus.read(vmd, model=model, motion=vmd)
    with pytest.raises(ValueError, match=r'mode: "fast": expected "compatible" or "exact"'):
        ikarus.read(vmd, model=model, mode="fast")
    with pytest.raises(ValueError, match=r"fps 0: expected a finite positive number"):
        ikarus.read(vmd, model=model, fps=0.0)
    with pytest.raises(ValueError, match=r"fps NaN: expected a finite positive number"):
        ikarus.read(vmd, model=model, fps=float("nan"))
    with pytest.raises(ValueError, match=r"scale -1: expected a finite positive number"):
        ikarus.read(vmd, model=model, scale=-1.0)
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    with pytest.raises(ValueError, match=r"kishimen.vmd: a .vmd motion plays on its"):
        ikarus.retarget(vmd, humanoid)
    with pytest.raises(ValueError, match=r"source_model: given for a .vmd source file only"):
        ikarus.retarget(played, humanoid, source_model=model)
