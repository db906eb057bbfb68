"""Relative loss bounds of the GA algorithm: constants, learning rates and bounds.

KW01 Theorem 3: with b >= b_{X,psi} (eq. 28), c >= c_phi (eq. 29) and
eta = 1 / (2 b c), for every comparator Theta*,

    Loss_phi(GA, S) <= 2 Loss_phi(psi(Theta*), S) + 4 b c Delta_psi(Theta_1, Theta*)
                                                                                (30)

and with the rate (31) tuned to K >= Loss_phi(psi(Theta*), S), R >= Delta_psi,

    Loss_phi(GA, S) <= Loss_phi(psi(Theta*), S) + 2 sqrt(K b c R) + 4 b c R.      (32)

HKW Theorems 1 (GD) and 2 (EG±) are the single-neuron versions, stated with the
norms X of the inputs and the slope bound Z = c_phi. Loss_phi(GA, S) is the
cumulative on-line loss, ``cumulative_loss_`` of the estimators.

KMWW Theorems 6 (explicit rule, eq. 12) and 8 (implicit rule, eq. 16) bound it
with the Riemannian measure D = dist^2 / 2 (eq. 8) of the geometry the weights move
in, and their Examples 6 and 7 tune the rate of gradient descent and natural EG.

Every rate and bound returned is a finite double. One that is not (it overflows, or
it underflows to 0 where its exact value is positive) raises the same ValueError in
every function: "<theorem>: the learning rate | loss bound overflows | underflows
in floating point".
"""

from collections import namedtuple
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ._docstrings import fill_docstring
from ._guarantees import (
    Guarantee,
    _check_nonnegative,
    _check_positive,
    _guarantee,
    _representable,
)
from ._kmww import (
    distance,
    kmww_example6,
    kmww_example7,
    kmww_theorem6,
    kmww_theorem8,
    loss_slope_bound,
)
from .losses import _phi_entry, _psi_entry, divergence, matching_loss

# input_bound reads X in about this many blocks of rows (of at least
# MIN_BLOCK_VALUES entries), so that its temporaries are about 1 / BLOCKS of X.
BLOCKS = 100
MIN_BLOCK_VALUES = 4096

__all__ = [
    "Guarantee", "RelativeLossBound", "hkw_theorem1", "hkw_theorem2", "input_bound",
    "relative_loss_bound",
    "theorem3_bound", "theorem3_learning_rate", "transfer_bound",
    # KMWW
    "distance", "kmww_example6", "kmww_example7", "kmww_theorem6", "kmww_theorem8",
    "loss_slope_bound",
]

RelativeLossBound = namedtuple(
    "RelativeLossBound", ["eta", "bound", "b", "c", "comparator_loss", "divergence"])
RelativeLossBound.__doc__ = """KW01 Theorem 3 evaluated on data for a comparator."""


@fill_docstring
def input_bound(X, psi="identity", *, U=1.0, p=2.0, fit_intercept=False):
    """b_{X,psi} of KW01 eq. (28): sup of x^T Dpsi(theta) x over theta and rows x.

    [input bound table]

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The inputs of the trial sequence (CSR zeros count as entries).
    psi : [additive psi choices], default="identity"
        Parameterization function.
    U : float, default=1.0
        Scale of EG± (``psi="eg_pm"``).
    p : float, default=2.0
        Exponent of ``psi="pnorm"``.
    fit_intercept : bool, default=False
        Add 1 for an intercept updated by gradient descent: the intercept is a
        constant input 1 with identity parameterization, and the Hessian of the
        combined potential is block diagonal.

    Returns
    -------
    b : float
        The bound; Theorem 3 holds with any b >= this value.

    Raises
    ------
    ValueError
        For a psi of unbounded weights (``"exp"``, ``"burg"``), where no finite
        bound follows from X, and for the geodesic psi, which Theorem 3 does not
        cover.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.theory import input_bound
    >>> X = np.array([[1.0, -1.0, 1.0], [0.5, 0.0, 0.0]])
    >>> input_bound(X, "identity"), input_bound(X, "softmax")
    (3.0, 1.0)
    >>> input_bound(X, "eg_pm", U=2.0)
    4.0
    """
    entry = _psi_entry(psi, U=U, p=p)
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    if entry.input_bound is None:
        raise ValueError(
            f"b_(X,psi) of KW01 eq. (28) is not defined for psi={psi!r}: "
            f"{entry.no_input_bound}; so Theorem 3 gives no learning rate. Use a "
            "numeric eta (tune it, e.g. with GARegressorCV or GridSearchCV)."
        )
    # b is a max over rows: taken over blocks of rows, the row-wise temporaries
    # stay small (X may be most of the memory: no copy of it).
    per_row = max(1.0, X.nnz / X.shape[0] if sp.issparse(X) else X.shape[1])
    rows = max(-(-X.shape[0] // BLOCKS), int(MIN_BLOCK_VALUES // per_row), 1)
    with np.errstate(over="ignore"):  # reported below
        b = max(entry.input_bound(X[start:start + rows], U, p)
                for start in range(0, X.shape[0], rows))
    if not np.isfinite(b):
        scaled = "inputs (times U)" if "U" in entry.hyperparameters else "inputs"
        raise ValueError(
            f"b_(X,psi) of KW01 eq. (28) overflowed for psi={psi!r}: it grows with "
            f"the square of the {scaled}, and they are too large. Scale the inputs "
            "(e.g. with StandardScaler or MaxAbsScaler), or use a numeric eta."
        )
    return float(b) + float(fit_intercept)


def transfer_bound(phi):
    """c_phi of KW01 eq. (29): sup of ||y - y_hat||_2^2 / (2 L_phi(y, y_hat)).

    For a one-dimensional phi it is the largest slope of phi (KW01 Example 6,
    HKW's Z): 1 for identity, tanh and arctan, 1/4 for logistic. For softmax it is
    1/2, not the 1/4 of KW01 Example 6: near y = y_hat = (1/2, 1/2) the ratio tends
    to 1/2, and Pinsker's inequality bounds it by 1/2 for every k.

    Parameters
    ----------
    phi : {"identity", "logistic", "tanh", "arctan", "softmax"}
        Transfer function.

    Returns
    -------
    c : float
        The constant.

    Raises
    ------
    ValueError
        For ``phi="exp"`` (the ratio grows like y_hat: c is infinite) and
        ``phi="sign"`` (a threshold has no matching loss in the sense of eq. 2).

    Examples
    --------
    >>> from sklearn_ga.theory import transfer_bound
    >>> transfer_bound("logistic"), transfer_bound("softmax")
    (0.25, 0.5)
    """
    c = _phi_entry(phi).c
    if c is None:
        raise ValueError(
            f"c_phi of KW01 eq. (29) is not defined for phi={phi!r}: a threshold "
            "has no matching loss in the sense of eq. (2). Use a numeric eta."
        )
    if not np.isfinite(c):
        raise ValueError(
            f"c_phi of KW01 eq. (29) is infinite for phi={phi!r}: for large y and "
            "y_hat the ratio ||y - y_hat||^2 / (2 L_phi(y, y_hat)) grows like y_hat, "
            "so Theorem 3 gives no learning rate. Use a numeric eta."
        )
    return float(c)


def _check_tuning(K, R):
    """Whether K and R of eq. (31) are given; both or neither, K >= 0, R > 0."""
    if (K is None) != (R is None):
        raise ValueError("Give both K and R for the tuned rate of eq. (31), or "
                         "neither for 1 / (2 b c).")
    if K is None:
        return False
    _check_positive(R=R)
    _check_nonnegative(K=K)
    return True


def _check_within(comparator_loss, K):
    if K is not None and comparator_loss > K:
        raise ValueError(f"The tuned rate needs Loss(u) <= K; got {comparator_loss!r} "
                         f"> K={K!r}.")


def _tuned_rate_factor(root, K):
    """sqrt(z^2 + z) - z for z = root^2 / K, without cancellation (and without
    squaring root, which may underflow): 0 at root = 0 (a comparator at Theta_1),
    1/2 at K = 0, the noise-free limit of eq. (31) and of HKW (15), (18)."""
    if K == 0:
        return 0.5
    root = root / np.sqrt(np.float64(K))
    return 0.5 if np.isinf(root) else root / (np.hypot(root, 1.0) + root)


def theorem3_learning_rate(b, c, *, K=None, R=None):
    """Learning rate of KW01 Theorem 3: 1 / (2 b c), or eq. (31) given K and R.

    Parameters
    ----------
    b : float
        Bound b >= b_{X,psi} (:func:`input_bound`), > 0.
    c : float
        Bound c >= c_phi (:func:`transfer_bound`), > 0.
    K : float, default=None
        Upper bound on the comparator's loss Loss_phi(psi(Theta*), S), >= 0
        (0 is the noise-free limit). Give ``K`` and ``R`` together for eq. (31).
    R : float, default=None
        Upper bound on Delta_psi(Theta_1, Theta*), > 0.

    Returns
    -------
    eta : float
        ``1 / (2 b c)``, or ``(sqrt((bcR)^2 + K bcR) - bcR) / (K bc)`` (eq. 31).

    Examples
    --------
    >>> from sklearn_ga.theory import theorem3_learning_rate
    >>> theorem3_learning_rate(4.0, 0.25)
    0.5
    >>> round(theorem3_learning_rate(4.0, 0.25, K=10.0, R=1.0), 4)
    0.2317
    """
    _check_positive(b=b, c=c)
    _check_tuning(K, R)
    with np.errstate(all="ignore"):  # (reported by _representable)
        bc = np.float64(b) * c
        # Eq. (31) with z = bcR / K: eta = (sqrt(z^2 + z) - z) / (bc).
        factor = 0.5 if K is None else _tuned_rate_factor(np.sqrt(bc * R), K)
        eta = factor / bc
    return _representable("KW01 Theorem 3", "learning rate", eta, True)


def theorem3_bound(b, c, comparator_loss, divergence, *, K=None, R=None):
    """Loss bound (30) of KW01 Theorem 3, or (32) for the rate of eq. (31).

    Parameters
    ----------
    b, c : float
        The constants of :func:`theorem3_learning_rate`.
    comparator_loss : float
        Loss_phi(psi(Theta*), S) of the comparator on the sequence.
    divergence : float
        Delta_psi(Theta_1, Theta*) (:func:`sklearn_ga.losses.divergence`).
    K, R : float, default=None
        The bounds the rate (31) was tuned with; then (32) is returned, which
        needs ``comparator_loss <= K`` and ``divergence <= R``.

    Returns
    -------
    bound : float
        ``2 L* + 4 b c Delta`` (30), or ``L* + 2 sqrt(K b c R) + 4 b c R`` (32).

    Examples
    --------
    >>> from sklearn_ga.theory import theorem3_bound
    >>> theorem3_bound(4.0, 0.25, comparator_loss=3.0, divergence=2.0)
    14.0
    """
    _check_positive(b=b, c=c)
    _check_nonnegative(comparator_loss=comparator_loss, divergence=divergence)
    if _check_tuning(K, R):
        if comparator_loss > K or divergence > R:
            raise ValueError(
                f"Bound (32) needs Loss(Theta*) <= K and Delta(Theta_1, Theta*) <= R; "
                f"got {comparator_loss:.6g} > K={K:.6g} or {divergence:.6g} > "
                f"R={R:.6g}."
            )
    with np.errstate(all="ignore"):  # (reported by _representable)
        bc = np.float64(b) * c
        if K is None:
            bound = 2.0 * comparator_loss + 4.0 * bc * divergence
        else:
            bound = (comparator_loss + 2.0 * np.sqrt(np.float64(K) * R) * np.sqrt(bc)
                     + 4.0 * bc * R)
    # (R > 0: the bound (32) is positive.)
    return _representable("KW01 Theorem 3", "loss bound", bound,
                          comparator_loss > 0 or divergence > 0 or K is not None)


def relative_loss_bound(X, y, theta, *, psi="identity", phi="identity", U=1.0,
                        p=2.0, intercept=None, K=None, R=None):
    """KW01 Theorem 3 on a data set for a comparator (Theta*, b*).

    Computes b (eq. 28), c (eq. 29), the comparator's total loss and its
    divergence from the start Theta_1 = 0 of the estimators, then the rate and
    the bound. Compare ``bound`` with ``cumulative_loss_`` of
    ``GARegressor(psi, phi, eta=eta, U=U, p=p, fit_intercept=intercept is not
    None).partial_fit(X, y)``: the rate and the bound are for that model (an
    intercept is one more input, which raises b).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Inputs, in the order of the trials.
    y : array-like of shape (n_samples,) or (n_samples, k)
        Targets in the range of phi.
    theta : array-like of shape (n_features,) or (k, n_features)
        Comparator parameters Theta* (weights psi(Theta*)), e.g. ``theta_`` of a
        fitted estimator.
    psi, phi : str
        Parameterization and transfer functions.
    U, p : float
        Hyper-parameters of ``psi="eg_pm"`` and ``psi="pnorm"``.
    intercept : array-like of shape (k,), default=None
        Comparator intercepts b*, for an estimator with ``fit_intercept=True``:
        the intercept is a constant input 1 learned by gradient descent, so b
        grows by 1 and Delta by ||b*||^2 / 2.
    K, R : float, default=None
        For the tuned rate (31) and bound (32).

    Returns
    -------
    result : RelativeLossBound
        Named tuple ``(eta, bound, b, c, comparator_loss, divergence)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga import GARegressor
    >>> from sklearn_ga.theory import relative_loss_bound
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(500, 4))
    >>> theta_star = np.array([1.0, -0.5, 0.0, 0.25])
    >>> y = np.tanh(X @ theta_star)
    >>> result = relative_loss_bound(X, y, theta_star, phi="tanh")
    >>> model = GARegressor(phi="tanh", eta=result.eta, fit_intercept=False)
    >>> bool(model.partial_fit(X, y).cumulative_loss_ <= result.bound)
    True
    """
    psi_entry, phi_entry = _psi_entry(psi, bregman=True, U=U, p=p), _phi_entry(phi)
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    Y = np.asarray(y, dtype=np.float64)
    Y = Y.reshape(Y.shape[0], -1)
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    if theta.shape != (Y.shape[1], X.shape[1]):
        raise ValueError(f"theta must have shape {(Y.shape[1], X.shape[1])} (outputs, "
                         f"features); got {theta.shape}.")
    A = np.asarray(X @ psi_entry.weights(theta, U, p).T)
    b = input_bound(X, psi, U=U, p=p, fit_intercept=intercept is not None)
    delta = divergence(np.zeros_like(theta), theta, psi=psi, U=U, p=p)
    if intercept is not None:
        intercept = np.asarray(intercept, dtype=np.float64).reshape(-1)
        A = A + intercept
        delta += 0.5 * float(intercept @ intercept)
    comparator_loss = float(np.sum(matching_loss(Y, activation=A, phi=phi_entry.name)))
    c = transfer_bound(phi)
    return RelativeLossBound(
        theorem3_learning_rate(b, c, K=K, R=R),
        theorem3_bound(b, c, comparator_loss, delta, K=K, R=R),
        b, c, comparator_loss, delta,
    )


def hkw_theorem1(X_norm, Z, distance, comparator_loss=0.0, *, K=None):
    """HKW Theorem 1 (GD on a single neuron): learning rate and loss bound.

    With ||x_t||_2 <= X and 0 < phi' <= Z: eta = 1 / (2 X^2 Z) gives (14),
    ``Loss(GD) <= 2 (Loss(u) + (||u - w_1||_2 X)^2 Z)``; given K >= Loss(u), the
    rate ``(sqrt(z^2 + z) - z) / (X^2 Z)`` with ``z = ||u - w_1||^2 X^2 Z / (2K)``
    gives (15), ``Loss(u) + ||u - w_1|| X sqrt(2 K Z) + 2 (||u - w_1|| X)^2 Z``.
    This is KW01 Theorem 3 with psi = identity, b = X^2 and c = Z.

    Parameters
    ----------
    X_norm : float
        X, the largest 2-norm of an input.
    Z : float
        Bound on phi' (:func:`transfer_bound`).
    distance : float
        ||u - w_1||_2 for the comparator u (||u||_2 from the zero start).
    comparator_loss : float, default=0.0
        Loss_phi(u, S) (0 when noise-free).
    K : float, default=None
        Upper bound on Loss_phi(u, S) for the tuned rate of (15); 0 is the
        noise-free limit.

    Returns
    -------
    guarantee : Guarantee
        Named tuple ``(eta, bound)``.

    Examples
    --------
    >>> from sklearn_ga.theory import hkw_theorem1
    >>> hkw_theorem1(X_norm=10.0, Z=1.0, distance=2.0)
    Guarantee(eta=0.005, bound=800.0)
    """
    _check_positive(X_norm=X_norm, Z=Z)
    _check_nonnegative(distance=distance, comparator_loss=comparator_loss, K=K)
    _check_within(comparator_loss, K)
    with np.errstate(all="ignore"):  # (reported by _guarantee)
        distance = np.float64(distance)
        xz = np.float64(X_norm) ** 2 * Z
        if K is None:
            eta, bound = 1.0 / (2.0 * xz), 2.0 * (comparator_loss + distance**2 * xz)
        else:
            # z = ||u - w_1||^2 X^2 Z / (2K)
            eta = _tuned_rate_factor(distance * np.sqrt(xz / 2.0), K) / xz
            bound = (comparator_loss + distance * X_norm * np.sqrt(2.0 * K * Z)
                     + 2.0 * distance**2 * xz)
    return _guarantee("HKW Theorem 1", eta, bound,
                      eta_positive=K is None or K == 0 or distance > 0,
                      bound_positive=comparator_loss > 0 or distance > 0)


def hkw_theorem2(X_norm, Z, U, n_features, comparator_loss=0.0, *, K=None, D=None):
    """HKW Theorem 2 (EG± on a single neuron): learning rate and loss bound.

    For comparators u with ||u||_1 <= U, ||x_t||_inf <= X and 0 < phi' <= Z. EG±
    is EG on x' = U (x, -x), so the theorem is HKW Theorem 7 with R = 2 U X and
    D >= d_RE(u', w'_1) (ln(2N) from the uniform start). eta = 1 / (4 (UX)^2 Z)
    gives (24), ``4/3 (Loss(u) + 4 (UX)^2 Z D)``; given K >= Loss(u), the rate
    ``(sqrt(z^2 + z) - z) / ((UX)^2 Z)`` with ``z = (UX)^2 Z D / K`` gives (25),
    ``Loss(u) + 2 U X sqrt(K Z D) + 4 (UX)^2 Z D``: (17) and (18) with D = ln(2N).

    Parameters
    ----------
    X_norm : float
        X, the largest infinity-norm of an input.
    Z : float
        Bound on phi'.
    U : float
        Scale of EG± (``U`` of the estimators), >= ||u||_1.
    n_features : int
        N, the input dimension.
    comparator_loss : float, default=0.0
        Loss_phi(u, S).
    K : float, default=None
        Upper bound on Loss_phi(u, S) for the tuned rate; 0 is the noise-free limit,
        where eta = 1 / (2 (UX)^2 Z) and the bound is 4 (UX)^2 Z D.
    D : float, default=None
        Bound on the relative entropy of the comparator's 2N weights from the
        uniform start; ``ln(2 N)`` by default.

    Returns
    -------
    guarantee : Guarantee
        Named tuple ``(eta, bound)``.

    Examples
    --------
    >>> import math
    >>> from sklearn_ga.theory import hkw_theorem2
    >>> eta, bound = hkw_theorem2(X_norm=1.0, Z=1.0, U=5.0, n_features=100, K=0.0)
    >>> eta, round(bound / math.log(200), 6)
    (0.02, 100.0)
    """
    _check_positive(X_norm=X_norm, Z=Z, U=U)
    _check_nonnegative(comparator_loss=comparator_loss, K=K, D=D)
    _check_within(comparator_loss, K)
    if not (isinstance(n_features, Integral) and n_features >= 1):
        raise ValueError(f"n_features must be an integer >= 1; got {n_features!r}.")
    D = np.log(2.0 * n_features) if D is None else D
    with np.errstate(all="ignore"):  # (reported by _guarantee)
        uxz = (np.float64(U) * X_norm) ** 2 * Z
        if K is None:
            eta = 1.0 / (4.0 * uxz)
            bound = 4.0 / 3.0 * (comparator_loss + 4.0 * uxz * D)
        else:
            # z = (UX)^2 Z D / K
            eta = _tuned_rate_factor(np.sqrt(uxz) * np.sqrt(D), K) / uxz
            bound = (comparator_loss + 2.0 * np.float64(U) * X_norm
                     * np.sqrt(np.float64(K) * Z * D) + 4.0 * uxz * D)
    return _guarantee("HKW Theorem 2", eta, bound,
                      eta_positive=K is None or K == 0 or D > 0,
                      bound_positive=comparator_loss > 0 or D > 0)
