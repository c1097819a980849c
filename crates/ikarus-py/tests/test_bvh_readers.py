"""Every BVH ikarus writes, read by an independent reader from PyPI (the ``bvh`` package,
which splits each line on whitespace as Blender's importer and three.js's ``BVHLoader`` do):
the written hierarchy, names, offsets and frame count are what the source skeleton says, on
shared skeleton — the BVH clips, the glTF/VRM files, the PMX/PMD models and the built-in
humanoid. Names BVH cannot hold (spaces, braces) are written as unique single tokens
and reported in the summary."""

import numpy as np
import pytest
from bvh import Bvh

import ikarus

GLTF = [
    "CesiumMan.glb",
    "Fox.glb",
    "Godette_vrm_v4.vrm",
    "RiggedSimple_blender_reexport.glb",
    "SimpleSkin.gltf",
    "VRMC_materials_mtoon_UV_Animation_Test.vrm",
    "VRMC_vrm_expressions_isBinary_Overridden.vrm",
    "assimp_quad_skin.glb",
    "cryptovoxels.vrm",
]
# Miku_Hatsune_Ver2.pmd and the yw_test models have two or three root bones (the IK targets
# sit beside the centre bone): they are written under one channel-less ROOT (``bvh_root``).
MMD = [
    "Gene.pmx",
    "Miku_Hatsune_Ver2.pmd",
    "yw_test_basic_bone.pmx",
    "yw_test_model.pmx",
    "yw_test_semi_basic_bone.pmx",
]


def sources(data_dir):
    found = sorted(str(p) for p in (data_dir / "bvh").glob("*.bvh"))
    assert len(found) == 10, found
    found += [str(data_dir / "gltf" / name) for name in GLTF]
    found += [str(data_dir / "mmd" / name) for name in MMD]
    return found + ["builtin:humanoid"]


def check_written(source, out, summary):
    """The file at ``out`` read by the independent reader against ``source``'s skeleton."""
    text = out.read_text()
    joint_lines = [line.split() for line in text.splitlines() if line.split()[:1] in (["ROOT"], ["JOINT"])]
    # One token after every keyword: what a whitespace-splitting reader needs.
    assert all(len(tokens) == 2 for tokens in joint_lines), (source, joint_lines)
    reader = Bvh(text)
    names = reader.get_joints_names()
    assert names == [tokens[1] for tokens in joint_lines], source
    assert len(set(names)) == len(names), (source, "names must be unique")
    assert reader.nframes == summary["frames"], source

    # Exactly one root: several roots are written under a channel-less one, the first joint.
    assert sum(tokens[0] == "ROOT" for tokens in joint_lines) == 1, source
    shared = summary["bvh_root"]
    if shared is not None:
        assert names[0] == shared and reader.joint_channels(shared) == [], source
        assert reader.joint_offset(shared) == (0.0, 0.0, 0.0), source
        names = names[1:]
    skeleton = ikarus.Skeleton.open(source)
    renamed = dict(summary["renamed"])
    assert set(renamed) <= set(skeleton.names), source
    written = [renamed.get(name, name) for name in skeleton.names]
    index = {name: i for i, name in enumerate(written)}
    # Every joint the reader sees is a joint of the source, in the source's depth-first order,
    # under its parent, at its rest offset.
    assert all(name in index for name in names), (source, [n for n in names if n not in index])
    order = [index[name] for name in names]
    assert order == sorted(order), source
    parents = skeleton.parents
    offsets = skeleton.rest_translations
    scale = max(1.0, float(np.abs(offsets).max()))
    for name in names:
        i = index[name]
        parent = reader.joint_parent(name)
        expected = shared if parents[i] < 0 else written[parents[i]]
        assert (None if parent is None else parent.name) == expected, (source, name)
        assert np.allclose(reader.joint_offset(name), offsets[i], rtol=0, atol=1e-9 * scale), (source, name)
    return names, renamed


def test_every_written_bvh_reads_in_an_independent_reader(data_dir, tmp_path):
    renamed_by_source, roots_by_source = {}, {}
    for k, source in enumerate(sources(data_dir)):
        out = tmp_path / f"{k}.bvh"
        # A few frames are enough for the structure; the pure-Python reader is slow on long clips.
        summary = ikarus.convert(source, str(out), fps=4)
        names, renamed = check_written(source, out, summary)
        assert len(names) > 1, source
        renamed_by_source[source.rsplit("/", 1)[-1]] = renamed
        roots_by_source[source.rsplit("/", 1)[-1]] = summary["bvh_root"]
    # The shared files whose node names have spaces (cryptovoxels.vrm: `Left leg`, ...) are
    # renamed and reported; every other file keeps its names.
    crypto = renamed_by_source["cryptovoxels.vrm"]
    assert crypto.get("Left leg") == "Left_leg" and len(crypto) == 16, crypto
    assert all(" " not in new for new in crypto.values())
    assert renamed_by_source["builtin:humanoid"] == {}
    assert {name for name, root in roots_by_source.items() if root} == {
        "Miku_Hatsune_Ver2.pmd",
        "yw_test_basic_bone.pmx",
        "yw_test_model.pmx",
        "yw_test_semi_basic_bone.pmx",
    }
    assert all(renamed_by_source[f.rsplit("/", 1)[-1]] == {} for f in sources(data_dir)[:10])


def test_retargeted_bvh_onto_a_vrm_reads_in_an_independent_reader(data_dir, tmp_path):
    walk = str(data_dir / "bvh" / "cmu_02_01_walk_cgspeed_crlf.bvh")
    avatar = str(data_dir / "gltf" / "cryptovoxels.vrm")
    skeleton, motion, _ = ikarus.retarget(walk, avatar, contacts=False)
    out = tmp_path / "walk_crypto.bvh"
    ikarus.write(str(out), skeleton, motion)
    reader = Bvh(out.read_text())
    names = reader.get_joints_names()
    assert len(names) == len(set(names)) == len(skeleton.names)
    assert "Left_leg" in names and reader.nframes == len(motion)
