"""Every GLB and VRMA ikarus writes, read by an independent reader from PyPI (``pygltflib``)
and checked against the glTF 2.0 rules a loader relies on: buffer views inside their buffer,
accessors inside their view, node indices in range and a forest (one parent each, no cycle),
skins whose inverse bind matrices match their joints, animation samplers with increasing
times (``min``/``max`` given), as many outputs as inputs and unit rotations, and the written
node hierarchy equal to the source skeleton's; for VRMA, the ``VRMC_vrm_animation``
extension's humanoid bones on nodes of the file. On every shared skeleton that has a motion
or a rest pose (BVH clips, glTF/VRM files, PMX/PMD models, the built-in humanoid)."""

import struct

import numpy as np
import pytest
from pygltflib import GLTF2

import ikarus
from test_bvh_readers import sources

COMPONENT_BYTES = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}
TYPE_COUNT = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
FORMAT = {5120: "b", 5121: "B", 5122: "h", 5123: "H", 5125: "I", 5126: "f"}


def accessor_values(gltf, blob, index):
    """The accessor's elements as an (count, components) array, read from the binary chunk."""
    accessor = gltf.accessors[index]
    view = gltf.bufferViews[accessor.bufferView]
    width = TYPE_COUNT[accessor.type]
    size = COMPONENT_BYTES[accessor.componentType]
    stride = view.byteStride or width * size
    start = (view.byteOffset or 0) + (accessor.byteOffset or 0)
    rows = []
    for k in range(accessor.count):
        at = start + k * stride
        rows.append(struct.unpack_from(f"<{width}{FORMAT[accessor.componentType]}", blob, at))
    return np.array(rows, dtype=float)


def check_structure(path):
    """The rules above; returns the parsed file and its binary chunk."""
    gltf = GLTF2().load_binary(str(path))
    assert gltf.asset.version == "2.0", path
    blob = gltf.binary_blob()
    assert len(gltf.buffers) == 1 and blob is not None, path
    assert gltf.buffers[0].byteLength <= len(blob), path
    for view in gltf.bufferViews:
        assert view.buffer == 0
        assert (view.byteOffset or 0) + view.byteLength <= gltf.buffers[0].byteLength, path
    for accessor in gltf.accessors:
        view = gltf.bufferViews[accessor.bufferView]
        width = TYPE_COUNT[accessor.type] * COMPONENT_BYTES[accessor.componentType]
        stride = view.byteStride or width
        used = (accessor.byteOffset or 0) + (accessor.count - 1) * stride + width
        assert accessor.count > 0 and used <= view.byteLength, (path, accessor)
        assert (accessor.byteOffset or 0) % COMPONENT_BYTES[accessor.componentType] == 0
    # Nodes: a forest.
    parent = {}
    for i, node in enumerate(gltf.nodes):
        for child in node.children or []:
            assert 0 <= child < len(gltf.nodes), path
            assert child not in parent, (path, "two parents", child)
            parent[child] = i
    for i in range(len(gltf.nodes)):
        seen, at = set(), i
        while at in parent:
            assert at not in seen, (path, "cycle")
            seen.add(at)
            at = parent[at]
    for skin in gltf.skins:
        assert all(0 <= j < len(gltf.nodes) for j in skin.joints), path
        if skin.inverseBindMatrices is not None:
            assert gltf.accessors[skin.inverseBindMatrices].count == len(skin.joints), path
            assert gltf.accessors[skin.inverseBindMatrices].type == "MAT4"
    for animation in gltf.animations:
        for channel in animation.channels:
            assert 0 <= channel.target.node < len(gltf.nodes), path
            sampler = animation.samplers[channel.sampler]
            times = accessor_values(gltf, blob, sampler.input)[:, 0]
            source = gltf.accessors[sampler.input]
            assert source.min is not None and source.max is not None, (path, "input min/max")
            assert np.isclose(source.min[0], times.min()) and np.isclose(source.max[0], times.max())
            assert np.all(np.diff(times) > 0), (path, "times must increase")
            values = accessor_values(gltf, blob, sampler.output)
            assert len(values) == len(times), path
            assert np.isfinite(values).all(), path
            if channel.target.path == "rotation":
                assert np.allclose(np.linalg.norm(values, axis=1), 1.0, atol=1e-5), path
    return gltf, blob


def names_under_scene(gltf):
    return [node.name for node in gltf.nodes]


def test_every_written_glb_and_vrma_reads_in_an_independent_reader(data_dir, tmp_path):
    vrma_refused = []
    for k, source in enumerate(sources(data_dir)):
        name = source.rsplit("/", 1)[-1]
        glb = tmp_path / f"{k}.glb"
        summary = ikarus.convert(source, str(glb), fps=4)
        gltf, blob = check_structure(glb)
        # The skeleton's joints are nodes of the file, each under its parent.
        skeleton = ikarus.Skeleton.open(source)
        nodes = {node.name: i for i, node in enumerate(gltf.nodes)}
        missing = [n for n in skeleton.names if n not in nodes]
        assert not missing, (name, missing[:5])
        children = {i: set(node.children or []) for i, node in enumerate(gltf.nodes)}
        for i, joint in enumerate(skeleton.names):
            p = skeleton.parents[i]
            if p >= 0:
                assert nodes[joint] in children[nodes[skeleton.names[p]]], (name, joint)
        if summary["frames"] > 1:
            assert gltf.animations, name
        vrma = tmp_path / f"{k}.vrma"
        try:
            ikarus.convert(source, str(vrma), fps=4)
        except ValueError as error:
            vrma_refused.append(name)
            assert "humanoid" in str(error).lower() or "hips" in str(error).lower(), (name, str(error))
            continue
        gltf, _ = check_structure(vrma)
        assert "VRMC_vrm_animation" in (gltf.extensionsUsed or []), name
        extension = gltf.extensions["VRMC_vrm_animation"]
        bones = extension["humanoid"]["humanBones"]
        assert "hips" in bones, name
        assert all(0 <= b["node"] < len(gltf.nodes) for b in bones.values()), name
    # The files without a humanoid cannot carry a VRM animation, and say so; every other one
    # (21 of 25) is written and reads.
    assert sorted(vrma_refused) == [
        "CesiumMan.glb",
        "RiggedSimple_blender_reexport.glb",
        "SimpleSkin.gltf",
        "assimp_quad_skin.glb",
    ], vrma_refused
