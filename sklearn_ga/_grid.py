"""The lock-step grid of the CV estimators: every (eta, U) configuration learns the
same rows in one pass, and the one of least progressive (or k-fold) loss is selected.

Every configuration of the grid keeps its own parameters and compiled loop; dense
data are cut into chunks small enough to stay in cache, and each chunk runs through
the loop of every configuration before the next chunk is read; with ``n_jobs``
threads, each learns a share of the configurations on the same window of chunks (the
loops run without the GIL), so X is still read from memory about once. Selection is by
progressive validation (HKW §V tunes the same way): the cumulative on-line matching
loss, each prediction made before its example is learned, is an honest estimate of
the loss on unseen data of the same stream. The public estimators are in ``_cv``.
"""

import operator
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.base import is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import assert_all_finite

from ._base import auto_scale
from ._codes import Status
from ._kernel import BLOCK_ROWS, block_grams, block_run
from ._passes import TrialRunner
from ._psi import PSI
from ._state import Kept, KeptLoop, batch_columns, read_only, read_only_in_place

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
# Us="auto": these multiples of the U that U="auto" would choose (auto_scale).
AUTO_US = (0.25, 1.0, 4.0)
# The attributes of the model that fit finished (_finish).
FINISHED = ("theta_", "intercept_", "coef_")


class _KeptGrid(Kept):
    """The trial loops of the configurations still learning (configuration index ->
    loop), kept for the next ``partial_fit`` (:class:`Kept`: ``theta`` and
    ``intercept`` are the views given out as ``thetas_`` and ``intercepts_``).
    """

    __slots__ = ("loops",)

    def __init__(self, key, loops, thetas, intercepts):
        super().__init__(key, thetas, intercepts)
        self.loops = loops


class _GridMixin:
    """Lock-step training and selection shared by the two CV estimators."""

    # The grid searches the explicit GA rule with the matching loss, unclipped, at a
    # constant rate (the intercept's: see _configuration_loop).
    update, loss, Y, alpha, intercept_eta = "explicit", "matching", None, 0.0, "auto"
    learning_rate, average = "constant", False
    _assignable_parameters = False

    _grid_constraints = {
        "psi": [StrOptions(set(PSI))],
        "etas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "Us": ["array-like", StrOptions({"auto"})],
        "p": [Interval(Real, 2, None, closed="left")],
        "fit_intercept": ["boolean"],
        "cv": [None, "cv_object"],
        "n_jobs": [None, Integral],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, None, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    def _grid(self, scale):
        """The (eta, U) configurations, U varying slowest (1 unless psi has grid_U;
        ``Us="auto"``: ``AUTO_US`` times ``scale``, the first call's auto_scale).

        An int ``etas`` is ``np.logspace(-4, 0, etas)``, divided by U^2 for a psi
        that grid_U (EG±: HKW Theorem 2's rate 1 / (4 U^2 X_inf^2 Z) scales so).
        """
        grid_U = self._configuration().psi.grid_U
        etas = (np.logspace(-4, 0, self.etas) if isinstance(self.etas, Integral)
                else np.asarray(self.etas, dtype=np.float64).ravel())
        Us = (np.ones(1) if not grid_U else scale * np.array(AUTO_US)
              if isinstance(self.Us, str) else
              np.asarray(self.Us, dtype=np.float64).ravel())
        for name, values in (("etas", etas), ("Us", Us)):
            if values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{name} must hold positive finite numbers; got "
                                 f"{values!r}.")
        per_U = grid_U and isinstance(self.etas, Integral)
        return [(float(eta / U**2 if per_U else eta), float(U))
                for U in Us for eta in etas]

    def _grid_scale(self, X, Y):
        """The U that ``Us="auto"`` multiplies (1.0 where U is not searched)."""
        if isinstance(self.Us, str) and self._configuration().psi.grid_U:
            return auto_scale(self.psi, self.phi, X, Y, self.fit_intercept)
        return 1.0

    def _intercept_of(self, g):
        """The intercept's rate beside configuration g: the rate given in
        ``etas``, which an int ``etas`` divides by U^2 for the weights only (the
        intercept is a gradient-descent weight, KW01 Theorem 3's block of its
        own). Gradient descent's grid runs in blocks at one rate."""
        eta, U = self._configs[g]
        per_U = self._configuration().psi.grid_U and isinstance(self.etas, Integral)
        return eta * U**2 if per_U else eta

    def _configuration_loop(self, g, thetas, intercepts, terms=None):
        """The loop of configuration g on ``thetas[g]``, ``intercepts[g]``."""
        eta, U = self._configs[g]
        return self._configuration().trial_loop(
            thetas[g], intercepts[g], eta, U, terms=terms,
            intercept_eta=self._intercept_of(g), average=False)

    def _grid_key(self):
        """What the grid's loops are built from, besides the parameters."""
        return (self.psi, self.phi, self.p, self.fit_intercept, tuple(self._configs))

    def _grid_loops(self, thetas, intercepts, losses):
        """A loop on ``thetas[g]``, ``intercepts[g]`` (updated in place) for every
        configuration g still learning (finite loss)."""
        return {g: self._configuration_loop(g, thetas, intercepts)
                for g in np.flatnonzero(np.isfinite(losses))}

    def _lockstep(self, X, Y, sample_weight, rows, loops, losses, thetas,
                  intercepts):
        """One on-line pass over ``rows`` for every configuration in ``loops``
        (parameters ``thetas[g]``, ``intercepts[g]``, which the loops update).

        Adds to ``losses``; a configuration that diverges gets an infinite loss and
        leaves ``loops``. The configurations are shared among ``n_jobs`` threads,
        which meet after each window of rows; each configuration runs over the same
        chunks and blocks, with the same sums, whatever the number of threads, so
        the results do not depend on it.
        """
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
        # would move.)
        config = self._configuration()
        blocks = (not sp.issparse(X) and config.loop_psi.blocks
                  and not config.phi.threshold
                  and len(loops) * Y.shape[1] >= BLOCK_COLUMNS)
        with ThreadPoolExecutor(threads) if threads > 1 else nullcontext() as pool:
            def on_threads(function, *arguments):
                return list((pool.map if pool else map)(function, *arguments))

            if blocks:
                self._lockstep_blocks(X, Y, sample_weight, windows, loops, losses,
                                      thetas, intercepts, on_threads, threads)
                return
            run = TrialRunner(X, Y, sample_weight,
                              estimator_name=type(self).__name__)

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

    def _lockstep_blocks(self, X, Y, sample_weight, windows, loops, losses, thetas,
                         intercepts, on_threads, threads):
        """_lockstep for psi = identity on dense rows, in blocks of rows whose
        activations and updates are products of many rows with many configurations
        (``block_run``: the on-line rule, exact but for rounding; its derivation is
        in the compiled core's ``lockstep.pxi``)."""
        diverged = np.ones(len(losses), np.uint8)
        diverged[list(loops)] = 0
        etas = np.array([eta for eta, _ in self._configs])
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
            on_threads(partial(block_run, X_w, Y_w, weights, grams, thetas, intercepts,
                               etas, phi=self._configuration().phi.code,
                               fit_intercept=self.fit_intercept, losses=losses,
                               diverged=diverged),
                       np.array_split(np.flatnonzero(diverged == 0), threads))
            if diverged.sum() > before:
                # Non-finite inputs, not a divergence, if X has any.
                assert_all_finite(X_w, input_name="X",
                                  estimator_name=type(self).__name__)
        for g in np.flatnonzero(diverged):
            if g in loops:
                losses[g] = np.inf
                del loops[g]

    def _continuable_grid(self):
        """The kept loops if the next call can continue them (built for these
        settings, on parameters that are still the model's), else None."""
        grid = self.__dict__.get("_kept_grid")
        if grid is not None and grid.holds(self.thetas_, self.intercepts_,
                                           self._grid_key()):
            return grid
        return None

    def _keep_grid(self, loops, thetas, intercepts):
        """Keep ``loops`` for the next call (building one costs O(n) exponentials),
        their parameters given out as read-only ``thetas_`` and ``intercepts_``;
        ``coef_`` is computed from the selected configuration's loop when read."""
        self.thetas_, self.intercepts_ = thetas, intercepts = read_only(thetas,
                                                                        intercepts)
        self._kept_grid = _KeptGrid(self._grid_key(), loops, thetas, intercepts)
        best = self.best_index_
        self.__dict__.update(theta_=thetas[best], intercept_=intercepts[best])
        self._the_run().kept = KeptLoop(self._grid_key(), loops[best], thetas[best],
                                    intercepts[best])

    def __getstate__(self):
        state = super().__getstate__()  # (with the loops' terms: _continuation)
        state.pop("_kept_grid", None)  # (skops, unlike pickle, ignores __reduce__)
        return state

    def _continuation(self, kept):
        # The selected configuration's loop continues with the grid's, never alone.
        grid = self._continuable_grid()
        if grid is None:
            return None
        return {g: loop.terms() for g, loop in grid.loops.items()}

    def _continue_from(self, continuation):
        # (A finished model, fit's, stays the one predicted with: _finish.)
        finished = {name: self.__dict__[name] for name in FINISHED
                    if self.__dict__.get("_finished")}
        thetas, intercepts = np.array(self.thetas_), np.array(self.intercepts_)
        self._keep_grid({g: self._configuration_loop(g, thetas, intercepts, terms)
                         for g, terms in continuation.items()}, thetas, intercepts)
        read_only_in_place(*finished.values())
        self.__dict__.update(finished)

    def _search(self, X, Y, sample_weight, *, first_call, y=None, groups=None):
        grid, params = None, self._param_values()
        if first_call:
            self._auto_U = self._grid_scale(X, Y)
            self._configs = self._grid(self._auto_U)
            self._grid_params = params
            G, k, n = len(self._configs), Y.shape[1], X.shape[1]
            thetas = self._configuration().initial_parameters((G, k, n))
            intercepts = np.zeros((G, k))
            losses, t = np.zeros(G), 0
        else:
            # (The grid is built again only where a parameter was set since.)
            if not all(map(operator.is_, params, getattr(self, "_grid_params", ()))):
                if self._grid(getattr(self, "_auto_U", 1.0)) != self._configs:
                    raise ValueError(
                        f"The grid of {type(self).__name__} (etas, Us) changed since "
                        "the first call to partial_fit; it is fixed for a stream. "
                        "Call fit to restart with the new grid.")
                self._grid_params = params
            losses, t = self.progressive_loss_.copy(), self.t_
            grid = self._continuable_grid()
        if grid is not None:
            loops, thetas, intercepts = (dict(grid.loops), grid.theta.base,
                                         grid.intercept.base)
            # The kept loops write thetas_ in place: a failed call puts them back.
            saved, columns = list(loops.values()), batch_columns(X)
            for loop in saved:
                loop.save(columns)
            self._the_run().kept.writing()  # (the selected configuration's loop)
        else:
            if not first_call:
                thetas, intercepts = self.thetas_.copy(), self.intercepts_.copy()
            loops, saved = self._grid_loops(thetas, intercepts, losses), []
        m = X.shape[0]
        try:
            self._lockstep(X, Y, sample_weight, np.arange(m, dtype=np.intp), loops,
                           losses, thetas, intercepts)
            if first_call and self.cv is not None:
                # The model returned is the pass over all the data: one that
                # diverged there is out, whatever its folds (which may not see those
                # rows) said.
                held_out = self._kfold_losses(X, y, Y, sample_weight, groups)
                scores = np.where(np.isfinite(losses), held_out, np.inf)
            else:
                scores = losses
            if not np.any(np.isfinite(scores)):
                raise ValueError(
                    f"{type(self).__name__}: every configuration diverged (etas "
                    f"from {min(e for e, _ in self._configs):.3g}). Use smaller "
                    "etas, or scale the inputs (e.g. with StandardScaler)."
                )
        except BaseException:
            for loop in saved:
                loop.restore()
            if saved:
                self._the_run().kept.writing()
            raise
        best = int(np.argmin(scores))
        eta, U = self._configs[best]
        # Read-only, as every fitted array: the next call continues from them.
        self.progressive_loss_, = read_only(losses)
        results = read_only(np.array([e for e, _ in self._configs]),
                            np.array([u for _, u in self._configs]), losses.copy(),
                            scores.copy(),
                            np.argsort(np.argsort(scores, kind="stable")) + 1)
        self.cv_results_ = {
            "params": [{"eta": e, "U": u} for e, u in self._configs],
            **dict(zip(("param_eta", "param_U", "progressive_loss", "mean_test_loss",
                        "rank_test_loss"), results, strict=True))}
        self.best_index_, self.U_ = best, U
        self._keep_grid(loops, thetas, intercepts)
        self._finished = False
        return self._set_state(self.theta_, self.intercept_, None, eta=eta, U=U,
                               n_iter=1, t=t + m, cumulative_loss=losses[best],
                               intercept_eta=(self._intercept_of(best)
                                              if self.fit_intercept else 0.0))

    def _kfold_losses(self, X, y, Y, sample_weight, groups):
        """Mean held-out matching loss per configuration over the folds of ``cv``.

        The folds are those of scikit-learn's searches: stratified for a classifier
        given an int, the splitter given ``y`` and ``groups``. Each fold's loss is
        the sample-weighted mean over its test rows (weight 0 counts as absent).
        """
        cv = check_cv(self.cv, y, classifier=is_classifier(self))
        G, k, n = len(self._configs), Y.shape[1], X.shape[1]
        totals, folds = np.zeros(G), 0
        for train, test in cv.split(X, y, groups):
            weights = None if sample_weight is None else sample_weight[test]
            if weights is not None and not np.sum(weights) > 0:
                continue  # nothing held out
            folds += 1
            thetas = self._configuration().initial_parameters((G, k, n))
            intercepts = np.zeros((G, k))
            diverged = np.zeros(G)
            loops = self._grid_loops(thetas, intercepts, diverged)
            self._lockstep(X, Y, sample_weight, train.astype(np.intp), loops,
                           diverged, thetas, intercepts)
            totals[~np.isfinite(diverged)] = np.inf
            for g, loop in loops.items():  # (the configurations that did not diverge)
                A = np.asarray(X[test] @ loop.weights().T) + intercepts[g]
                with np.errstate(all="ignore"):
                    loss = np.average(self._configuration().phi.sample_loss(Y[test], A),
                                      weights=weights)
                totals[g] += loss if np.isfinite(loss) else np.inf
        if folds == 0:
            raise ValueError(
                f"Every test fold of cv={self.cv!r} has zero total sample weight: "
                "nothing is held out to select by. Use other folds or weights."
            )
        return totals / folds

    def _fit(self, X, y, sample_weight, *, groups=None):
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=True, classes=None)
        self._search(X, Y, self._step_weights(Y, sample_weight), first_call=True,
                     y=y, groups=groups)
        if self.max_iter > 1:
            self._finish(X, y, sample_weight)
        return self

    def _finish(self, X, y, sample_weight):
        """Finish the selected configuration as ``fit`` finishes a model: the plain
        estimator (``_plain``) fitted at its (eta, U) and intercept rate, with the
        epochs to ``tol`` (and the averaging) of its defaults, from scratch. Its
        weights become the model's; the grid's one-pass state stays for
        ``partial_fit``. Should it diverge, the one-pass model stays, with a
        warning."""
        best = self.best_index_
        eta, U = self._configs[best]
        extra = ({"class_weight": self.class_weight} if hasattr(self, "class_weight")
                 else {})
        plain = self._plain(psi=self.psi, phi=self.phi, eta=eta, U=U, p=self.p,
                            intercept_eta=self._intercept_of(best),
                            fit_intercept=self.fit_intercept, max_iter=self.max_iter,
                            tol=self.tol, random_state=self.random_state, **extra)
        try:
            plain.fit(X, y, sample_weight=sample_weight)
        except ValueError as error:
            warnings.warn(
                f"{type(self).__name__}: finishing the selected configuration "
                f"(eta={eta:.6g}, U={U:.6g}) with fit's epochs failed, so the model "
                f"is the one-pass model of the grid: {error}", ConvergenceWarning,
                stacklevel=4)
            return
        coef = np.array(plain.coef_)
        read_only_in_place(coef)
        self._changed()
        self.__dict__.update(theta_=plain.theta_, intercept_=plain.intercept_,
                             coef_=coef)
        self.n_iter_, self._finished = 1 + plain.n_iter_, True

    def _progressive(self):
        """partial_fit exists only for progressive validation (k-fold needs the
        whole data set at once)."""
        return self.cv is None

    def _partial_fit(self, X, y, sample_weight, *, classes=None):
        first_call = not hasattr(self, "thetas_")
        if not first_call:
            self._validate_changed_params()
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=first_call, classes=classes)
        return self._search(X, Y, self._step_weights(Y, sample_weight),
                            first_call=first_call)
