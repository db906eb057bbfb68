"""Matching losses, potentials and divergences against the papers' definitions.

References used as oracles are independent of the closed forms in the registries:
numerical integrals (KW01 eq. 11, 14), finite differences (eq. 3), the Bregman
form of the potentials (eq. 2, 19) and scikit-learn's log loss.
"""

import decimal
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.special import expit

from sklearn_ga import PHI, PSI
from sklearn_ga.losses import (
    divergence,
    matching_loss,
    potential,
)

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
