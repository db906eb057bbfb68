"""Where the learners' tasks run (:mod:`sklearn_ga.dask`): the learners and
their shares are fixed by the partitions' order alone, so a placement changes
the time of a fit, never its model. This module chooses, once per fit, the
worker that learns each partition of each share, from where the partitions lie.
"""

import numpy as np
from distributed import wait
from scipy.optimize import linear_sum_assignment

from ._data import held_rows

# What a hop of the model between two workers costs besides its bytes: the
# latency of a task that waits for another, in bytes of a fast link (a few
# milliseconds at a gigabyte a second).
HOP_BYTES = 4 * 2**20


def placement(client, workers, parts, rows, held, n_learners, n_features, passes):
    """The learners' contiguous shares of the partitions, in order, each as
    ``(runs, first, share)``: its runs ``[(worker, parts)]`` (consecutive
    partitions learned on one worker, one task; the model is sent from run to
    run), those of the first pass (cut before each partition that moves too, so
    that the partitions held are learned while the others arrive), and its
    share of the rows learned (the weight of its model in the mix; a share
    without rows has no learner); and the moves, ``[(worker, part)]`` in the
    order the first pass reads them. The workers are those of
    :func:`executors`; they are preferred, not required, so that a lost
    worker's tasks run elsewhere."""
    wait([v for part in parts for v in part if v is not None])
    holders = [set() for _ in parts]
    index = {part[0].key: i for i, part in enumerate(parts)}
    for key, held_by in client.who_has([part[0] for part in parts]).items():
        holders[index[key]] = set(held_by)
    sizes = client.nbytes([v.key for part in parts for v in part[:2]],
                          summary=False)
    # A model pickles its parameters and its loop's terms: about three (k, n)
    # arrays (k = 1 here: the outputs are not known yet), each pass.
    hop = passes * (24 * n_features + HOP_BYTES)
    learned = [r - held_rows(r, held) for r in rows]
    shares = [list(share) for share in np.array_split(
        np.arange(len(parts)), min(n_learners, len(parts)))
        if sum(learned[i] for i in share)]
    total = float(sum(learned))
    chosen = executors(shares, holders, [sum(sizes[v.key] for v in part[:2])
                                         for part in parts], workers, hop)
    result, moves = [], []
    for share, where in zip(shares, chosen, strict=True):
        runs, first = [], []
        for i, worker in zip(share, where, strict=True):
            moved = worker not in holders[i]
            for cuts, plans in ((False, runs), (moved, first)):
                if plans and plans[-1][0] == worker and not cuts:
                    plans[-1][1].append(parts[i])
                else:
                    plans.append((worker, [parts[i]]))
            if moved:
                moves.append((worker, parts[i]))
        # (Each share as rows / total, as the mean of the mix weighs it.)
        result.append((runs, first, sum(learned[i] for i in share) / total))
    return result, moves


def arrived(*values):
    """Nothing: a task on the worker that will learn ``values``, so that they
    are sent there while it learns others."""


def executors(shares, holders, sizes, workers, hop):
    """The worker that learns each partition of each share: of two plans, the
    one that moves fewer bytes (a partition moves once, to a worker that keeps
    it for the later passes; a change of worker within a share costs ``hop``
    bytes, the model's over every pass). Both keep each worker's part of a pass
    to its fair number of learners, and so of partitions for equal shares:

    - *settled*: each share on one worker, the one that holds most of its bytes;
    - *stepped*: the learners advance in step, the s-th partitions of all the
      shares learned at once, each on a different worker where it can, chosen
      where it lies unless moving it costs less than the model's hop. Where the
      scheduler spread the partitions over the workers, a share's partitions
      are then learned where they lie, the model hopping between them, and only
      those move that the balance needs.

    ``holders``: the workers that hold each partition; ``sizes``: its bytes."""
    def moved(i, worker):
        return 0 if worker in holders[i] else sizes[i]

    def cost(plan):
        return sum(moved(i, w) for share, where in zip(shares, plan, strict=True)
                   for i, w in zip(share, where, strict=True)) + hop * sum(
            a != b for where in plan for a, b in zip(where, where[1:], strict=False))

    every = range(len(shares))
    placed = _assign(workers, [[sum(moved(i, w) for i in shares[g])
                                for w in workers] for g in every])
    settled = [[workers[placed[g]]] * len(shares[g]) for g in every]
    stepped = [[] for _ in every]
    for step in range(max(len(share) for share in shares)):
        active = [g for g in every if len(shares[g]) > step]
        placed = _assign(workers, [[moved(shares[g][step], w) + (
            hop if step and w != stepped[g][-1] else 0) for w in workers]
            for g in active])
        for g, w in zip(active, placed, strict=True):
            stepped[g].append(workers[w])
    return min((settled, stepped), key=cost)


def _assign(workers, costs):
    """The worker (an index) of each of ``len(costs)`` learners at the least
    total cost (``costs[g][w]``), at most ceil(learners / workers) a worker."""
    room = -(-len(costs) // len(workers))
    slots = np.repeat(np.asarray(costs, dtype=float), room, axis=1)
    learners, chosen = linear_sum_assignment(slots)
    return [int(chosen[g]) // room for g in np.argsort(learners)]
