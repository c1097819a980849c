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
def data_dir() -> Path:
    """``IKARUS_SHARED_DATA`` (or ``IKARUS_TEST_DATA``), else ``../shared/data`` beside the
    repository, as the ikarus-testdata crate finds it."""
    env = os.environ.get("IKARUS_SHARED_DATA") or os.environ.get("IKARUS_TEST_DATA")
    root = Path(__file__).resolve().parents[3]
    path = Path(env) if env else root.parent / "shared" / "data"
    if not path.is_dir():
        _missing(f"shared data ({path})")
    return path


@pytest.fixture(scope="session")
def posture_ref(reference) -> dict:
    if reference.get("posture") is None:
        _missing("shared BVH data")
    return reference["posture"]


@pytest.fixture(scope="session")
def retarget_ref(reference) -> dict:
    if reference.get("retarget") is None:
        _missing("shared BVH, glTF and MMD data")
    return reference["retarget"]


@pytest.fixture(scope="session")
def mmd_ref(reference) -> dict:
    if reference.get("mmd") is None:
        _missing("shared MMD data")
    return reference["mmd"]


@pytest.fixture(scope="session")
def convert_ref(reference) -> dict:
    if reference.get("convert") is None:
        _missing("shared BVH and glTF data")
    return reference["convert"]
