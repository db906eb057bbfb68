"""Matching losses, potentials and divergences against the papers' definitions.

References used as oracles are independent of the closed forms in the registries:
numerical integrals (KW01 eq. 11, 14), finite differences (eq. 3), the Bregman
form of the potentials (eq. 2, 19) and scikit-learn's log loss.
"""

import decimal
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.special import expit
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor
from sklearn_ga.losses import (
    divergence,
    matching_loss,
    matching_loss_scorer,
    potential,
)
from sklearn_ga.theory import input_bound

# Transfer functions with a matching loss in the sense of KW01 eq. (2).
SMOOTH_PHI = [name for name in PHI if name != "sign"]
ONE_DIM_PHI = [name for name in SMOOTH_PHI if name != "softmax"]
# Activations where phi is far from saturating, so losses from predictions agree.
SPAN = {"identity": 20.0, "logistic": 12.0, "tanh": 6.0, "arctan": 20.0, "exp": 5.0,
        "softmax": 8.0}
# Derandomized: the same examples on every run, so CI never flakes on a rare draw.
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


def activations(phi, k=1):
    span = SPAN[phi]
    width = 3 if phi == "softmax" else 1
    return st.lists(st.floats(-span, span), min_size=width * k,
                    max_size=width * k).map(lambda v: np.array(v).reshape(k, width))


def transfer(phi, a):
    return PHI[phi].transfer(np.asarray(a, dtype=float))


def bregman_phi(phi, a_hat, a):
    """Delta_phi(a_hat, a) = P(a_hat) - P(a) - (a_hat - a) . phi(a) (KW01 eq. 19)."""
    return (potential(a_hat, phi=phi) - potential(a, phi=phi)
            - np.sum((a_hat - a) * transfer(phi, a), axis=-1))


@pytest.mark.parametrize("phi", SMOOTH_PHI)
@SETTINGS
@given(data=st.data())
def test_loss_is_the_bregman_divergence_of_the_potential(phi, data):
    # KW01 eq. (16): L_phi(phi(a), phi(a_hat)) = P(a_hat) - P(a) - (a_hat - a).phi(a).
    a, a_hat = data.draw(activations(phi)), data.draw(activations(phi))
    loss = matching_loss(transfer(phi, a), activation=a_hat, phi=phi)
    assert np.allclose(loss, bregman_phi(phi, a_hat, a), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("phi", SMOOTH_PHI)
@SETTINGS
@given(data=st.data())
def test_loss_nonnegative_and_zero_only_on_the_diagonal(phi, data):
    a, a_hat = data.draw(activations(phi)), data.draw(activations(phi))
    y, y_hat = transfer(phi, a), transfer(phi, a_hat)
    for loss in (matching_loss(y, activation=a_hat, phi=phi),
                 matching_loss(y, y_hat, phi=phi)):
        assert np.all(loss >= -1e-12)  # >= 0 up to rounding
    assert np.allclose(matching_loss(y, activation=a, phi=phi), 0, atol=1e-12)
    assert np.allclose(matching_loss(y, y, phi=phi), 0, atol=1e-12)
    if np.max(np.abs(y - y_hat)) > 1e-4:
        assert np.all(matching_loss(y, activation=a_hat, phi=phi) > 0)


@pytest.mark.parametrize("phi", SMOOTH_PHI)
@SETTINGS
@given(data=st.data())
def test_loss_from_predictions_equals_loss_from_activations(phi, data):
    a, a_hat = data.draw(activations(phi)), data.draw(activations(phi))
    y = transfer(phi, a)
    assert np.allclose(matching_loss(y, transfer(phi, a_hat), phi=phi),
                       matching_loss(y, activation=a_hat, phi=phi),
                       rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("phi", SMOOTH_PHI)
@SETTINGS
@given(data=st.data())
def test_gradient_property(phi, data):
    # KW01 eq. (3): grad_{a_hat} L_phi(phi(a), phi(a_hat)) = phi(a_hat) - phi(a).
    a, a_hat = data.draw(activations(phi)), data.draw(activations(phi))
    y, h = transfer(phi, a), 1e-6
    gradient = np.empty_like(a_hat)
    for j in range(a_hat.shape[1]):
        step = np.zeros_like(a_hat)
        step[0, j] = h
        up = matching_loss(y, activation=a_hat + step, phi=phi)[0]
        down = matching_loss(y, activation=a_hat - step, phi=phi)[0]
        gradient[0, j] = (up - down) / (2 * h)
    expected = transfer(phi, a_hat) - y
    assert np.allclose(gradient, expected, rtol=1e-4, atol=1e-5 * (1 + np.abs(y).max()))


@pytest.mark.parametrize("phi", SMOOTH_PHI)
@SETTINGS
@given(data=st.data())
def test_potential_gradient_is_phi(phi, data):
    a, h = data.draw(activations(phi)), 1e-6
    for j in range(a.shape[1]):
        step = np.zeros_like(a)
        step[0, j] = h
        slope = (potential(a + step, phi=phi) - potential(a - step, phi=phi)) / (2 * h)
        assert np.isclose(slope[0], transfer(phi, a)[0, j], rtol=1e-5, atol=1e-6)


# P_phi(+inf), P_phi(-inf): the table of potential's docstring. A phi missing here
# fails the tests below.
POTENTIAL_LIMITS = {
    "identity": (np.inf, np.inf), "tanh": (np.inf, np.inf),
    "arctan": (np.inf, np.inf), "sign": (np.inf, np.inf),
    "logistic": (np.inf, 0.0), "exp": (np.inf, 0.0), "softmax": (np.inf, -np.inf),
}


@pytest.mark.parametrize("phi", PHI)
def test_potential_at_infinity_is_its_limit(phi):
    high, low = POTENTIAL_LIMITS[phi]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no inf - inf on the way
        if phi == "softmax":
            # A row is +inf with one entry at +inf, -inf with all at -inf; an entry
            # at -inf adds nothing.
            Z = [[np.inf, 0.0], [-np.inf, -np.inf], [-np.inf, 0.0], [np.inf, -np.inf]]
            assert potential(Z, phi=phi).tolist() == [high, low, 0.0, high]
            assert potential([np.inf, 1.0], phi=phi) == high
            near = potential([[1e300, 0.0], [-1e300, -1e300]], phi=phi)
        else:
            assert potential([np.inf, -np.inf], phi=phi).tolist() == [high, low]
            assert potential([[np.inf, -np.inf]], phi=phi).tolist() == [high + low]
            near = potential([1e300, -1e300], phi=phi)
    # The values it tends to: the finite potential approaches the limit.
    for value, limit in zip(near, (high, low), strict=True):
        assert value == limit if limit == 0.0 else np.sign(limit) * value > 1e299


@pytest.mark.parametrize("phi", PHI)
def test_potential_of_empty_input(phi):
    # No samples: no values. No outputs: 0 (an empty sum), but softmax's
    # ln sum_j e^a_j needs a class.
    for Z in (np.zeros((0, 3)), np.zeros((0, 1))):
        assert potential(Z, phi=phi).shape == (0,)
    if phi == "softmax":
        for Z in ([], np.zeros((2, 0))):
            with pytest.raises(ValueError, match="rows without activations"):
                potential(Z, phi=phi)
    else:
        assert potential([], phi=phi).shape == (0,)
        assert potential(np.zeros((2, 0)), phi=phi).tolist() == [0.0, 0.0]
    assert type(potential(0.5, phi=phi)) is float


@pytest.mark.parametrize("psi", PSI)
def test_psi_potential_refuses_infinite_and_empty_parameters(psi):
    # Parameters are finite numbers, at least one; the geodesic psi have no
    # potential at all.
    for Z, message in (([[np.inf, 0.0]], "infinity"), ([[-np.inf, 0.0]], "infinity"),
                       ([], "empty"), (np.zeros((2, 0)), "empty")):
        with pytest.raises(ValueError, match="geodesics" if PSI[psi].geodesic
                           else message):
            potential(Z, psi=psi, p=3.0)


@pytest.mark.parametrize("phi", SMOOTH_PHI)
@SETTINGS
@given(data=st.data())
def test_three_point_identity_phi(phi, data):
    # KW01 Proposition 1 for Delta_phi(a_hat, a) = L_phi(phi(a), phi(a_hat)).
    a1, a2, a3 = (data.draw(activations(phi)) for _ in range(3))

    def delta(a_hat, a):
        return matching_loss(transfer(phi, a), activation=a_hat, phi=phi)[0]

    right = (delta(a1, a2) + delta(a2, a3)
             + np.sum((a1 - a2) * (transfer(phi, a2) - transfer(phi, a3))))
    assert np.isclose(delta(a1, a3), right, rtol=1e-7, atol=1e-8 * (1 + abs(right)))


@pytest.mark.parametrize("phi", ONE_DIM_PHI)
@settings(max_examples=25, deadline=None, derandomize=True)
@given(data=st.data())
def test_loss_is_the_integral_of_eq_11(phi, data):
    # KW01 eq. (11): L_phi(y, y_hat) = int_{phi^-1(y)}^{phi^-1(y_hat)} (phi(r) - y) dr.
    a, a_hat = (data.draw(st.floats(-SPAN[phi] / 2, SPAN[phi] / 2)) for _ in range(2))
    y = float(transfer(phi, a))
    integral, _ = quad(lambda r: float(transfer(phi, r)) - y, a, a_hat, epsabs=1e-12)
    loss = matching_loss([y], activation=[a_hat], phi=phi)[0]
    assert np.isclose(loss, integral, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("phi", ONE_DIM_PHI)
@settings(max_examples=25, deadline=None, derandomize=True)
@given(data=st.data())
def test_duality_eq_18(phi, data):
    # KW01 eq. (14)-(15), (18): L_phi(y, y_hat) = L_{phi^-1}(a_hat, a)
    # = int_{y_hat}^{y} (phi^-1(z) - phi^-1(y_hat)) dz, for invertible phi.
    inverse = PHI[phi].inverse
    a, a_hat = (data.draw(st.floats(-SPAN[phi] / 2, SPAN[phi] / 2)) for _ in range(2))
    y, y_hat = float(transfer(phi, a)), float(transfer(phi, a_hat))
    assert np.isclose(inverse(np.array(y)), a, rtol=1e-6, atol=1e-6)
    dual, _ = quad(lambda z: inverse(np.array(z)) - a_hat, y_hat, y, epsabs=1e-12)
    assert np.isclose(matching_loss([y], [y_hat], phi=phi)[0], dual,
                      rtol=1e-5, atol=1e-9)


def test_softmax_loss_depends_only_on_the_predictions():
    # KW01 Example 2: Delta_sigma is unchanged by adding a constant to activations.
    rng = np.random.default_rng(0)
    y = expit(rng.normal(size=(5, 1)))
    y = np.hstack([y, 1 - y])
    a = rng.normal(size=(5, 2))
    assert np.allclose(matching_loss(y, activation=a, phi="softmax"),
                       matching_loss(y, activation=a + 7.0, phi="softmax"))
    # A two-class softmax is the logistic function of the activation difference.
    assert np.allclose(matching_loss(y, activation=a, phi="softmax"),
                       matching_loss(y[:, 1], activation=a[:, 1] - a[:, 0],
                                     phi="logistic"))


EDGE_CASES = [
    # phi, y, activation, exact loss
    ("logistic", 1.0, -800.0, 800.0),
    ("logistic", 0.0, 800.0, 800.0),
    ("logistic", 1.0, 800.0, 0.0),
    ("logistic", 0.0, -40.0, np.log1p(np.exp(-40.0))),
    ("tanh", 1.0, -400.0, 800.0),
    ("tanh", -1.0, 400.0, 800.0),
    ("tanh", -1.0, -400.0, 0.0),
    ("exp", 0.0, -800.0, 0.0),
    ("exp", 0.0, 2.0, np.exp(2.0)),
    ("arctan", 0.0, 1e200, 1e200 * np.pi / 2 - np.log(1e200)),
    ("identity", 1e100, -1e100, 2e200),
]


@pytest.mark.parametrize("phi, y, a, expected", EDGE_CASES)
def test_exact_at_the_edges_of_the_range(phi, y, a, expected):
    loss = matching_loss([y], activation=[a], phi=phi)[0]
    assert np.isfinite(loss)
    assert np.isclose(loss, expected, rtol=1e-12, atol=1e-300)


def test_softmax_edges():
    y = np.array([[0.0, 1.0, 0.0]])
    assert matching_loss(y, activation=[[800.0, -800.0, 0.0]], phi="softmax")[0] == (
        pytest.approx(1600.0, rel=1e-12))
    assert matching_loss(y, activation=[[-800.0, 800.0, 0.0]], phi="softmax")[0] == 0.0
    # From predictions: 0 ln 0 = 0, and y ln(y / 0) = inf (KW01 Example 2).
    assert matching_loss(y, y, phi="softmax")[0] == 0.0
    assert matching_loss(y, [[0.5, 0.0, 0.5]], phi="softmax")[0] == np.inf


def _poisson_loss(y, a):
    """y ln y - y a - y + e^a (phi = exp) in 40 digits: a reference independent of
    any float64 rounding."""
    with decimal.localcontext(decimal.Context(prec=40)):
        y, a = decimal.Decimal(y), decimal.Decimal(a)
        return float(y * y.ln() - y * a - y + a.exp())


@pytest.mark.parametrize("phi, y, a, expected", [
    # 2a overflows (tanh is the logistic function of slope 2): 0 inf was NaN, and
    # the finite loss 5e307 (1/4 of 2e308) was inf.
    ("tanh", 1.0, 1e308, 0.0), ("tanh", -0.5, -1e308, 5e307),
    # y a overflows where y ln y - y a - y + e^a does not: inf - inf was NaN.
    ("exp", 1e308, 709.7, _poisson_loss(1e308, 709.7)),
    # e^a overflows where the loss does not, or the loss overflows too: inf - inf
    # was NaN.
    ("exp", 1e308, 710.0, _poisson_loss(1e308, 710.0)),
    ("exp", 1e300, 1e10, np.inf),
])
def test_losses_of_huge_activations_are_numbers(phi, y, a, expected):
    loss = matching_loss([y], activation=[a], phi=phi)[0]
    # The terms y ln y and y a are about 5000 times the loss: an ulp of ln y in
    # any correct rounding moves the loss by about 5e-13 of itself.
    assert loss == pytest.approx(expected, rel=4e-12, abs=1e-300)


@pytest.mark.parametrize("y, a", [(1.5707963267948963, 1e16),
                                  (np.pi / 2 - 1e-10, 1e9)])
def test_arctan_loss_near_the_ends_of_its_range(y, a):
    # y a few ulps from pi/2: y_hat - y and cos y are differences from pi/2, which
    # rounding pi/2 to a double spoiled (0.79 came out 1.18). The oracle is the
    # loss as the integral of phi(r) - y = (pi/2 - y) - arctan(1/r) from tan y to
    # a (KW01 eq. 2), with pi/2 - y exact in decimal.
    from decimal import Decimal, localcontext

    from scipy.integrate import quad

    with localcontext() as context:
        context.prec = 50
        gap = float(Decimal("1.57079632679489661923132169163975144209858469968755")
                    - Decimal(y))
    expected, _ = quad(lambda r: gap - np.arctan(1 / r), 1 / np.tan(gap), a,
                       epsabs=0.0, epsrel=1e-12, limit=200)
    for sign in (1.0, -1.0):
        loss = matching_loss([sign * y], activation=[sign * a], phi="arctan")[0]
        assert loss == pytest.approx(expected, rel=1e-9)


def test_softmax_loss_of_activations_far_apart():
    # a_j - max a overflows to -inf for the class of target 0: 0 (-inf) was NaN.
    y = np.array([[0.0, 1.0]])
    assert matching_loss(y, activation=[[-1e308, 1e308]], phi="softmax")[0] == 0.0
    assert matching_loss(y, activation=[[1e308, -1e308]], phi="softmax")[0] == np.inf


@pytest.mark.parametrize("psi, theta_tilde, theta, expected", [
    # ln 4: all of EG+-'s mass on one of its four weights, against a uniform theta~.
    ("eg_pm", [0.0, 0.0], [-1e308, 0.0], np.log(4.0)),
    ("softmax", [0.0, 0.0], [-1e308, 0.0], np.log(2.0)),
    # The true divergences exceed the largest double.
    ("softmax", [-1e308, 1e308], [1e308, -1e308], np.inf),
    ("exp", [1e308], [-1e308], np.inf),
    # e^theta overflows: the divergence e^theta (e^d - 1 - d) need not.
    ("exp", [710.0], [710.0], 0.0),
    ("exp", [711.0], [710.0], np.exp(710.0 - 300 * np.log(10.0)) * (np.e - 2) * 1e300),
    # ||theta||_p^2 overflows: the divergence, (theta~ - theta)^2 / 2 for one
    # parameter, need not.
    ("pnorm", [1.5e154], [1.4e154], 0.5e306), ("pnorm", [1e155], [1e155], 0.0),
])
def test_divergences_of_huge_parameters_are_numbers(psi, theta_tilde, theta, expected):
    assert divergence(theta_tilde, theta, psi=psi, p=3.0) == pytest.approx(
        expected, rel=1e-12)


@pytest.mark.parametrize("phi, y, y_hat, expected", [
    ("logistic", 1.0, 1.0, 0.0), ("logistic", 0.0, 0.0, 0.0),
    ("logistic", 0.0, 1.0, np.inf), ("tanh", 1.0, 1.0, 0.0),
    ("tanh", -1.0, 1.0, np.inf), ("exp", 0.0, 3.0, 3.0), ("exp", 2.0, 0.0, np.inf),
    ("logistic", 1.0, 0.5, np.log(2.0)),
])
def test_loss_from_predictions_at_the_edges(phi, y, y_hat, expected):
    assert matching_loss([y], [y_hat], phi=phi)[0] == pytest.approx(expected, rel=1e-12)


def test_sign_is_the_linear_hinge_loss():
    a = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    assert np.array_equal(matching_loss(y, activation=a, phi="sign"),
                          [2.0, 0.0, 0.0, 0.0, 3.0])
    # Half the Bregman divergence of P(a) = |a|: its gradient is (sign(a) - y) / 2,
    # so the GA step (y_hat - y) is twice the hinge gradient (Perceptron eta0 = 2 eta).
    assert np.allclose(matching_loss(y, activation=a, phi="sign"),
                       0.5 * (potential(a, phi="sign") - y * a))
    with pytest.raises(ValueError, match="activation="):
        matching_loss(y, np.sign(a), phi="sign")


def test_shapes_and_multioutput_sum():
    rng = np.random.default_rng(1)
    y = rng.uniform(size=(4, 3))
    a = rng.normal(size=(4, 3))
    per_sample = matching_loss(y, activation=a, phi="logistic")
    assert per_sample.shape == (4,)
    assert np.allclose(per_sample, sum(matching_loss(y[:, j], activation=a[:, j],
                                                     phi="logistic") for j in range(3)))


@pytest.mark.parametrize("kwargs, message", [
    ({"y_true": [2.0], "y_pred": [0.5], "phi": "logistic"}, "range of phi='logistic'"),
    ({"y_true": [0.5], "y_pred": [1.5], "phi": "logistic"}, "y_pred must lie"),
    ({"y_true": [[0.5, 0.6]], "y_pred": [[0.5, 0.5]], "phi": "softmax"}, "simplex"),
    ({"y_true": [0.5], "phi": "logistic"}, "exactly one"),
    ({"y_true": [0.5], "y_pred": [0.5, 0.5], "phi": "logistic"}, "shape"),
    ({"y_true": [0.5], "y_pred": [0.5], "phi": "relu"}, "not a transfer function"),
    ({"y_true": [np.nan], "y_pred": [0.5], "phi": "identity"}, "NaN"),
    ({"y_true": [1.0], "activation": [np.inf], "phi": "logistic"}, "infinity"),
    ({"y_true": [np.inf], "y_pred": [np.inf], "phi": "identity"}, "y_true contains"),
    ({"y_true": [1.0], "y_pred": [np.inf], "phi": "exp"}, "y_pred contains"),
    ({"y_true": np.zeros((2, 2, 2)), "y_pred": np.zeros((2, 2, 2))}, "3 dimensions"),
    ({"y_true": [[0.0, 1.0]], "activation": [[-np.inf, 0.0]], "phi": "softmax"},
     "infinity"),
    ({"y_true": [[0.2, 0.7]], "y_pred": [[0.5, 0.5]], "phi": "softmax"},
     "sum to 1.*0.9"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        matching_loss(**kwargs)


# -- parameterization functions --------------------------------------------------

def theta_rows(k=2, n=4, span=4.0, psi=None):
    """Parameter rows in psi's domain: theta < 0 for burg (theta = -e^v)."""
    return st.lists(st.floats(-span, span), min_size=k * n, max_size=k * n).map(
        lambda v: -np.exp(np.array(v).reshape(k, n)) if psi == "burg"
        else np.array(v).reshape(k, n))


P_VALUES = [2.0, 3.0, 5.5]


# The geodesic psi (sphere, simplex) are no gradients of a potential: no Bregman
# divergence to test (tests/test_updates.py tests their updates).
PSI_CONFIGURATIONS = [pytest.param(name, p, id=f"{name}-p{p:g}")
                      for name in PSI if PSI[name].potential is not None
                      for p in (P_VALUES if name == "pnorm" else [2.0])]


def potential_gradient(psi, theta, U, p):
    """grad P_psi: the weights (for eg_pm, the weights over U; module docstring)."""
    weights = PSI[psi].weights(theta, U, p)
    return weights / U if psi == "eg_pm" else weights


@pytest.mark.parametrize("psi, p", PSI_CONFIGURATIONS)
@SETTINGS
@given(data=st.data())
def test_psi_is_the_gradient_of_its_potential(psi, p, data):
    theta = data.draw(theta_rows(k=1, psi=psi))
    h, U = 1e-6, 2.5
    if psi == "pnorm" and np.max(np.abs(theta)) < 1e-3:
        return  # psi(0) = 0 with a non-smooth potential at 0 for p > 2
    for j in range(theta.shape[1]):
        step = np.zeros_like(theta)
        step[0, j] = h
        slope = (potential(theta + step, psi=psi, U=U, p=p)
                 - potential(theta - step, psi=psi, U=U, p=p)) / (2 * h)
        assert np.isclose(slope, potential_gradient(psi, theta, U, p)[0, j],
                          rtol=1e-5, atol=1e-6 * (1 + np.abs(theta).max() ** p))


@pytest.mark.parametrize("psi, p", PSI_CONFIGURATIONS)
@SETTINGS
@given(data=st.data())
def test_divergence_is_bregman_and_nonnegative(psi, p, data):
    theta_tilde, theta = data.draw(theta_rows(psi=psi)), data.draw(theta_rows(psi=psi))
    U = 2.5
    value = divergence(theta_tilde, theta, psi=psi, U=U, p=p)
    bregman = (potential(theta_tilde, psi=psi, p=p) - potential(theta, psi=psi, p=p)
               - np.sum((theta_tilde - theta) * potential_gradient(psi, theta, U, p)))
    scale = 1 + abs(potential(theta_tilde, psi=psi, p=p)) + abs(
        potential(theta, psi=psi, p=p))
    assert value >= -1e-12 * scale
    assert np.isclose(value, bregman, rtol=1e-7, atol=1e-10 * scale)
    assert abs(divergence(theta, theta, psi=psi, U=U, p=p)) <= 1e-12 * scale
    # Matrix form: the sum of the divergences of the rows (KW01 §3).
    rows = [divergence(theta_tilde[j], theta[j], psi=psi, U=U, p=p)
            for j in range(theta.shape[0])]
    assert np.isclose(value, sum(rows), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("psi, p", PSI_CONFIGURATIONS)
@SETTINGS
@given(data=st.data())
def test_three_point_identity_psi(psi, p, data):
    # KW01 Proposition 1 for Delta_psi, as used in the proof of Lemma 4.
    t1, t2, t3 = (data.draw(theta_rows(psi=psi)) for _ in range(3))
    U = 2.5

    def delta(a, b):
        return divergence(a, b, psi=psi, U=U, p=p)

    correction = np.sum((t1 - t2) * (potential_gradient(psi, t2, U, p)
                                      - potential_gradient(psi, t3, U, p)))
    right = delta(t1, t2) + delta(t2, t3) + correction
    scale = 1 + sum(abs(potential(t, psi=psi, p=p)) for t in (t1, t2, t3))
    assert np.isclose(delta(t1, t3), right, rtol=1e-7, atol=1e-10 * scale)


def test_divergence_closed_forms():
    w = np.array([0.7, 0.2, 0.1])
    w_tilde = np.array([0.2, 0.5, 0.3])
    # Softmax: KL(sigma(theta) || sigma(theta~)) (KW01 Example 2), shift invariant.
    assert np.isclose(divergence(np.log(w_tilde) + 3.0, np.log(w), psi="softmax"),
                      np.sum(w * np.log(w / w_tilde)))
    # From the uniform start, KL to uniform = ln n - H(w) <= ln n (KW01 §4).
    assert np.isclose(divergence(np.zeros(3), np.log(w), psi="softmax"),
                      np.log(3) + np.sum(w * np.log(w)))
    # Exp: the unnormalized relative entropy of the weights.
    assert np.isclose(divergence(np.log(w_tilde), np.log(w), psi="exp"),
                      np.sum(w * np.log(w / w_tilde) + w_tilde - w))
    # EG±: the relative entropy of the 2n EG weights; 0 -> uniform 1/(2n).
    theta = np.array([1.0, -2.0])
    plus_minus = np.exp(np.r_[theta, -theta])
    plus_minus /= plus_minus.sum()
    assert np.isclose(divergence(np.zeros(2), theta, psi="eg_pm"),
                      np.sum(plus_minus * np.log(plus_minus * 4)))
    # p-norm with p = 2 is half the squared distance.
    assert np.isclose(divergence([1.0, 2.0], [0.0, -1.0], psi="pnorm", p=2.0), 5.0)
    # Huge parameters: no overflow.
    assert np.isfinite(divergence([0.0, 0.0], [900.0, -900.0], psi="softmax"))
    # Half of the 4 EG weights on each of two entries: KL to uniform = ln 2.
    assert np.isclose(divergence([0.0, 0.0], [900.0, -900.0], psi="eg_pm"), np.log(2))


@pytest.mark.parametrize("theta_tilde, theta", [
    ([0.0], [-800.0]), ([0.0, 0.0], [-720.0, 1.0]), ([10.0], [-700.0]),
    ([-750.0, 3.0], [-745.0, 2.0]),
])
def test_exp_divergence_where_a_weight_underflows(theta_tilde, theta):
    # sum_j w~_j - w_j - (theta~_j - theta_j) w_j with w = e^theta, each term by
    # exact arithmetic (fractions of the floats' exact values) as the oracle.
    from fractions import Fraction
    from math import exp

    expected = Fraction(0)
    for a, b in zip(theta_tilde, theta, strict=True):
        w_tilde, w = Fraction(exp(a)), Fraction(exp(b))
        expected += w_tilde - w - (Fraction(a) - Fraction(b)) * w
    value = divergence(theta_tilde, theta, psi="exp")
    assert np.isfinite(value) and value == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("p", [28.0, 100.0])
@pytest.mark.parametrize("scale", [1e-12, 1e-4, 1.0, 2e3])
def test_pnorm_functions_at_any_scale_of_theta(p, scale):
    # ||.||_p is homogeneous: the potential ||theta||_p^2 / 2 and its divergence
    # scale by scale^2, b = (p - 1) max ||x||_p^2 likewise, at any large p (where
    # |theta|^p alone under- or overflows).
    theta_tilde, theta = np.array([2.0, -1.0, 0.5]), np.array([1.0, 0.0, -1.5])
    unit = divergence(theta_tilde, theta, psi="pnorm", p=p)
    assert unit > 0
    assert divergence(scale * theta_tilde, scale * theta, psi="pnorm", p=p) == (
        pytest.approx(scale**2 * unit, rel=1e-9))
    assert potential(scale * theta, psi="pnorm", p=p) == pytest.approx(
        scale**2 * potential(theta, psi="pnorm", p=p), rel=1e-12)
    X = np.array([theta, theta_tilde])
    b = input_bound(X, "pnorm", p=p)
    assert b > 0
    for rows in (scale * X, sp.csr_matrix(scale * X)):
        assert input_bound(rows, "pnorm", p=p) == pytest.approx(scale**2 * b,
                                                                 rel=1e-12)


MAGNITUDES = [1e-300, 1e-150, 1e-10, 1.0, 1e10, 1e50, 1e150, 1e200]


@pytest.mark.parametrize("psi, p", PSI_CONFIGURATIONS)
@SETTINGS
@given(magnitude=st.sampled_from(MAGNITUDES), data=st.data())
def test_divergence_is_zero_at_equal_arguments(psi, p, magnitude, data):
    # Exactly, at every scale: not what rounding leaves of ||theta||^2 - theta.psi.
    theta = data.draw(theta_rows(span=1.0, psi=psi))
    assert divergence(magnitude * theta, magnitude * theta, psi=psi, U=2.5,
                      p=p) == 0.0


def pnorm_divergence_60_digits(theta_tilde, theta, p):
    """KW01 eq. (19) for P = ||theta||_p^2 / 2, from the floats' exact values."""
    from decimal import Decimal, localcontext

    with localcontext() as context:
        context.prec, context.Emax, context.Emin = 60, 10**6, -10**6
        p = Decimal(p)
        theta_tilde = [Decimal(float(value)) for value in theta_tilde]
        theta = [Decimal(float(value)) for value in theta]

        def norm(row):
            return sum(abs(value) ** p for value in row) ** (1 / p)

        if not any(theta):
            return float(norm(theta_tilde) ** 2 / 2)
        gradient = [(abs(value) ** (p - 1)).copy_sign(value) if value else Decimal(0)
                    for value in theta]
        linear = sum((a - b) * g for a, b, g in zip(theta_tilde, theta, gradient,
                                                     strict=True))
        return float(norm(theta_tilde) ** 2 / 2 - norm(theta) ** 2 / 2
                     - linear / norm(theta) ** (p - 2))


# Entries 0 or of size 1e-3 .. 1 (a wider spread needs more digits in the reference).
spread = st.one_of(st.just(0.0), st.floats(1e-3, 1.0), st.floats(-1.0, -1e-3))


@pytest.mark.parametrize("p", [3.0, 5.5, 28.0])
@SETTINGS
@given(magnitude=st.sampled_from(MAGNITUDES),
       relative=st.sampled_from([1.0, 1e-3, 1e-6]),
       theta=st.lists(spread, min_size=4, max_size=4),
       steps=st.lists(spread, min_size=4, max_size=4))
def test_pnorm_divergence_is_accurate_near_equal_arguments(p, magnitude, relative,
                                                           theta, steps):
    # theta~ = theta (1 + relative u): the error is about eps |theta| |theta~ - theta|
    # (from ||theta||^2 - theta . psi(theta) it was eps |theta|^2: 3e-4 of Delta at
    # relative = 1e-6).
    theta = magnitude * np.array(theta)
    theta_tilde = theta * (1 + relative * np.array(steps))
    expected = pnorm_divergence_60_digits(theta_tilde, theta, p)
    value = divergence(theta_tilde, theta, psi="pnorm", p=p)
    if np.isinf(expected):
        assert value > 1e307
        return
    with np.errstate(over="ignore"):
        error = 64 * np.finfo(float).eps * np.float64(np.abs(theta).max()) * np.abs(
            theta_tilde - theta).max()
    assert value == pytest.approx(expected, rel=1e-12, abs=error + 1e-320)


def test_divergence_bad_input():
    with pytest.raises(ValueError, match="shape"):
        divergence(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="not a parameterization"):
        divergence(np.zeros(3), np.zeros(3), psi="cube")
    with pytest.raises(ValueError, match="exactly one"):
        potential([1.0], phi="identity", psi="identity")
    with pytest.raises(ValueError, match="theta_tilde has 3 dimensions"):
        divergence(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="theta_tilde is empty"):
        divergence([], [], psi="softmax")


# -- scorers ---------------------------------------------------------------------

def test_regression_scorer_is_minus_the_mean_matching_loss():
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(200, 6))
    y = np.tanh(X[:, 0] * X[:, 1])  # not linear in x: every model has a loss
    model = GARegressor(psi="eg_pm", phi="tanh", U=2.0, eta=0.2).fit(X, y)
    score = matching_loss_scorer("tanh")(model, X, y)
    assert score == pytest.approx(-np.mean(matching_loss(y, model.predict(X),
                                                         phi="tanh")))
    assert score < 0


@pytest.mark.parametrize("phi, n_classes", [("logistic", 2), ("softmax", 2),
                                            ("softmax", 3), ("tanh", 2)])
def test_classification_scorer_is_log_loss(phi, n_classes):
    # Logistic/softmax losses on labels are the log loss of predict_proba; the tanh
    # loss on +-1 labels is the log loss of (1 + tanh a) / 2 = logistic(2a).
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 4))
    y = np.argmax(X[:, :n_classes] + 0.5 * rng.normal(size=(150, n_classes)), axis=1)
    labels = np.array(["a", "b", "c"])[y]
    clf = GAClassifier(phi=phi, eta=0.05, max_iter=5, tol=None).fit(X, labels)
    score = matching_loss_scorer(phi)(clf, X, labels)
    assert score == pytest.approx(-log_loss(labels, clf.predict_proba(X)), rel=1e-9)


def test_scorers_work_in_model_selection():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(240, 5))
    y = np.clip(expit(2 * X[:, 0] - X[:, 2]) + rng.normal(0, 0.1, 240), 0, 1)
    model = GARegressor(phi="logistic", max_iter=20, tol=None, random_state=0)
    search = GridSearchCV(model, {"eta": [0.01, 1.0]},
                          scoring=matching_loss_scorer("logistic"), cv=3).fit(X, y)
    # The same numbers by hand, fold by fold.
    for eta, score in zip([0.01, 1.0], search.cv_results_["mean_test_score"],
                          strict=True):
        losses = [np.mean(matching_loss(y[test], model.set_params(eta=eta)
                                        .fit(X[train], y[train]).predict(X[test]),
                                        phi="logistic"))
                  for train, test in KFold(3).split(X)]
        assert score == pytest.approx(-np.mean(losses), rel=1e-12)
        assert score < 0
    labels = (y > 0.5).astype(int)
    scores = cross_val_score(GAClassifier(phi="sign", eta=0.1, max_iter=5, tol=None),
                             X, labels, scoring=matching_loss_scorer("sign"), cv=3)
    assert scores.shape == (3,) and np.all(scores <= 0)


def test_regression_scorer_is_exact_where_predictions_saturate():
    # Activations near 50: expit rounds to 1.0, so a loss from the predictions
    # would be infinite for y = 0.9; the scorer uses the activations.
    X = np.full((4, 1), 50.0)
    y = np.full(4, 0.9)
    model = GARegressor(phi="logistic", eta=1e-9, fit_intercept=False).fit(X, y)
    model.theta_ = np.ones_like(model.theta_)
    model.coef_ = model.theta_[0].copy()
    assert np.all(model.predict(X) == 1.0)
    expected = -np.mean(matching_loss(y, activation=np.full(4, 50.0), phi="logistic"))
    for estimator in (model, make_pipeline(FunctionTransformer(), model)):
        score = matching_loss_scorer("logistic")(estimator, X, y)
        assert np.isfinite(score) and score == pytest.approx(expected, rel=1e-12)


def test_regression_scorer_scores_the_predictions_of_another_phi_or_of_ga_y():
    # The activations stand in for the predictions only when they are the model's:
    # same phi, no clipping. Otherwise the scorer's phi would make another predictor.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = np.tanh(X @ np.array([1.0, -1.0, 0.5]))
    for model, phi in ((GARegressor(phi="tanh", eta=0.05), "identity"),
                       (GARegressor(phi="tanh", eta=0.05, Y=0.5), "tanh"),
                       (GARegressor(phi="identity", eta=0.05, Y=0.5), "identity")):
        model.fit(X, y)
        expected = -np.mean(matching_loss(y, model.predict(X), phi=phi))
        score = matching_loss_scorer(phi)(model, X, y)
        assert score == pytest.approx(expected, rel=1e-12), (model, phi)


def test_float32_probabilities_are_softmax_targets():
    # float32 rows sum to 1 only to about 1e-7.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    Y = PHI["softmax"].transfer(rng.normal(size=(60, 3))).astype(np.float32)
    assert np.max(np.abs(Y.astype(np.float64).sum(axis=1) - 1.0)) > 1e-9
    model = GARegressor(phi="softmax", eta=0.1).fit(X, Y)
    assert np.isfinite(model.cumulative_loss_)
    assert np.all(matching_loss(Y, model.predict(X), phi="softmax") >= -1e-6)
    with pytest.raises(ValueError, match="within 1e-06, but a row sums to 0.99"):
        GARegressor(phi="softmax", eta=0.1).fit(X, 0.99 * Y)


@pytest.mark.parametrize("call, message", [
    # p < 2 has no p-norm algorithm (the estimators refuse it too): at p = 1.5 the
    # sup of eq. (28) is infinite and at p = 0.5 b and the divergence are negative.
    (lambda: input_bound(np.ones((2, 2)), "pnorm", p=1.5), "p must be"),
    (lambda: divergence([1.0, 0.0], [0.5, 0.2], psi="pnorm", p=0.5), "p must be"),
    (lambda: potential([1.0, 0.0], psi="pnorm", p=np.nan), "p must be"),
    (lambda: divergence([1.0], [0.5], psi="eg_pm", U=0.0), "U must be"),
    (lambda: input_bound(np.ones((2, 2)), "eg_pm", U=-1.0), "U must be"),
])
def test_parameters_outside_the_estimators_domain_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_losses_and_divergences_are_not_negative_at_rounding_level():
    # Near an exact fit the terms cancel and rounding could leave -1e-17 .. -1e-14;
    # both are non-negative by definition (Bregman divergences, KW01 eqs. 2 and 19).
    rng = np.random.default_rng(10)
    for y in rng.uniform(0.01, 0.99, 300):
        assert matching_loss([y], activation=[np.log(y / (1 - y))],
                             phi="logistic")[0] >= 0.0
        assert matching_loss([30 * y], activation=[np.log(30 * y)], phi="exp")[0] >= 0.0
    for _ in range(300):
        theta = rng.normal(size=3) * 3
        near = theta * (1 + rng.normal(size=3) * 1e-9)
        for psi in ("softmax", "eg_pm", "pnorm", "exp"):
            assert divergence(near, theta, psi=psi, p=3.0) >= 0.0
