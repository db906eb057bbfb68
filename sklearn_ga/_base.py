"""Shared core of the GA estimators: validation, the epoch loop and the kernel call.

The regressor and the classifier differ only in how targets are encoded
(``_encode_targets``), how activations become outputs, and their tags.
"""

import functools
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_n_features,
    _check_sample_weight,
    assert_all_finite,
    check_is_fitted,
    validate_data,
)

from ._kernel import (
    CsrStructure,
    LossCode,
    Status,
    TrialLoop,
    UpdateCode,
    csr_structure,
)
from ._phi import PHI
from ._psi import PSI
from .theory import input_bound, theorem3_learning_rate, transfer_bound


def _atomic(method):
    """Restore the estimator's attributes if ``method`` raises.

    Fitted arrays are not modified in place, except by the trial loop kept between
    calls, which ``_run`` restores itself (``TrialLoop.save``); so a shallow copy of
    ``__dict__`` completes the snapshot.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return wrapper


# Predictions of CSR rows with under n / COLUMNS_ONLY entries use the weights of
# their columns rather than build coef_ in O(n).
COLUMNS_ONLY = 64

# The inputs that _light_inputs checks itself.
_LIGHT_TYPES = (np.ndarray, sp.csr_matrix, sp.csr_array)


def _no_loop():
    return None


class _Kept:
    """Compiled state kept for the next ``partial_fit``: the settings it was built
    for (``key``) and the read-only views of its parameters that the model gives
    out (``theta``, ``intercept``).

    Not copied or pickled: the estimator's ``__getstate__`` saves the terms.
    """

    __slots__ = ("key", "theta", "intercept")

    def __init__(self, key, theta, intercept):
        self.key, self.theta, self.intercept = key, theta, intercept

    def holds(self, theta, intercept, key):
        """Whether the next call can continue this state: the model's parameters
        are still these views, and its settings those of ``key``."""
        return self.theta is theta and self.intercept is intercept and self.key == key

    def __reduce__(self):
        return _no_loop, ()


class _KeptLoop(_Kept):
    """The trial loop of the last call (:class:`_Kept`), and the weights ``coef_``
    once read."""

    __slots__ = ("loop", "weights")

    def __init__(self, key, loop, theta, intercept):
        super().__init__(key, theta, intercept)
        self.loop, self.weights = loop, None

    def coef(self, shape_coef):
        """``coef_``: psi(theta_) from the loop's terms, O(kn), computed once."""
        if self.weights is None:
            weights = shape_coef(self.loop.weights())
            weights.flags.writeable = False
            self.weights = weights
        return self.weights

    def columns(self, columns):
        """psi(theta_)[:, columns], the numbers of ``coef_``, O(k len(columns))."""
        if self.weights is not None:
            return self.weights.reshape(self.theta.shape)[:, columns]
        return self.loop.weights(columns)


class _Weights:
    # BaseGA.coef_: the value a fit (or the user) set, if any, else psi(theta_) built
    # from the kept loop when first read after a call. A data descriptor rather than
    # __getattr__, through which every missing attribute (hasattr, getattr with a
    # default, as in scikit-learn's validation) would cost one more exception: 3.5 us.
    # (No docstring: autodoc would list it besides the Attributes sections.)

    def __get__(self, model, owner=None):
        if model is None:
            return self
        fitted = model.__dict__
        if "coef_" in fitted:
            return fitted["coef_"]
        if fitted.get("_kept_loop") is None:
            raise AttributeError(_missing(model))
        return fitted["_kept_loop"].coef(model._shape_coef)

    def __set__(self, model, value):
        model.__dict__["coef_"] = value

    def __delete__(self, model):
        if "coef_" not in model.__dict__:
            raise AttributeError(
                "coef_ is computed from theta_ and cannot be deleted"
                if model.__dict__.get("_kept_loop") is not None else _missing(model))
        del model.__dict__["coef_"]


def _missing(model):
    return f"{type(model).__name__!r} object has no attribute 'coef_'"


class BaseGA(BaseEstimator):
    """Base class of the general additive estimators (not for direct use)."""

    coef_ = _Weights()

    _parameter_constraints = {
        "psi": [StrOptions(set(PSI))],
        "eta": [Interval(Real, 0, None, closed="neither"), StrOptions({"theory"})],
        "U": [Interval(Real, 0, None, closed="neither")],
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
    }

    # -- hooks of the subclasses -------------------------------------------------

    # Keyword arguments of ``validate_data`` for y.
    _target_validation = {}

    def _encode_targets(self, y, *, first_call, classes=None):
        """Return targets as a float64 (m, k) C-array for the kernel."""
        raise NotImplementedError

    # -- fitting -------------------------------------------------------------------

    def _validate_training_data(self, X, y, sample_weight, *, first_call, classes,
                                check_rows=False):
        # X is checked for NaN/inf by the trial loop, which reads it anyway (see
        # trial_runner); with check_rows, so is a CSR X's structure.
        checked = None if first_call else self._light_validation(X, y)
        X, y = checked or validate_data(
            self, X, y, reset=first_call, accept_sparse="csr", dtype=np.float64,
            order="C", ensure_all_finite=False, **self._target_validation,
        )
        if sp.issparse(X) and not check_rows:
            X = _canonical_csr(X)  # before anything reads its structure
        Y = self._encode_targets(y, first_call=first_call, classes=classes)
        if not first_call:
            self._check_continuation(Y.shape[1])
        PHI[self.phi].check_targets(Y)
        if sample_weight is not None:
            checked = _light_sample_weight(sample_weight, X.shape[0])
            sample_weight = checked if checked is not None else _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        return X, Y, sample_weight

    def __sklearn_is_fitted__(self):
        # What check_is_fitted finds by listing the attributes that end in "_", which
        # the scikit-learn wrapper of partial_fit does on every call (7 us): theta_
        # is set by every fit, and by nothing else.
        return "theta_" in self.__dict__

    def __getstate__(self):
        state = dict(super().__getstate__())  # (object's is __dict__ itself)
        kept = state.pop("_kept_loop", None)
        if kept is None:
            return state
        continuation = self._continuation(kept)
        if continuation is not None:
            state["_kept_terms"] = continuation
        elif "coef_" not in state:
            # Parameters or settings changed since the last call: like the model, the
            # copy builds a loop at its next call, and predicts with these until then.
            state["coef_"] = kept.coef(self._shape_coef)
        return state

    def __setstate__(self, state):
        continuation = state.pop("_kept_terms", None)
        super().__setstate__(state)
        if continuation is not None:
            self._continue_from(continuation)
        if "theta_" in state and "_fitted_phi" not in state:
            # Pickled before predictions recorded the phi and Y they were fitted
            # with: those were phi and Y.
            self._fitted_phi, self._fitted_Y = self.phi, self.Y

    def _continuation(self, kept):
        """What a copy needs to continue the kept loop exactly as the model would:
        its key and terms; None if the next call builds a new loop anyway."""
        if self._continuable(kept.key[2]) is None:
            return None
        return kept.key, kept.loop.terms()

    def _continue_from(self, continuation):
        """Build the loop of ``_continuation`` again, on copies of the parameters."""
        key, terms = continuation
        theta, intercept = np.array(self.theta_), np.array(self.intercept_)
        self._keep(self._trial_loop(theta, intercept, key[2], terms=terms), theta,
                   intercept, key[2])

    def _restart_hint(self):
        """How to start over: fit, with warm_start=False where there is one."""
        return ("call fit with warm_start=False to start over"
                if hasattr(self, "warm_start") else "call fit to start over")

    def _check_continuation(self, k):
        """A fitted state continues only under its psi and with its k outputs."""
        name, fitted_k = type(self).__name__, self.theta_.shape[0]
        if self.psi != self._fitted_psi:
            raise ValueError(
                f"{name} was fitted with psi={self._fitted_psi!r}: its parameters "
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
        params = [getattr(self, name) for name in self._parameter_constraints]
        last = getattr(self, "_validated_params", [None] * len(params))
        # Identity, not equality: any value set since (even an equal one, or an
        # array) is validated again.
        if any(a is not b for a, b in zip(params, last, strict=True)):
            self._validate_params()
            self._validated_params = params

    def _light_inputs(self, X):
        """X as ``validate_data(self, X, reset=False, accept_sparse="csr",
        dtype=np.float64)`` returns it, for the common on-line call: a float ndarray
        or CSR matrix to a model fitted without feature names. Anything else returns
        None and goes through ``validate_data``, with its errors and warnings. The
        caller checks the width (``_check_n_features``) and, if it needs to,
        finiteness.
        """
        if (type(X) not in _LIGHT_TYPES or X.ndim != 2 or X.shape[0] == 0
                or X.shape[1] == 0 or X.dtype not in (np.float64, np.float32)
                or hasattr(self, "feature_names_in_")):
            return None
        return X.astype(np.float64, copy=False)

    def _light_validation(self, X, y):
        """``validate_data``'s checks of a batch for a fitted model, done cheaply
        for a float ndarray or CSR X (:meth:`_light_inputs`) and an ndarray y of
        numbers (or of str labels, for a classifier), else None. X's finiteness is
        checked by the trial loop (see trial_runner).
        """
        multi_output = self._target_validation.get("multi_output", False)
        # (A classifier's labels may be str; a regressor's targets are numbers.)
        kinds = "biuf" if self._target_validation.get("y_numeric") else "biufU"
        X = self._light_inputs(X)
        if (X is None or type(y) is not np.ndarray or y.dtype.kind not in kinds
                or not (y.ndim == 1 or (multi_output and y.ndim == 2))
                or X.shape[0] != y.shape[0]
                or (y.dtype.kind == "f" and not np.isfinite(y).all())):
            return None
        _check_n_features(self, X, reset=False)
        return (X if sp.issparse(X) else np.ascontiguousarray(X)), y

    def _run(self, X, Y, sample_weight, *, first_call, epochs, check_rows=False):
        """Run the trial loop and set the fitted attributes.

        ``epochs=True`` runs ``fit``'s epochs (shuffling, stopping on ``tol``);
        otherwise one in-order pass, the on-line algorithm of the papers.
        ``check_rows``: see :func:`trial_runner`.
        """
        eta = self._learning_rate(X, first_call)
        loop, theta, intercept, kept = self._loop_to_continue(eta, Y.shape[1],
                                                              X.shape[1], first_call)
        t, cumulative_loss = (0, 0.0) if first_call else (self.t_,
                                                          self.cumulative_loss_)
        if kept:
            # The kept loop writes theta_ in place: a failed call puts it back.
            loop.save(batch_columns(X))
        try:
            n_iter, t, cumulative_loss = self._epochs(
                loop, trial_runner(X, Y, sample_weight, type(self).__name__,
                                   check_rows, hold=epochs), eta,
                X.shape[0], t, cumulative_loss, epochs)
            loop.release()  # (a CSR fit's epochs may hold theta transposed)
        except BaseException:
            if kept:
                loop.restore()
                self._kept_loop.weights = None  # (read by another thread meanwhile?)
            raise
        # The next partial_fit continues this loop (building one costs O(n)
        # exponentials), and coef_ is computed from it when it is read.
        if kept:
            self._kept_loop.weights = None
        else:
            self._keep(loop, theta, intercept, eta)
        self._set_state(self._kept_loop.theta, self._kept_loop.intercept, None,
                        eta=eta, U=self.U, n_iter=n_iter, t=t,
                        cumulative_loss=cumulative_loss)
        return self

    def _loop_key(self, eta):
        """What a trial loop is built from, besides the parameters."""
        return (self.psi, self.phi, eta, self.U, self.p, self.fit_intercept,
                self.update, self.loss, self.Y)

    def _loop_to_continue(self, eta, k, n, first_call):
        """``(loop, theta, intercept, kept)``: the loop of the last call if it was
        built for these settings and the model's parameters are still its own, else
        a new one on fresh parameters (a copy of the fitted ones)."""
        if not first_call:
            kept = self._continuable(eta)
            if kept is not None:
                return kept.loop, kept.theta.base, kept.intercept.base, True
            theta, intercept = self.theta_.copy(), self.intercept_.copy()
        else:
            theta, intercept = self._initial_parameters((k, n)), np.zeros(k)
        return self._trial_loop(theta, intercept, eta), theta, intercept, False

    def _continuable(self, eta):
        """The kept loop if a call at rate ``eta`` can continue it (built for these
        settings, on parameters that are still the model's), else None."""
        kept = self.__dict__.get("_kept_loop")
        if kept is not None and kept.holds(self.theta_, self.intercept_,
                                           self._loop_key(eta)):
            return kept
        return None

    def _keep(self, loop, theta, intercept, eta):
        """Keep ``loop`` for the next call, its parameters given out as read-only
        ``theta_`` and ``intercept_`` (so that they stay those of its terms)."""
        self.theta_, self.intercept_ = theta, intercept = read_only(theta, intercept)
        self._kept_loop = _KeptLoop(self._loop_key(eta), loop, theta, intercept)

    def _epochs(self, loop, run, eta, m, t, cumulative_loss, epochs):
        """Run the passes of one call; ``(n_iter, t, cumulative_loss)``."""
        n_epochs = self.max_iter if epochs else 1
        stop_on_tol = epochs and self.tol is not None
        shuffled = epochs and self.shuffle
        order = None if shuffled else np.arange(m, dtype=np.intp)
        rng = check_random_state(self.random_state)
        best_loss, no_improvement, epoch, first_loss = np.inf, 0, 0, 0.0
        for epoch in range(1, n_epochs + 1):
            if shuffled:
                order = None  # free the last epoch's order before drawing the next
                order = rng.permutation(m).astype(np.intp, copy=False)
            status, trials, epoch_loss = run(loop, order)
            if status != Status.OK:
                # (trials = m: the end-of-pass check of the parameters failed.)
                raise self._divergence(t + min(trials + 1, m), eta)
            t += m
            cumulative_loss += epoch_loss
            if not np.isfinite(cumulative_loss):
                raise self._divergence(t, eta, cause=(
                    "the sum of the losses overflowed (each counted s times for a "
                    "sample weight s: large weights can overflow it too)"))
            if epoch == 1:
                first_loss = epoch_loss
            if self.verbose:
                print(f"-- Epoch {epoch}: loss {epoch_loss / m:.6g} per trial, "
                      f"trials seen {t}")
            if stop_on_tol:
                no_improvement = (no_improvement + 1
                                  if epoch_loss > best_loss - self.tol * m else 0)
            best_loss = min(best_loss, epoch_loss)
            if stop_on_tol and no_improvement >= self.n_iter_no_change:
                break
        else:
            if stop_on_tol:
                warnings.warn(
                    f"Maximum number of iterations ({n_epochs}) reached before the "
                    "on-line loss stopped improving; consider increasing max_iter.",
                    ConvergenceWarning,
                    stacklevel=4,
                )
        # Finite weights can still be diverging (each step overshooting, e.g.
        # eta ||x||^2 > 2 for GD): a later epoch that does worse than the first,
        # which started from scratch, is not convergence.
        if epoch > 1 and epoch_loss > max(first_loss, 2.0 * best_loss):
            warnings.warn(
                f"The on-line loss grew over the epochs: {epoch_loss / m:.3g} per "
                f"trial in epoch {epoch} against {first_loss / m:.3g} in the first. "
                f"eta={eta:.6g} is probably too large (the weights may be "
                "diverging); use a smaller eta, or scale the inputs (e.g. with "
                "StandardScaler).",
                ConvergenceWarning,
                stacklevel=4,
            )
        return epoch, t, cumulative_loss

    def _initial_parameters(self, shape):
        """Theta_1: zeros, or the start of a geodesic psi (uniform weights)."""
        return np.full(shape, PSI[self.psi].start)

    def _trial_loop(self, theta, intercept, eta, U=None, terms=None):
        """The compiled loop over parameters (theta, intercept), updated in place."""
        update, loss, clip_low, clip_high = self._options()
        psi = self._loop_psi()
        return TrialLoop(PSI[psi].code, PHI[self.phi].code, theta, intercept,
                         eta, float(self.U if U is None else U), float(self.p),
                         bool(self.fit_intercept), update, loss, clip_low, clip_high,
                         terms if psi == self.psi else None)

    def _loop_psi(self):
        """The psi whose loop runs: psi, or the one it equals at this p
        (``Parameterization.same_as``; terms psi's own loop saved are then
        dropped)."""
        same_as = PSI[self.psi].same_as
        return (same_as and same_as(self.p)) or self.psi

    def _options(self):
        """Kernel codes of ``update`` and ``loss`` and the activation bounds of ``Y``.

        Raises ValueError for combinations the papers do not define.
        """
        psi, phi = PSI[self.psi], PHI[self.phi]
        name = type(self).__name__
        if self.update != "explicit" and psi.geodesic:
            raise ValueError(
                f"psi={self.psi!r} moves the weights along geodesics (KMWW eq. 10), "
                f"its own update rule; update={self.update!r} applies to the additive "
                "psi. Use update='explicit' with this psi."
            )
        if self.update == "implicit" and (self.loss != "matching"
                                          or self.phi == "sign"):
            raise ValueError(
                f"{name}(update='implicit') solves KW01 eq. (22), the minimizer of "
                "eq. (24) for the matching loss of a continuous increasing phi; it is "
                f"not available with phi={self.phi!r} and loss={self.loss!r}. Use "
                "update='explicit' or 'natural', or loss='matching' with another phi."
            )
        if self.update == "natural" and self._loop_psi() == "pnorm":
            raise ValueError(
                "update='natural' needs the Jacobian of psi (KMWW eq. 5), which "
                "psi='pnorm' lacks at theta = 0, where it starts, for p > 2. Use p=2 "
                "(gradient descent) or update='explicit'."
            )
        if self.loss == "square" and self.phi == "sign":
            raise ValueError(
                "loss='square' with phi='sign' never updates: the derivative of sign "
                "is 0. Use loss='matching' (the Perceptron) or phi='tanh'."
            )
        clip_low, clip_high = -np.inf, np.inf
        if self.Y is not None:
            if self.phi in ("softmax", "sign"):
                raise ValueError(
                    f"Y clips each prediction to [-Y, Y] (GA^Y, KW01 §4), which "
                    f"phi={self.phi!r} does not allow (its predictions are "
                    f"{phi.range_text()}). Use Y=None."
                )
            clip_low, clip_high = phi.activation_bounds(float(self.Y))
        return (UpdateCode["UPDATE_" + self.update.upper()],
                LossCode["LOSS_" + self.loss.upper()], clip_low, clip_high)

    def _divergence(self, trial, eta,
                    cause="the parameters or the predictions stopped being finite"):
        return ValueError(
            f"{type(self).__name__} diverged at trial {trial} (eta={eta:.6g}, "
            f"psi={self.psi!r}, phi={self.phi!r}): {cause}. Use a smaller eta (a "
            "trial's step is eta times its sample weight), or scale the inputs (e.g. "
            "with StandardScaler); the model was left as it was before this call."
        )

    def _set_state(self, theta, intercept, weights, *, eta, U, n_iter, t,
                   cumulative_loss):
        """Set the fitted attributes; ``weights`` is psi(theta) (the compiled loop
        computes it faster than the registry's NumPy functions), or None for
        ``coef_`` from the kept loop (``_keep``)."""
        self.eta_ = eta
        # The model predicts as it was fitted: set_params takes effect at the next
        # fit (a binary phi='logistic' row read as softmax would be one class).
        self._fitted_psi, self._fitted_phi, self._fitted_Y = self.psi, self.phi, self.Y
        self.theta_ = theta
        self.intercept_ = intercept
        if weights is not None:
            self.coef_ = self._shape_coef(weights)
        else:
            self.__dict__.pop("coef_", None)  # (one set by hand, or by a CV fit)
        self.n_iter_ = n_iter
        self.t_ = t
        self.cumulative_loss_ = float(cumulative_loss)
        return self

    def _learning_rate(self, X, first_call):
        """The learning rate: ``eta``, or KW01 Theorem 3's 1/(2bc) for "theory".

        One implementation, in :mod:`sklearn_ga.theory`: b is eq. (28) on the rows
        of this first batch (plus 1 for the intercept, a constant input updated by
        gradient descent), c is eq. (29). The guarantee (30) holds only while later
        inputs obey the same bound. An all-zero first batch without intercept
        bounds nothing (b = 0): any rate is safe there, and 1 is used.
        """
        if self.eta != "theory":
            self._theory_parameters = None
            return float(self.eta)
        # The rate stays that of the first batch while what it depends on stays.
        depends_on = (self.psi, self.phi, self.U, self.p, self.fit_intercept)
        if not first_call and self._theory_parameters == depends_on:
            return self.eta_
        self._theory_parameters = depends_on
        # X is not scanned for NaN/inf before the kernel; b would be NaN or inf.
        assert_all_finite(X, input_name="X", estimator_name=type(self).__name__)
        try:
            c = transfer_bound(self.phi)
            b = input_bound(X, self.psi, U=self.U, p=self.p,
                            fit_intercept=self.fit_intercept)
            return theorem3_learning_rate(b, c) if b > 0 else 1.0
        except ValueError as error:
            raise ValueError(f"eta='theory' is not available: {error}") from None

    def _fit(self, X, y, sample_weight, *, classes=None):
        first_call = not (self.warm_start and hasattr(self, "theta_"))
        # On fresh parameters and a given eta, nothing reads a CSR X's structure
        # before the trial loop, which then checks each row as it reads it: a pass
        # of its own over the indices costs 8% of an SGD epoch.
        check_rows = first_call and self.eta != "theory"
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=first_call, classes=classes,
            check_rows=check_rows,
        )
        try:
            return self._run(X, Y, sample_weight, first_call=first_call, epochs=True,
                             check_rows=check_rows)
        except _UnsortedRows:
            return self._run(_canonical_csr(X), Y, sample_weight,
                             first_call=first_call, epochs=True)

    def _partial_fit(self, X, y, sample_weight, *, classes=None):
        first_call = not hasattr(self, "theta_")
        if not first_call:
            # scikit-learn validates hyper-parameters on the first partial_fit only;
            # set_params may have changed them since.
            self._validate_changed_params()
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=first_call, classes=classes
        )
        return self._run(X, Y, sample_weight, first_call=first_call, epochs=False)

    # -- prediction ----------------------------------------------------------------

    def _activations(self, X):
        """Linear activations A = X psi(Theta)^T + b, shape (m, k)."""
        check_is_fitted(self, "theta_")
        light = self._light_inputs(X)
        if light is not None and _surely_finite(light):
            _check_n_features(self, light, reset=False)
            X = light
        else:
            X = validate_data(self, X, reset=False, accept_sparse="csr",
                              dtype=np.float64)
        if sp.issparse(X):
            _checked_structure(X)
        kept = self.__dict__.get("_kept_loop")
        if (sp.issparse(X) and kept is not None and "coef_" not in self.__dict__
                and COLUMNS_ONLY * int(X.indptr[-1]) < X.shape[1]):
            # A few CSR rows after a call: the weights of their columns, O(nnz), not
            # all of coef_ (O(n): 4 ms for HashingVectorizer's 2^20 features).
            X, columns = _compact(X)
            weights = kept.columns(columns)
        else:
            weights = self.coef_.reshape(self.theta_.shape)
        return self._finite_activations(np.asarray(X @ weights.T) + self.intercept_)

    def _finite_activations(self, A):
        """A (activations, or scores computed from them), checked to be finite."""
        if not np.all(np.isfinite(A)):
            raise ValueError(
                f"The activations of {type(self).__name__} overflowed on this input "
                "(the inputs are too large for the learned weights); scale the inputs "
                "as they were scaled during training."
            )
        return A

    def _clip_activations(self, A):
        """GA^Y (KW01 §4) predicts phi(a) clipped to [-Y, Y]: a clipped to phi^-1."""
        if self._fitted_Y is None:
            return A
        bounds = PHI[self._fitted_phi].activation_bounds(float(self._fitted_Y))
        return np.clip(A, *bounds)

    def _outputs(self, A):
        """phi(A), checked to be finite (phi='exp' can overflow)."""
        with np.errstate(over="ignore"):  # overflow is reported below, as an error
            Y = PHI[self._fitted_phi].transfer(self._clip_activations(A))
        if not np.all(np.isfinite(Y)):
            raise ValueError(
                f"The predictions of {type(self).__name__} overflowed (phi="
                f"{self._fitted_phi!r}); the inputs are far outside the training range."
            )
        return Y

    def _shape_coef(self, weights):
        return weights

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def read_only(*arrays):
    """Read-only views of ``arrays``: given out while a kept loop writes them."""
    views = [array.view() for array in arrays]
    for view in views:
        view.flags.writeable = False
    return views


def batch_columns(X):
    """The column indices of a CSR batch's entries, for ``TrialLoop.save``; None
    for dense X."""
    return X.indices[:X.indptr[-1]] if sp.issparse(X) else None


def _checked_structure(X):
    """The CsrStructure of X (CSR); ValueError if it cannot be read safely.

    The compiled loop and scipy's products read the structure without bounds
    checks; scipy's constructor checks less and its flags can be set by hand. One
    pass over the indices.
    """
    indices, indptr = _index_arrays(X)
    structure = csr_structure(indices, indptr, X.data.shape[0], X.shape[1])
    if structure == CsrStructure.CSR_MALFORMED:
        raise ValueError(
            "X is a malformed CSR matrix: its indptr must start at 0, never decrease "
            "and end within indices and data, and its column indices must lie in "
            f"[0, {X.shape[1]}). Check it with X.check_format(full_check=True)."
        )
    return structure


def _canonical_csr(X):
    """X (CSR) checked, and canonical (sorted, no duplicates): the loop's O(nnz)
    normalizer updates need each column at most once per row."""
    if _checked_structure(X) == CsrStructure.CSR_UNSORTED:
        X = X.copy()
        X.has_canonical_format = False  # (a flag set by hand is not trusted)
        X.sum_duplicates()
    return X


def _light_sample_weight(sample_weight, n):
    """``_check_sample_weight(..., ensure_non_negative=True)``'s result for an
    ndarray of n finite non-negative numbers, not all 0, without check_array
    (0.3 ms); None for anything else, which goes through it (its errors)."""
    if (type(sample_weight) is not np.ndarray or sample_weight.shape != (n,)
            or sample_weight.dtype.kind not in "biuf"):
        return None
    weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
    valid = np.all((weights >= 0.0) & (weights < np.inf)) and np.any(weights > 0.0)
    return weights if valid else None


def _surely_finite(X):
    """Whether the sum of X's values (ndarray or CSR) is finite, so that they all
    are. False may also mean finite values whose sum overflows: validate_data then
    tells. A CSR matrix's values are summed alone (its structure is unchecked)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.isfinite((X.data if sp.issparse(X) else X).sum())


def _compact(X):
    """``(X', columns)``: X (checked CSR) without the columns that hold no entry
    (``columns`` are the others, sorted), so that X' @ W[:, columns].T computes
    X @ W.T with the same operations."""
    stored = X.indptr[-1]
    columns, position = np.unique(X.indices[:stored], return_inverse=True)
    return sp.csr_matrix((X.data[:stored], position.astype(X.indptr.dtype), X.indptr),
                         shape=(X.shape[0], columns.size), copy=False), columns


def _index_arrays(X):
    """A CSR matrix's indices and indptr, of one integer type (the loop's)."""
    if X.indices.dtype != X.indptr.dtype:
        return X.indices.astype(np.int64), X.indptr.astype(np.int64)
    return X.indices, X.indptr


class _UnsortedRows(Exception):
    """A pass checking the rows of a CSR X (``trial_runner``) met one whose indices
    do not strictly increase, in an X that is readable: fit sorts it and starts
    again."""


def trial_runner(X, Y, sample_weight, estimator_name=None, check_rows=False,
                 hold=False):
    """``run(loop, order)``: one compiled pass of ``loop`` over the rows ``order``.

    X is validated float64, C-contiguous or canonical CSR (``_canonical_csr``), and
    Y the encoded (m, k) targets. With ``check_rows``, a CSR X is not checked yet:
    the first pass, over all its rows, checks each before reading it
    (``run_csr``'s check_rows). If that pass fails, X is checked whole: a
    malformed X raises ValueError, an unsorted one ``_UnsortedRows``.
    X is not scanned for NaN/inf beforehand (a pass over X): non-finite inputs make
    the activations non-finite at once, so a pass that fails is checked here and
    reported as bad input rather than as divergence. With ``hold``, a CSR pass that
    succeeds may leave theta held for the next (``run_csr``'s hold): the caller
    calls ``loop.release()`` before reading theta.
    """
    weights = (np.empty(0) if sample_weight is None
               else np.ascontiguousarray(sample_weight, dtype=np.float64))
    unchecked = check_rows and sp.issparse(X)
    if not sp.issparse(X):
        def one_pass(loop, order):
            return loop.run_dense(X, Y, weights, order)
    else:
        indices, indptr = _index_arrays(X)

        def one_pass(loop, order):
            return loop.run_csr(X.data, indices, indptr, X.shape[1], Y, weights, order,
                                unchecked, hold)

    def run(loop, order):
        nonlocal unchecked
        status, trials, loss = one_pass(loop, order)
        if status != Status.OK and unchecked:
            _checked_structure(X)  # (a malformed X, before any other error)
            if status == Status.UNREADABLE:
                raise _UnsortedRows
        unchecked = False
        if status != Status.OK:
            assert_all_finite(X, input_name="X", estimator_name=estimator_name)
        return status, trials, loss

    return run


def fit_context(method):
    """Validate hyper-parameters (scikit-learn's constraints), then run atomically."""
    return _fit_context(prefer_skip_nested_validation=True)(_atomic(method))
