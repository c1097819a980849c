"""Dataset-scale jobs: top-level, picklable functions that take file names and return small
dicts, so that Dask, Ray or ``multiprocessing`` can map them over a dataset unchanged.

Each worker process imports ``ikarus`` once; the Rust side keeps no state between calls."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import ikarus


def process_file(
    src: str,
    dst: str,
    *,
    scale: float = 1.0,
    fps: Optional[float] = None,
    animation: Optional[str] = None,
    model: Optional[str] = None,
    mode: str = "compatible",
    effectors: Optional[Sequence[Mapping[str, Any]]] = None,
    solver: Any = "lm",
    base: Optional[str] = None,
    **solver_options: Any,
) -> dict:
    """Reads the motion in ``src`` (BVH, glTF/GLB/VRM, VRMA, or a VMD played with IK in
    ``mode`` on ``model``, its PMX/PMD), optionally rescales it (``scale``), resamples it
    (``fps``) and solves ``effectors`` (task-format dicts, model space) on every frame with
    ``solver`` (keyword options are the solver's fields), then writes ``dst`` (``.bvh``,
    ``.glb``, ``.vrma``, or ``.vmd`` for ``model``, by extension).

    Returns ``{"src", "dst", "frames", "joints", "frame_time", "converged"}`` (``converged``:
    frames whose solve converged, ``None`` without effectors)."""
    skeleton, motion = ikarus.read(
        src, scale=scale, animation=animation, model=model, mode=mode, fps=fps
    )
    if motion is None:
        raise ValueError(f"src: {src} has no motion")
    converged = None
    if effectors:
        rotations = motion.rotations
        translations = motion.translations
        converged = 0
        for f in range(len(motion)):
            pose, report = ikarus.solve(
                skeleton, effectors, motion.frame(f), solver, base, **solver_options
            )
            rotations[f] = pose.rotations
            translations[f] = pose.translations
            converged += report.converged
        motion = ikarus.Motion(skeleton, rotations, translations, motion.frame_time)
    for_model = model if dst.lower().endswith(".vmd") else None
    ikarus.write(dst, skeleton, motion, model=for_model, scale=scale)
    return {
        "src": src,
        "dst": dst,
        "frames": len(motion),
        "joints": len(skeleton),
        "frame_time": motion.frame_time,
        "converged": converged,
    }
