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
