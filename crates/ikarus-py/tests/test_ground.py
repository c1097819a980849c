"""ground against ikarus_anim::ground through the binding: a walk on a plane raised by 10 cm
comes out 10 cm higher in every joint (by FK), terrains from dicts and files agree, and bad
arguments are ValueErrors."""

import json

import numpy as np
import pytest

import ikarus

@pytest.fixture(scope="module")
def walk(data_dir):
    return ikarus.read(str(data_dir / "bvh" / "bandainamco_ds1_walk_normal_002.bvh"), scale=0.01)


def plane(height):
    return {"plane": {"point": [0.0, height, 0.0], "normal": [0.0, 1.0, 0.0]}}


def test_a_raised_plane_raises_every_joint(walk):
    skeleton, _ = walk
    low, low_report = ikarus.ground(walk, plane(0.0))
    high, high_report = ikarus.ground(walk, plane(0.1))
    assert low_report["frames"] == high_report["frames"] == len(low)
    assert low_report["unreached"] == high_report["unreached"] == 0
    assert sum(len(c) for c in low_report["contacts"]) > 0
    a, _ = ikarus.fk(skeleton, low)
    b, _ = ikarus.fk(skeleton, high)
    # Every joint but the ground-projected root above the hips.
    np.testing.assert_allclose(b[:, 1:] - a[:, 1:], np.broadcast_to([0.0, 0.1, 0.0], a[:, 1:].shape), atol=1e-9)


def test_feet_planted_across_steps_edges_are_moved_along_the_ground(walk):
    # Terraces 18 cm high and 30 cm deep each way (2 cm cells): the report's shifts say, per
    # frame and foot, how far a foot was moved off an edge; horizontal, shorter than a foot,
    # one move per contact (the same in each of its frames), none on a plane.
    heights = [[0.18 * (np.floor((-3.0 + 0.02 * j) / 0.3) + np.floor((-3.0 + 0.02 * i) / 0.3)) for j in range(300)] for i in range(300)]
    _, report = ikarus.ground(walk, {"heightfield": {"origin": [-3.0, -3.0], "cell": 0.02, "heights": heights}})
    shifts = np.asarray(report["shifts"])
    assert shifts.shape == (report["frames"], 2, 3)
    assert np.all(shifts[:, :, 1] == 0.0)
    lengths = np.linalg.norm(shifts, axis=2)
    assert lengths.max() > 0.0 and lengths.max() < 0.3
    for foot, contacts in enumerate(report["contacts"]):
        for start, end in contacts:
            moves = shifts[start:end + 1, foot]
            np.testing.assert_array_equal(moves, np.broadcast_to(moves[0], moves.shape))
    _, flat = ikarus.ground(walk, plane(0.0))
    assert np.all(np.asarray(flat["shifts"]) == 0.0)


def test_a_terrain_file_reads_as_its_dict(walk, tmp_path):
    terrain = {"heightfield": {"origin": [-3.0, -3.0], "cell": 0.5, "heights": [[0.02 * (i + j) for j in range(13)] for i in range(13)]}}
    path = tmp_path / "terrain.json"
    path.write_text(json.dumps(terrain))
    a, ra = ikarus.ground(walk, terrain)
    b, rb = ikarus.ground(walk, str(path))
    np.testing.assert_array_equal(a.rotations, b.rotations)
    assert ra["pelvis_offsets"] == rb["pelvis_offsets"]


def test_bad_arguments(walk, tmp_path):
    with pytest.raises(ValueError, match=r"normal point up"):
        ikarus.ground(walk, plane(0.0) | {"plane": {"point": [0, 0, 0], "normal": [0, -1, 0]}})
    with pytest.raises(ValueError, match=r"row 1"):
        ikarus.ground(walk, {"heightfield": {"origin": [0, 0], "cell": 1, "heights": [[0, 1], [0]]}})
    with pytest.raises(ValueError, match=r"motion: expected"):
        ikarus.ground("walk.bvh", plane(0.0))
    with pytest.raises(ValueError, match=r"missing.json"):
        ikarus.ground(walk, str(tmp_path / "missing.json"))


def _slope_glb(path, angle, size=20.0):
    """A square of two triangles rising at `angle` along +X through the origin, written by
    pygltflib (a writer independent of ikarus)."""
    import pygltflib

    t = np.tan(angle)
    h = size / 2
    vertices = np.array(
        [[-h, -h * t, -h], [h, h * t, -h], [h, h * t, h], [-h, -h * t, h]], dtype=np.float32
    )
    indices = np.array([0, 2, 1, 0, 3, 2], dtype=np.uint32)
    blob = vertices.tobytes() + indices.tobytes()
    gltf = pygltflib.GLTF2(
        scene=0,
        scenes=[pygltflib.Scene(nodes=[0])],
        nodes=[pygltflib.Node(mesh=0)],
        meshes=[pygltflib.Mesh(primitives=[pygltflib.Primitive(attributes=pygltflib.Attributes(POSITION=0), indices=1)])],
        accessors=[
            pygltflib.Accessor(bufferView=0, componentType=pygltflib.FLOAT, count=4, type=pygltflib.VEC3,
                               min=vertices.min(axis=0).tolist(), max=vertices.max(axis=0).tolist()),
            pygltflib.Accessor(bufferView=1, componentType=pygltflib.UNSIGNED_INT, count=6, type=pygltflib.SCALAR),
        ],
        bufferViews=[
            pygltflib.BufferView(buffer=0, byteOffset=0, byteLength=vertices.nbytes, target=pygltflib.ARRAY_BUFFER),
            pygltflib.BufferView(buffer=0, byteOffset=vertices.nbytes, byteLength=indices.nbytes,
                                 target=pygltflib.ELEMENT_ARRAY_BUFFER),
        ],
        buffers=[pygltflib.Buffer(byteLength=len(blob))],
    )
    gltf.set_binary_blob(blob)
    gltf.save_binary(str(path))


def test_a_glb_mesh_terrain_grounds_as_the_same_plane(walk, tmp_path):
    # The same 10° slope as a GLB mesh (written by pygltflib) and as a JSON plane: the clip
    # grounds alike on both (the mesh's vertices are f32, so within 1e-5 m by FK).
    angle = np.radians(10.0)
    path = tmp_path / "slope.glb"
    _slope_glb(path, angle)
    on_mesh, mesh_report = ikarus.ground(walk, str(path))
    normal = [-np.sin(angle), np.cos(angle), 0.0]
    on_plane, plane_report = ikarus.ground(walk, {"plane": {"point": [0.0, 0.0, 0.0], "normal": normal}})
    assert mesh_report["unreached"] == plane_report["unreached"] == 0
    skeleton, _ = walk
    a, _ = ikarus.fk(skeleton, on_mesh)
    b, _ = ikarus.fk(skeleton, on_plane)
    np.testing.assert_allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match=r"broken.glb"):
        (tmp_path / "broken.glb").write_bytes(b"glTF\x02\x00\x00\x00")
        ikarus.ground(walk, str(tmp_path / "broken.glb"))
