"""The base class of the GA estimators: parameters, validation, fit and prediction.

The regressor and the classifier differ only in how targets are encoded
(``_encode_targets``), how activations become outputs, and their tags. Input
validation's fast paths are in ``_validation``; the compiled loop, the epochs and
the state kept between calls in ``_engine`` (see doc/developers/architecture.rst).
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_n_features,
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from ._engine import Engine
from ._phi import PHI
from ._psi import PSI
from ._validation import (
    UnsortedRows,
    canonical_csr,
    checked_structure,
    light_inputs,
    light_sample_weight,
    light_validation,
    surely_finite,
)

# Predictions of CSR rows with under n / COLUMNS_ONLY entries use the weights of
# their columns rather than build coef_ in O(n).
COLUMNS_ONLY = 64


class BaseGA(Engine, BaseEstimator):
    """Base class of the general additive estimators (not for direct use)."""

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
        checked = None if first_call else light_validation(self, X, y)
        X, y = checked or validate_data(
            self, X, y, reset=first_call, accept_sparse="csr", dtype=np.float64,
            order="C", ensure_all_finite=False, **self._target_validation,
        )
        if sp.issparse(X) and not check_rows:
            X = canonical_csr(X)  # before anything reads its structure
        Y = self._encode_targets(y, first_call=first_call, classes=classes)
        if not first_call:
            self._check_continuation(Y.shape[1])
        PHI[self.phi].check_targets(Y)
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

    def _fit(self, X, y, sample_weight, *, classes=None):
        first_call = not (self.warm_start and hasattr(self, "theta_"))
        # On fresh parameters and a given eta, nothing reads a CSR X's structure
        # before the trial loop, which then checks each row as it reads it rather
        # than in a pass of its own over the indices.
        check_rows = first_call and self.eta != "theory"
        X, Y, sample_weight = self._validate_training_data(
            X, y, sample_weight, first_call=first_call, classes=classes,
            check_rows=check_rows,
        )
        try:
            return self._run(X, Y, sample_weight, first_call=first_call, epochs=True,
                             check_rows=check_rows)
        except UnsortedRows:
            return self._run(canonical_csr(X), Y, sample_weight,
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
        light = light_inputs(self, X)
        if light is not None and surely_finite(light):
            _check_n_features(self, light, reset=False)
            X = light
        else:
            X = validate_data(self, X, reset=False, accept_sparse="csr",
                              dtype=np.float64)
        if sp.issparse(X):
            checked_structure(X)
        kept = self.__dict__.get("_kept_loop")
        if (sp.issparse(X) and kept is not None and "coef_" not in self.__dict__
                and COLUMNS_ONLY * int(X.indptr[-1]) < X.shape[1]):
            # A few CSR rows after a call: the weights of their columns, O(nnz),
            # rather than all of coef_, O(n) (2^20 for a HashingVectorizer).
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


def _compact(X):
    """``(X', columns)``: X (checked CSR) without the columns that hold no entry
    (``columns`` are the others, sorted), so that X' @ W[:, columns].T computes
    X @ W.T with the same operations."""
    stored = X.indptr[-1]
    columns, position = np.unique(X.indices[:stored], return_inverse=True)
    return sp.csr_matrix((X.data[:stored], position.astype(X.indptr.dtype), X.indptr),
                         shape=(X.shape[0], columns.size), copy=False), columns


