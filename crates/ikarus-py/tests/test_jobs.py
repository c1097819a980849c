"""ikarus.jobs.process_file over the shared BVH files: a real Dask LocalCluster with worker
processes writes the same bytes as a single process."""

import pickle
from pathlib import Path

import pytest

import ikarus
from ikarus.jobs import process_file


@pytest.fixture(scope="module")
def bvh_files(data_dir):
    files = sorted(str(p) for p in Path(data_dir, "bvh").glob("*.bvh"))
    assert files, "no BVH files in the shared data"
    return files


def _run_local(files, out_dir, **config):
    out_dir.mkdir()
    return [process_file(src, str(out_dir / (Path(src).stem + ".bvh")), **config) for src in files]


def test_process_file_pickles_by_reference():
    assert pickle.loads(pickle.dumps(process_file)) is process_file


def test_process_file_options(bvh_files, tmp_path):
    src = bvh_files[0]
    summary = process_file(src, str(tmp_path / "a.glb"), fps=10.0, scale=0.01)
    skeleton, motion = ikarus.read(str(tmp_path / "a.glb"))
    assert summary["frames"] == len(motion) and summary["frame_time"] == pytest.approx(0.1)
    original, _ = ikarus.read(src, scale=0.01)
    assert len(skeleton) == len(original)
    # Solving on every frame: pin the first end joint a little above its rest place.
    source, source_motion = ikarus.read(src)
    leaf = next(i for i in range(len(source)) if i not in set(source.parents))
    positions, _ = ikarus.fk(source, source_motion.frame(0))
    goal = (positions[leaf] + [0.0, 0.01, 0.0]).tolist()
    effectors = [{"joint": source.names[leaf], "position": goal}]
    out = tmp_path / "pinned.bvh"
    summary = process_file(src, str(out), fps=5.0, effectors=effectors, solver="lm")
    assert summary["converged"] is not None and summary["converged"] > 0


def test_dask_local_cluster_matches_single_process(bvh_files, tmp_path):
    distributed = pytest.importorskip("distributed")
    expected_dir = tmp_path / "local"
    expected = _run_local(bvh_files, expected_dir, fps=24.0)
    out_dir = tmp_path / "dask"
    out_dir.mkdir()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        futures = client.map(
            process_file,
            bvh_files,
            [str(out_dir / (Path(src).stem + ".bvh")) for src in bvh_files],
            fps=24.0,
        )
        summaries = client.gather(futures)
        workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    for got, want in zip(summaries, expected):
        assert {k: v for k, v in got.items() if k != "dst"} == {k: v for k, v in want.items() if k != "dst"}
        assert Path(got["dst"]).read_bytes() == Path(want["dst"]).read_bytes(), got["src"]
