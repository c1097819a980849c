"""ikarus: inverse kinematics for characters and robots, computed in Rust.

Conventions: right-handed, +Y up (URDF robots keep their own +Z-up frames), metres, radians,
quaternions ``[x, y, z, w]``, float64 arrays. Every call goes to the Rust crates (``ikarus-core``,
``ikarus-solve``, ``ikarus-formats``, ``ikarus-anim``, ``ikarus-jobs``); this package only
passes arguments on.

- ``Skeleton``, ``Pose``, ``Motion``; ``read`` / ``write`` files (VMD motions played on their
  PMX/PMD model with its IK; a ``.glb`` written ``into`` an avatar; a ``.vrma`` with a bone
  ``map``); ``convert`` one file to another as ``ikarus convert``; ``fk`` forward kinematics.
- ``solve``: one IK task with the JSON task format's names (``ikarus solve``).
- ``JointChain.from_urdf`` and ``solve_batch``: many robot targets at once, off the GIL, on the
  package's own thread pool.
- ``mocap``: 3-D keypoints to a motion; ``read_keypoints`` reads a keypoint file (JSON, CSV,
  ``.npy``) as ``ikarus mocap`` does.
- ``learn`` a ``PostureModel`` from motions, for the example-based solver
  (``solve(..., solver={"kind": "example", "model": model_or_path})``).
- ``retarget``: a humanoid motion onto another humanoid, feet planted.
- ``ground``: a humanoid motion on a slope, stairs or a heightfield.
- ``track``: an avatar posed from VR trackers (head and hands, hips, feet).
- ``ikarus.jobs.process_file``: one file in, one file out, for Dask or Ray over a dataset.

Wrong shapes, dtypes or NaN raise ``ValueError`` naming the argument; errors from Rust keep
their message.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from . import _ikarus
from ._ikarus import (
    BatchResult,
    JointChain,
    Motion,
    Pose,
    PostureModel,
    Report,
    Skeleton,
    convert,
    fk,
    learn,
    mocap,
    read,
    read_keypoints,
    retarget,
    ground,
    track,
    write,
)

__all__ = [
    "BatchResult",
    "JointChain",
    "Motion",
    "Pose",
    "PostureModel",
    "Report",
    "Skeleton",
    "convert",
    "fk",
    "learn",
    "mocap",
    "read",
    "read_keypoints",
    "retarget",
    "ground",
    "track",
    "solve",
    "solve_batch",
    "write",
]

SolverSpec = Union[str, Mapping[str, Any]]


def _solver(solver: Optional[SolverSpec], options: Mapping[str, Any]) -> Optional[SolverSpec]:
    """Merges keyword options into a solver spec: ``("lm", {"lambda": 0.1})`` becomes
    ``{"kind": "lm", "lambda": 0.1}`` (the JSON task format's names)."""
    if not options:
        return solver
    if solver is None:
        raise ValueError("solver: options given without a solver kind")
    if isinstance(solver, Mapping):
        return {**solver, **options}
    kind, _, method = str(solver).partition("/")
    spec: dict = {"kind": kind}
    if method:
        spec["method"] = method
    spec.update(options)
    return spec


def solve(
    skeleton: Skeleton,
    effectors: Sequence[Mapping[str, Any]],
    pose: Optional[Pose] = None,
    solver: Optional[SolverSpec] = None,
    base: Optional[str] = None,
    tolerance: Union[None, float, Mapping[str, float]] = None,
    **options: Any,
) -> Tuple[Pose, Report]:
    """Solves one IK task and returns ``(pose, report)``.

    ``effectors``: dicts ``{"joint": name, "position": [x, y, z], "orientation": [x, y, z, w],
    "weight": 1.0}`` in model space. ``solver``: a kind (``"lm"``, ``"ccd"``, ``"fabrik"``,
    ``"jacobian/dls"``, ``"two_bone"``, ...) or a dict as in the task format; extra keyword
    arguments are that dict's fields (``solve(s, e, solver="lm", iteration={"max_iterations":
    50})``). The example-based solver takes ``model``: ``"builtin:humanoid"``, a model file's
    path or a :class:`PostureModel` (``solve(s, e, solver="example", model=learn(...))``).
    ``base``: the joint that stays fixed. ``tolerance``: metres and radians (one number
    or ``{"position": .., "rotation": ..}``). The GIL is released while solving."""
    return _ikarus.solve(skeleton, effectors, pose, _solver(solver, options), base, tolerance)


def solve_batch(
    chain: JointChain,
    targets: Any,
    seeds: Any = None,
    solver: SolverSpec = "lm",
    threads: Optional[int] = None,
    tolerance: float = 1e-5,
    budget_us: Optional[float] = None,
    **options: Any,
) -> BatchResult:
    """Solves every row of ``targets`` for ``chain``; results in input order.

    ``targets``: ``(N, 7)`` tip position + quaternion ``[x, y, z, w]`` in the base link's frame,
    or ``(N, 3)`` positions. ``seeds``: ``(N, dof)`` or ``(dof,)``, default the middle of the
    limits. ``solver`` and keyword options as in :func:`solve`. ``threads``: default one per
    core; results do not depend on it. Returns ``r.q`` ``(N, dof)``, ``r.status`` (N strings),
    ``r.position_error``, ``r.rotation_error``, ``r.time_ns``, ``r.iterations``, ..."""
    return _ikarus.solve_batch(
        chain, targets, seeds, _solver(solver, options), threads, tolerance, budget_us
    )
