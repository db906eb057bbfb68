"""Registry of parameterization functions psi: the weights are Omega = psi(Theta).

Each entry is defined here once, with its kernel code, a vectorized NumPy formula
used for ``coef_``, its potential P_psi, its matching divergence Delta_psi (KW01
eq. 19), the bound b_{X,psi} of eq. (28) and the facts the estimators ask about it
(see doc/developers/architecture.rst). Formulas: KW01 §3 and Examples 2, 5; HKW
§III (EG±). psi acts on each row of Theta (k x n) independently.

EG± is EG on the inputs x' = U (x, -x) with parameters (theta, -theta) (HKW §III):
its potential is ln sum_j (e^theta_j + e^-theta_j), whose gradient is the weights
divided by U; its divergence is the relative entropy between the 2n EG weights,
and U enters Theorem 3 through b = U^2 max ||x||_inf^2.

The geodesic entries (``sphere``, ``simplex``) keep weights on a manifold and move
them along its geodesics (KMWW Examples 2, 3) instead of by the additive step of
KW01 eq. (23); their Theta is a point of the manifold up to a positive factor.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.special import log_softmax, logsumexp, softmax

from ._codes import PsiCode


def _identity(theta, U, p):
    return np.array(theta, dtype=np.float64, copy=True)


def _softmax(theta, U, p):
    return softmax(theta, axis=-1)


def _eg_pm(theta, U, p):
    # omega = U (w+ - w-) with w± = e^{±theta} / sum_j (e^{theta_j} + e^{-theta_j}),
    # shifted by max |theta| so no exponential overflows (HKW §III).
    shift = np.max(np.abs(theta), axis=-1, keepdims=True)
    plus, minus = np.exp(theta - shift), np.exp(-theta - shift)
    return U * (plus - minus) / np.sum(plus + minus, axis=-1, keepdims=True)


def _exp(theta, U, p):
    return np.exp(theta)


def _burg(theta, U, p):
    # The Burg entropy F(w) = -sum_i ln w_i has the link f(w) = -1/w, so that
    # w = psi(theta) = -1/theta on theta < 0 (positive weights).
    return -1.0 / _burg_parameters(theta)


def _burg_parameters(theta):
    """theta, which must lie in psi="burg"'s domain theta < 0."""
    theta = np.asarray(theta, dtype=np.float64)
    if not np.all(theta < 0):
        raise ValueError("psi='burg' has parameters theta < 0 (its weights are "
                         "-1/theta > 0); got a parameter >= 0.")
    return theta


def _unit_rows(theta):
    """theta = shift * r row by row, shift = max |theta| (1 for a zero row), so
    that powers of r (|r| <= 1, one entry 1) neither overflow nor all underflow."""
    shift = np.max(np.abs(theta), axis=-1, keepdims=True)
    shift = np.where(shift > 0, shift, 1.0)
    return shift, theta / shift


def _pnorm_norms(theta, p):
    """||theta||_p of each row, at any scale of theta and any p."""
    shift, r = _unit_rows(theta)
    return shift[..., 0] * np.sum(np.abs(r) ** p, axis=-1) ** (1 / p)


def _pnorm(theta, U, p):
    # sign(theta)|theta|^(p-1) / ||theta||_p^(p-2), measured in units of max |theta|.
    shift, r = _unit_rows(theta)
    norm = np.sum(np.abs(r) ** p, axis=-1, keepdims=True)
    scale = np.divide(shift, norm ** ((p - 2) / p), out=np.zeros_like(shift),
                      where=norm > 0)
    return scale * np.sign(r) * np.abs(r) ** (p - 1)


def _pnorm_same_as(p):
    # sign(theta)|theta|^(p-1) / ||theta||_p^(p-2) is theta at p = 2.
    return "identity" if p == 2 else None


def _sphere(theta, U, p):
    # U theta / ||theta||_2, measured in units of max |theta| (no overflow).
    _, r = _unit_rows(theta)
    return U * r / np.linalg.norm(r, axis=-1, keepdims=True)


def _simplex(theta, U, p):
    # theta = sqrt(omega) up to a factor (KMWW Example 3).
    return _sphere(theta, 1.0, p) ** 2


# Potentials P_psi of each row (psi = grad P_psi; for eg_pm, psi / U) and the
# divergences Delta_psi(theta_tilde, theta) = P(theta_tilde) - P(theta)
# - (theta_tilde - theta) . grad P(theta) of KW01 eq. (19), in closed forms that stay
# accurate where the exponentials would overflow.


def _mirror(theta):
    return np.concatenate([theta, -theta], axis=-1)


def _potential_identity(theta, U, p):
    return 0.5 * np.sum(theta**2, axis=-1)


def _potential_softmax(theta, U, p):
    return logsumexp(theta, axis=-1)


def _potential_eg_pm(theta, U, p):
    return logsumexp(_mirror(theta), axis=-1)


def _potential_exp(theta, U, p):
    return np.sum(np.exp(theta), axis=-1)


def _potential_pnorm(theta, U, p):
    return 0.5 * _pnorm_norms(theta, p) ** 2


def _potential_burg(theta, U, p):
    return np.sum(-np.log(-_burg_parameters(theta)), axis=-1)


def _divergence_identity(theta_tilde, theta, U, p):
    return 0.5 * np.sum((theta_tilde - theta) ** 2, axis=-1)


def _divergence_softmax(theta_tilde, theta, U, p):
    # KW01 Example 2: sum_j sigma_j(theta) ln(sigma_j(theta) / sigma_j(theta_tilde)).
    # A weight of 0 adds nothing: its log ratio may be -inf - (-inf) far out.
    with np.errstate(over="ignore", invalid="ignore"):
        weights = softmax(theta, axis=-1)
        ratios = log_softmax(theta, axis=-1) - log_softmax(theta_tilde, axis=-1)
        return np.sum(np.where(weights > 0, weights * ratios, 0.0), axis=-1)


def _divergence_eg_pm(theta_tilde, theta, U, p):
    return _divergence_softmax(_mirror(theta_tilde), _mirror(theta), U, p)


def _divergence_exp(theta_tilde, theta, U, p):
    # sum_j e^theta_j (e^d - 1 - d) with d = theta_tilde - theta, i.e. the
    # unnormalized relative entropy sum_j (w_j ln(w_j / w~_j) + w~_j - w_j). For
    # d > 1 the term is e^theta~ - e^theta (1 + d) (no cancellation: e^d > 1 + d by
    # a factor of at least e / 2), finite where e^theta underflows and e^d overflows.
    # Where e^theta overflows, e^(theta + ln(e^d - 1 - d)) may not.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = theta_tilde - theta
        weights = np.exp(theta)
        near = np.where(np.isfinite(weights), weights * (np.expm1(d) - d),
                        np.exp(theta + np.log(np.expm1(d) - d)))
        terms = np.where(d > 1.0, np.exp(theta_tilde)
                         - np.where(weights > 0, weights * (1.0 + d), 0.0), near)
    return np.sum(terms, axis=-1)


def _divergence_burg(theta_tilde, theta, U, p):
    # sum_i (r_i - 1 - ln r_i) with r = theta~ / theta = w / w~: the Burg divergence
    # of the weights, Delta_F(w, w~) (the slides' Examples-3), in d = r - 1 without
    # cancellation near r = 1.
    d = _burg_parameters(theta_tilde) / _burg_parameters(theta) - 1.0
    return np.sum(d - np.log1p(d), axis=-1)


def _divergence_pnorm(theta_tilde, theta, U, p):
    # ||theta~||_p^2 / 2 - ||theta||_p^2 / 2 - (theta~ - theta) . psi(theta), in units
    # s (a power of 2: exact) of the larger |entry| of each row pair, so the squares
    # do not overflow. Both parts vanish exactly at theta~ = theta; near it the
    # difference of the squares is (f~ - f)(f~ + f) with f~ - f from the
    # coordinates' own differences |theta~_j|^p - |theta_j|^p, each without
    # cancellation, so the error is about eps |theta| |theta~ - theta|, not
    # eps |theta|^2.
    if p == 2:
        return _divergence_identity(theta_tilde, theta, U, p)
    high = np.max(np.maximum(np.abs(theta_tilde), np.abs(theta)), axis=-1,
                  keepdims=True)
    s = np.where(high > 0, np.ldexp(1.0, np.frexp(high)[1]), 1.0)
    theta_tilde, theta = theta_tilde / s, theta / s
    norm_tilde, norm = _pnorm_norms(theta_tilde, p), _pnorm_norms(theta, p)
    d = theta_tilde - theta
    linear = np.sum(d * _pnorm(theta, U, p), axis=-1)
    with np.errstate(all="ignore"):  # (the masked entries)
        ratio = norm_tilde / norm
        # (f~ / f)^p within [1/2, 2]: |theta~_j|^p stays below 2 ||theta||_p^p.
        near = (ratio >= 2.0 ** (-1 / p)) & (ratio <= 2.0 ** (1 / p))
        top = np.where(norm > 0, np.max(np.abs(theta), axis=-1), 1.0)[..., None]
        q, q_tilde = theta / top, theta_tilde / top
        powers = np.abs(q) ** p
        log_ratio = p * np.log1p(d / theta)
        own = (q != 0) & (np.sign(q_tilde) == np.sign(q)) & (np.abs(log_ratio) < 1)
        steps = np.where(own, powers * np.expm1(log_ratio),
                         np.abs(q_tilde) ** p - powers)
        relative = np.maximum(np.sum(steps, axis=-1) / np.sum(powers, axis=-1), -1.0)
        gap = np.where(near, norm * np.expm1(np.log1p(relative) / p),
                       norm_tilde - norm)
        unit = 0.5 * gap * (norm_tilde + norm) - linear
        return s[..., 0] * (s[..., 0] * unit)  # (s^2 may overflow where unit is 0)


# Inverses psi^-1(omega) of each row, for weights given as a starting point
# (``coef_init``). Each checks that omega lies in the range of psi and raises
# ValueError saying what that range is otherwise.

# How far a row given on the sphere or the simplex may be from it (relative):
# ``coef_`` of a fitted model is on it to rounding.
RANGE_TOLERANCE = 1e-9


def _inverse_identity(omega, U, p):
    return np.array(omega, dtype=np.float64, copy=True)


def _positive(omega, where):
    if not np.all(omega > 0):
        raise ValueError(
            f"{where} are positive (every parameter gives e^theta > 0, and no finite "
            f"parameter gives 0); got a smallest weight of {np.min(omega)!r}."
        )


def _on_simplex(omega):
    totals = np.sum(omega, axis=-1)
    if np.any(omega < 0) or np.any(np.abs(totals - 1.0) > RANGE_TOLERANCE):
        raise ValueError(
            "the weights must lie on the probability simplex (non-negative, each row "
            f"summing to 1); got row sums {np.round(totals, 12).tolist()!r} and a "
            f"smallest weight of {np.min(omega)!r}."
        )


def _inverse_softmax(omega, U, p):
    # Any theta + c gives softmax(theta) = omega; ln omega is the one of
    # logsumexp(theta) = 0.
    _on_simplex(omega)
    _positive(omega, "EG's weights (psi='softmax')")
    return np.log(omega)


def _inverse_eg_pm(omega, U, p):
    # omega_j / U = 2 sinh(theta_j) / Z with Z = 2 sum_j cosh(theta_j) (HKW §III):
    # theta_j = asinh(r_j c) with c = Z / 2 the root of sum_j sqrt(1 + (r_j c)^2) = c,
    # unique for ||r||_1 < 1 (the left side minus c is convex, n at 0, and falls
    # to -inf), and within [n, n / (1 - ||r||_1)].
    r = np.asarray(omega, dtype=np.float64) / U
    norms = np.sum(np.abs(r), axis=-1)
    if not np.all(norms < 1.0):
        raise ValueError(
            f"EG±'s weights (psi='eg_pm') lie strictly inside the l1 ball of radius "
            f"U={U!r} (its boundary needs infinite parameters); got l1 norms up to "
            f"{np.max(norms) * U!r}. Scale the weights down, or raise U."
        )
    theta = np.empty_like(r)
    n = r.shape[-1]
    for row, (ratios, norm) in enumerate(zip(r.reshape(-1, n), norms.ravel(),
                                             strict=True)):
        c = brentq(lambda c, ratios=ratios: np.sum(np.hypot(1.0, ratios * c)) - c,
                   n, n / (1.0 - norm), xtol=np.finfo(float).tiny,
                   rtol=4 * np.finfo(float).eps)
        theta.reshape(-1, n)[row] = np.arcsinh(ratios * c)
    return theta


def _inverse_exp(omega, U, p):
    _positive(omega, "EGU's weights (psi='exp')")
    return np.log(omega)


def _inverse_burg(omega, U, p):
    omega = np.asarray(omega, dtype=np.float64)
    if not np.all(omega > 0):
        raise ValueError(
            "The Burg weights (psi='burg') are positive (w = -1/theta for theta < 0); "
            f"got a smallest weight of {np.min(omega)!r}."
        )
    return -1.0 / omega


def _inverse_pnorm(omega, U, p):
    # The p-norm link's inverse is the q-norm link, 1/p + 1/q = 1 (Gentile).
    return _pnorm(omega, U, p / (p - 1.0))


def _inverse_sphere(omega, U, p):
    # Theta is omega up to a positive factor.
    norms = np.linalg.norm(omega, axis=-1)
    if np.any(np.abs(norms - U) > RANGE_TOLERANCE * U):
        raise ValueError(
            f"the weights of psi='sphere' lie on the sphere of radius U={U!r}; got "
            f"rows of l2 norm {np.round(norms, 12).tolist()!r}. Divide each row by "
            "its norm and multiply by U."
        )
    return np.array(omega, dtype=np.float64, copy=True)


def _inverse_simplex(omega, U, p):
    # theta = sqrt(omega) up to a factor (KMWW Example 3).
    _on_simplex(omega)
    return np.sqrt(omega)


def _row_norms(X, order):
    """||x||_order of each row (dense or CSR)."""
    if sp.issparse(X):
        X = abs(sp.csr_matrix(X))
        if order == np.inf or not X.nnz:
            return X.max(axis=1).toarray()[:, 0]
        # Each row in units of its largest entry, as in _pnorm_norms.
        shift = X.max(axis=1).toarray()[:, 0]
        shift[shift == 0] = 1.0
        units = sp.csr_matrix((X.data / np.repeat(shift, np.diff(X.indptr)),
                               X.indices, X.indptr), shape=X.shape)
        powers = np.asarray(units.power(order).sum(axis=1))[:, 0]
        return shift * powers ** (1 / order)
    if order == np.inf:
        return np.maximum(X.max(axis=1), -X.min(axis=1))  # (no copy of |X|)
    return _pnorm_norms(X, order)


# The quantity x^T Dpsi(theta) x of KW01 eq. (28), at its sup over theta, for each
# row x: b_{X,psi} is their max (``_largest``).


def _rows_identity(X, U, p):
    # ||x||_2^2, summed directly so that integer inputs give exact values.
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).reshape(-1)
    return np.einsum("ij,ij->i", X, X)


def _rows_softmax(X, U, p):
    # KW01 Example 5: (max_i x_i - min_i x_i)^2 / 4; implicit zeros count in CSR.
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        full = np.diff(X.indptr) == X.shape[1]
        high = np.where(full, X.max(axis=1).toarray()[:, 0],
                        np.maximum(X.max(axis=1).toarray()[:, 0], 0))
        low = np.where(full, X.min(axis=1).toarray()[:, 0],
                       np.minimum(X.min(axis=1).toarray()[:, 0], 0))
    else:
        high, low = X.max(axis=1), X.min(axis=1)
    return (high - low) ** 2 / 4


def _rows_eg_pm(X, U, p):
    # NumPy floats: an overflow gives inf (reported by the caller), not an error.
    return np.float64(U) ** 2 * _row_norms(X, np.inf) ** 2


def _rows_pnorm(X, U, p):
    return (p - 1) * _row_norms(X, p) ** 2


def _largest(rows):
    """b_{X,psi} = ``input_bound(X, U, p)``: the largest of ``rows(X, U, p)``."""
    def input_bound(X, U, p):
        return float(np.max(rows(X, U, p)))
    return input_bound


@dataclass(frozen=True, kw_only=True)
class Parameterization:
    """A parameterization function psi of the GA algorithm.

    Attributes
    ----------
    name : str
        Constructor string (``psi=name``).
    code : PsiCode
        Kernel dispatch code.
    weights : callable
        ``weights(theta, U, p)`` returns psi applied to each row of ``theta``.
    potential : callable or None
        ``potential(theta, U, p)``: P_psi of each row (psi = grad P_psi; for
        ``eg_pm``, grad P_psi = psi / U, see the module docstring). ``None`` for
        the geodesic psi, which are no gradients of a potential.
    divergence : callable or None
        ``divergence(theta_tilde, theta, U, p)``: Delta_psi(theta_tilde, theta) of
        KW01 eq. (19) for each pair of rows (``None`` for the geodesic psi).
    hyperparameters : tuple of str
        Estimator parameters the function reads (``"U"``, ``"p"``).
    constrained : bool
        Whether the weights live in a restricted set (simplex, l1 ball, positive
        orthant), so some targets cannot be fitted well.
    input_bound : callable or None
        ``input_bound(X, U, p)`` is b_{X,psi} of KW01 eq. (28) for the rows of X: a
        max over rows, so that it can be taken block by block. ``None`` when no
        bound follows from X alone (``no_input_bound`` says why).
    no_input_bound : str or None
        Why no b_{X,psi} follows from X, for error messages; ``None`` when
        ``input_bound`` is given.
    row_bounds : callable
        ``row_bounds(X, U, p)``: for each row x of X, the bound that the default
        learning rate takes (:mod:`sklearn_ga._rates`): x^T Dpsi(theta) x at its
        sup over theta, whose max is ``input_bound``; where there is none, that of
        gradient descent (``exp``, at theta = 0, and ``sphere``, whose geodesic
        step changes the activation as GD's does to first order) or of EG
        (``simplex``, likewise), and for ``exp`` and ``burg`` (growing_weights)
        ||x||_2^2, to be multiplied by their weights' size.
    growing_weights : bool
        Whether the weights are unbounded and x^T Dpsi x grows with them (EGU,
        Burg): the default rate takes its bound at weights of the size of the
        targets, and a run can diverge while its residuals stay bounded.
    weight_power : int
        The power of the weights in x^T Dpsi x where they grow: 1 for EGU
        (sum_j w_j x_j^2), 2 for Burg (sum_j w_j^2 x_j^2).
    no_natural_rate : str or None
        Why the default rate is not available with ``update="natural"``, for the
        error message; ``None`` when it is.
    description : str
        One line for docs and error messages.
    inverse : callable
        ``inverse(omega, U, p)``: parameters theta with psi(theta) = omega for each
        row of ``omega`` (finite), e.g. for weights given as a starting point;
        raises ValueError saying what the range of psi is when ``omega`` lies
        outside it.
    geodesic : bool
        Whether the update moves the weights along geodesics of a manifold (KMWW
        eq. 10) rather than by the additive step of KW01 eq. (23).
    start : float
        Every parameter starts at this value (uniform weights on the manifold for
        the geodesic psi; -1, weights one, for burg).
    same_as : callable or None
        ``same_as(p)``: the name of the psi this one equals at this ``p``, whose
        compiled loop then runs (the same model, at its speed), or None.
    no_natural : str or None
        Why ``update="natural"`` (KMWW eq. 5) is not available for this psi, for
        the error message; ``None`` when it is.
    grid_U : bool
        Whether the CV estimators search ``U`` along with ``eta``.
    blocks : bool
        Whether the weights are the parameters (gradient descent), so that the CV
        estimators learn dense rows in blocks whose activations and updates are
        products of the rows with every configuration's weights (``block_run``).
    scale_norm : float or None
        The norm of each row of weights that ``U`` bounds (1: EG±'s l1 ball; 2:
        the sphere's radius), which ``U="auto"`` takes of a ridge fit; None for
        the psi that ignore ``U``.
    doubling : bool
        Whether ``U="auto"`` doubles ``U`` when the weights press on the ball,
        keeping them (EG±: the same mass added to omega+ and omega-).
    """

    name: str
    code: PsiCode
    weights: Callable
    potential: Callable | None = None
    divergence: Callable | None = None
    hyperparameters: tuple = ()
    constrained: bool
    input_bound: Callable | None = None
    no_input_bound: str | None = None
    row_bounds: Callable
    growing_weights: bool = False
    weight_power: int = 1
    no_natural_rate: str | None = None
    description: str
    inverse: Callable
    geodesic: bool = False
    start: float = 0.0
    same_as: Callable | None = None
    no_natural: str | None = None
    grid_U: bool = False
    blocks: bool = False
    scale_norm: float | None = None
    doubling: bool = False

    def __post_init__(self):
        if (self.input_bound is None) == (self.no_input_bound is None):
            raise TypeError(f"psi={self.name!r}: give exactly one of input_bound and "
                            "no_input_bound.")


# Why KW01 Theorem 3 gives the geodesic psi no rate.
_GEODESIC_NO_BOUND = ("Theorem 3 is about the additive update of KW01 eq. (23), and "
                      "this psi moves the weights along geodesics (KMWW eq. 10)")

PSI = {
    entry.name: entry
    for entry in [
        Parameterization(
            name="identity", code=PsiCode.PSI_IDENTITY, weights=_identity,
            potential=_potential_identity, divergence=_divergence_identity,
            constrained=False, input_bound=_largest(_rows_identity),
            row_bounds=_rows_identity,
            description="gradient descent (Widrow-Hoff)",
            inverse=_inverse_identity, blocks=True),
        Parameterization(
            name="softmax", code=PsiCode.PSI_SOFTMAX, weights=_softmax,
            potential=_potential_softmax, divergence=_divergence_softmax,
            constrained=True, input_bound=_largest(_rows_softmax),
            row_bounds=_rows_softmax,
            description="EG: weights on the probability simplex",
            inverse=_inverse_softmax),
        Parameterization(
            name="eg_pm", code=PsiCode.PSI_EG_PM, weights=_eg_pm,
            potential=_potential_eg_pm, divergence=_divergence_eg_pm,
            hyperparameters=("U",), constrained=True,
            input_bound=_largest(_rows_eg_pm), row_bounds=_rows_eg_pm,
            description="EG±: signed weights with l1 norm below U", grid_U=True,
            inverse=_inverse_eg_pm, scale_norm=1.0, doubling=True),
        Parameterization(
            name="exp", code=PsiCode.PSI_EXP, weights=_exp, potential=_potential_exp,
            divergence=_divergence_exp, constrained=True,
            # The Hessian of the EGU potential grows with the weights.
            no_input_bound=("x^T Dpsi(theta) x = sum_j exp(theta_j) x_j^2 grows "
                            "without bound with the weights"),
            row_bounds=_rows_identity, growing_weights=True,
            description="EGU: unnormalized positive weights",
            inverse=_inverse_exp),
        Parameterization(
            name="pnorm", code=PsiCode.PSI_PNORM, weights=_pnorm,
            potential=_potential_pnorm, divergence=_divergence_pnorm,
            hyperparameters=("p",), constrained=False,
            input_bound=_largest(_rows_pnorm), row_bounds=_rows_pnorm,
            description="p-norm algorithm (p >= 2)", same_as=_pnorm_same_as,
            no_natural=("psi='pnorm' lacks at theta = 0, where it starts, for p > 2. "
                        "Use p=2 (gradient descent) or update='explicit'."),
            inverse=_inverse_pnorm),
        Parameterization(
            name="sphere", code=PsiCode.PSI_SPHERE, weights=_sphere,
            hyperparameters=("U",), constrained=True,
            no_input_bound=_GEODESIC_NO_BOUND, row_bounds=_rows_identity,
            description="weights on the sphere of radius U, geodesic steps (KMWW "
                        "Example 2)", geodesic=True, start=1.0,
            inverse=_inverse_sphere, scale_norm=2.0),
        Parameterization(
            name="simplex", code=PsiCode.PSI_SIMPLEX, weights=_simplex,
            constrained=True, no_input_bound=_GEODESIC_NO_BOUND,
            row_bounds=_rows_softmax,
            description="weights on the probability simplex, geodesic steps of the "
                        "Fisher metric (KMWW Example 3)", geodesic=True, start=1.0,
            inverse=_inverse_simplex),
        Parameterization(
            name="burg", code=PsiCode.PSI_BURG, weights=_burg,
            potential=_potential_burg, divergence=_divergence_burg, constrained=True,
            # Dpsi(theta) = diag(w^2): its quadratic form grows with the weights.
            no_input_bound=("x^T Dpsi(theta) x = sum_j w_j^2 x_j^2 grows without "
                            "bound with the weights"),
            row_bounds=_rows_identity, growing_weights=True, weight_power=2,
            no_natural_rate=("its natural step moves theta by eta (y_hat - y) w^2 x "
                             "toward a pole 1/w away, which growing weights reach "
                             "at any rate set from the data"),
            description="Burg entropy: positive weights, w <- w / (1 + eta (y_hat - "
                        "y) w x)", start=-1.0, inverse=_inverse_burg),
    ]
}
