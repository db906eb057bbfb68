"""U="auto": the scale that EG± and the sphere need, chosen from the data (a ridge
fit's norm), doubled on a stream whose scale grows (EG±, the weights kept), kept in
U_ through pickling; a hand-set U is used unchanged."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge

from sklearn_ga import GAClassifier, GARegressor, _auto_scale, _base


def sparse_target(m=600, n=40, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(m, n))
    return X, scale * (2.0 * X[:, 0] - 1.5 * X[:, 3]) + 0.1 * rng.normal(size=m)


def gcv_error(X, Z, alpha):
    """Generalized cross-validation error of the ridge fit of Z on X with an
    intercept, from the explicit hat matrix (Golub, Heath and Wahba 1979)."""
    centred = X - X.mean(axis=0)
    hat = centred @ np.linalg.solve(centred.T @ centred + alpha * np.eye(X.shape[1]),
                                    centred.T) + 1.0 / X.shape[0]  # (the intercept's)
    residual = (np.eye(X.shape[0]) - hat) @ (Z - Z.mean(axis=0))
    return np.sum(residual**2) / (X.shape[0] - np.trace(hat)) ** 2


def ridge_norm(X, Z, order, chosen=False):
    """The norm of scikit-learn's ridge fit on the first rows, the penalty that of
    U="auto" (a hundredth of a centred column's mean squared norm); ``chosen``
    (the sphere): the multiple of that mean in CHOSEN_RIDGES of least GCV error."""
    X, Z = X[:_auto_scale.SCALE_ROWS], Z[:_auto_scale.SCALE_ROWS]
    unit = np.sum((X - X.mean(axis=0)) ** 2) / X.shape[1]
    alpha = _auto_scale.SCALE_RIDGE * unit
    if chosen:
        alpha = min(_auto_scale.CHOSEN_RIDGES * unit,
                    key=lambda alpha: gcv_error(X, Z, alpha))
    coef = np.atleast_2d(Ridge(alpha=alpha, solver="svd").fit(X, Z).coef_)
    return np.max(np.linalg.norm(coef, ord=order, axis=1))


@pytest.mark.parametrize("shape", [(600, 40), (60, 200)], ids=["primal", "dual"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_auto_u_is_the_norm_of_a_ridge_fit(shape, sparse):
    # The l1 norm for EG±, the l2 norm (the radius) for the sphere, whose penalty
    # is chosen by GCV; more features than rows take the dual of the normal
    # equations, CSR rows too.
    X, y = sparse_target(*shape)
    Xin = sp.csr_matrix(X) if sparse else X
    for psi, order, chosen in (("eg_pm", 1, False), ("sphere", 2, True)):
        model = GARegressor(psi=psi, eta=0.001).partial_fit(Xin, y)
        assert model.U_ == pytest.approx(ridge_norm(X, y, order, chosen), rel=1e-9)
        assert model.U_ != pytest.approx(ridge_norm(X, y, order, not chosen),
                                         rel=1e-6)
    sphere = GARegressor(psi="sphere", random_state=0).fit(Xin, y)
    np.testing.assert_allclose(np.linalg.norm(sphere.coef_), sphere.U_, rtol=1e-9)
    assert GARegressor(random_state=0).fit(X, y).U_ == 1.0  # (GD ignores U)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_the_spheres_penalty_of_wide_rows_is_chosen_on_the_first_rows(
        sparse, monkeypatch):
    # Dual normal equations of more than CHOSEN_ROWS rows: GCV's
    # eigendecomposition takes the first CHOSEN_ROWS (the cube of their number),
    # the radius is the norm of the fit of every row at that penalty.
    monkeypatch.setattr(_auto_scale, "CHOSEN_ROWS", 40)
    X, y = sparse_target(90, 200)
    Xin = sp.csr_matrix(X) if sparse else X
    first = X[:40]
    unit = np.sum((first - first.mean(axis=0)) ** 2) / X.shape[1]
    alpha = min(_auto_scale.CHOSEN_RIDGES * unit,
                key=lambda alpha: gcv_error(first, y[:40], alpha))
    coef = Ridge(alpha=alpha, solver="svd").fit(X, y).coef_
    model = GARegressor(psi="sphere", eta=0.001).partial_fit(Xin, y)
    assert model.U_ == pytest.approx(np.linalg.norm(coef), rel=1e-9)
    # (The penalty of GCV on every row, the same multiple of a larger unit.)
    assert model.U_ != pytest.approx(ridge_norm(X, y, 2, chosen=True), rel=1e-9)
    # Reproducible: the same rows give the same radius.
    assert GARegressor(psi="sphere", eta=0.001).partial_fit(Xin, y).U_ == model.U_


def test_auto_u_of_labels_reads_them_as_activations_of_four():
    X, y = sparse_target()
    labels = y > 0
    model = GAClassifier(psi="eg_pm", random_state=0).fit(X, labels)
    edge = _auto_scale.SCALE_EDGE
    expected = ridge_norm(X, np.where(labels, edge, -edge), 1)
    assert model.U_ == pytest.approx(expected, rel=1e-9)
    assert model.score(X, labels) > 0.95


def test_auto_u_is_reproducible_and_survives_pickling():
    X, y = sparse_target()
    model = GARegressor(psi="eg_pm").partial_fit(X[:300], y[:300])
    twin = GARegressor(psi="eg_pm").partial_fit(X[:300], y[:300])
    assert model.U_ == twin.U_
    copy = pickle.loads(pickle.dumps(model))
    assert copy.U_ == model.U_ and copy.get_params()["U"] == "auto"
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    for estimator in (model, copy):
        estimator.partial_fit(X[300:], y[300:])
    assert copy.U_ == model.U_
    np.testing.assert_array_equal(copy.coef_, model.coef_)


def test_a_hand_set_u_is_used_unchanged():
    # The stream would double an automatic U (its scale grows tenfold).
    X, y = sparse_target(scale=0.2)
    X2, y2 = sparse_target(scale=2.0, seed=1)
    model = GARegressor(psi="eg_pm", U=3.0).partial_fit(X, y).partial_fit(X2, y2)
    assert model.U_ == 3.0
    assert np.abs(model.coef_).sum() < 3.0
    auto = GARegressor(psi="eg_pm").partial_fit(X, y).partial_fit(X2, y2)
    assert auto.U_ > 3.0


def test_a_numeric_eta_keeps_the_first_calls_u():
    # (Its rate was chosen for that U: HKW Theorem 2's rate scales as 1 / U^2.)
    X, y = sparse_target(scale=0.2)
    X2, y2 = sparse_target(scale=2.0, seed=1)
    model = GARegressor(psi="eg_pm", eta=1e-3).partial_fit(X, y)
    first = model.U_
    assert model.partial_fit(X2, y2).U_ == first


def test_auto_u_follows_a_stream_whose_scale_grows():
    # The targets grow 16-fold over the stream: the first batch's U is far too
    # small for the last batches, and U_ doubles (by powers of 2) to fit them.
    batches = [sparse_target(m=400, scale=scale, seed=seed)
               for seed, scale in enumerate([0.25, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0])]
    model = GARegressor(psi="eg_pm")
    fixed = None
    for X, y in batches:
        model.partial_fit(X, y)
        if fixed is None:
            first = model.U_
            fixed = GARegressor(psi="eg_pm", U=first).partial_fit(X, y)
        else:
            fixed.partial_fit(X, y)
    doublings = np.log2(model.U_ / first)
    assert doublings >= 3 and doublings == round(doublings)
    X, y = sparse_target(m=400, scale=4.0, seed=99)
    assert model.score(X, y) > 0.9
    assert fixed.score(X, y) < 0.5  # (a U of 1/16 the need caps the weights)
    assert model.n_eta_changes_ >= 1


def test_the_doubling_keeps_the_weights(monkeypatch):
    # With PRESS = 0 every call doubles U_: the weights after the call are those of
    # the same call without doubling, the parameters theta those of 2 U, and the
    # rate that of 2 U for the rows seen.
    X, y = sparse_target(m=300)
    monkeypatch.setattr(_base, "PRESS", np.inf)
    kept = GARegressor(psi="eg_pm").partial_fit(X, y)
    monkeypatch.setattr(_base, "PRESS", 0.0)
    doubled = GARegressor(psi="eg_pm").partial_fit(X, y)
    assert doubled.U_ == 2.0 * kept.U_
    np.testing.assert_allclose(doubled.coef_, kept.coef_, rtol=1e-12, atol=1e-15)
    assert not np.allclose(doubled.theta_, kept.theta_)
    np.testing.assert_allclose(
        doubled.coef_, _base.PSI["eg_pm"].weights(np.asarray(doubled.theta_),
                                                  doubled.U_, 2.0)[0],
        rtol=1e-12, atol=1e-15)
    at_twice = GARegressor(psi="eg_pm", U=doubled.U_).partial_fit(X, y)
    assert doubled.eta_ == pytest.approx(at_twice.eta_, rel=1e-12)
    assert doubled.intercept_eta_ == pytest.approx(at_twice.intercept_eta_,
                                                   rel=1e-12)
    # The next call learns from those weights (a model built on them again).
    doubled.partial_fit(X[:10], y[:10])
    assert np.all(np.isfinite(doubled.coef_)) and doubled.t_ == 310


def test_one_row_calls_check_the_weights_every_so_often():
    X, y = sparse_target(m=2200, scale=4.0)
    model = GARegressor(psi="eg_pm").partial_fit(X[:2], y[:2] / 16.0)
    first = model.U_
    for i in range(2, X.shape[0]):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert model.U_ > first
