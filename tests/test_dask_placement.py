"""sklearn_ga.dask: where the learners' tasks run, and what a placement cannot
change (the model); the scheduler lost during a fit."""

import contextlib
import pickle
import sys
import threading

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from test_dask import (  # noqa: E402
    CHUNK,
    _mixed_once,
    _same,
    _stream,
    client,  # noqa: F401 (the fixture)
)

from sklearn_ga import GARegressor  # noqa: E402
from sklearn_ga.dask import ParameterMixing  # noqa: E402
from sklearn_ga.dask._placement import executors  # noqa: E402

SHARES = [list(range(8)), list(range(8, 16))]
WORKERS = ["a", "b"]


def _moves_and_hops(chosen, layout):
    moved = sum(worker != layout[i]
                for share, where in zip(SHARES, chosen, strict=True)
                for i, worker in zip(share, where, strict=True))
    hops = sum(a != b for where in chosen
               for a, b in zip(where, where[1:], strict=False))
    return moved, hops


@pytest.mark.parametrize("layout", ["aaaaaaaabbbbbbbb", "abbbbbaabbaaaaab",
                                    "abbabbabbbabbaba", "abababababababab"])
@pytest.mark.parametrize("hop", [1.0, 1e9])
def test_each_worker_learns_its_part_of_every_step(layout, hop):
    # Partitions of 100 bytes: a hop of 1 byte is cheaper than any move, one of
    # 1e9 dearer than all of them.
    holders = [{worker} for worker in layout]
    chosen = executors(SHARES, holders, [100] * 16, WORKERS, hop)
    moved, hops = _moves_and_hops(chosen, layout)
    # The learners never meet on a worker: each step's two partitions are
    # learned on the two workers (each learns 8 of the 16 in a pass).
    assert all(chosen[0][s] != chosen[1][s] for s in range(8))
    if hop > 100:
        # Each share on one worker, the pair of them that moves least; no hop.
        assert hops == 0 and moved == min(
            layout[:8].count(b) + layout[8:].count(a) for a, b in ("ab", "ba"))
    else:
        # The model hops instead: a partition moves only where the two
        # learners' partitions of a step lie on one worker.
        assert moved == sum(layout[s] == layout[s + 8] for s in range(8))
    assert {w for where in chosen for w in where} <= set(WORKERS)


def test_a_partition_held_twice_moves_for_neither():
    holders = [{"a"}] * 4 + [{"a", "b"}] * 4
    chosen = executors([[0, 1, 2, 3], [4, 5, 6, 7]], holders, [100] * 8,
                       WORKERS, 1e9)
    assert chosen == [["a"] * 4, ["b"] * 4]


def _placed(session, X, y, worker_of):
    """X, y as dask arrays whose CHUNK-row partitions lie on the workers
    ``worker_of(index)`` (an index into the sorted workers), and their holders."""
    workers = sorted(session.scheduler_info()["workers"])
    parts = []
    for index, start in enumerate(range(0, len(X), CHUNK)):
        rows = slice(start, start + CHUNK)
        parts.append(session.persist(
            [dask.delayed(np.array)(X[rows]), dask.delayed(np.array)(y[rows])],
            workers=[workers[worker_of(index)]]))
    distributed.wait([v for part in parts for v in part])
    dX = da.concatenate([da.from_delayed(x, (CHUNK, X.shape[1]), dtype=float)
                         for x, _ in parts])
    dy = da.concatenate([da.from_delayed(v, (CHUNK,), dtype=float)
                         for _, v in parts])
    held = session.who_has([x for x, _ in parts])
    holders = [workers.index(min(held[x.key])) for x, _ in parts]
    return dX, dy, holders


def test_two_placements_give_the_same_bits(client):  # noqa: F811
    # The same partitions in ranges, interleaved, and all on one worker: the
    # tasks run elsewhere, moving partitions or the model, and the model is
    # the same, bit for bit.
    X, y = _stream(m=4000)
    estimator = GARegressor(psi="eg_pm", U=3.0, eta=0.05, average=True)
    runs, layouts = [], []
    for worker_of in (lambda i: i // 4, lambda i: i % 2, lambda i: 0):
        dX, dy, holders = _placed(client, X, y, worker_of)
        layouts.append(holders)
        runs.append(ParameterMixing(estimator, max_iter=3, tol=None).fit(dX, dy))
    assert layouts == [[0] * 4 + [1] * 4, [0, 1] * 4, [0] * 8]
    for run in runs[1:]:
        _same(run.estimator_, runs[0].estimator_)
        assert np.array_equal(run.loss_curve_, runs[0].loss_curve_)
        assert np.array_equal(run.estimator_.coef_, runs[0].estimator_.coef_)


def test_the_scheduler_lost_during_fit_is_a_clear_error(client):  # noqa: F811
    # The scheduler's process killed while the passes run: fit raises within
    # the client's connect timeout, and the model is as it was before the call.
    import cloudpickle
    from distributed.deploy.subprocess import SubprocessCluster

    X, y = _stream(m=4000)
    dX, dy = da.from_array(X, chunks=(CHUNK, -1)), da.from_array(y, chunks=CHUNK)
    model = ParameterMixing(GARegressor(eta=0.01), max_iter=2, tol=None).fit(dX, dy)
    with dask.config.set({"distributed.comm.timeouts.connect": "5s"}):
        cluster = SubprocessCluster(n_workers=1, threads_per_worker=1,
                                    dashboard_address=":0")
        other = distributed.Client(cluster, set_as_default=False)
    errors = []

    def fit():
        try:
            with other.as_current():
                model.set_params(max_iter=500).fit(dX, dy)
        except RuntimeError as error:
            errors.append(error)

    try:
        other.wait_for_workers(1, timeout=60)
        before = pickle.dumps(model.set_params(max_iter=500))
        thread = threading.Thread(target=fit, daemon=True)
        thread.start()
        # (The scheduler's process cannot import this module: the check is
        # sent by value.)
        cloudpickle.register_pickle_by_value(sys.modules[_mixed_once.__module__])
        try:
            while not other.run_on_scheduler(_mixed_once):
                thread.join(0.005)
        finally:
            cloudpickle.unregister_pickle_by_value(
                sys.modules[_mixed_once.__module__])
        cluster.scheduler.process.kill()
        thread.join(60)  # (a hang fails the test instead of stalling it)
        assert not thread.is_alive()
    finally:
        for worker in cluster.workers.values():
            with contextlib.suppress(ProcessLookupError):  # (ended with it)
                worker.process.kill()
        other.close()
        # (Its close asks the scheduler that is gone, until a timeout.)
        with contextlib.suppress(TimeoutError):
            cluster.close(timeout=5)
    assert len(errors) == 1
    assert "went away during fit" in str(errors[0])
    assert "as it was before fit" in str(errors[0])
    assert pickle.dumps(model) == before
