"""Type stubs of the compiled module ``ikarus._ikarus`` (see the Rust sources in ``src/``)."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
ArrayLike = Union[npt.ArrayLike, F64]
SolverSpec = Union[str, Mapping[str, Any]]

class Skeleton:
    """An immutable skeleton: names, parents, rest transforms (local), limits."""
    @staticmethod
    def open(source: str, scale: float = 1.0) -> Skeleton: ...
    @staticmethod
    def _from_state(state: str) -> Skeleton: ...
    def __len__(self) -> int: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def parents(self) -> npt.NDArray[np.int64]: ...
    def joint(self, name: str) -> int: ...
    @property
    def rest_translations(self) -> F64: ...
    @property
    def rest_rotations(self) -> F64: ...
    @property
    def rest_scales(self) -> F64: ...
    @property
    def limits(self) -> List[Dict[str, Any]]: ...
    def rest_pose(self) -> Pose: ...

class Pose:
    """A local pose: rotations (J, 4) xyzw, translations (J, 3), scales (J, 3)."""
    def __init__(
        self, rotations: ArrayLike, translations: ArrayLike, scales: Optional[ArrayLike] = None
    ) -> None: ...
    def __len__(self) -> int: ...
    @property
    def rotations(self) -> F64: ...
    @property
    def translations(self) -> F64: ...
    @property
    def scales(self) -> F64: ...

class Motion:
    """Frames of local poses: rotations (F, J, 4) xyzw, root translations (F, 3)."""
    def __init__(
        self, skeleton: Skeleton, rotations: ArrayLike, translations: ArrayLike, frame_time: float
    ) -> None: ...
    @staticmethod
    def _from_arrays(
        rotations: ArrayLike, translations: ArrayLike, scales: ArrayLike, frame_time: float
    ) -> Motion: ...
    def __len__(self) -> int: ...
    @property
    def frame_time(self) -> float: ...
    @property
    def frame_rate(self) -> float: ...
    @property
    def rotations(self) -> F64: ...
    @property
    def translations(self) -> F64: ...
    @property
    def root_translations(self) -> F64: ...
    @property
    def scales(self) -> F64: ...
    def frame(self, index: int) -> Pose: ...
    def resampled(self, fps: float) -> Motion: ...

class JointChain:
    """A URDF serial chain from a base link to a tip link, addressed by q (dof,)."""
    @staticmethod
    def from_urdf(path: str, base_link: str, tip_link: str) -> JointChain: ...
    @staticmethod
    def from_urdf_string(text: str, base_link: str, tip_link: str) -> JointChain: ...
    @property
    def dof(self) -> int: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def lower(self) -> F64: ...
    @property
    def upper(self) -> F64: ...
    @property
    def middle(self) -> F64: ...
    @property
    def skeleton(self) -> Skeleton: ...
    @property
    def base_link(self) -> str: ...
    @property
    def tip_link(self) -> str: ...
    def fk(self, q: ArrayLike) -> F64: ...

class BatchResult:
    """Per-target results of solve_batch, in input order."""
    @staticmethod
    def from_json(dof: int, text: str) -> BatchResult: ...
    def __len__(self) -> int: ...
    @property
    def q(self) -> F64: ...
    @property
    def status(self) -> List[str]: ...
    @property
    def position_error(self) -> F64: ...
    @property
    def rotation_error(self) -> F64: ...
    @property
    def time_ns(self) -> npt.NDArray[np.uint64]: ...
    @property
    def iterations(self) -> npt.NDArray[np.uint32]: ...
    @property
    def restarts(self) -> npt.NDArray[np.uint32]: ...
    @property
    def within_limits(self) -> npt.NDArray[np.bool_]: ...
    @property
    def message(self) -> List[Optional[str]]: ...
    @property
    def solver(self) -> List[Optional[str]]: ...
    def to_json(self) -> str: ...

class Report:
    """What one solve reported, measured by forward kinematics."""
    status: str
    position_error: float
    rotation_error: float
    iterations: int
    restarts: int
    limits_active: bool
    active_limits: List[str]
    message: Optional[str]
    solver: str
    time_ns: int
    @property
    def converged(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...
    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Report: ...

class PostureModel:
    """A learned posture model (PPCA on joint rotations): the example-based solver's prior."""
    @staticmethod
    def from_json(text: str) -> PostureModel: ...
    @staticmethod
    def load(path: str) -> PostureModel: ...
    def to_json(self) -> str: ...
    def save(self, path: str) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    @property
    def joints(self) -> List[str]: ...
    @property
    def dims(self) -> int: ...
    @property
    def variances(self) -> F64: ...
    @property
    def noise(self) -> float: ...
    @property
    def scale(self) -> float: ...
    @property
    def frames(self) -> int: ...
    @property
    def mean_rotations(self) -> F64: ...

MotionSource = Union[str, Tuple[Skeleton, Optional[Motion]]]

IkMode = str  # "compatible" (MMD's IK budget) or "exact"

def read(
    source: str,
    scale: float = 1.0,
    animation: Optional[str] = None,
    model: Optional[str] = None,
    motion: Optional[str] = None,
    mode: IkMode = "compatible",
    fps: Optional[float] = None,
) -> Tuple[Skeleton, Optional[Motion]]:
    """``source``: ``builtin:humanoid``, .bvh, .urdf, .gltf/.glb/.vrm, .vrma, .pmx/.pmd, or a
    .vmd played with IK on ``model`` (a PMX/PMD; or a PMX/PMD ``source`` with ``motion=`` a
    .vmd). ``mode``: MMD IK ``"compatible"`` or ``"exact"``; ``fps`` resamples (a VMD is
    evaluated with IK at every sampled frame)."""
def write(
    path: str,
    skeleton: Skeleton,
    motion: Motion,
    model: Optional[str] = None,
    scale: float = 1.0,
    into: Optional[str] = None,
    map: Optional[Mapping[str, str]] = None,
) -> None:
    """By extension: .bvh; .glb (new, or added ``into`` a glTF/GLB/VRM whose skin is the
    skeleton); .vmd for its PMX/PMD ``model`` (same ``scale``); .vrma (humanoid bones recognised
    from joint names, ``map`` ``{"hips": "joint name", ...}`` overriding)."""
def convert(
    source: str,
    destination: str,
    scale: float = 1.0,
    fps: Optional[float] = None,
    animation: Optional[str] = None,
    model: Optional[str] = None,
    motion: Optional[str] = None,
    mode: IkMode = "compatible",
    into: Optional[str] = None,
    map: Optional[Mapping[str, str]] = None,
) -> Dict[str, Any]:
    """``ikarus convert`` (the same library call): ``source`` read as by :func:`read`,
    written as by :func:`write` (a .vmd for the source's own MMD model). Returns ``{"joints",
    "frames", "frame_rate", "unmatched", "renamed", "bvh_root"}`` (``renamed``: for a .bvh, the
    ``(name, name in the file)`` of joints whose names BVH cannot hold as they are;
    ``bvh_root``: the channel-less ROOT written above several roots, else None)."""
def learn(
    motions: Sequence[MotionSource],
    skeleton: Union[None, str, Skeleton] = None,
    dims: int = 12,
    every: int = 1,
) -> PostureModel: ...
def retarget(
    source: MotionSource,
    target: Union[str, Skeleton],
    contacts: bool = True,
    hands: bool = False,
    ground: bool = True,
    map: Optional[Mapping[str, str]] = None,
    source_map: Optional[Mapping[str, str]] = None,
    source_model: Optional[str] = None,
) -> Tuple[Skeleton, Motion, Dict[str, Any]]:
    """``source``: a file (BVH, glTF/GLB/VRM, VRMA, or a .vmd played with IK on
    ``source_model``) or a ``(Skeleton, Motion)`` pair; ``target``: a file or a Skeleton."""
def ground(
    motion: Tuple[Skeleton, Motion],
    terrain: Union[str, Mapping[str, Any]],
    time_constant: float = 0.1,
) -> Tuple[Motion, Dict[str, Any]]:
    """``motion`` in metres; ``terrain`` a JSON file or a ``{"plane": ...}`` /
    ``{"heightfield": ...}`` dict."""
def track(
    trackers: Union[str, Mapping[str, ArrayLike]],
    skeleton: Union[str, Skeleton],
    points: Optional[int] = None,
    fps: Optional[float] = None,
    calibration_frame: int = 0,
    floor: float = 0.0,
) -> Tuple[Motion, Dict[str, Any]]:
    """``trackers``: a recording file (JSON/CSV) or ``{"head": (frames, 7) array, ...}`` rows
    ``[x, y, z, qx, qy, qz, qw]`` with ``fps``; ``skeleton``: the avatar (file or Skeleton)."""
def fk(skeleton: Skeleton, pose: Union[Pose, Motion]) -> Tuple[F64, F64]: ...
def solve(
    skeleton: Skeleton,
    effectors: Sequence[Mapping[str, Any]],
    pose: Optional[Pose] = None,
    solver: Optional[SolverSpec] = None,
    base: Optional[str] = None,
    tolerance: Union[None, float, Mapping[str, float]] = None,
) -> Tuple[Pose, Report]: ...
def solve_batch(
    chain: JointChain,
    targets: ArrayLike,
    seeds: Optional[ArrayLike] = None,
    solver: Optional[SolverSpec] = None,
    threads: Optional[int] = None,
    tolerance: float = 1e-5,
    budget_us: Optional[float] = None,
) -> BatchResult: ...
def mocap(
    skeleton: Skeleton,
    points: ArrayLike,
    layout: Union[str, Sequence[str]],
    fps: float = 30.0,
    confidence: Optional[ArrayLike] = None,
    up: Optional[str] = None,
    units: float = 1.0,
    bone_lengths: str = "fit",
    filter: bool = False,
    min_confidence: float = 0.3,
    contacts: bool = False,
) -> Tuple[Skeleton, Motion, Dict[str, Any]]: ...
def read_keypoints(path: Union[str, "os.PathLike[str]"]) -> Dict[str, Any]: ...
def pool_info() -> Tuple[int, List[int]]: ...
