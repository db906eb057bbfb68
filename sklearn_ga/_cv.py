"""GARegressorCV and GAClassifierCV: a grid of (eta, U) learned in one pass.

Every configuration of the grid keeps its own parameters and compiled loop; dense
data are cut into chunks small enough to stay in cache, and each chunk runs through
the loop of every configuration before the next chunk is read; with ``n_jobs``
threads, each learns a share of the configurations on the same window of chunks (the
loops run without the GIL), so X is still read from memory about once. Selection is by
progressive validation (HKW §V tunes the same way): the cumulative on-line matching
loss, each prediction made before its example is learned, is an honest estimate of
the loss on unseen data of the same stream.
"""

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import assert_all_finite

from ._classifier import GAClassifier
from ._codes import Status
from ._docstrings import fill_docstring
from ._kernel import BLOCK_ROWS, block_grams, block_run
from ._passes import TrialRunner
from ._phi import CLASSIFICATION_PHI, PHI, REGRESSION_PHI
from ._psi import PSI
from ._regressor import GARegressor
from ._state import Kept, KeptLoop, batch_columns, fit_context, read_only

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
    # constant rate, its intercept learning at the rate of the weights.
    update, loss, Y, alpha, intercept_eta = "explicit", "matching", None, 0.0, "eta"
    learning_rate, average = "constant", False
    _assignable_parameters = False

    _grid_constraints = {
        "psi": [StrOptions(set(PSI))],
        "etas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "Us": ["array-like"],
        "p": [Interval(Real, 2, None, closed="left")],
        "fit_intercept": ["boolean"],
        "cv": [None, "cv_object"],
        "n_jobs": [None, Integral],
    }

    def _grid(self):
        """The (eta, U) configurations, U varying slowest (1 unless psi has grid_U)."""
        etas = (np.logspace(-4, 0, self.etas) if isinstance(self.etas, Integral)
                else np.asarray(self.etas, dtype=np.float64).ravel())
        Us = (np.asarray(self.Us, dtype=np.float64).ravel() if PSI[self.psi].grid_U
              else np.ones(1))
        for name, values in (("etas", etas), ("Us", Us)):
            if values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{name} must hold positive finite numbers; got "
                                 f"{values!r}.")
        return [(float(eta), float(U)) for U in Us for eta in etas]

    def _grid_key(self):
        """What the grid's loops are built from, besides the parameters."""
        return (self.psi, self.phi, self.p, self.fit_intercept, tuple(self._configs))

    def _grid_loops(self, thetas, intercepts, losses):
        """A loop on ``thetas[g]``, ``intercepts[g]`` (updated in place) for every
        configuration g still learning (finite loss)."""
        return {g: self._trial_loop(thetas[g], intercepts[g], *self._configs[g])
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
        threads = max(1, min(effective_n_jobs(self.n_jobs), len(loops)))
        # (A threshold phi steps at exact ties a = 0, which the blocks' rounding
        # would move.)
        blocks = (not sp.issparse(X) and PSI[self._loop_psi()].blocks
                  and not PHI[self.phi].threshold
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
                        status, _, loss = run(loops[g], window[start:start + chunk])
                        if status != Status.OK:
                            losses[g] = np.inf
                            diverged.append(g)
                        else:
                            losses[g] += loss
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
                               etas, phi=PHI[self.phi].code,
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
        self._kept_loop = KeptLoop(self._grid_key(), loops[best], thetas[best],
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
        thetas, intercepts = np.array(self.thetas_), np.array(self.intercepts_)
        self._keep_grid({g: self._trial_loop(thetas[g], intercepts[g],
                                             *self._configs[g], terms=terms)
                         for g, terms in continuation.items()}, thetas, intercepts)

    def _search(self, X, Y, sample_weight, *, first_call, y=None, groups=None):
        grid = None
        if first_call:
            self._configs = self._grid()
            G, k, n = len(self._configs), Y.shape[1], X.shape[1]
            thetas, intercepts = self._initial_parameters((G, k, n)), np.zeros((G, k))
            losses, t = np.zeros(G), 0
        else:
            if self._grid() != self._configs:
                raise ValueError(
                    f"The grid of {type(self).__name__} (etas, Us) changed since the "
                    "first call to partial_fit; it is fixed for a stream. Call fit to "
                    "restart with the new grid."
                )
            losses, t = self.progressive_loss_.copy(), self.t_
            grid = self._continuable_grid()
        if grid is not None:
            loops, thetas, intercepts = (dict(grid.loops), grid.theta.base,
                                         grid.intercept.base)
            # The kept loops write thetas_ in place: a failed call puts them back.
            saved, columns = list(loops.values()), batch_columns(X)
            for loop in saved:
                loop.save(columns)
            self._kept_loop.writing()  # (the selected configuration's loop)
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
                self._kept_loop.writing()
            raise
        best = int(np.argmin(scores))
        eta, U = self._configs[best]
        self.progressive_loss_, = read_only(losses)  # (it steers the selection)
        self.cv_results_ = {
            "params": [{"eta": e, "U": u} for e, u in self._configs],
            "param_eta": np.array([e for e, _ in self._configs]),
            "param_U": np.array([u for _, u in self._configs]),
            "progressive_loss": losses.copy(),
            "mean_test_loss": scores.copy(),
            "rank_test_loss": np.argsort(np.argsort(scores, kind="stable")) + 1,
        }
        self.best_index_, self.U_ = best, U
        self._keep_grid(loops, thetas, intercepts)
        return self._set_state(self.theta_, self.intercept_, None, eta=eta, U=U,
                               n_iter=1, t=t + m, cumulative_loss=losses[best])

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
            thetas, intercepts = self._initial_parameters((G, k, n)), np.zeros((G, k))
            diverged = np.zeros(G)
            loops = self._grid_loops(thetas, intercepts, diverged)
            self._lockstep(X, Y, sample_weight, train.astype(np.intp), loops,
                           diverged, thetas, intercepts)
            totals[~np.isfinite(diverged)] = np.inf
            for g, loop in loops.items():  # (the configurations that did not diverge)
                A = np.asarray(X[test] @ loop.weights().T) + intercepts[g]
                with np.errstate(all="ignore"):
                    loss = np.average(PHI[self.phi].sample_loss(Y[test], A),
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
        return self._search(X, Y, self._step_weights(Y, sample_weight),
                            first_call=True, y=y, groups=groups)

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


@fill_docstring
class GARegressorCV(_GridMixin, GARegressor):
    """GARegressor with eta (and U) chosen by progressive validation in one pass.

    Every configuration of the grid ``etas`` x ``Us`` learns the data in lock-step
    (one read of the data serves the whole grid); the one with the least cumulative
    on-line matching loss, each prediction made before its example is learned, is
    selected, as HKW §V tune their learning rates. :meth:`partial_fit` continues the
    stream for the whole grid (one pass over the batch for every configuration), so
    the selection follows the stream.

    Progressive validation estimates the loss *while learning*, which favours
    rates that learn fast; k-fold CV (``cv=5``) estimates the loss of the model at
    the end of a pass, which can favour smaller rates on long, noisy streams.

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function (see :class:`GARegressor`; the sphere's radius
        is 1).
    phi : [regression phi choices], default="identity"
        Transfer function (see :class:`GARegressor`).
    etas : int or array-like of float, default=9
        Learning rates to try. An int ``q`` means ``np.logspace(-4, 0, q)``.
    Us : array-like of float, default=(1.0, 10.0, 100.0)
        Scales of EG± to try (``psi="eg_pm"``); ignored by the other ``psi``.
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2.
    fit_intercept : bool, default=True
        Whether to learn intercepts.
    cv : None, int, cross-validation generator or iterable, default=None
        ``None`` selects by progressive validation. Otherwise the configuration
        with the least mean held-out matching loss over these folds is selected
        (each fold costs one more lock-step pass over its training rows); the
        returned model is still the one-pass model on all the data, and
        :meth:`partial_fit` is not available (k-fold needs the whole data set).
    n_jobs : int, default=None
        Number of threads that learn the grid, each a share of the configurations
        on the same chunks of rows (the compiled loops run without the GIL).
        ``None`` means 1 unless in a :func:`joblib.parallel_config` context;
        ``-1`` means all processors. The results do not depend on it.

    Attributes
    ----------
    eta_, U_ : float
        The selected learning rate and scale (``U_`` is 1.0 unless psi="eg_pm").
    coef_, intercept_, theta_ : ndarray
        The selected configuration's weights, intercepts and parameters.
    cumulative_loss_ : float
        The selected configuration's cumulative on-line matching loss.
    t_ : int
        Number of trials seen.
    n_iter_ : int
        Always 1: one pass.
    cv_results_ : dict of ndarray
        ``params``, ``param_eta``, ``param_U``, ``progressive_loss`` (per
        configuration; ``inf`` if it diverged), ``mean_test_loss`` (the selection
        criterion; ``inf`` if the configuration diverged in a fold or in the pass
        over all the data) and ``rank_test_loss``.
    best_index_ : int
        Index of the selected configuration in ``cv_results_``.
    thetas_, intercepts_, progressive_loss_ : ndarray
        The state of every configuration, kept for :meth:`partial_fit`.
        ``thetas_`` and ``intercepts_`` (of which ``theta_`` and ``intercept_``
        are rows) are read-only and updated in place by later calls; assign new
        arrays to start from other parameters.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.

    See Also
    --------
    GARegressor : The estimator with a fixed configuration.
    sklearn.model_selection.GridSearchCV : k-fold search, one fit per fold and
        configuration.

    References
    ----------
    .. [HKW] D. P. Helmbold, J. Kivinen and M. K. Warmuth, "Relative loss bounds
       for single neurons", IEEE Trans. Neural Networks 10(6), 1999, Section V.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga import GARegressorCV
    >>> rng = np.random.RandomState(0)
    >>> X = rng.choice([-1.0, 1.0], size=(3000, 100))
    >>> y = np.tanh(X[:, 0] - X[:, 1])
    >>> model = GARegressorCV(psi="eg_pm", phi="tanh", etas=[0.01, 0.1, 1.0],
    ...                       Us=[0.5, 3.0]).fit(X, y)
    >>> model.eta_, model.U_
    (0.1, 3.0)
    >>> model.cv_results_["progressive_loss"].shape
    (6,)
    """

    _parameter_constraints = {
        **_GridMixin._grid_constraints,
        "phi": [StrOptions(set(REGRESSION_PHI))],
    }

    def __init__(self, psi="identity", phi="identity", *, etas=9,
                 Us=(1.0, 10.0, 100.0), p=2.0, fit_intercept=True, cv=None,
                 n_jobs=None):
        self.psi = psi
        self.phi = phi
        self.etas = etas
        self.Us = Us
        self.p = p
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.n_jobs = n_jobs

    @fit_context
    def fit(self, X, y, sample_weight=None, groups=None):
        """Learn the data once with every configuration and select the best.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs, learned in the given order.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets in the range of ``phi``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``,
            and held-out losses are weighted means.
        groups : array-like of shape (n_samples,), default=None
            Group labels for the splitter of ``cv`` (e.g. ``GroupKFold``); unused
            when ``cv`` is None.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, groups=groups)

    partial_fit = available_if(_GridMixin._progressive)(GARegressor.partial_fit)


@fill_docstring
class GAClassifierCV(_GridMixin, GAClassifier):
    """GAClassifier with eta (and U) chosen by progressive validation in one pass.

    The classifier counterpart of :class:`GARegressorCV`: every configuration of
    ``etas`` x ``Us`` learns the data in lock-step and the one with the least
    cumulative on-line matching loss (log loss for logistic and softmax, the
    Perceptron's hinge for sign) is selected.

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function (see :class:`GARegressor`; the sphere's radius
        is 1).
    phi : [classification phi choices], default="logistic"
        Transfer function (see :class:`GAClassifier`).
    etas : int or array-like of float, default=9
        Learning rates to try. An int ``q`` means ``np.logspace(-4, 0, q)``.
    Us : array-like of float, default=(1.0, 10.0, 100.0)
        Scales of EG± to try (``psi="eg_pm"``); ignored by the other ``psi``.
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2.
    fit_intercept : bool, default=True
        Whether to learn intercepts.
    cv : None, int, cross-validation generator or iterable, default=None
        ``None`` selects by progressive validation; otherwise by the mean held-out
        matching loss over these folds (stratified for an int, as in
        ``GridSearchCV``; see :class:`GARegressorCV`).
    n_jobs : int, default=None
        Number of threads that learn the grid, each a share of the configurations
        on the same chunks of rows (the compiled loops run without the GIL).
        ``None`` means 1 unless in a :func:`joblib.parallel_config` context;
        ``-1`` means all processors. The results do not depend on it.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes (see :class:`GAClassifier`): a multiplier of each
        trial's step, as a sample weight, which also weighs the losses that select
        the configuration (progressive and held-out), so that the selection
        follows the weighted objective.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    eta_, U_ : float
        The selected learning rate and scale.
    coef_, intercept_, theta_ : ndarray
        The selected configuration's weights, intercepts and parameters.
    cumulative_loss_ : float
        The selected configuration's cumulative on-line matching loss.
    t_ : int
        Number of trials seen.
    n_iter_ : int
        Always 1: one pass.
    cv_results_ : dict of ndarray
        Per configuration: ``params``, ``param_eta``, ``param_U``,
        ``progressive_loss``, ``mean_test_loss`` and ``rank_test_loss``.
    best_index_ : int
        Index of the selected configuration in ``cv_results_``.
    thetas_, intercepts_, progressive_loss_ : ndarray
        The state of every configuration, kept for :meth:`partial_fit`.
        ``thetas_`` and ``intercepts_`` (of which ``theta_`` and ``intercept_``
        are rows) are read-only and updated in place by later calls; assign new
        arrays to start from other parameters.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.

    See Also
    --------
    GAClassifier : The estimator with a fixed configuration.
    GARegressorCV : The same search for regression.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_ga import GAClassifierCV
    >>> X, y = load_iris(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> order = np.random.RandomState(0).permutation(len(y))
    >>> clf = GAClassifierCV(phi="softmax", etas=[0.001, 0.01, 0.1, 1.0])
    >>> clf = clf.fit(X[order], y[order])
    >>> clf.eta_
    1.0
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        **_GridMixin._grid_constraints,
        "phi": [StrOptions(set(CLASSIFICATION_PHI))],
        "class_weight": GAClassifier._parameter_constraints["class_weight"],
    }

    def __init__(self, psi="identity", phi="logistic", *, etas=9,
                 Us=(1.0, 10.0, 100.0), p=2.0, fit_intercept=True, cv=None,
                 n_jobs=None, class_weight=None):
        self.psi = psi
        self.phi = phi
        self.etas = etas
        self.Us = Us
        self.p = p
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.n_jobs = n_jobs
        self.class_weight = class_weight

    @fit_context
    def fit(self, X, y, sample_weight=None, groups=None):
        """Learn the data once with every configuration and select the best.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs, learned in the given order.
        y : array-like of shape (n_samples,)
            Class labels (an int ``cv`` makes stratified folds of them).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``,
            and held-out losses are weighted means.
        groups : array-like of shape (n_samples,), default=None
            Group labels for the splitter of ``cv`` (e.g. ``GroupKFold``); unused
            when ``cv`` is None.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, groups=groups)

    partial_fit = available_if(_GridMixin._progressive)(GAClassifier.partial_fit)
