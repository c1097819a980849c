"""Shared fixtures: the Rust reference results (written by tests/python.rs) and the shared data.

Without ``IKARUS_PY_REFERENCE`` (pytest run by hand) the comparisons with Rust are skipped;
without the shared data the data tests are skipped, and in CI (``CI`` set) they fail."""

import json
import os
from pathlib import Path

import pytest


def _in_ci() -> bool:
    return os.environ.get("CI", "") not in ("", "0", "false")


def _missing(what: str):
    if _in_ci():
        pytest.fail(f"{what} missing; CI requires it")
    pytest.skip(f"{what} missing")


@pytest.fixture(scope="session")
def reference() -> dict:
    path = os.environ.get("IKARUS_PY_REFERENCE")
    if not path:
        _missing("IKARUS_PY_REFERENCE (run through `cargo test -p ikarus-py`)")
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def robot_ref(reference) -> dict:
    if reference["robot"] is None:
        _missing("shared URDF data")
    return reference["robot"]


@pytest.fixture(scope="session")
def bvh_ref(reference) -> dict:
    if reference["bvh"] is None:
        _missing("shared BVH data")
    return reference["bvh"]


@pytest.fixture(scope="session")
def assert_same_humanoid_fk():
    """A check that a skeleton and motion read back (`back`, `back_motion`: a VRMA's own
    humanoid nodes) put at least 15 joints named as in `skeleton` where FK of `motion` puts
    them, to f32."""

    import numpy as np

    import ikarus

    def check(skeleton, motion, back, back_motion):
        expected, _ = ikarus.fk(skeleton, motion)
        found, _ = ikarus.fk(back, back_motion)
        common = [n for n in back.names if n in skeleton.names]
        assert len(common) >= 15
        a = expected[:, [skeleton.joint(n) for n in common]]
        b = found[:, [back.joint(n) for n in common]]
        assert np.abs(a - b).max() < 1e-4

    return check


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``IKARUS_SHARED_DATA`` (or ``IKARUS_TEST_DATA``), else ``../shared/data`` beside the
    repository, as the ikarus-testdata crate finds it."""
    env = os.environ.get("IKARUS_SHARED_DATA") or os.environ.get("IKARUS_TEST_DATA")
    root = Path(__file__).resolve().parents[3]
    path = Path(env) if env else root.parent / "shared" / "data"
    if not path.is_dir():
        _missing(f"shared data ({path})")
    return path


def _reference_part(key: str, needs: str):
    """A session fixture `<key>_ref`: the reference's `key` part, or a skip (a failure in CI)
    naming the shared data it `needs` when the reference has none."""

    @pytest.fixture(scope="session", name=f"{key}_ref")
    def part(reference) -> dict:
        if reference.get(key) is None:
            _missing(needs)
        return reference[key]

    return part


posture_ref = _reference_part("posture", "shared BVH data")
retarget_ref = _reference_part("retarget", "shared BVH, glTF and MMD data")
mmd_ref = _reference_part("mmd", "shared MMD data")
convert_ref = _reference_part("convert", "shared BVH and glTF data")
