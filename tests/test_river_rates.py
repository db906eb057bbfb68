"""EG±'s ``eta="auto"`` in the River learners: Theorem 3's rate tuned by the loss
so far as KW01 eq. (31) tunes it, checked against a transcription of eq. (31)
row by row; the rates never rise, stay at most the theory rate, fall where no
linear model fits the labels, and learn_many and a pickle follow learn_one; the
compiled formula that both run is the theory module's eq. (31)."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn_ga._kernel import tuned_rates

from sklearn_ga.river import GAClassifier, GARegressor
from sklearn_ga.theory import theorem3_learning_rate


def noisy_stream(m, seed=0, noise=0.0):
    """Rows of 4 features (one new on some rows), labels of a hidden linear model
    flipped with probability ``noise``."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(m):
        x = dict(zip("abcd", rng.standard_normal(4).tolist(), strict=True))
        if t % 50 == 49:
            x[f"new{t}"] = float(rng.standard_normal())
        label = x["a"] - 0.5 * x["b"] > 0
        rows.append((x, bool(label) != bool(rng.random() < noise)))
    return rows


def eq31(eta_theory, K, R):
    """KW01 eq. (31) for b c = 1 / (2 eta_theory) (Theorem 3's rate is 1 / (2bc))."""
    bc = 1.0 / (2.0 * eta_theory)
    return (math.sqrt((bc * R) ** 2 + K * bc * R) - bc * R) / (K * bc)


@pytest.mark.parametrize("U", [1.0, 3.0, "auto"])
def test_the_rate_of_each_trial_is_eq_31(U):
    # Targets 4 a - 2 b + noise: U="auto" doubles from 1 to reach them. Each
    # doubling starts a phase: K counts the loss since, the rates start afresh.
    learner = GARegressor(psi="eg_pm", U=U)
    last, phase_loss, doublings = (math.inf, math.inf), 0.0, 0
    rng = np.random.default_rng(1)
    for x, label in noisy_stream(600, noise=0.2):
        y = 4.0 * x["a"] - 2.0 * x["b"] + float(label) + rng.standard_normal()
        K, b, n = learner.cumulative_loss_, learner.intercept, len(learner.weights)
        scale = learner.U_
        learner.learn_one(x, y)
        if learner.U_ != scale:  # (after the trial: its rates were the old U's)
            last, phase_loss, doublings = (math.inf, math.inf), \
                learner.cumulative_loss_, doublings + 1
            continue
        # The theory rates the row ran at, which the loop holds (a row that raises
        # the bound lowers them first); R of the features held before it (n = 0
        # counts as 1).
        eta, intercept_eta = learner._rates
        K -= phase_loss
        n = max(n, 1)
        rtol = 1e-12
        if K == 0:
            expected = eta, intercept_eta
        else:
            # (EG±'s divergence from the uniform start; after a doubling, from
            # the weights the last phase left: theory.rst's 2 ln(4n).)
            D = 2 * math.log(4 * n) if doublings else math.log(2 * n)
            R = D + b**2 * eta / (2 * intercept_eta)
            factor = eq31(eta, K, R) / eta
            expected = eta * factor, intercept_eta * factor
            # (Eq. 31 as written cancels where K is small next to bcR: its
            # rounding is about bcR / K ulps.)
            rtol *= 1.0 + R / (2.0 * eta * K)
        expected = min(expected[0], last[0]), min(expected[1], last[1])
        np.testing.assert_allclose(learner._last_rates, expected, rtol=rtol)
        assert learner._last_rates[0] <= eta and learner._last_rates[1] <= intercept_eta
        last = learner._last_rates
    assert doublings >= (2 if U == "auto" else 0)


def test_the_rate_falls_where_no_linear_model_fits():
    rates = {}
    for noise in (0.0, 0.5):
        learner = GAClassifier(psi="eg_pm")
        for x, label in noisy_stream(2000, noise=noise):
            learner.learn_one(x, label)
        rates[noise] = learner._last_rates[0] / learner._pair()[0]
    # (Labels of coin flips: every row's loss about ln 2, K about 0.69 t.)
    assert rates[0.5] < 0.25
    assert rates[0.5] < rates[0.0] / 2


def test_a_numeric_or_theory_eta_is_not_tuned():
    for eta in ("theory", 0.01):
        learner = GAClassifier(psi="eg_pm", eta=eta)
        for x, label in noisy_stream(300, noise=0.5):
            learner.learn_one(x, label)
        assert learner._trial_rates() == learner._pair()
    learner = GAClassifier()  # (GD's "auto" is a number)
    assert not learner._tuning


def test_learn_many_and_a_pickle_follow_learn_one():
    rows = noisy_stream(300, noise=0.1)
    X = pd.DataFrame([x for x, _ in rows]).fillna(0.0)
    y = pd.Series([3.0 * float(label) + 1.0 for _, label in rows])
    one, many = GARegressor(psi="eg_pm"), GARegressor(psi="eg_pm")
    # Two frames, the second bringing a column (at K > 0): R reads the features
    # held before its first row, as learn_one's does.
    second = X.iloc[100:200].assign(zz=np.linspace(-1.0, 1.0, 100))
    for frame in (X.iloc[:100], second):
        for x, target in zip(frame.to_dict("records"), y[frame.index], strict=True):
            one.learn_one(x, target)
        many.learn_many(frame, y[frame.index])
    assert many.weights == one.weights and many.intercept == one.intercept
    assert many._last_rates == one._last_rates
    assert one._last_rates[0] < one._pair()[0]
    copy = pickle.loads(pickle.dumps(one))
    for x, target in zip(X[200:].to_dict("records"), y[200:], strict=True):
        one.learn_one(x, target)
        copy.learn_one(x, target)
    assert copy.weights == one.weights and copy.intercept == one.intercept
    assert copy._last_rates == one._last_rates


def test_the_compiled_tuned_rate_is_the_theory_modules_eq_31():
    # The kernel's formula (learn_one's and learn_many's) against
    # sklearn_ga.theory's eq. (31), over rates, losses and divergences of many
    # magnitudes, with and without the intercept's block, and its cap.
    rng = np.random.default_rng(3)
    for _ in range(2000):
        eta, intercept_eta = 10.0 ** rng.uniform(-6, 1, 2)
        K, D = 10.0 ** rng.uniform(-8, 6), 10.0 ** rng.uniform(-3, 2)
        b = 0.0 if rng.random() < 0.3 else 10.0 ** rng.uniform(-4, 2)
        tuned = tuned_rates(eta, intercept_eta, K, D, b, math.inf, math.inf)
        R = D + b * b * eta / (2.0 * intercept_eta)
        expected = theorem3_learning_rate(1.0 / (2.0 * eta), 1.0, K=K, R=R)
        np.testing.assert_allclose(tuned, (expected, intercept_eta * expected / eta),
                                   rtol=16 * np.finfo(float).eps)
        cap = tuned[0] / 2.0, tuned[1] * 2.0
        assert tuned_rates(eta, intercept_eta, K, D, b, *cap) == (cap[0], tuned[1])
    assert tuned_rates(0.1, 0.2, 0.0, 1.0, 3.0, math.inf, 0.1) == (0.1, 0.1)


@pytest.mark.parametrize("phi", ["logistic", "softmax"])
def test_learn_many_runs_eq_31_in_the_compiled_rows(monkeypatch, phi):
    # learn_many's tuned rates are computed in its compiled calls (one per run of
    # rows between U's checks), not once a row in Python, and are learn_one's
    # (softmax: R's intercept is the largest |b_j| of the classes').
    rows = noisy_stream(400, noise=0.2)
    X = pd.DataFrame([x for x, _ in rows]).fillna(0.0)
    y = pd.Series([label for _, label in rows])
    if phi == "softmax":
        y = pd.Series(np.digitize(X["a"] - X["b"], [-0.5, 0.5]).tolist())
    one = GAClassifier(psi="eg_pm", phi=phi)
    for x, label in zip(X.to_dict("records"), y, strict=True):
        one.learn_one(x, label)
    calls = []
    trial_rates = GAClassifier._trial_rates
    monkeypatch.setattr(GAClassifier, "_trial_rates",
                        lambda self, base=None: calls.append(1) or trial_rates(self,
                                                                               base))
    many = GAClassifier(psi="eg_pm", phi=phi)
    many.learn_many(X, y)
    assert len(calls) < len(rows) / 8
    assert many.weights == one.weights and many.intercept == one.intercept
    assert many._last_rates == one._last_rates and many.U_ == one.U_ > 1.0
    assert one._last_rates[0] < one._pair()[0]
