"""The lock-step grid of the CV estimators: the runs of every (eta, U)
configuration, learning the same rows in one pass.

:class:`Grid` owns them: each configuration's parameters (rows of ``thetas`` and
``intercepts``), its compiled loop (built by ``Configuration.trial_loop``, the one
door), its progressive loss and the trials seen. Dense data are cut into chunks
small enough to stay in cache, and each chunk runs through the loop of every
configuration before the next chunk is read; with ``n_jobs`` threads, each learns
a share of the configurations on the same window of chunks (the loops run without
the GIL), so X is still read from memory about once. One row runs through every
configuration in one compiled call (``GridRow``). Selection is by progressive
validation (HKW §V tunes the same way): the cumulative on-line matching loss, each
prediction made before its example is learned, is an honest estimate of the loss
on unseen data of the same stream. The estimators that hold a grid are in
``_search`` and ``_cv``.
"""

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.model_selection import check_cv
from sklearn.utils.validation import assert_all_finite

from ._codes import Status
from ._configuration import Configuration
from ._kernel import BLOCK_ROWS, GridRow, block_grams, block_run
from ._passes import TrialRunner
from ._state import batch_columns, read_only

# Dense rows per chunk: about this many bytes of X, so a chunk stays in cache while
# every configuration learns it.
CHUNK_BYTES = 1 << 19
# Threads meet after every window of this many chunks (a few MiB, held by a shared
# cache), not after each chunk: fewer waits for the slowest thread.
WINDOW_CHUNKS = 8
# psi = identity learns dense rows in blocks (block_run) from this many weight
# vectors (configurations x outputs) on: the blocks' Gram matrices cost
# BLOCK_ROWS / (4 x that) of the work, which the products make up for from here.
BLOCK_COLUMNS = 4


class Grid:
    """The runs of a grid of configurations (see the module docstring).

    Parameters
    ----------
    config : Configuration
        The settings the configurations share (their loops are built from it).
    configs : list of (float, float)
        The (eta, U) of each configuration.
    intercept_etas : list of float
        The intercept's rate beside each configuration.
    thetas, intercepts : ndarray of shape (G, k, n) and (G, k)
        The parameters, which the loops update in place.
    losses : ndarray of shape (G,)
        The progressive losses (``inf``: diverged, out of the grid).
    t : int
        The trials seen.
    n_jobs : int or None
        The threads of a pass (the results do not depend on them).
    """

    __slots__ = ("config", "configs", "intercept_etas", "thetas", "intercepts",
                 "losses", "t", "n_jobs", "loops", "row")

    def __init__(self, config, configs, intercept_etas, thetas, intercepts, losses,
                 t=0, n_jobs=None):
        self.config, self.configs = config, list(configs)
        self.intercept_etas = [float(rate) for rate in intercept_etas]
        self.thetas, self.intercepts, self.losses = thetas, intercepts, losses
        self.t, self.n_jobs = t, n_jobs
        # The loops of the configurations learning (index -> TrialLoop), None
        # until a pass builds them; the one-row call on them, None until built.
        self.loops, self.row = None, None

    @classmethod
    def start(cls, config, configs, intercept_etas, k, n, n_jobs=None):
        """The grid before its first trial: every configuration at Theta_1."""
        G = len(configs)
        return cls(config, configs, intercept_etas,
                   config.initial_parameters((G, k, n)), np.zeros((G, k)),
                   np.zeros(G), 0, n_jobs)

    # -- what the estimators read ---------------------------------------------------

    def views(self):
        """Read-only views of ``thetas``, ``intercepts`` and ``losses``, which
        later calls update in place."""
        return read_only(self.thetas, self.intercepts, self.losses)

    def selected(self, g):
        """``(loop, theta, intercept)`` of configuration g (a loop that updates
        the rows it is given in place)."""
        return self.live_loops()[g], self.thetas[g], self.intercepts[g]

    def replace(self, name, array):
        """Assign ``thetas``, ``intercepts`` or ``losses`` (a checked float64 array
        of their shape): the next pass builds its loops on the parameters."""
        setattr(self, name, array)
        self.loops, self.row = None, None

    def reconfigure(self, config):
        """Go on under changed shared settings (``p``, ``fit_intercept``, ``phi``
        of as many outputs): new loops on the parameters."""
        if config != self.config:
            self.config = config
            self.loops, self.row = None, None

    # -- learning -------------------------------------------------------------------

    def live_loops(self):
        """The loops of the configurations still learning (finite loss), built on
        copies of the parameters the first time they are asked for, so that the
        arrays given out stay as they were until a pass succeeds."""
        if self.loops is None:
            self.thetas, self.intercepts = self.thetas.copy(), self.intercepts.copy()
            self.loops = {int(g): self._loop(g) for g in
                          np.flatnonzero(np.isfinite(self.losses))}
        return self.loops

    def _loop(self, g, terms=None):
        eta, U = self.configs[g]
        return self.config.trial_loop(self.thetas[g], self.intercepts[g], eta, U,
                                      terms=terms,
                                      intercept_eta=self.intercept_etas[g])

    def snapshot(self, X):
        """What :meth:`restore` puts back if a call on batch X fails: the kept
        loops save what X may change (for CSR, its columns)."""
        if self.loops is not None:
            columns = batch_columns(X)
            for loop in self.loops.values():
                loop.save(columns)
        loops = None if self.loops is None else dict(self.loops)
        return loops, self.thetas, self.intercepts, self.losses.copy(), self.t

    def restore(self, snapshot):
        loops, self.thetas, self.intercepts, losses, self.t = snapshot
        if loops is not None:
            for loop in loops.values():
                loop.restore()
        self.loops, self.row = loops, None
        self.losses[...] = losses

    def learn(self, X, Y, sample_weight, rows=None):
        """One on-line pass over ``rows`` of the batch (all by default) for every
        configuration still learning, adding to ``losses``; a configuration that
        diverges gets an infinite loss and leaves the grid. The configurations are
        shared among ``n_jobs`` threads, which meet after each window of rows; each
        runs over the same chunks and blocks, with the same sums, whatever the
        number of threads, so the results do not depend on it."""
        loops = self.live_loops()
        self.row = None
        if rows is None:
            rows = np.arange(X.shape[0], dtype=np.intp)
        # Dense rows in chunks that stay in cache while every configuration learns
        # them. CSR rows whole: a CSR run of an exponential psi ends by writing theta
        # back from its terms, a log per coordinate touched, which chunks of fewer
        # than n nonzeros would pay for every nonzero.
        chunk = (max(1, rows.shape[0]) if sp.issparse(X)
                 else max(16, CHUNK_BYTES // (8 * X.shape[1])))
        size = chunk * WINDOW_CHUNKS
        windows = [rows[start:start + size] for start in range(0, rows.shape[0], size)]
        # (One row is learned alike on any number of threads: on this one.)
        threads = (1 if rows.shape[0] == 1 else
                   max(1, min(effective_n_jobs(self.n_jobs), len(loops))))
        # (A threshold phi steps at exact ties a = 0, which the blocks' rounding
        # would move; a block of one row is the loop's trial in another order.)
        config = self.config
        blocks = (not sp.issparse(X) and config.loop_psi.blocks and rows.shape[0] > 1
                  and not config.phi.threshold
                  and len(loops) * Y.shape[1] >= BLOCK_COLUMNS)
        with ThreadPoolExecutor(threads) if threads > 1 else nullcontext() as pool:
            def on_threads(function, *arguments):
                return list((pool.map if pool else map)(function, *arguments))

            if blocks:
                self._learn_blocks(X, Y, sample_weight, windows, on_threads, threads)
                return
            run = TrialRunner(X, Y, sample_weight, estimator_name=config.name)
            losses = self.losses

            def learn(configurations, window):
                """Run ``configurations`` over the chunks of ``window``; the
                diverged."""
                diverged = []
                for start in range(0, window.shape[0], chunk):
                    for g in configurations:
                        if g in diverged:
                            continue
                        loops[g].loss_sum = losses[g]
                        status, _, _ = run(loops[g], window[start:start + chunk])
                        if status != Status.OK:
                            losses[g] = np.inf
                            diverged.append(g)
                        else:
                            losses[g] = loops[g].loss_sum  # (Engine._epochs')
                return diverged

            for window in windows:
                shares = [list(loops)[i::threads] for i in range(threads)]
                for diverged in on_threads(learn, shares, [window] * threads):
                    for g in diverged:
                        del loops[g]

    def _learn_blocks(self, X, Y, sample_weight, windows, on_threads, threads):
        """:meth:`learn` for psi = identity on dense rows, in blocks of rows whose
        activations and updates are products of many rows with many configurations
        (``block_run``: the on-line rule, exact but for rounding; its derivation is
        in the compiled core's ``lockstep.pxi``)."""
        loops, losses = self.loops, self.losses
        diverged = np.ones(len(losses), np.uint8)
        diverged[list(loops)] = 0
        etas = np.array([eta for eta, _ in self.configs])
        grams = np.empty((-(-windows[0].shape[0] // BLOCK_ROWS), BLOCK_ROWS ** 2))
        for window in windows:
            if window[-1] - window[0] == window.shape[0] - 1 and np.all(
                    window[1:] > window[:-1]):  # (consecutive rows: views)
                window = slice(window[0], window[-1] + 1)
            X_w, Y_w = np.ascontiguousarray(X[window]), np.ascontiguousarray(Y[window])
            weights = (np.empty(0) if sample_weight is None
                       else np.ascontiguousarray(sample_weight[window], np.float64))
            bounds = np.linspace(0, -(-X_w.shape[0] // BLOCK_ROWS), threads + 1,
                                 dtype=np.intp)
            on_threads(partial(block_grams, X_w, grams), bounds[:-1], bounds[1:])
            before = diverged.sum()
            on_threads(partial(block_run, X_w, Y_w, weights, grams, self.thetas,
                               self.intercepts, etas, phi=self.config.phi.code,
                               fit_intercept=self.config.fit_intercept, losses=losses,
                               diverged=diverged),
                       np.array_split(np.flatnonzero(diverged == 0), threads))
            if diverged.sum() > before:
                # Non-finite inputs, not a divergence, if X has any.
                assert_all_finite(X_w, input_name="X",
                                  estimator_name=self.config.name)
        for g in np.flatnonzero(diverged):
            if g in loops:
                losses[g] = np.inf
                del loops[g]

    def learn_row(self, X, target):
        """The one-row pass of :meth:`learn` on one row X (a C-contiguous float64
        ndarray or a canonical CSR row of int32 indices) of encoded target
        ``target`` (k,), in one compiled call: the index of the least loss after
        it, or -1 with nothing changed where the call must take :meth:`learn`
        (another row, a trial that fails)."""
        row = self.row
        if row is None:
            loops = self.live_loops()
            configurations = np.fromiter(loops, np.intp, len(loops))
            row = self.row = GridRow(
                list(loops.values()), configurations,
                np.array([self.configs[g][0] for g in configurations]),
                np.array([self.intercept_etas[g] for g in configurations]))
        if type(X) is np.ndarray:
            best = row.learn(X, target, self.losses)
        else:
            best = row.learn_csr(X.data, X.indices, X.indptr, X.shape[1], target,
                                 self.losses)
        if best >= 0:
            self.t += 1
        return best

    # -- copies ---------------------------------------------------------------------

    def __getstate__(self):
        # Plain data: the loops as their terms, from which a copy builds its own.
        loops = self.loops
        return {"name": self.config.name, "settings": self.config.settings,
                "configs": self.configs, "intercept_etas": self.intercept_etas,
                "thetas": self.thetas, "intercepts": self.intercepts,
                "losses": self.losses, "t": self.t, "n_jobs": self.n_jobs,
                "terms": None if loops is None else
                {g: loop.terms() for g, loop in loops.items()}}

    @classmethod
    def restored(cls, state):
        """The grid of ``state`` (a :meth:`__getstate__`'s)."""
        grid = cls.__new__(cls)
        grid.__setstate__(state)
        return grid

    def __setstate__(self, state):
        config = Configuration.restored(state["name"], state["settings"])
        self.__init__(config, state["configs"], state["intercept_etas"],
                      np.array(state["thetas"]), np.array(state["intercepts"]),
                      np.array(state["losses"]), state["t"], state["n_jobs"])
        terms = state["terms"]
        if terms is not None:
            self.loops = {g: self._loop(g, value) for g, value in terms.items()}


def kfold_losses(grid, X, y, Y, sample_weight, cv, groups, classifier):
    """Mean held-out matching loss per configuration of ``grid`` over the folds of
    ``cv``, each fold learned by a grid of its own from Theta_1.

    The folds are those of scikit-learn's searches: stratified for a classifier
    given an int, the splitter given ``y`` and ``groups``. Each fold's loss is
    the sample-weighted mean over its test rows (weight 0 counts as absent).
    """
    splitter = check_cv(cv, y, classifier=classifier)
    G, k, n = len(grid.configs), Y.shape[1], X.shape[1]
    config, totals, folds = grid.config, np.zeros(G), 0
    for train, test in splitter.split(X, y, groups):
        weights = None if sample_weight is None else sample_weight[test]
        if weights is not None and not np.sum(weights) > 0:
            continue  # nothing held out
        folds += 1
        fold = Grid.start(config, grid.configs, grid.intercept_etas, k, n,
                          grid.n_jobs)
        fold.learn(X, Y, sample_weight, train.astype(np.intp))
        totals[~np.isfinite(fold.losses)] = np.inf
        for g, loop in fold.loops.items():  # (the configurations not diverged)
            A = np.asarray(X[test] @ loop.weights().T) + fold.intercepts[g]
            with np.errstate(all="ignore"):
                loss = np.average(config.phi.sample_loss(Y[test], A), weights=weights)
            totals[g] += loss if np.isfinite(loss) else np.inf
    if folds == 0:
        raise ValueError(
            f"Every test fold of cv={cv!r} has zero total sample weight: nothing "
            "is held out to select by. Use other folds or weights.")
    return totals / folds
