"""The base class of the GA estimators: parameters, validation, fit and prediction.

The regressor and the classifier differ only in how targets are encoded
(``_encode_targets``), how activations become outputs, and their tags. Input
validation's fast paths are in ``_validation``; the compiled loop, the epochs and
the state kept between calls in ``_engine`` (see doc/developers/architecture.rst).
"""

import functools
import math
import operator
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_n_features,
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from ._auto_scale import SCALE_ROWS, auto_scale  # noqa: F401 (dask reads SCALE_ROWS)
from ._engine import AT_FLOOR, Engine
from ._one_row import one_row, one_row_path
from ._psi import PSI
from ._rates import TheoryRates
from ._validation import (
    UnsortedRows,
    all_finite,
    canonical_csr,
    checked_structure,
    light_inputs,
    light_sample_weight,
    light_validation,
    loop_csr,
    surely_finite,
)

# Predictions of CSR rows with under n / COLUMNS_ONLY entries use the weights of
# their columns rather than build coef_ in O(n).
COLUMNS_ONLY = 64
# With U="auto" and eta="theory", U doubles after a call that leaves a row of
# weights with a norm of at least PRESS * U.
PRESS = 0.75


class BaseGA(Engine, BaseEstimator):
    """Base class of the general additive estimators (not for direct use)."""

    _parameter_constraints = {
        "psi": [StrOptions(set(PSI))],
        "eta": [Interval(Real, 0, None, closed="neither"), StrOptions({"theory"})],
        "intercept_eta": [Interval(Real, 0, None, closed="neither"),
                          StrOptions({"auto", "eta"})],
        "U": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "p": [Interval(Real, 2, None, closed="left")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, None, None, closed="neither"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "update": [StrOptions({"explicit", "implicit", "natural"})],
        "loss": [StrOptions({"matching", "square"})],
        "Y": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "learning_rate": [StrOptions({"constant", "invscaling"})],
        "average": [Interval(Integral, 0, None, closed="neither"), "boolean",
                    StrOptions({"auto"})],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    }

    # -- hooks of the subclasses -------------------------------------------------

    # Keyword arguments of ``validate_data`` for y.
    _target_validation = {}

    def _encode_targets(self, y, *, first_call, classes=None):
        """Return targets as a float64 (m, k) C-array for the kernel."""
        raise NotImplementedError

    def _decode_targets(self, Y):
        """The targets y (labels for a classifier) that ``_encode_targets`` encoded
        as Y."""
        raise NotImplementedError

    def _step_weights(self, Y, sample_weight):
        """The multiplier of each trial's step: ``sample_weight`` (None for 1)."""
        return sample_weight

    # -- fitting -------------------------------------------------------------------

    def _validate_training_data(self, X, y, sample_weight, *, first_call, classes,
                                check_rows=False, float32=False):
        # X is checked for NaN/inf by the trial loop, which reads it anyway (see
        # TrialRunner); with check_rows, so is a CSR X's structure. With float32, a
        # float32 X is kept (the runs read its rows as float64, one at a time).
        checked = None if first_call else light_validation(self, X, y, float32)
        X, y = checked or validate_data(
            self, X, y, reset=first_call, accept_sparse="csr",
            dtype=(np.float64, np.float32) if float32 else np.float64,
            order="C", ensure_all_finite=False, **self._target_validation,
        )
        if sp.issparse(X):
            X = loop_csr(X)
            if not check_rows:
                X = canonical_csr(X)  # before anything reads its structure
        Y = self._encode_targets(y, first_call=first_call, classes=classes)
        if not first_call:
            self._check_continuation(Y.shape[1])
        self._configuration().phi.check_targets(Y)
        if sample_weight is not None:
            checked = light_sample_weight(sample_weight, X.shape[0])
            sample_weight = checked if checked is not None else _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        return X, Y, sample_weight

    def __sklearn_is_fitted__(self):
        # What check_is_fitted finds by listing the attributes that end in "_", which
        # the scikit-learn wrapper of partial_fit does on every call: theta_
        # is set by every fit, and by nothing else.
        return "theta_" in self.__dict__

    # How to start over; a CV estimator sets its own on the models it holds.
    _restart_advice = "call fit with warm_start=False to start over"

    def _restart_hint(self):
        """How to start over (``_restart_advice``)."""
        return self._restart_advice

    def _check_continuation(self, k):
        """A fitted state continues only under its psi and with its k outputs."""
        name, fitted_k = type(self).__name__, self.theta_.shape[0]
        if self.psi != self._fitted.psi_name:
            raise ValueError(
                f"{name} was fitted with psi={self._fitted.psi_name!r}: its parameters "
                f"theta_ are not those of psi={self.psi!r}. Set psi back, or "
                f"{self._restart_hint()}."
            )
        if k != fitted_k:
            raise ValueError(
                f"{name} was fitted with {fitted_k} output(s), but these targets need "
                f"{k} (phi={self.phi!r}). Pass targets of the same shape (or set phi "
                f"back), or {self._restart_hint()}."
            )

    def _validate_changed_params(self):
        """``_validate_params()`` unless the parameters are those validated last.

        The full validation costs more than learning a small batch; reading the
        parameters and comparing them to the last validated ones is cheap.
        """
        params = self._param_values()
        last = getattr(self, "_validated_params", None)
        # Identity, not equality: any value set since (even an equal one, or an
        # array) is validated again.
        if last is None or not all(map(operator.is_, params, last)):
            self._validate_params()
            self._validated_params = params

    def _param_values(self):
        """The values of the parameters, in the order of ``_parameter_constraints``."""
        return _parameter_getter(type(self))(self)

    def _fit(self, X, y, sample_weight, *, coef_init=None, intercept_init=None):
        first_call = not (self.warm_start and hasattr(self, "theta_"))
        # On fresh parameters and a given eta, nothing reads a CSR X's structure
        # before the trial loop, which then checks each row as it reads it rather
        # than in a pass of its own over the indices.
        check_rows = (first_call and self.eta != "theory"
                      and not self.early_stopping and not self._scale_from_data())
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=first_call, classes=None,
            check_rows=check_rows, float32=not self.early_stopping,
        )
        steps = self._step_weights(Y, sample_weight)
        validation = None
        if self.early_stopping:
            X, Y, steps, validation = self._held_out(X, Y, sample_weight, steps)
        if first_call:
            self._choose_scale(X, Y)
        start = self._start(coef_init, intercept_init, Y.shape[1], X.shape[1],
                            first_call)
        try:
            self._learn(X, Y, steps, first_call=first_call, epochs=True,
                      check_rows=check_rows, start=start, validation=validation)
        except UnsortedRows:
            self._learn(canonical_csr(X), Y, steps, first_call=first_call, epochs=True,
                      start=start)
        self.validation_scores_ = (None if validation is None
                                   else np.array(validation.scores))
        return self

    def _held_out(self, X, Y, sample_weight, steps):
        """``(X, Y, steps, validation)``: the training rows, and the scorer of the
        rows held out for early stopping (:class:`ValidationScore`).

        The split is SGD's: a fraction ``validation_fraction`` of the rows,
        stratified for a classifier, drawn with ``random_state``.
        """
        y = self._decode_targets(Y)
        splitter = StratifiedShuffleSplit if is_classifier(self) else ShuffleSplit
        train, held = next(splitter(test_size=self.validation_fraction,
                                    random_state=self.random_state).split(
            np.zeros((Y.shape[0], 1)), y))
        if train.size == 0 or held.size == 0:
            raise ValueError(
                f"Splitting {Y.shape[0]} samples into a train set and a validation "
                f"set with validation_fraction={self.validation_fraction!r} led to an "
                f"empty set ({train.size} and {held.size} samples). Change "
                "validation_fraction, pass more samples, or set early_stopping=False."
            )
        held_weight = None if sample_weight is None else sample_weight[held]
        if held_weight is not None and not np.any(held_weight > 0):
            raise ValueError(
                "The sample weights of the validation set are all zero: nothing is "
                "held out to score; use another random_state."
            )
        train.sort()  # (the rows keep their order: fit shuffles them itself)
        return (X[train], np.ascontiguousarray(Y[train]),
                None if steps is None else steps[train],
                ValidationScore(self, X[held], y[held], held_weight))

    def _start(self, coef_init, intercept_init, k, n, first_call):
        """``(theta, intercept)`` for ``fit`` to start from, or None for the usual
        start.

        ``theta = psi^-1(coef_init)``; a parameter not given is the fitted one when
        fit continues (``warm_start``), else the usual start.
        """
        if coef_init is None and intercept_init is None:
            return None
        name = type(self).__name__
        if coef_init is None:
            theta = (self._configuration().initial_parameters((k, n)) if first_call
                     else np.array(self.theta_))
        else:
            coef = _finite_array(coef_init, "coef_init")
            if coef.shape != (k, n) and not (k == 1 and coef.shape == (n,)):
                raise ValueError(
                    f"coef_init has shape {coef.shape}, but {name} learns weights of "
                    f"shape ({k}, {n}) on these data"
                    + (f" (or ({n},))." if k == 1 else ".")
                )
            try:
                theta = self._configuration().psi.inverse(
                    coef.reshape(k, n), self._scale(), float(self.p))
            except ValueError as error:
                raise ValueError(
                    f"coef_init are not weights of psi={self.psi!r}, which starts "
                    f"from psi^-1(coef_init): {error}"
                ) from None
        if intercept_init is None:
            intercept = np.zeros(k) if first_call else np.array(self.intercept_)
        else:
            intercept = _finite_array(intercept_init, "intercept_init")
            if intercept.shape != (k,) and not (k == 1 and intercept.shape == ()):
                raise ValueError(
                    f"intercept_init has shape {intercept.shape}, but {name} learns "
                    f"{k} intercept(s) on these data."
                )
        return (np.ascontiguousarray(theta, dtype=np.float64),
                np.array(intercept, dtype=np.float64).reshape(k))

    def _partial_fit(self, X, y, sample_weight, *, classes=None):
        first_call = not hasattr(self, "theta_")
        if not first_call:
            # scikit-learn validates hyper-parameters on the first partial_fit only;
            # set_params may have changed them since.
            self._validate_changed_params()
        elif self.early_stopping:
            # (As SGD: a stream has no validation set; a later call ignores it.)
            raise ValueError(
                "early_stopping should be False with partial_fit: it holds out part "
                "of the data given to fit. Set early_stopping=False."
            )
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=first_call, classes=classes, float32=True
        )
        if first_call:
            self._choose_scale(X, Y)
        self._learn(X, Y, self._step_weights(Y, sample_weight), first_call=first_call,
                  epochs=False)
        self.validation_scores_ = None
        self._double_scale()
        return self

    def _scale_from_data(self):
        """Whether a first call reads X for ``U_`` (:func:`auto_scale`)."""
        return self.U == "auto" and self._configuration().psi.scale_norm is not None

    def _choose_scale(self, X, Y):
        """``U_`` of a first call: ``U``, or for ``U="auto"``
        :func:`auto_scale` of its first rows."""
        self.U_ = (auto_scale(self.psi, self.phi, X, Y, self.fit_intercept)
                   if self.U == "auto" else float(self.U))

    def _scale(self):
        """The U in use: ``U``, or with ``U="auto"`` the ``U_`` chosen from the
        data (:func:`~sklearn_ga._auto_scale.auto_scale`)."""
        return self.__dict__["U_"] if self.U == "auto" else float(self.U)

    def _average_of(self, epochs):
        """The trial (counted since the reset) from which a call averages (0:
        none): ``average``; with ``average="auto"``, ``AT_FLOOR`` in ``fit`` (see
        :meth:`_epochs`) and never in ``partial_fit``, which learns on-line, nor
        for a geodesic psi (a mean of points of the sphere leaves it), nor in a
        fit of one epoch, which has no floor to reach (its loop then carries no
        averages, which cost a pass of their own)."""
        if self.average != "auto":
            return int(self.average)
        return AT_FLOOR if (epochs and self.max_iter > 1
                            and not self._configuration().psi.geodesic) else 0

    def _doubles(self):
        """Whether ``U_`` may double (:meth:`_double_scale`)."""
        return (self.U == "auto" and self.eta == "theory"
                and self._configuration().psi.doubling)

    def _double_scale(self):
        """``U="auto"`` with ``eta="theory"``, for a psi of ``doubling`` (EG±):
        double ``U_`` if a row of the weights has a norm of at least ``PRESS * U_``,
        keeping them (EG±: omega = U (w+ - w-) stays, the same mass added to
        omega+ and omega-; see doc/user_guide/theory.rst for the bound it keeps).
        A numeric eta was chosen for its U (HKW Theorem 2's rate is 1/(4 U^2 X^2
        Z)): then U_ stays."""
        if not self._doubles():
            return
        config = self._configuration()
        entry, U, p = config.psi, self.U_, float(self.p)
        weights = entry.weights(np.asarray(self.theta_), U, p)
        if np.max(np.sum(np.abs(weights), axis=1)) < PRESS * U:
            return
        theta = np.ascontiguousarray(entry.inverse(weights, 2.0 * U, p))
        intercept = np.array(self.__dict__["intercept_"])
        self.U_ = 2.0 * U
        run = self._the_run()
        run.rate_state = TheoryRates.rescaled(run.rate_state, 2.0 * U)
        eta, intercept_eta = self._rates(False, theta.shape[1]).current()
        # The model's loop from here on, as a call would build it.
        averages = self._carried_averages()
        self._changed()
        self.__dict__.pop("coef_", None)
        self._keep(config.trial_loop(theta, intercept, eta, 2.0 * U,
                                     intercept_eta=intercept_eta, averages=averages,
                                     average=self._average_of(False)),
                   theta, intercept)
        run.kept.params = self._param_values()
        self.eta_, self.intercept_eta_ = eta, intercept_eta

    # -- prediction ----------------------------------------------------------------

    def _one_row_activations(self, X, outputs=False):
        """The activations of X if it is one row that the model's one-row path
        reads (:mod:`sklearn_ga._one_row`: a C-contiguous float64 ndarray or a
        canonical CSR row of the fitted width) and they are finite; else None: the
        checks of :meth:`_activations` then run, and report what is wrong. With
        ``outputs``, the predictions phi(A) of a dense row (clipped as
        :meth:`_outputs` clips them), or None where they are not finite."""
        # (Read, not made: this runs at every one-row call.)
        run = self.__dict__.get("_run")
        path = None if run is None else run.one_row
        if path is None:
            path = one_row_path(self) if one_row(X) else None
        if not path:
            return None
        dense = type(X) is np.ndarray
        if path.predicts:
            try:
                if dense:
                    return path.calls.activations(X, outputs)
                if not outputs:
                    return path.calls.activations_csr(X.data, X.indices, X.indptr,
                                                      X.shape[1])
            except (ValueError, TypeError, BufferError):  # (not float64, int32)
                return None
        # An averaging model predicts with the averages, from coef_.
        if (dense and not outputs and X.dtype == np.float64
                and X.shape[1] == self.n_features_in_):
            A = self._linear(X, self.coef_.reshape(self.theta_.shape))
            if all_finite(A):
                return A
        return None

    def _activations(self, X):
        """Linear activations A = X psi(Theta)^T + b, shape (m, k)."""
        A = self._one_row_activations(X)
        if A is not None:
            return A
        check_is_fitted(self, "theta_")
        light = light_inputs(self, X)
        if light is not None and surely_finite(light):
            _check_n_features(self, light, reset=False)
            X = light
        else:
            X = validate_data(self, X, reset=False, accept_sparse="csr",
                              dtype=np.float64)
        if sp.issparse(X):
            X = loop_csr(X)
            checked_structure(X)
        kept = self._the_run().kept
        if (sp.issparse(X) and kept is not None and "coef_" not in self.__dict__
                and COLUMNS_ONLY * int(X.indptr[-1]) < X.shape[1]):
            # A few CSR rows after a call: the weights of their columns, O(nnz),
            # rather than all of coef_, O(n) (2^20 for a HashingVectorizer).
            X, columns = _compact(X)
            weights = kept.columns(columns)
        else:
            weights = self.coef_.reshape(self.theta_.shape)
        return self._finite_activations(self._linear(X, weights))

    def _linear(self, X, weights):
        """X weights^T + b for checked X (ndarray or CSR); an overflow is reported
        by the caller, as an error."""
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(X @ weights.T) + self.intercept_

    def _finite_activations(self, A):
        """A (activations, or scores computed from them), checked to be finite."""
        if not all_finite(A):
            raise ValueError(
                f"The activations of {type(self).__name__} overflowed on this input "
                "(the inputs are too large for the learned weights); scale the inputs "
                "as they were scaled during training."
            )
        return A

    def _clip_activations(self, A):
        """GA^Y (KW01 §4) predicts phi(a) clipped to [-Y, Y]: a clipped to phi^-1."""
        fitted = self._fitted
        return np.clip(A, *fitted.clip) if fitted.clips else A

    def _outputs(self, A):
        """phi(A) of finite activations A, checked to be finite where it can
        overflow: phi unbounded above but not below, exp."""
        entry = self._fitted.phi
        A = self._clip_activations(A)
        if entry.high < math.inf or entry.low == -math.inf:
            return entry.transfer(A)
        with np.errstate(over="ignore"):  # overflow is reported below, as an error
            Y = entry.transfer(A)
        if not all_finite(Y):
            raise ValueError(
                f"The predictions of {type(self).__name__} overflowed (phi="
                f"{self._fitted.phi_name!r}); the inputs are far outside the training "
                "range."
            )
        return Y

    def _shape_coef(self, weights):
        return weights

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class ValidationScore:
    """``score(weights, intercept)``: the estimator's ``score`` on the held-out
    rows of early stopping, for a model of these weights (psi(Theta)) and
    intercepts; the scores are kept in ``scores``, epoch by epoch."""

    def __init__(self, estimator, X, y, sample_weight):
        # A copy that predicts as the model will, without its feature names (X is
        # validated already).
        self.judge = judge = clone(estimator)
        for name in ("classes_", "_single_output", "n_features_in_"):
            if hasattr(estimator, name):
                setattr(judge, name, getattr(estimator, name))
        judge._fitted = estimator._configuration()
        self.X, self.y, self.sample_weight, self.scores = X, y, sample_weight, []

    def __call__(self, weights, intercept):
        judge = self.judge
        # (theta_: what check_is_fitted looks for; set as a fit sets it, unchecked.)
        judge.__dict__.update(theta_=weights, intercept_=intercept.copy())
        judge.coef_ = judge._shape_coef(weights)
        score = judge.score(self.X, self.y, sample_weight=self.sample_weight)
        self.scores.append(score)
        return score


def _finite_array(value, name):
    """``value`` as a float64 array, checked to be finite."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be an array of numbers; got {value!r}.") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return array


@functools.cache
def _parameter_getter(cls):
    """The values of the parameters of ``cls`` read in one call."""
    return operator.attrgetter(*cls._parameter_constraints)


def _compact(X):
    """``(X', columns)``: X (checked CSR) without the columns that hold no entry
    (``columns`` are the others, sorted), so that X' @ W[:, columns].T computes
    X @ W.T with the same operations."""
    stored = X.indptr[-1]
    columns, position = np.unique(X.indices[:stored], return_inverse=True)
    return sp.csr_matrix((X.data[:stored], position.astype(X.indptr.dtype), X.indptr),
                         shape=(X.shape[0], columns.size), copy=False), columns


