"""The parameterizations' potentials and Bregman divergences against the papers'
definitions (KW01 eq. 2, 19): finite differences, numerical integrals and
high-precision references, as tests/test_losses.py does for the transfer functions;
and the matching-loss scorers against scikit-learn's metrics and model selection.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import expit
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from test_losses import SETTINGS

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor
from sklearn_ga.losses import (
    divergence,
    matching_loss,
    matching_loss_scorer,
    potential,
)
from sklearn_ga.theory import input_bound

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
