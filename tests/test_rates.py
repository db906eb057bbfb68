"""The learning rates of the trials: per-trial rates in the compiled loop, the rate of
eta="theory" that follows the rows seen (KW01 Theorem 3), the intercept's share of
it, and the rules where the theory gives no finite b or c."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor, _passes, _rates
from sklearn_ga._codes import Status
from sklearn_ga.theory import input_bound, transfer_bound

RNG = np.random.default_rng(7)
# Rows whose norms grow along the stream, so that the rate has to follow them.
X = RNG.normal(size=(200, 6)) * np.linspace(0.2, 3.0, 200)[:, None]
Y = X[:, :3] @ np.array([0.5, -0.3, 0.2]) + 4.0


def split_rates(b, c, S=1.0, n=X.shape[1]):
    """The rates of intercept_eta="auto": the intercept's share of Theorem 3's
    budget is that of an average feature, b / n (at least its own, S)."""
    L = max(b / n, S)
    return 1 / (2 * c * (b + L)), L / S / (2 * c * (b + L))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "softmax", "exp", "pnorm",
                                 "sphere", "simplex"])
def test_per_trial_rates_are_those_of_trials_run_one_by_one(psi, sparse):
    # The loop's per-trial rates (one pair a trial, by its position in the run) are
    # the rates that runs of one trial each, at that constant pair, take.
    model = GARegressor(psi=psi, eta=0.01, U=3.0, p=3.0)
    model.partial_fit(X[:1], Y[:1])
    one_by_one = GARegressor(psi=psi, eta=0.01, U=3.0, p=3.0).partial_fit(X[:1], Y[:1])
    rows = np.arange(59, 0, -1, dtype=np.intp)  # (an order other than the rows')
    rates = np.column_stack([np.geomspace(0.02, 0.001, rows.size),
                             np.linspace(0.3, 0.01, rows.size)])
    form = sp.csr_matrix if sparse else np.asarray
    batch, Y2 = form(X), Y[:, None].copy()
    loop, other = model._run.kept.loop, one_by_one._run.kept.loop
    method = "run_csr" if sparse else "run_dense"
    arguments = ((batch.data, batch.indices, batch.indptr, batch.shape[1])
                 if sparse else (batch,))

    def run(on, order, **rates):
        return getattr(on, method)(*arguments, Y2, np.empty(0), order, **rates)

    status, trials, loss = run(loop, rows, rates=rates)
    assert status == Status.OK and trials == rows.size
    assert loop.rates == (0.01, 0.01)  # (the constant rates are left as they were)
    total = 0.0
    for row, (eta, intercept_eta) in zip(rows, rates, strict=True):
        other.set_rates(eta, intercept_eta)
        total += run(other, np.array([row], dtype=np.intp))[2]
    np.testing.assert_array_equal(loop.weights(), other.weights())
    np.testing.assert_array_equal(model.intercept_, one_by_one.intercept_)
    assert loss == pytest.approx(total, rel=1e-12)


def test_per_trial_rates_of_another_length_are_refused():
    model = GARegressor(eta=0.1).partial_fit(X[:5], Y[:5])
    with pytest.raises(ValueError, match="rates of shape"):
        model._run.kept.loop.run_dense(X, Y[:, None].copy(), np.empty(0),
                                        np.arange(3, dtype=np.intp),
                                        rates=np.ones((2, 2)))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "exp", "simplex"])
def test_the_theory_rate_of_a_batch_is_that_of_its_rows_one_by_one(psi, sparse):
    # Within a batch the rate is lowered before each row that raises the bound, as
    # a stream of one row per call would be.
    form = sp.csr_matrix if sparse else np.asarray
    batch = GARegressor(psi=psi, U=3.0).partial_fit(form(X), Y)
    stream = GARegressor(psi=psi, U=3.0)
    for i in range(X.shape[0]):
        stream.partial_fit(form(X[i:i + 1]), Y[i:i + 1])
    np.testing.assert_allclose(batch.coef_, stream.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(batch.intercept_, stream.intercept_, rtol=1e-10)
    assert (batch.eta_, batch.intercept_eta_) == (stream.eta_, stream.intercept_eta_)
    assert batch.n_eta_changes_ == stream.n_eta_changes_ > 10


def test_the_rate_is_theorem_3s_for_the_rows_seen_and_never_rises():
    model, rates = GARegressor(phi="tanh"), []
    targets = np.tanh(Y - 4.0)
    for start in range(0, 200, 20):
        model.partial_fit(X[start:start + 20], targets[start:start + 20])
        b = input_bound(X[:start + 20], "identity")
        assert (model.eta_, model.intercept_eta_) == pytest.approx(split_rates(b, 1.0))
        rates.append(model.eta_)
    assert rates == sorted(rates, reverse=True) and rates[-1] < rates[0] / 10
    # The plain algorithm: Theorem 3's rate with b + 1 for the intercept, for both.
    plain = GARegressor(phi="tanh", intercept_eta="eta").partial_fit(X, targets)
    b = input_bound(X, "identity", fit_intercept=True)
    assert plain.eta_ == plain.intercept_eta_ == pytest.approx(1 / (2 * b))
    # Without intercept, and with an intercept rate of its own.
    alone = GARegressor(phi="tanh", fit_intercept=False).partial_fit(X, targets)
    assert alone.eta_ == pytest.approx(1 / (2 * input_bound(X, "identity")))
    assert alone.intercept_eta_ == 0.0
    own = GARegressor(phi="tanh", intercept_eta=0.01).partial_fit(X, targets)
    assert (own.eta_, own.intercept_eta_) == (alone.eta_, 0.01)


@pytest.mark.parametrize("psi, phi", [
    ("eg_pm", "identity"), ("softmax", "logistic"), ("pnorm", "arctan"),
])
def test_the_rate_uses_b_and_c_of_the_theory_module(psi, phi):
    targets = {"identity": Y, "logistic": 1 / (1 + np.exp(-Y + 4)),
               "arctan": np.arctan(Y - 4)}[phi]
    model = GARegressor(psi=psi, phi=phi, U=2.0, p=3.0).partial_fit(X, targets)
    b = input_bound(X, psi, U=2.0, p=3.0)
    assert (model.eta_, model.intercept_eta_) == pytest.approx(
        split_rates(b, transfer_bound(phi)))


def test_rules_where_the_theory_has_no_finite_b_or_c():
    positive = np.abs(Y)
    # phi = exp: c is the largest target seen (phi' = y_hat near the fit).
    model = GARegressor(phi="exp").partial_fit(X, positive)
    assert (model.eta_, model.intercept_eta_) == pytest.approx(
        split_rates(input_bound(X, "identity"), positive.max()))
    # psi = exp: b at the start (||x||^2) times the largest target |y| (>= 1).
    model = GARegressor(psi="exp").partial_fit(X, Y)
    b = np.max(np.sum(X**2, axis=1) * np.maximum(np.abs(Y), 1))
    assert model.eta_ == pytest.approx(split_rates(b, 1.0)[0])
    # Burg: its bound sum_j w_j^2 x_j^2, at weights of the targets' size.
    model = GARegressor(psi="burg").partial_fit(X, Y)
    b = np.max(np.sum(X**2, axis=1) * np.maximum(np.abs(Y), 1) ** 2)
    assert model.eta_ == pytest.approx(split_rates(b, 1.0)[0])
    # Its natural step moves theta by w x: the activation by sum_j w_j^2 x_j^2.
    model = GARegressor(psi="exp", update="natural").partial_fit(X, Y)
    b = np.max(np.sum(X**2, axis=1) * np.maximum(np.abs(Y), 1) ** 2)
    assert model.eta_ == pytest.approx(split_rates(b, 1.0)[0])
    # The geodesic psi: the b of gradient descent (sphere) and of EG (simplex).
    for psi, like in (("sphere", "identity"), ("simplex", "softmax")):
        model = GARegressor(psi=psi).partial_fit(X, Y)
        assert model.eta_ == pytest.approx(split_rates(input_bound(X, like), 1.0)[0])
    # phi = sign: c = 1, the constant of tanh.
    labels = Y > 4.0
    model = GAClassifier(phi="sign").partial_fit(X, labels, classes=[False, True])
    assert model.eta_ == pytest.approx(split_rates(input_bound(X, "identity"), 1.0)[0])


def test_sample_weights_scale_the_bounds():
    weights = RNG.uniform(0.5, 3.0, size=X.shape[0])
    model = GARegressor(phi="tanh").partial_fit(X, np.tanh(Y - 4), weights)
    B = np.max(weights * np.sum(X**2, axis=1))
    assert (model.eta_, model.intercept_eta_) == pytest.approx(
        split_rates(B, 1.0, weights.max()))


def test_the_split_keeps_the_block_diagonal_bound():
    # With constant rates (the largest row first) and c (eta B + eta_b S) <= 1/2,
    # Theorem 3's proof on the potential P_psi(theta) + b^2 / (2 eta_b / eta)
    # bounds the loss by 2 Loss(u, b*) + 2 (Delta_psi(0, u) / eta + b*^2 / (2 eta_b)).
    order = np.argsort(-np.sum(X**2, axis=1))
    Xo, yo = X[order], Y[order] + 40.0  # an uncentred target
    model = GARegressor().partial_fit(Xo, yo)
    eta, eta_b = model.eta_, model.intercept_eta_
    assert eta * input_bound(Xo, "identity") + eta_b == pytest.approx(0.5)
    A = np.column_stack([Xo, np.ones(len(yo))])
    u = np.linalg.lstsq(A, yo, rcond=None)[0]
    comparator = 0.5 * np.sum((A @ u - yo) ** 2)
    divergences = 0.5 * u[:-1] @ u[:-1] / eta + u[-1] ** 2 / (2 * eta_b)
    bound = 2 * comparator + 2 * divergences
    assert model.cumulative_loss_ <= bound
    # The plain algorithm's bound (30) for the same comparator is the weaker here.
    plain_eta = 1 / (2 * input_bound(Xo, "identity", fit_intercept=True))
    plain = 2 * comparator + 2 * (0.5 * u @ u) / plain_eta
    assert bound < plain


def test_state_follows_changes_of_what_the_bound_depends_on():
    model = GARegressor(psi="eg_pm", U=1.0).partial_fit(X, Y)
    first = model.eta_
    model.partial_fit(X[:50], 2 * Y[:50])  # no larger row: the rate stays
    assert model.eta_ == first
    model.set_params(U=10.0).partial_fit(X[:50], Y[:50])  # b afresh, from these rows
    expected = GARegressor(psi="eg_pm", U=10.0).partial_fit(X[:50], Y[:50])
    assert model.eta_ == expected.eta_ < first / 10
    model.set_params(eta=0.5).partial_fit(X[:5], Y[:5])
    assert (model.eta_, model.intercept_eta_, model.n_eta_changes_) == (0.5, 0.5, 0)


def test_a_numeric_eta_and_intercept_rate():
    # A trial on x = 0 moves only the intercept, by intercept_eta s (y_hat - y).
    zero = np.zeros((1, 3))
    model = GARegressor(eta=0.1, intercept_eta=0.25).partial_fit(zero, [2.0], [2.0])
    np.testing.assert_array_equal(model.intercept_, [0.25 * 2.0 * 2.0])
    assert (model.eta_, model.intercept_eta_, model.n_eta_changes_) == (0.1, 0.25, 0)
    for rule in ("auto", "eta"):  # a numeric eta: the intercept learns at eta
        model = GARegressor(eta=0.1, intercept_eta=rule).partial_fit(zero, [2.0])
        np.testing.assert_array_equal(model.intercept_, [0.1 * 2.0])


@pytest.mark.parametrize("phi", sorted(name for name in PHI if PHI[name].regression))
@pytest.mark.parametrize("psi", list(PSI))
def test_the_theory_rates_are_finite_and_the_loop_is_given_them(psi, phi):
    targets = {"identity": Y, "logistic": 1 / (1 + np.exp(4 - Y)),
               "tanh": np.tanh(Y - 4), "arctan": np.arctan(Y - 4), "exp": np.abs(Y),
               "softmax": np.column_stack([1 / (1 + np.exp(4 - Y)),
                                           1 / (1 + np.exp(Y - 4))])}[phi]
    model = GARegressor(psi=psi, phi=phi).partial_fit(X, targets)
    assert np.isfinite(model.eta_) and model.eta_ > 0
    assert np.isfinite(model.intercept_eta_) and model.intercept_eta_ > 0
    assert model._run.kept.loop.rates == (model.eta_, model.intercept_eta_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("make, data", [
    (lambda: GARegressor(learning_rate="invscaling", alpha=0.01, max_iter=4,
                         tol=None, random_state=0), "regression"),
    (lambda: GARegressor(psi="eg_pm", U=2.0, early_stopping=True, max_iter=6,
                         random_state=0), "regression"),
    (lambda: GAClassifier(class_weight="balanced", alpha=0.001,
                          learning_rate="invscaling", max_iter=3, tol=None,
                          random_state=0), "classification"),
    (lambda: GAClassifier(psi="pnorm", p=3.0, intercept_eta=0.05,
                          early_stopping=True, max_iter=5, random_state=0),
     "classification"),
    (lambda: GARegressor(psi="softmax", average=130, max_iter=3, tol=None,
                         random_state=0), "regression"),
], ids=["invscaling-alpha", "eg_pm-early-stopping", "class-weight-invscaling",
        "intercept-eta-early-stopping", "softmax-average"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_where_a_chunk_ends_does_not_change_what_is_learned(make, data, sparse,
                                                            monkeypatch):
    # fit's passes run in chunks of rows (so that Ctrl-C is heard within a pass):
    # chunks of one row learn what whole passes learn, at the same per-trial rates
    # (the schedule's t and the theory rate's maxima carried over chunks), for the
    # options that change the rates or the trials (class_weight, early stopping's
    # held-out rows, alpha's pull, the first averaged trial), and a warm start
    # continues them alike.
    form = sp.csr_matrix if sparse else np.asarray
    targets = Y if data == "regression" else (Y > 4.0).astype(int)
    weights = RNG.uniform(0.5, 2.0, size=X.shape[0])

    def fitted():
        model = make().fit(form(X[:150]), targets[:150], sample_weight=weights[:150])
        return model.set_params(warm_start=True).fit(form(X), targets)

    whole = fitted()
    monkeypatch.setattr(_passes, "FIRST_CHUNK_WORK", 1)
    monkeypatch.setattr(_passes, "CHUNK_SECONDS", 1e-12)
    chunked = fitted()
    np.testing.assert_allclose(chunked.coef_, whole.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(chunked.intercept_, whole.intercept_, rtol=1e-12)
    assert (chunked.eta_, chunked.intercept_eta_, chunked.n_eta_changes_,
            chunked.t_, chunked.n_iter_) == (whole.eta_, whole.intercept_eta_,
                                             whole.n_eta_changes_, whole.t_,
                                             whole.n_iter_)
    assert chunked.cumulative_loss_ == pytest.approx(whole.cumulative_loss_,
                                                     rel=1e-12)
    assert whole.n_eta_changes_ > 0


def test_coef_init_and_the_runaway_check():
    # A start given by coef_init is learned from at the default rate; the runaway
    # check still compares with the model at Theta_1 (a good start is no alarm,
    # a far one that the rate pulls back is none either).
    good = GARegressor().fit(X, Y)
    again = GARegressor(max_iter=2, tol=None).fit(X, Y, coef_init=good.coef_,
                                                 intercept_init=good.intercept_)
    assert again.score(X, Y) > 0.99 * good.score(X, Y)
    far = GARegressor(max_iter=5, tol=None).fit(X, Y, coef_init=np.full(6, 50.0))
    assert np.all(np.isfinite(far.coef_))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_divergence_names_the_rates_of_the_trial_that_failed(sparse):
    # Under a schedule, the rate of the failing trial t is eta / t^power_t, not eta.
    rows = np.random.default_rng(0).normal(size=(300, 5)) * 3.0
    form = sp.csr_matrix if sparse else np.asarray
    model = GARegressor(eta=5.0, learning_rate="invscaling", power_t=0.5)
    with pytest.raises(ValueError, match=r"diverged at trial (\d+)") as caught:
        model.partial_fit(form(rows), rows.sum(axis=1))
    trial = int(re.search(r"trial (\d+)", str(caught.value))[1])
    assert f"(eta={5.0 / trial**0.5:.6g} at that trial, " in str(caught.value)
    assert not hasattr(model, "coef_")


def test_later_passes_bound_each_row_by_its_own_bound_or_the_quantile():
    # fit's first epoch runs at Theorem 3's rates for the rows seen (partial_fit's);
    # its later epochs, over rows seen whole, at those of B = max(B_row, B_q), B_q
    # the ROW_QUANTILE quantile of the rows' bounds: a NumPy transcription of
    # gradient descent with intercept_eta="auto" (rates of split_rates) checks both.
    rows = np.vstack([X[:60], [[40.0, 0, 0, 0, 0, 0]]])  # one rare large value
    targets = np.append(Y[:60], 4.0)
    model = GARegressor(max_iter=3, tol=None, shuffle=False, average=False)
    model.fit(rows, targets)
    bounds = np.sum(rows**2, axis=1)
    quantile = np.quantile(bounds, _rates.ROW_QUANTILE)
    assert quantile < bounds.max() / 100
    w, b = np.zeros(6), 0.0
    for epoch in range(3):
        for i, (x, y) in enumerate(zip(rows, targets, strict=True)):
            B = bounds[:i + 1].max() if epoch == 0 else max(bounds[i], quantile)
            eta, eta_b = split_rates(B, 1.0)
            residual = w @ x + b - y
            w, b = w - eta * residual * x, b - eta_b * residual
    np.testing.assert_allclose(model.coef_, w, rtol=1e-10)
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-10)
    # eta_ stays Theorem 3's rate for the rows seen, where a partial_fit continues.
    assert (model.eta_, model.intercept_eta_) == pytest.approx(
        split_rates(bounds.max(), 1.0))
    # Each later trial keeps the per-trial inequality c (eta B_row + eta_b) <= 1/2
    # of Theorem 3's proof, at a rate no lower than Theorem 3's.
    rate = _rates.TheoryRates("identity", "identity", 1.0, 2.0, "matching", True,
                              "auto", 6)
    rate.prepare(rows, targets[:, None], None)
    for _ in range(2):
        rate.start_pass()
        per_trial = rate.rates(np.arange(61), 0)
        rate.finish_pass()
    assert np.all(per_trial[:, 0] * bounds + per_trial[:, 1] <= 0.5 * (1 + 1e-12))
    assert np.all(per_trial[:, 0] >= model.eta_)
    assert per_trial[:, 0].max() > 50 * model.eta_
    # Sample weights: S is the largest weight seen, as in the first pass (a row's
    # own S would free its intercept step from a weight far below 1).
    weights = np.where(np.arange(61) % 2, 1e-4, 1e3)
    rate.prepare(rows, targets[:, None], weights)
    for _ in range(2):
        rate.start_pass()
        per_trial = rate.rates(np.arange(61), 0)
        rate.finish_pass()
    weighted = weights * bounds
    quantile = np.quantile(weighted, _rates.ROW_QUANTILE)
    expected = [split_rates(max(B, quantile), 1.0, S=1e3) for B in weighted]
    np.testing.assert_allclose(per_trial, expected, rtol=1e-12)


@pytest.mark.parametrize("psi", ["exp", "burg", "sphere"])
def test_a_rule_or_a_geodesic_keeps_theorem_3s_rate_in_every_pass(psi):
    # EGU's and Burg's B is a rule about the size of their weights, not a bound,
    # and the sphere's fit does not average the noise of a larger rate away: their
    # later passes keep the worst-case rate (max_iter=3 = three partial_fit passes).
    fitted = GARegressor(psi=psi, max_iter=3, tol=None, shuffle=False,
                         average=False).fit(X, Y)
    stream = GARegressor(psi=psi)
    for _ in range(3):
        stream.partial_fit(X, Y)
    np.testing.assert_allclose(fitted.coef_, stream.coef_, rtol=1e-10)
