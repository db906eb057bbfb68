"""Matching losses, potentials and divergences of the GA framework, and scorers.

Every formula lives in the registries (:data:`sklearn_ga.PHI`,
:data:`sklearn_ga.PSI`); the functions here validate their inputs and dispatch.

- :func:`matching_loss`: L_phi(y, y_hat) of KW01 eq. (2), from predictions or from
  activations (the latter stays exact where phi saturates).
- :func:`potential`: the potential P_phi of a transfer function or P_psi of a
  parameterization function.
- :func:`divergence`: Delta_psi(Theta~, Theta) of KW01 eq. (19), summed over rows.
- :func:`matching_loss_scorer`: a scorer for ``scoring=`` in model selection.
"""

import numpy as np
from sklearn.base import is_classifier
from sklearn.pipeline import Pipeline

from ._docstrings import fill_docstring
from ._phi import PHI
from ._psi import PSI

__all__ = ["divergence", "matching_loss", "matching_loss_scorer", "potential"]


def _phi_entry(phi):
    if phi not in PHI:
        raise ValueError(f"phi={phi!r} is not a transfer function; choose one of "
                         f"{sorted(PHI)}.")
    return PHI[phi]


def _psi_entry(psi, *, bregman=False, U=1.0, p=2.0):
    """The registry's entry of psi; U and p checked as the estimators check them."""
    if psi not in PSI:
        raise ValueError(f"psi={psi!r} is not a parameterization function; choose "
                         f"one of {sorted(PSI)}.")
    if bregman and PSI[psi].potential is None:
        raise ValueError(f"psi={psi!r} moves its weights along geodesics (KMWW "
                         "Examples 2, 3); it is no gradient of a potential and has no "
                         "matching divergence. Choose one of "
                         f"{sorted(name for name in PSI if PSI[name].potential)}.")
    if not 0.0 < U < np.inf:
        raise ValueError(f"U must be a finite number > 0; got {U!r}.")
    if "p" in PSI[psi].hyperparameters and not 2.0 <= p < np.inf:
        raise ValueError(f"p must be a finite number >= 2 for psi={psi!r}, as in the "
                         f"estimators; got {p!r}.")
    return PSI[psi]


def _as_float_array(values, name):
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError(f"{name} contains NaN; remove those samples.")
    return values


def _as_finite_array(values, name, what, dimensions=2):
    """Finite values of at most ``dimensions`` axes."""
    values = _as_float_array(values, name)
    if values.ndim > dimensions:
        raise ValueError(f"{name} has {values.ndim} dimensions; {what} have at "
                         f"most {dimensions}.")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains infinity; {what} are finite numbers (a "
                         "model's always are).")
    return values


def _as_parameters(values, name):
    """Parameter matrices: 2-D and finite (they are never infinite in a run)."""
    values = np.atleast_2d(_as_finite_array(values, name, "parameters"))
    if values.size == 0:
        raise ValueError(f"{name} is empty; give at least one parameter.")
    return values


def _check_in_range(entry, values, name):
    """Raise ValueError unless ``values`` lie in the (closure of the) range of phi."""
    violation = entry.range_violation(values)
    if violation is not None:
        raise ValueError(
            f"{name} must lie in the range of phi={entry.name!r}, "
            f"{entry.range_text()}" + (" (one row per sample)"
                                       if entry.rowwise else "")
            + f", but it {violation}. Rescale it, or compute the loss of another phi."
        )


def _per_sample(entry, values):
    """Sum entry-wise values over outputs: one value per sample."""
    if entry.rowwise:
        return values[..., 0]
    return values.sum(axis=-1) if values.ndim == 2 else values


def matching_loss(y_true, y_pred=None, *, activation=None, phi="identity"):
    """Matching loss L_phi(y, y_hat) of each sample (KW01 eq. 2; HKW Table I).

    L_phi(phi(a), phi(a_hat)) = P_phi(a_hat) - P_phi(a) - (a_hat - a) . phi(a): the
    square loss for ``"identity"``, the relative entropy for ``"logistic"`` and
    ``"softmax"``, and so on (see the user guide). Its gradient with respect to
    the activation is ``phi(a_hat) - y`` (KW01 eq. 3), the step of the GA update.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets in the range of ``phi`` (for softmax: rows of the simplex). The
        edges of the range are allowed (``0 ln 0 = 0``).
    y_pred : array-like of the shape of ``y_true``, default=None
        Predictions ``phi(a_hat)``. Give either ``y_pred`` or ``activation``.
    activation : array-like of the shape of ``y_true``, default=None
        Linear activations ``a_hat``; the loss is then finite and accurate even
        where ``phi(a_hat)`` rounds to the edge of its range. Required for
        ``phi="sign"``, whose predictions do not determine the loss.
    phi : {"identity", "logistic", "tanh", "arctan", "exp", "softmax", "sign"}, \
            default="identity"
        Transfer function.

    Returns
    -------
    loss : ndarray of shape (n_samples,)
        Loss of each sample, summed over outputs (a float for scalar inputs).

    See Also
    --------
    matching_loss_scorer : The mean loss as a model-selection scorer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.losses import matching_loss
    >>> matching_loss([1.0, 0.0], [0.5, 0.5], phi="logistic").round(4)
    array([0.6931, 0.6931])
    >>> matching_loss([1.0], activation=[-800.0], phi="logistic")
    array([800.])
    >>> matching_loss([[0.2, 0.8]], [[0.5, 0.5]], phi="softmax").round(4)
    array([0.1927])
    """
    entry = _phi_entry(phi)
    if (y_pred is None) == (activation is None):
        raise ValueError("Pass exactly one of y_pred (predictions) and activation "
                         "(linear activations).")
    Y = _as_finite_array(y_true, "y_true", "targets")
    _check_in_range(entry, Y, "y_true")
    given = (_as_finite_array(activation, "activation", "activations")
             if y_pred is None else _as_finite_array(y_pred, "y_pred", "predictions"))
    if given.shape != Y.shape:
        raise ValueError(f"y_true has shape {Y.shape} but "
                         f"{'activation' if y_pred is None else 'y_pred'} has shape "
                         f"{given.shape}; they must match.")
    if y_pred is None:
        values = entry.loss(Y, given)
    elif entry.prediction_loss is None:
        raise ValueError(f"phi={phi!r} is a threshold: its predictions do not "
                         "determine the loss. Pass activation= instead.")
    else:
        _check_in_range(entry, given, "y_pred")
        with np.errstate(divide="ignore"):
            values = entry.prediction_loss(Y, given)
    # A Bregman divergence: near an exact fit its terms cancel, and rounding alone
    # could leave a value of -1e-16 (relative to the terms).
    return np.maximum(_per_sample(entry, values), 0.0)


def potential(z, *, phi=None, psi=None, U=1.0, p=2.0):
    """Potential P_phi of a transfer function or P_psi of a parameterization.

    phi = grad P_phi and psi = grad P_psi (KW01 §2); for ``psi="eg_pm"``, P is
    ``ln sum_j (e^theta_j + e^-theta_j)``, whose gradient is the weights over U.

    At the edges, every phi gives its limit and every psi refuses:

    ================ ============== ============== ================================
    phi              a -> +inf      a -> -inf      no samples / no outputs
    ================ ============== ============== ================================
    identity, tanh,  +inf           +inf           empty array / 0 per sample
    arctan, sign
    logistic, exp    +inf           0              empty array / 0 per sample
    softmax (rows)   +inf if one    -inf if all    empty array / ValueError (a
                     entry is +inf  entries are    row needs an activation)
                                    -inf
    any psi          ValueError     ValueError     ValueError (parameters are
                                                   finite, at least one)
    ================ ============== ============== ================================

    (For softmax an entry at -inf adds nothing to its row: ``ln sum_j e^a_j``.)

    Parameters
    ----------
    z : array-like of shape (n_samples,) or (n_samples, n_outputs), or (k, n)
        Activations (with ``phi``; for softmax a 1-D array is one sample's row)
        or parameters Theta (with ``psi``, one row per output; a 1-D array is one
        row).
    phi : str, default=None
        Transfer function (a key of :data:`sklearn_ga.PHI`).
    psi : str, default=None
        Parameterization function (a key of :data:`sklearn_ga.PSI`). Give
        exactly one of ``phi`` and ``psi``.
    U : float, default=1.0
        Scale of EG± (unused by the potential, accepted for symmetry).
    p : float, default=2.0
        Exponent of ``psi="pnorm"``.

    Returns
    -------
    value : ndarray of shape (n_samples,) or float
        With ``phi``, the potential of each sample summed over outputs (a float
        for one sample: a number, or softmax's 1-D row); with ``psi``, the sum
        over rows.

    Examples
    --------
    >>> from sklearn_ga.losses import potential
    >>> float(potential([0.0, 0.0], psi="softmax"))  # ln 2
    0.6931471805599453
    >>> potential([0.0, 2.0], phi="identity")
    array([0., 2.])
    """
    if (phi is None) == (psi is None):
        raise ValueError("Pass exactly one of phi and psi.")
    z = _as_float_array(z, "z")
    if phi is not None:
        entry = _phi_entry(phi)
        if entry.rowwise and z.ndim > 0 and z.shape[-1] == 0:
            raise ValueError("z has rows without activations; softmax's potential "
                             "ln sum_j e^(a_j) needs at least one per sample.")
        with np.errstate(over="ignore"):  # (past the largest double: inf)
            values = _per_sample(entry, entry.potential(z))
        return float(values) if values.ndim == 0 else values
    entry = _psi_entry(psi, bregman=True, U=U, p=p)
    theta = _as_parameters(z, "z")
    with np.errstate(over="ignore"):  # (past the largest double: inf)
        return float(np.sum(entry.potential(theta, U, p)))


@fill_docstring
def divergence(theta_tilde, theta, *, psi="identity", U=1.0, p=2.0):
    """Matching divergence Delta_psi(Theta~, Theta) of KW01 eq. (19).

    ``P_psi(theta~) - P_psi(theta) - (theta~ - theta) . psi(theta)`` summed over the
    rows of the parameter matrices (KW01 §3). ``divergence(Theta_1, Theta_star)``
    is the term of Theorem 3's bound (30).

    Parameters
    ----------
    theta_tilde, theta : array-like of shape (n_features,) or (k, n_features)
        Parameter matrices (not weights); a 1-D array is one row.
    psi : [bregman psi choices], default="identity"
        Parameterization function: half the squared distance (identity), the
        relative entropy of the weights (softmax; eg_pm on its 2n weights), the
        unnormalized relative entropy (exp), the p-norm divergence (pnorm), the
        Burg divergence sum_i (w_i / w~_i - ln(w_i / w~_i) - 1) of the weights
        (burg, whose parameters are negative).
    U : float, default=1.0
        Scale of EG± (it enters the bounds through b, not through Delta).
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2.

    Returns
    -------
    value : float
        Non-negative; zero when the two parameter matrices give the same weights.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.losses import divergence
    >>> divergence([0.0, 0.0], [3.0, 4.0])
    12.5
    >>> theta_star = np.log([0.9, 0.1])
    >>> round(divergence(np.zeros(2), theta_star, psi="softmax"), 4)  # KL to uniform
    0.3681
    """
    entry = _psi_entry(psi, bregman=True, U=U, p=p)
    theta_tilde = _as_parameters(theta_tilde, "theta_tilde")
    theta = _as_parameters(theta, "theta")
    if theta_tilde.shape != theta.shape:
        raise ValueError(f"theta_tilde has shape {theta_tilde.shape} but theta has "
                         f"shape {theta.shape}; they must match.")
    # Non-negative by definition: clip what rounding leaves of cancelling terms.
    return max(float(np.sum(entry.divergence(theta_tilde, theta, U, p))), 0.0)


class _MatchingLossScorer:
    """Callable ``scorer(estimator, X, y)``: minus the mean matching loss."""

    def __init__(self, phi):
        self.phi = phi

    def __repr__(self):
        return f"matching_loss_scorer(phi={self.phi!r})"

    def __call__(self, estimator, X, y, sample_weight=None):
        entry = PHI[self.phi]
        if is_classifier(estimator):
            Y, A = self._encode(entry, estimator.classes_, np.asarray(y),
                                np.asarray(estimator.decision_function(X), float))
            losses = matching_loss(Y, activation=A, phi=self.phi)
        else:
            A = self._activations(estimator, X)
            if A is None:
                losses = matching_loss(y, estimator.predict(X), phi=self.phi)
            else:
                Y = np.asarray(y, dtype=np.float64).reshape(A.shape)
                losses = matching_loss(Y, activation=A, phi=self.phi)
        return -float(np.average(losses, weights=sample_weight))

    def _activations(self, estimator, X):
        """Activations of a model that predicts with this phi (last step of a
        Pipeline), from its ``matching_activations`` (clipped as it predicts,
        GA^Y); else None (the predictions are scored).

        Predictions that round to the edge of the range of phi would make the loss
        infinite; the activations keep it exact. Another phi's activations would
        score another predictor than the model's.
        """
        if isinstance(estimator, Pipeline):
            X = estimator[:-1].transform(X)
            estimator = estimator[-1]
        hook = getattr(estimator, "matching_activations", None)
        return None if hook is None else hook(X, self.phi)

    @staticmethod
    def _encode(entry, classes, y, scores):
        """Targets in the range of phi and activations, as GAClassifier fits them."""
        codes = np.searchsorted(classes, y)
        codes = np.minimum(codes, classes.shape[0] - 1)
        if np.any(classes[codes] != y):
            raise ValueError("y contains labels the classifier was not fitted on.")
        if scores.ndim == 1:
            if entry.rowwise:
                # A binary softmax keeps only the difference of its two activations.
                scores = np.column_stack([np.zeros_like(scores), scores])
            else:
                return np.where(codes == 1, 1.0, entry.low)[:, None], scores[:, None]
        Y = np.full(scores.shape, entry.low)
        Y[np.arange(y.shape[0]), codes] = 1.0
        return Y, scores


def matching_loss_scorer(phi):
    """Scorer: minus the mean matching loss of phi, for ``scoring=``.

    Regressors are scored from ``predict``; sklearn-ga regressors of the same phi
    (also as the last step of a Pipeline) from their activations (clipped as the
    model clips its predictions, ``Y``), which give the same loss but stay exact
    where predictions round to the edge of the range of phi. Classifiers are scored
    from ``decision_function``, with labels encoded as :class:`GAClassifier` fits
    them ({0, 1} or one-hot for logistic and softmax, {-1, +1} for tanh and sign,
    one-vs-rest with more than two classes), so the loss stays exact.

    Parameters
    ----------
    phi : {"identity", "logistic", "tanh", "arctan", "exp", "softmax", "sign"}
        Transfer function whose matching loss scores the model.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None)``, greater is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn_ga import GARegressor
    >>> from sklearn_ga.losses import matching_loss_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.choice([-1.0, 1.0], size=(300, 10))
    >>> y = np.tanh(X[:, 0] - X[:, 1])
    >>> scores = cross_val_score(GARegressor(psi="eg_pm", phi="tanh", U=2.0), X, y,
    ...                          scoring=matching_loss_scorer("tanh"), cv=3)
    >>> bool(np.all(scores <= 0))
    True
    """
    _phi_entry(phi)
    return _MatchingLossScorer(phi)
