"""The TRAC-IK protocol from Python: ikarus.solve_batch beside ikpy and optik-py in one run.

Targets as crates/ikarus-bench/src/trac_ik.rs makes them: 10,000 joint vectors uniform inside
the limits (splitmix64, seed 42; continuous joints in [-pi, pi]) mapped by forward kinematics to
6-D tip frames in the base link's frame; every solve seeded from the middle of the limits;
success = position error < 1e-5 m and rotation error < 1e-5 rad with every joint inside its
limits, judged by ikarus's FK of the returned q. LM with the Rust bench's settings
(`trac_ik_lm_config()`: at most 2,000 sweeps, 200 restarts, a stall window of 3).

Run from a release build, in a venv with ikpy and optik-py:

    python -m venv target/bench-venv
    target/bench-venv/bin/pip install numpy ikpy optik-py
    (cd crates/ikarus-py && maturin build --release -o ../../target/wheels)
    target/bench-venv/bin/pip install target/wheels/ikarus-*.whl
    target/bench-venv/bin/python crates/ikarus-py/bench/trac_ik.py [--targets 10000] [--peers 200]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from pathlib import Path

import numpy as np

import ikarus

MASK64 = (1 << 64) - 1
# = ikarus_bench::trac_ik_lm_config(). stall_window must be given: LmConfig::default() sets it
# to 3, but an `iteration` object in JSON starts from IterationSettings' default (16).
LM = {"kind": "lm", "iteration": {"max_iterations": 2000, "restarts": 200, "stall_window": 3}}
TOLERANCE = 1e-5


def splitmix(seed: int):
    """The same stream as ikarus-bench's SplitMix::next_f64."""
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield ((z ^ (z >> 31)) >> 11) / float(1 << 53)


def protocol_targets(chain: ikarus.JointChain, count: int, seed: int = 42):
    rng = splitmix(seed)
    q = np.empty((count, chain.dof))
    for i in range(count):
        for k, (lo, hi) in enumerate(zip(chain.lower, chain.upper)):
            if not (math.isfinite(lo) and math.isfinite(hi)):
                lo, hi = -math.pi, math.pi
            q[i, k] = lo + (hi - lo) * next(rng)
    return q, chain.fk(q)


def quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle between unit quaternions (rows, xyzw): 2 atan2(|v|, |w|) of a * conj(b)."""
    ax, ay, az, aw = a.T
    bx, by, bz, bw = -b[:, 0], -b[:, 1], -b[:, 2], b[:, 3]
    w = aw * bw - ax * bx - ay * by - az * bz
    x = aw * bx + ax * bw + ay * bz - az * by
    y = aw * by - ax * bz + ay * bw + az * bx
    z = aw * bz + ax * by - ay * bx + az * bw
    return 2 * np.arctan2(np.sqrt(x * x + y * y + z * z), np.abs(w))


def success(chain, targets, q) -> np.ndarray:
    ok = np.all(np.isfinite(q), axis=1)
    frames = chain.fk(np.where(ok[:, None], q, chain.middle))
    position = np.linalg.norm(frames[:, :3] - targets[:, :3], axis=1)
    rotation = quat_angle(frames[:, 3:], targets[:, 3:])
    legal = np.all((q >= chain.lower - 1e-9) & (q <= chain.upper + 1e-9), axis=1)
    return ok & legal & (position < TOLERANCE) & (rotation < TOLERANCE)


def figures(times_us: np.ndarray) -> str:
    return f"median {np.median(times_us):.1f} us, p99 {np.percentile(times_us, 99):.1f} us, mean {times_us.mean():.1f} us"


def to_matrix(row: np.ndarray) -> np.ndarray:
    x, y, z, w = row[3:]
    m = np.eye(4)
    m[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    m[:3, 3] = row[:3]
    return m


def run_ikpy(urdf, base, chain, targets):
    try:
        import ikpy.chain
    except ImportError as e:
        return f"ikpy: not installed ({e})"
    import warnings

    warnings.filterwarnings("ignore")
    robot = ikpy.chain.Chain.from_urdf_file(urdf, base_elements=[base])
    active = [link.joint_type in ("revolute", "prismatic", "continuous") for link in robot.links]
    robot = ikpy.chain.Chain(robot.links, active_links_mask=active)
    index = [i for i, a in enumerate(active) if a]
    assert len(index) == chain.dof, (len(index), chain.dof)
    full_seed = np.zeros(len(robot.links))
    full_seed[index] = chain.middle
    # The same forward kinematics as ikarus's on a random q, or the comparison means nothing.
    probe = np.zeros(len(robot.links))
    probe[index] = chain.middle + 0.3
    mine = to_matrix(chain.fk(chain.middle + 0.3))
    np.testing.assert_allclose(robot.forward_kinematics(probe)[:3, 3], mine[:3, 3], atol=1e-9)
    q = np.empty((len(targets), chain.dof))
    times = np.empty(len(targets))
    for i, row in enumerate(targets):
        m = to_matrix(row)
        start = time.perf_counter()
        full = robot.inverse_kinematics(m[:3, 3], m[:3, :3], orientation_mode="all", initial_position=full_seed)
        times[i] = (time.perf_counter() - start) * 1e6
        q[i] = np.asarray(full)[index]
    ok = success(chain, targets, q)
    return f"ikpy {ikpy.__version__ if hasattr(ikpy, '__version__') else ''}: {ok.mean():.2%} solved, {figures(times)}"


def run_optik(urdf, base, tip, chain, targets):
    try:
        import optik
    except ImportError as e:
        return f"optik-py: not installed ({e})"
    robot = optik.Robot.from_urdf_file(urdf, base, tip)
    robot.set_parallelism(1)
    # Its default stops at a squared error of 1e-6 (about 1e-3 m), which solves none of the
    # protocol's 1e-5 targets; tol_f = 1e-10 is the protocol's threshold squared.
    config = optik.SolverConfig(tol_f=1e-10)
    q = np.full((len(targets), chain.dof), np.nan)
    times = np.empty(len(targets))
    seed = chain.middle.tolist()
    for i, row in enumerate(targets):
        m = to_matrix(row)
        start = time.perf_counter()
        found = robot.ik(config, m, seed)
        times[i] = (time.perf_counter() - start) * 1e6
        if found is not None:
            q[i] = found[0]
    ok = success(chain, targets, q)
    return f"optik-py (tol_f 1e-10, 1 thread): {ok.mean():.2%} solved, {figures(times)}"


def main():
    here = Path(__file__).resolve()
    data = os.environ.get("IKARUS_SHARED_DATA") or str(here.parents[4] / "shared" / "data")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", default=str(Path(data) / "urdf" / "kukaIiwa7.urdf"))
    parser.add_argument("--base", default="iiwa_link_0")
    parser.add_argument("--tip", default="iiwa_link_ee")
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--peers", type=int, default=200, help="targets for ikpy and optik-py")
    args = parser.parse_args()

    chain = ikarus.JointChain.from_urdf(args.urdf, args.base, args.tip)
    _, targets = protocol_targets(chain, args.targets)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    print(f"{Path(args.urdf).name} {args.base} -> {args.tip}, {chain.dof} dof, {len(targets)} targets")

    ikarus.solve_batch(chain, targets[:200], solver=LM, threads=1)  # warm-up
    for threads in (1, 2):
        start = time.perf_counter()
        r = ikarus.solve_batch(chain, targets, solver=LM, threads=threads)
        wall = time.perf_counter() - start
        ok = success(chain, targets, r.q)
        inner = r.time_ns / 1e3
        print(
            f"ikarus solve_batch threads={threads}: {ok.mean():.2%} solved; wall {wall:.3f} s = "
            f"{wall / len(targets) * 1e6:.1f} us per target from Python; Rust solve times in the same "
            f"call: {figures(inner)}; Python per-solve / Rust mean = {wall / len(targets) * 1e6 / inner.mean():.2f}"
            + ("" if threads == 1 else f" (x{threads} threads, per-thread {wall * threads / len(targets) * 1e6:.1f} us)")
        )

    # Overhead of one small call: a one-effector LM solve on the built-in humanoid, and a
    # one-row solve_batch, wall time from Python minus the solve time Rust measured.
    humanoid = ikarus.Skeleton.open("builtin:humanoid")
    effectors = [{"joint": "leftHand", "position": [0.5, 1.2, 0.3]}]
    for label, call in (
        ("solve (humanoid, 1 effector, lm)", lambda: ikarus.solve(humanoid, effectors, solver="lm")[1].time_ns),
        ("solve_batch (1 row)", lambda: int(ikarus.solve_batch(chain, targets[:1], solver=LM, threads=1).time_ns[0])),
    ):
        walls, inners = [], []
        for _ in range(2000):
            start = time.perf_counter_ns()
            inner = call()
            walls.append(time.perf_counter_ns() - start)
            inners.append(inner)
        walls, inners = np.array(walls) / 1e3, np.array(inners) / 1e3
        print(f"{label}: wall median {np.median(walls):.1f} us, solve median {np.median(inners):.1f} us, "
              f"overhead median {np.median(walls - inners):.1f} us")

    if args.peers <= 0:
        return
    subset = targets[: args.peers]
    r = ikarus.solve_batch(chain, subset, solver=LM, threads=1)
    print(f"ikarus on the first {len(subset)}: {success(chain, subset, r.q).mean():.2%} solved, {figures(r.time_ns / 1e3)}")
    print(run_optik(args.urdf, args.base, args.tip, chain, subset))
    print(run_ikpy(args.urdf, args.base, chain, subset))


if __name__ == "__main__":
    main()
