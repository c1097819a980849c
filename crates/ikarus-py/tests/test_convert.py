"""convert (``ikarus_jobs::convert``, the call ``ikarus convert`` makes), write ``into`` an
existing avatar and ``.vrma`` with an explicit bone map, against the formats' writers on the
same inputs; files read back and checked by forward kinematics."""

import json
from pathlib import Path

import numpy as np
import pytest

import ikarus


def test_convert_matches_the_formats(convert_ref, tmp_path):
    out = tmp_path / "walk30.bvh"
    summary = ikarus.convert(convert_ref["walk"], str(out), fps=30, scale=0.056444)
    assert out.read_bytes() == convert_ref["walk30_bvh"].encode()
    # 344 frames at 120 fps span 343/120 s: 87 frames at 30 fps (as the CLI test counts).
    assert summary["frames"] == 87 and summary["unmatched"] == []
    assert summary["frame_rate"] == pytest.approx(30.0)
    # read + write: the same file through the same library calls.
    skeleton, motion = ikarus.read(convert_ref["walk"], scale=0.056444, fps=30)
    assert summary["joints"] == len(skeleton)
    again = tmp_path / "again.bvh"
    ikarus.write(str(again), skeleton, motion)
    assert again.read_bytes() == out.read_bytes()
    # builtin:humanoid has no motion: one rest frame.
    rest = tmp_path / "rest.glb"
    assert ikarus.convert("builtin:humanoid", str(rest))["frames"] == 1
    with pytest.raises(ValueError, match=r"out.xyz: unknown output format \(expected .bvh, .glb, .vmd or .vrma\)"):
        ikarus.convert(convert_ref["walk"], str(tmp_path / "out.xyz"))
    with pytest.raises(ValueError, match=r"a model is given for a .vmd output only|a model is given for a .vmd source only"):
        ikarus.convert(convert_ref["walk"], str(out), model="x.pmx")
    with pytest.raises(ValueError, match=r"out.vmd: a .vmd is written for an MMD model"):
        ikarus.convert(convert_ref["walk"], str(tmp_path / "out.vmd"))


def test_write_into_an_avatar(convert_ref, tmp_path):
    avatar, clip, _ = ikarus.retarget(convert_ref["walk"], convert_ref["avatar"])
    out = tmp_path / "walk_avatar.glb"
    ikarus.write(str(out), avatar, clip, into=convert_ref["avatar"])
    assert out.read_bytes() == Path(convert_ref["into_glb"]).read_bytes()
    # Independent: the file read back has the avatar's skin and an animation "motion" whose FK
    # is the written motion's to f32; the avatar's mesh came along (the file grew).
    back, back_motion = ikarus.read(str(out), animation="motion")
    assert back.names == avatar.names and len(back_motion) == len(clip)
    expected, _ = ikarus.fk(avatar, clip)
    found, _ = ikarus.fk(back, back_motion)
    assert np.abs(expected - found).max() < 1e-4
    assert out.stat().st_size > Path(convert_ref["avatar"]).stat().st_size
    # Errors: a skeleton that is not the avatar's skin; `into` for another format.
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    _, on_humanoid, _ = ikarus.retarget(convert_ref["walk"], humanoid, contacts=False)
    with pytest.raises(ValueError, match=r"Godette_vrm_v4.vrm: its skin's joints are not the skeleton's"):
        ikarus.write(str(out), humanoid, on_humanoid, into=convert_ref["avatar"])
    with pytest.raises(ValueError, match=r"only as a .glb output"):
        ikarus.write(str(tmp_path / "x.bvh"), avatar, clip, into=convert_ref["avatar"])
    with pytest.raises(ValueError, match=r"its skin's joints are not the skeleton's"):
        ikarus.convert(convert_ref["walk"], str(tmp_path / "y.glb"), into=convert_ref["avatar"])


def _renamed(skeleton):
    """The skeleton with joints called j0, j1, ... (no name any humanoid scheme knows)."""
    state = json.loads(skeleton.__reduce__()[1][0])
    index = {j["name"]: i for i, j in enumerate(state)}
    for j in state:
        j["parent"] = None if j["parent"] is None else f"j{index[j['parent']]}"
        j["name"] = f"j{index[j['name']]}"
    return ikarus.Skeleton._from_state(json.dumps(state))


def test_write_vrma_with_a_bone_map(convert_ref, tmp_path, assert_same_humanoid_fk):
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    _, motion, _ = ikarus.retarget(convert_ref["walk"], humanoid, contacts=False)
    renamed = _renamed(humanoid)
    clip = ikarus.Motion(renamed, motion.rotations, motion.translations, motion.frame_time)
    with pytest.raises(ValueError, match=r"VRMA needs a humanoid: no joint recognised as"):
        ikarus.write(str(tmp_path / "x.vrma"), renamed, clip)
    # The built-in humanoid's joints are VRM 1.0 bone names: map each onto its renamed joint.
    bone_map = {name: f"j{i}" for i, name in enumerate(humanoid.names)}
    mapped = tmp_path / "mapped.vrma"
    ikarus.write(str(mapped), renamed, clip, map=bone_map)
    named = tmp_path / "named.vrma"
    ikarus.write(str(named), humanoid, motion)
    assert mapped.read_bytes() == named.read_bytes()
    # Read back: FK of the VRMA's humanoid matches the motion's to f32.
    back, back_motion = ikarus.read(str(mapped))
    assert_same_humanoid_fk(humanoid, motion, back, back_motion)
    # convert takes the same map (a BVH of the renamed skeleton as the source).
    bvh = tmp_path / "renamed.bvh"
    ikarus.write(str(bvh), renamed, clip)
    with pytest.raises(ValueError, match=r"VRMA needs a humanoid"):
        ikarus.convert(str(bvh), str(tmp_path / "c.vrma"))
    assert ikarus.convert(str(bvh), str(tmp_path / "c.vrma"), map=bone_map)["frames"] == len(clip)
    with pytest.raises(ValueError, match=r"a humanoid bone map is given for a .vrma output only"):
        ikarus.write(str(tmp_path / "x.glb"), renamed, clip, map=bone_map)
    with pytest.raises(ValueError, match=r"x.vrma: bone map:"):
        ikarus.write(str(tmp_path / "x.vrma"), renamed, clip, map={"hips": "no such joint"})
    with pytest.raises(ValueError, match=r"map: expected a dict"):
        ikarus.write(str(tmp_path / "x.vrma"), renamed, clip, map="hips")
