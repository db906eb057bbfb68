"""Goal 9: one model on a Dask cluster, ParameterMixing against dask-ml's Incremental.

A ``LocalCluster`` of 2 worker processes of 1 thread each (this machine's cores)
holds a stream in 16 partitions, made on the workers and persisted there: dense
rows of +-1 (800,000 x 200 at scale 1) and CSR rows of 2^18 features. Two layouts:
"ranges", each worker holding a contiguous range of the partitions (as nodes that
each read their own files, Vowpal Wabbit's shards), and "scheduler", wherever the
scheduler put them (spread over both, often unevenly: the learners then advance
in step, the model hopping to where a partition lies or the partition moving,
once, see doc/user_guide/distributed.rst; a row prints each stream's placement
before and after its fits, which leave the partitions they moved on both). Both
wrappers run the same number of passes of ``partial_fit`` over the same partitions
in the same order: ``Incremental(shuffle_blocks=False)`` one block after another
(``fit``, then ``partial_fit`` for each further pass), ``ParameterMixing`` every
partition at once from the mixed model. The rows give the wall time of the passes
(the best of BENCH_REPEAT, at most 3, A/B in turn), the machine's load average
meanwhile, and the holdout loss of the two models, for GD and EG± (each at the
same rate in both). The streams are persisted as dask arrays, as data read for
several passes are held.
"""

import functools
import itertools
import os
import warnings

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp
from _timing import REPEAT, SCALE, best_times, header, report, rows
from distributed import wait

from sklearn_ga import GARegressor
from sklearn_ga.dask import ParameterMixing

PARTITIONS = 16
PASSES = 5
SPARSE_FEATURES = 2**18
SUPPORT = 256  # the sparse target's features
DENSE_TARGET = 10  # nonzero weights of the dense target, +-0.5: l1 norm 5


def _dense_rows(seed, m, n):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(m, n))
    target = np.zeros(n)
    target[:DENSE_TARGET] = 0.5 * np.array([1.0, -1.0] * (DENSE_TARGET // 2))
    return X, X @ target + 0.1 * rng.standard_normal(m)


def _sparse_rows(seed, m, n, nnz=32):
    # A quarter of each row's entries on the target's support, so that every
    # row has a target to learn; the others anywhere among the 2^18 features.
    rng = np.random.default_rng(seed)
    on = nnz // 4
    columns = np.concatenate([rng.integers(0, SUPPORT, (m, on)),
                              rng.integers(SUPPORT, n, (m, nnz - on))], axis=1)
    X = sp.csr_matrix((rng.choice([-1.0, 1.0], m * nnz), np.sort(columns).ravel(),
                       np.arange(0, m * nnz + 1, nnz)), shape=(m, n))
    X.sum_duplicates()
    target = np.zeros(n)
    target[:SUPPORT] = np.where(np.arange(SUPPORT) % 2, 0.25, -0.25)
    return X, X @ target + 0.1 * rng.standard_normal(m)


def _stream(make, m, n, client, layout):
    """(X, y) as dask arrays of PARTITIONS partitions made on the workers and
    persisted there, and a holdout set in memory. ``layout="ranges"``: each
    worker makes a contiguous range of the partitions, as nodes that each read
    their own range of files; ``"scheduler"``: where the scheduler puts them."""
    size = m // PARTITIONS
    workers = sorted(client.scheduler_info()["workers"])
    meta = sp.csr_matrix((0, n)) if make is _sparse_rows else np.empty((0, n))
    parts = [dask.delayed(make, nout=2)(seed, size, n) for seed in range(PARTITIONS)]
    if layout == "ranges":
        parts = [client.persist([part[0], part[1]], workers=[
            workers[seed * len(workers) // PARTITIONS]])
            for seed, part in enumerate(parts)]
    else:
        flat = client.persist([value for part in parts for value in (part[0],
                                                                      part[1])])
        parts = list(zip(flat[::2], flat[1::2], strict=True))
    wait([value for part in parts for value in part])
    X = da.concatenate([da.from_delayed(part[0], (size, n), dtype=float, meta=meta)
                        for part in parts])
    y = da.concatenate([da.from_delayed(part[1], (size,), dtype=float)
                        for part in parts])
    # Persisted as dask arrays, as data read once for many passes are held: the
    # wrappers then read the chunks where they lie, with no task of their own.
    X, y = client.persist([X, y])
    wait([X, y])
    return X, y, make(PARTITIONS + 1, max(1000, size // 4), n)


def _placement(client, X):
    """Where each partition of X lies: A or B (the workers, sorted), * on both."""
    workers = sorted(client.scheduler_info()["workers"])
    chunks = client.compute(list(X.to_delayed()[:, 0]))
    held = client.who_has(chunks)
    return "".join("*" if len(held[chunk.key]) > 1 else
                   "AB"[workers.index(min(held[chunk.key]))] for chunk in chunks)


def _holdout_loss(model, holdout):
    X, y = holdout
    return float(np.mean((model.predict(X) - y) ** 2) / 2)


def _rounds(client, make, m, n, layout, rounds, placements):
    """The stream of each round, its placement appended to ``placements``. A
    fit leaves the partitions it moved on both workers, where the next would
    find them: where the scheduler puts them, each round has a stream (and a
    placement) of its own."""
    stream = None
    for _ in range(rounds):
        if stream is None or layout == "scheduler":
            stream = None  # (the last one's memory, released first)
            stream = _stream(make, m, n, client, layout)
            placements.append(_placement(client, stream[0]))
        yield stream


def pass_floor(placement, learners=2):
    """The least time of a pass, in partitions learned, where no partition moves:
    each learner takes its contiguous share of ``placement`` (the partitions'
    workers, in order) in order, each partition on its worker, which learns one
    at a time (1 thread); the best of all schedules (dynamic programming over the
    learners' positions). ``Incremental`` takes ``len(placement)``."""
    size = len(placement) // learners
    shares = [placement[i * size:(i + 1) * size] for i in range(learners)]

    @functools.cache
    def least(positions):
        live = [c for c in range(learners) if positions[c] < size]
        if not live:
            return 0
        steps = []
        for chosen in itertools.chain.from_iterable(
                itertools.combinations(live, r) for r in range(1, len(live) + 1)):
            workers = [shares[c][positions[c]] for c in chosen]
            if len(set(workers)) == len(workers):  # (one partition a worker)
                steps.append(1 + least(tuple(
                    p + (c in chosen) for c, p in enumerate(positions))))
        return min(steps)

    return least((0,) * learners)


def _compare(case, streams, estimator):
    """Time both wrappers on each of ``streams``, A/B in turn, the best of each;
    report the ratio and the holdout losses (of the last round)."""
    from dask_ml.wrappers import Incremental

    data, results, best = {}, {}, [np.inf, np.inf]

    def mixing():
        results["mixing"] = ParameterMixing(estimator, max_iter=PASSES, tol=None
                                            ).fit(*data["Xy"]).estimator_

    def incremental():
        model = Incremental(estimator, shuffle_blocks=False).fit(*data["Xy"])
        for _ in range(PASSES - 1):
            model.partial_fit(*data["Xy"])
        results["incremental"] = model.estimator_

    for stream in streams:
        data["Xy"], holdout = stream[:2], stream[2]
        with warnings.catch_warnings():
            # (Incremental warns that the estimator has no scoring; expected.)
            warnings.simplefilter("ignore", UserWarning)
            best = np.minimum(best, best_times(mixing, incremental, repeat=1))
    data.clear()
    # (The load average over the last minute, as the row's: the 2 cores are shared.)
    report(f"9. {case}: {PASSES} passes, ParameterMixing (load "
           f"{os.getloadavg()[0]:.1f})", best[0], best[1], "Incremental", 0.6)
    ours, theirs = (_holdout_loss(results[name], holdout)
                    for name in ("mixing", "incremental"))
    print(f"| 9. {case}: holdout loss (no time) | {ours:.6g} | Incremental "
          f"{theirs:.6g} | {ours / theirs:.3f} | <= 1.02 | "
          f"{'yes' if ours <= 1.02 * theirs else 'NO'} |", flush=True)


def cases():
    from distributed import Client, LocalCluster

    rounds = min(REPEAT, 3)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        m = rows(800_000)
        for layout in ("ranges", "scheduler"):
            for name, make, n, models in (
                    ("dense", _dense_rows, 200, (
                        GARegressor(eta=0.001),
                        GARegressor(psi="eg_pm", U=5.0, eta=0.01))),
                    ("CSR", _sparse_rows, SPARSE_FEATURES, (
                        GARegressor(eta=0.01),
                        GARegressor(psi="eg_pm", U=64.0, eta=0.0005)))):
                shape = (f"{name} {m}x{'2^18' if n > 200 else n} in "
                         f"{PARTITIONS}, {layout}")
                placements = []
                for psi, estimator in zip(("GD", "EG±"), models, strict=True):
                    _compare(f"{psi} {shape}", _rounds(
                        client, make, m, n, layout, rounds, placements), estimator)
                floors = ", ".join(
                    f"{placement} ({pass_floor(placement) / PARTITIONS:.3f})"
                    for placement in dict.fromkeys(placements))
                print(f"| 9. {shape}: the partitions' workers (A, B), and in "
                      f"brackets the least time / Incremental's if no partition "
                      f"moves (pass_floor) | {floors} | - | - | - | - |", flush=True)


if __name__ == "__main__":
    from run_all import cpu

    print(f"{cpu()}, {len(os.sched_getaffinity(0))} cores; scale {SCALE}, "
          f"best of {min(REPEAT, 3)}")
    header()
    cases()
