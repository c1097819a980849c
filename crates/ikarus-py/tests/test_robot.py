"""JointChain and solve_batch against ikarus_solve::batch::solve_batch on the same targets."""

import os
import pickle
import threading

import numpy as np
import pytest

import ikarus


@pytest.fixture(scope="module")
def chain(robot_ref):
    return ikarus.JointChain.from_urdf(robot_ref["urdf"], robot_ref["base"], robot_ref["tip"])


def _errors(values):
    return np.array([np.inf if v is None else v for v in values])


def assert_same(result, expected):
    """Bit-equal to the Rust results: q, status, both errors, iterations, restarts."""
    assert len(result) == len(expected)
    np.testing.assert_array_equal(result.q, np.array([r["q"] for r in expected]))
    assert result.status == [r["status"] for r in expected]
    np.testing.assert_array_equal(result.position_error, _errors(r["position_error"] for r in expected))
    np.testing.assert_array_equal(result.rotation_error, _errors(r["rotation_error"] for r in expected))
    np.testing.assert_array_equal(result.iterations, [r["iterations"] for r in expected])
    np.testing.assert_array_equal(result.restarts, [r["restarts"] for r in expected])
    np.testing.assert_array_equal(result.within_limits, [r["within_limits"] for r in expected])


def test_chain_shape(chain, robot_ref):
    assert chain.dof == 7
    assert len(chain.names) == 7
    assert np.all(chain.lower < chain.upper)
    np.testing.assert_array_equal(chain.middle, (chain.lower + chain.upper) / 2)


def test_chain_fk_is_the_rust_fk(chain, robot_ref):
    # The protocol's targets are FK of the true joint vectors: the same code, the same bits.
    frames = chain.fk(np.array(robot_ref["q_true"]))
    np.testing.assert_array_equal(frames, np.array(robot_ref["targets"]))
    np.testing.assert_array_equal(chain.fk(np.array(robot_ref["q_true"][0])), frames[0])


def test_batch_lm_bit_equal(chain, robot_ref):
    result = ikarus.solve_batch(chain, np.array(robot_ref["targets"]), solver="lm", threads=2)
    assert_same(result, robot_ref["lm"])
    # Independent ground truth: FK of the returned q reaches the converged targets.
    reached = chain.fk(result.q)
    ok = np.array(result.status) == "converged"
    assert ok.mean() > 0.99
    targets = np.array(robot_ref["targets"])
    assert np.all(np.linalg.norm(reached[ok, :3] - targets[ok, :3], axis=1) < 1e-5)
    assert np.all(result.time_ns[ok] > 0)


def test_threads_do_not_change_results(chain, robot_ref):
    targets = np.array(robot_ref["targets"])
    one = ikarus.solve_batch(chain, targets, threads=1)
    two = ikarus.solve_batch(chain, targets, threads=2)
    three = ikarus.solve_batch(chain, targets, threads=3)
    for other in (two, three):
        np.testing.assert_array_equal(one.q, other.q)
        assert one.status == other.status
        np.testing.assert_array_equal(one.position_error, other.position_error)


def test_rows_are_independent(chain, robot_ref):
    # A row's result is the one it gets alone: reversing the rows reverses the results.
    targets = np.array(robot_ref["targets"])
    forward = ikarus.solve_batch(chain, targets, threads=1)
    backward = ikarus.solve_batch(chain, targets[::-1], threads=2)
    np.testing.assert_array_equal(forward.q, backward.q[::-1])
    alone = ikarus.solve_batch(chain, targets[17:18], threads=1)
    np.testing.assert_array_equal(alone.q[0], forward.q[17])


def test_position_targets_and_per_row_seeds(chain, robot_ref):
    targets = np.array(robot_ref["targets"])[:50, :3]
    seeds = np.array(robot_ref["position_seeds"])
    result = ikarus.solve_batch(chain, targets, seeds=seeds, solver="lm", threads=2)
    assert_same(result, robot_ref["position_lm"])
    assert np.all(result.rotation_error == 0)


def test_one_seed_for_all_rows(chain, robot_ref):
    targets = np.array(robot_ref["targets"])[:20]
    default = ikarus.solve_batch(chain, targets)
    seeded = ikarus.solve_batch(chain, targets, seeds=chain.middle)
    np.testing.assert_array_equal(default.q, seeded.q)


def test_auto_closed_form(chain, robot_ref):
    # `auto` detects the arm's closed form once per thread; check it by FK, not by its report.
    targets = np.array(robot_ref["targets"])[:50]
    result = ikarus.solve_batch(chain, targets, solver="auto", threads=2)
    assert set(result.solver) <= {"srs_arm", "lm"} and "srs_arm" in result.solver
    reached = chain.fk(result.q)
    ok = np.array(result.status) == "converged"
    assert ok.mean() > 0.9
    np.testing.assert_allclose(reached[ok, :3], targets[ok, :3], atol=1e-5)
    assert np.all(result.within_limits[ok])


def test_solver_dict_and_kwargs(chain, robot_ref):
    targets = np.array(robot_ref["targets"])[:30]
    as_dict = ikarus.solve_batch(
        chain, targets, solver={"kind": "jacobian", "method": "dls", "iteration": {"max_iterations": 200}}
    )
    as_kwargs = ikarus.solve_batch(chain, targets, solver="jacobian/dls", iteration={"max_iterations": 200})
    assert_same(as_dict, robot_ref["dls_30"])
    assert_same(as_kwargs, robot_ref["dls_30"])


def test_non_contiguous_and_integer_inputs(chain, robot_ref):
    targets = np.array(robot_ref["targets"])[:10]
    wide = np.zeros((10, 14))
    wide[:, ::2] = targets
    np.testing.assert_array_equal(ikarus.solve_batch(chain, wide[:, ::2]).q, ikarus.solve_batch(chain, targets).q)
    zeros = ikarus.solve_batch(chain, np.zeros((2, 3), dtype=np.int32))
    assert len(zeros) == 2


@pytest.mark.parametrize(
    "targets, match",
    [
        (np.zeros((4, 5)), r"targets: expected shape \(N, 7\) or \(N, 3\), got \(4, 5\)"),
        (np.zeros(7), r"targets: expected shape \(N, 7\) or \(N, 3\), got \(7,\)"),
        (np.array([[0.1, 0.2, np.nan]]), r"targets: non-finite value at index \(0, 2\)"),
        (np.array([["a", "b", "c"]]), r"targets: expected float64 numbers"),
        (np.zeros((1, 3), dtype=complex), r"targets: expected float64 numbers"),
    ],
)
def test_bad_targets_raise(chain, targets, match):
    with pytest.raises(ValueError, match=match):
        ikarus.solve_batch(chain, targets)


def test_bad_arguments_raise(chain):
    targets = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"seeds: expected shape \(2, 7\), got \(2, 6\)"):
        ikarus.solve_batch(chain, targets, seeds=np.zeros((2, 6)))
    with pytest.raises(ValueError, match=r"seeds: non-finite"):
        ikarus.solve_batch(chain, targets, seeds=np.full(7, np.inf))
    with pytest.raises(ValueError, match=r"solver: unknown variant `nope`"):
        ikarus.solve_batch(chain, targets, solver="nope")
    with pytest.raises(ValueError, match=r"threads: must be at least 1"):
        ikarus.solve_batch(chain, targets, threads=0)


def test_rust_errors_keep_their_message(robot_ref):
    with pytest.raises(ValueError, match=r"no link `nowhere` in robot"):
        ikarus.JointChain.from_urdf(robot_ref["urdf"], "nowhere", "iiwa_link_ee")
    with pytest.raises(ValueError, match=r"malformed XML"):
        ikarus.JointChain.from_urdf_string("<robot", "a", "b")


def test_non_unit_orientation_is_an_invalid_row_not_a_crash(chain, robot_ref):
    targets = np.array(robot_ref["targets"])[:3].copy()
    targets[1, 3:] = [0.0, 0.0, 0.0, 2.0]
    result = ikarus.solve_batch(chain, targets)
    assert result.status[1] == "invalid_input"
    assert "unit quaternion" in result.message[1]
    assert result.status[0] == "converged" and result.status[2] == "converged"
    assert np.isinf(result.position_error[1])


def test_pickling(chain, robot_ref):
    again = pickle.loads(pickle.dumps(chain))
    assert again.names == chain.names and again.dof == chain.dof
    targets = np.array(robot_ref["targets"])[:5].copy()
    targets[0, 3:] = [0, 0, 0, 3]
    result = ikarus.solve_batch(again, targets)
    copy = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(copy.q, result.q)
    np.testing.assert_array_equal(copy.position_error, result.position_error)
    np.testing.assert_array_equal(copy.time_ns, result.time_ns)
    assert copy.status == result.status and copy.message == result.message


def test_gil_is_released(chain, robot_ref):
    # While one thread is inside solve_batch, the main thread keeps running Python code; with
    # the GIL held it would not run a single bytecode until the call returned.
    targets = np.tile(np.array(robot_ref["targets"]), (10, 1))
    started, done = threading.Event(), threading.Event()
    ticks = 0

    def work():
        started.set()
        ikarus.solve_batch(chain, targets, threads=1)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    while not done.is_set():
        ticks += 1
    worker.join()
    assert ticks > 10_000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_pool_after_fork(chain, robot_ref):
    targets = np.array(robot_ref["targets"])[:20]
    expected = ikarus.solve_batch(chain, targets, threads=2).q
    pid = os.fork()
    if pid == 0:  # child: the parent's pool threads do not exist here
        code = 1
        try:
            q = ikarus.solve_batch(chain, targets, threads=2).q
            code = 0 if np.array_equal(q, expected) and ikarus._ikarus.pool_info()[0] == os.getpid() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
