"""partial_fit continues the compiled loop of the last call (its terms and normalizers
kept, not recomputed): what a failed call, a copy, a pickle or a change of theta_ or
of the parameters must do to it, and what coef_ and the predictions read from it."""

import copy
import gc
import pickle
import warnings
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from sklearn_ga import PSI, GAClassifier, GARegressor

RNG = np.random.default_rng(3)
X = RNG.uniform(-1, 1, size=(120, 30)) * (RNG.random((120, 30)) < 0.2)
Y = X[:, :3] @ np.array([1.0, -1.0, 0.5])
PSIS = ["identity", "softmax", "eg_pm", "exp", "pnorm", "sphere", "simplex"]


def model_for(psi, **params):
    return GARegressor(psi=psi, eta=0.05, U=2.0, **params)


def with_nan_in_last_row(X_batch):
    X_batch = X_batch.copy()
    X_batch[-1, 0] = np.nan
    return X_batch


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("psi", PSIS)
def test_a_failed_call_changes_nothing_the_next_call_learns(psi, sparse):
    # The failing batch runs 19 trials on the kept loop before its NaN: the loop
    # must be put back exactly, terms and normalizers included, so that the model
    # then learns as a twin that never saw that batch.
    form = sp.csr_matrix if sparse else np.asarray
    model = model_for(psi).partial_fit(form(X[:40]), Y[:40])
    twin = model_for(psi).partial_fit(form(X[:40]), Y[:40])
    theta, coef = model.theta_.copy(), model.coef_.copy()
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(form(with_nan_in_last_row(X[40:60])), Y[40:60])
    np.testing.assert_array_equal(model.theta_, theta)
    np.testing.assert_array_equal(model.coef_, coef)
    for start in (60, 90):
        model.partial_fit(form(X[start:start + 30]), Y[start:start + 30])
        twin.partial_fit(form(X[start:start + 30]), Y[start:start + 30])
    np.testing.assert_array_equal(model.theta_, twin.theta_)
    np.testing.assert_array_equal(model.coef_, twin.coef_)
    assert model.cumulative_loss_ == twin.cumulative_loss_


def test_a_failure_after_the_pass_puts_the_loop_back():
    # A ConvergenceWarning turned into an error is raised after warm-started epochs
    # have run on the kept loop.
    model = model_for("eg_pm", warm_start=True, max_iter=2, tol=None)
    model.partial_fit(X[:40], Y[:40])
    twin = copy.deepcopy(model)
    theta = model.theta_.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model.set_params(tol=-1e9, n_iter_no_change=5)
        with pytest.raises(ConvergenceWarning):
            model.fit(X[40:80], Y[40:80])
    np.testing.assert_array_equal(model.theta_, theta)
    model.set_params(tol=None, n_iter_no_change=5)
    model.partial_fit(X[80:], Y[80:])
    twin.partial_fit(X[80:], Y[80:])
    np.testing.assert_array_equal(model.coef_, twin.coef_)


@pytest.mark.parametrize("duplicate", [copy.deepcopy,
                                       lambda m: pickle.loads(pickle.dumps(m))])
def test_copies_continue_exactly_and_apart(duplicate):
    model = model_for("eg_pm").partial_fit(X[:60], Y[:60])
    other = duplicate(model)
    assert other.theta_ is not model.theta_
    other.partial_fit(X[60:], Y[60:])
    assert not np.array_equal(other.theta_, model.theta_)  # the original is untouched
    model.partial_fit(X[60:], Y[60:])
    np.testing.assert_array_equal(other.coef_, model.coef_)


def test_fitted_parameters_are_read_only_and_can_be_replaced():
    model = GARegressor(eta=0.1).partial_fit(X[:60], Y[:60])
    with pytest.raises(ValueError, match="read-only"):
        model.theta_[0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        model.intercept_[0] = 1.0
    # Parameters assigned by hand are learned from (a loop is built on them).
    model.theta_ = np.zeros_like(model.theta_)
    model.intercept_ = np.zeros_like(model.intercept_)
    fresh = GARegressor(eta=0.1).partial_fit(X[:1], Y[:1])
    fresh.theta_ = np.zeros_like(fresh.theta_)
    fresh.intercept_ = np.zeros_like(fresh.intercept_)
    model.partial_fit(X[60:], Y[60:])
    fresh.partial_fit(X[60:], Y[60:])
    np.testing.assert_array_equal(model.coef_, fresh.coef_)


@pytest.mark.parametrize("psi", PSIS)
def test_assigned_parameters_are_the_model_at_once(psi):
    # coef_, the predictions, copies and pickles follow theta_ and intercept_ from
    # the moment they are assigned, not from the next call.
    model = model_for(psi).partial_fit(X[:60], Y[:60])
    assert model.coef_.shape == (30,)  # (the loop's weights, computed and kept)
    given = RNG.normal(size=model.theta_.shape)
    theta = given.copy()
    model.theta_, model.intercept_ = given, [0.25]
    given[0, 0] = 99.0  # (the model holds a copy)
    expected = PSI[psi].weights(theta, 2.0, 2.0)[0]
    for same in (model, copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(same.theta_, theta)
        np.testing.assert_allclose(same.coef_, expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(same.predict(X), X @ expected + 0.25, rtol=1e-12,
                                   atol=1e-12)
        with pytest.raises(ValueError, match="read-only"):
            same.theta_[0, 0] = 1.0
    # The next call learns from them, as a model given them before its first call.
    twin = copy.deepcopy(model)
    model.partial_fit(X[60:], Y[60:])
    twin.partial_fit(X[60:], Y[60:])
    np.testing.assert_array_equal(model.coef_, twin.coef_)
    assert model.t_ == 120


@pytest.mark.parametrize("name, value, error, message", [
    ("intercept_", [np.nan], ValueError, "intercept_ contains NaN or infinity"),
    ("theta_", np.full((1, 30), np.inf), ValueError, "theta_ contains NaN"),
    ("theta_", np.zeros(30), ValueError, "fitted shape \\(1, 30\\); got \\(30,\\)"),
    ("intercept_", [0.0, 1.0], ValueError, "fitted shape"),
    ("theta_", "zeros", ValueError, "theta_ must be an array of numbers"),
])
def test_assigned_parameters_are_checked(name, value, error, message):
    model = model_for("eg_pm").partial_fit(X[:60], Y[:60])
    before, predictions = pickle.dumps(model), model.predict(X)
    with pytest.raises(error, match=message):
        setattr(model, name, value)
    assert pickle.dumps(model) == before
    np.testing.assert_array_equal(model.predict(X), predictions)


def test_parameters_that_cannot_be_assigned():
    from sklearn.exceptions import NotFittedError

    from sklearn_ga import GARegressorCV

    with pytest.raises(NotFittedError, match="takes its shape from a first fit"):
        GARegressor().theta_ = np.zeros((1, 30))
    sphere = model_for("sphere").partial_fit(X[:60], Y[:60])
    with pytest.raises(ValueError, match="no finite weights"):
        sphere.theta_ = np.zeros_like(sphere.theta_)  # (no point of the sphere)
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del sphere.theta_
    search = GARegressorCV(etas=[0.01, 0.1]).partial_fit(X[:60], Y[:60])
    with pytest.raises(AttributeError, match="row of thetas_"):
        search.theta_ = np.zeros_like(search.theta_)


def test_changed_parameters_take_effect_at_the_next_call():
    # psi = identity: one trial is theta - eta (y_hat - y) x, checkable by hand.
    model = GARegressor(eta=0.1, fit_intercept=False).partial_fit(X[:60], Y[:60])
    theta = model.theta_.copy()
    model.set_params(eta=0.5)
    model.partial_fit(X[60:61], Y[60:61])
    step = 0.5 * (X[60] @ theta[0] - Y[60])
    np.testing.assert_allclose(model.theta_[0], theta[0] - step * X[60], rtol=1e-14)


def test_the_classifier_keeps_its_loop_across_calls():
    labels = np.where(Y > 0, "pos", "neg")
    model = GAClassifier(psi="eg_pm", eta=0.1).partial_fit(X[:60], labels[:60],
                                                          classes=["neg", "pos"])
    loop = model._run.kept.loop
    model.partial_fit(X[60:], labels[60:])
    assert model._run.kept.loop is loop
    rebuilt = copy.deepcopy(GAClassifier(psi="eg_pm", eta=0.1).partial_fit(
        X[:60], labels[:60], classes=["neg", "pos"]))
    rebuilt.partial_fit(X[60:], labels[60:])
    np.testing.assert_array_equal(model.predict_proba(X), rebuilt.predict_proba(X))


WIDE = sp.random(200, 2000, density=0.003, format="csr", random_state=4)
WIDE.data = RNG.uniform(-3, 3, size=WIDE.nnz)
Y_WIDE = np.asarray(WIDE[:, :5] @ np.array([1.0, -1.0, 0.5, 2.0, 1.0])).ravel()


@pytest.mark.parametrize("psi", PSIS)
def test_a_failed_sparse_call_puts_back_every_output(psi):
    # Three outputs, and batches that touch few of the 2000 coordinates: the record
    # of those coordinates (TrialLoop.save) must hold every row of theta and terms.
    labels = np.digitize(Y_WIDE, [-0.5, 0.5])
    model = GAClassifier(psi=psi, phi="softmax", eta=0.5, U=2.0)
    model.partial_fit(WIDE[:40], labels[:40], classes=[0, 1, 2])
    twin = copy.deepcopy(model)
    theta = model.theta_.copy()
    bad = WIDE[40:60].copy()
    bad.data[-1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(bad, labels[40:60])
    np.testing.assert_array_equal(model.theta_, theta)
    model.partial_fit(WIDE[60:], labels[60:])
    twin.partial_fit(WIDE[60:], labels[60:])
    np.testing.assert_array_equal(model.theta_, twin.theta_)
    np.testing.assert_array_equal(model.predict_proba(WIDE), twin.predict_proba(WIDE))


@pytest.mark.parametrize(("psi", "params"), [
    ("softmax", {}), ("eg_pm", {}), ("exp", {"eta": 0.05}), ("pnorm", {}),
    ("sphere", {}), ("simplex", {}), ("softmax", {"update": "natural"}),
    ("eg_pm", {"update": "implicit"}), ("eg_pm", {"Y": 3.0}),
])
@pytest.mark.parametrize("eta", [2.0, 6.0])
@pytest.mark.usefixtures("without_runaway_check")
def test_a_failed_sparse_call_puts_back_rows_it_recomputed(psi, params, eta):
    # A CSR batch touching few columns is saved column by column; with long steps
    # the shifts move, so rows are recomputed (O(n) writes) in the failing batch
    # too, and those rows must come back from the full copy made first.
    params = {"eta": eta, "U": 5.0, **params}
    model = GARegressor(psi=psi, **params).partial_fit(WIDE[:100], Y_WIDE[:100])
    _fail_then_continue_as_a_copy(model, Y_WIDE)


def _fail_then_continue_as_a_copy(model, y):
    """A CSR call on WIDE[100:140] failing on NaN in its last row, then two calls:
    the model must continue exactly as a copy taken before the failure."""
    twin = copy.deepcopy(model)
    failing = WIDE[100:140].toarray()
    failing[-1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(sp.csr_matrix(failing), y[100:140])
    for start in (140, 170):
        model.partial_fit(WIDE[start:start + 30], y[start:start + 30])
        twin.partial_fit(WIDE[start:start + 30], y[start:start + 30])
    np.testing.assert_array_equal(model.theta_, twin.theta_)
    np.testing.assert_array_equal(model.coef_, twin.coef_)


@pytest.mark.parametrize("psi", PSIS)
def test_reading_coef_changes_nothing_learned(psi):
    # coef_ is built from the kept loop when read, with normalizers summed afresh
    # into a local sum: reading it between calls must not change the loop.
    model, twin = model_for(psi), model_for(psi)
    for start in range(0, 120, 30):
        model.partial_fit(X[start:start + 30], Y[start:start + 30])
        twin.partial_fit(X[start:start + 30], Y[start:start + 30])
        model.coef_, model.predict(X[:5])  # noqa: B018 (read on purpose)
    np.testing.assert_array_equal(model.theta_, twin.theta_)
    np.testing.assert_array_equal(model.coef_, twin.coef_)


@pytest.mark.parametrize("psi", PSIS)
def test_csr_predictions_between_calls_are_those_of_coef_(psi):
    # Predictions of CSR rows (checked without validate_data) build coef_ from the
    # kept loop: X @ coef_ exactly, before and after, and nothing learned changes.
    model, twin = model_for(psi), model_for(psi)
    classifier = GAClassifier(psi=psi, eta=0.05, U=2.0)
    for start in range(0, 90, 30):
        batch, y = WIDE[start:start + 30], Y_WIDE[start:start + 30]
        model.partial_fit(batch, y)
        twin.partial_fit(batch, y)
        classifier.partial_fit(batch, y > 0, classes=[False, True])
        rows = WIDE[start + 30:start + 32]
        before = model.predict(rows), classifier.predict_proba(rows)
        expected = rows @ model.coef_ + model.intercept_[0]
        np.testing.assert_array_equal(before[0], expected)
        np.testing.assert_array_equal(model.predict(rows), before[0])
        np.testing.assert_array_equal(
            before[1][:, 1], 1.0 / (1.0 + np.exp(-(rows @ classifier.coef_[0]
                                                   + classifier.intercept_[0]))))
    np.testing.assert_array_equal(model.theta_, twin.theta_)
    np.testing.assert_array_equal(model.coef_, twin.coef_)


@pytest.mark.parametrize("psi", PSIS)
def test_coef_after_many_calls_is_psi_of_theta(psi):
    # coef_ uses the normalizers the loop keeps up to date incrementally: after
    # many calls they still give psi(theta_) to far better than 1e-12.
    model = model_for(psi, p=2 * np.log(WIDE.shape[1]))
    for start in range(0, 200, 5):
        model.partial_fit(WIDE[start:start + 5], Y_WIDE[start:start + 5])
    expected = PSI[psi].weights(model.theta_, 2.0, model.p)[0]
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-12,
                               atol=1e-14 * np.abs(expected).max())


@pytest.mark.parametrize("change", ["intercept_", "theta_", "set_params"])
def test_copies_predict_as_the_model_when_they_cannot_continue_its_loop(change):
    # A copy whose parameters or settings are no longer the loop's builds its own
    # loop at its next call: until then it predicts with the model's coef_.
    model = model_for("eg_pm").partial_fit(X[:60], Y[:60])
    if change == "set_params":
        model.set_params(U=3.0)
    else:
        setattr(model, change, np.array(getattr(model, change)) + 0.5)
    copies = [copy.deepcopy(model), pickle.loads(pickle.dumps(model))]
    for other in copies:
        np.testing.assert_array_equal(other.predict(X), model.predict(X))
        np.testing.assert_array_equal(other.coef_, model.coef_)
    model.partial_fit(X[60:], Y[60:])
    for other in copies:
        np.testing.assert_array_equal(other.partial_fit(X[60:], Y[60:]).coef_,
                                      model.coef_)


def test_coef_is_read_only_and_follows_the_last_call():
    model = GARegressor(psi="eg_pm", eta=0.1, U=2.0).partial_fit(X[:60], Y[:60])
    with pytest.raises(ValueError, match="read-only"):
        model.coef_[0] = 1.0
    # Weights set by hand predict until the next call, which learns from theta_.
    model.coef_ = np.zeros(X.shape[1])
    np.testing.assert_array_equal(model.predict(X[:3]), model.intercept_[0])
    model.partial_fit(X[60:], Y[60:])
    assert np.any(model.coef_ != 0.0)
    np.testing.assert_allclose(model.coef_, 2.0 * np.sinh(model.theta_[0])
                               / np.cosh(model.theta_[0]).sum(), rtol=1e-12)


def test_deleting_coef_removes_only_weights_set_by_hand():
    model = GARegressor(psi="eg_pm", eta=0.1, U=2.0).partial_fit(X[:60], Y[:60])
    learned = model.coef_.copy()
    model.coef_ = np.zeros(X.shape[1])
    del model.coef_
    np.testing.assert_array_equal(model.coef_, learned)
    with pytest.raises(AttributeError, match="computed from theta_"):
        del model.coef_
    np.testing.assert_array_equal(model.coef_, learned)
    with pytest.raises(AttributeError, match="has no attribute 'coef_'"):
        del GARegressor().coef_


def test_a_call_keeps_no_reference_to_the_callers_data():
    model = GARegressor(psi="eg_pm", eta=0.1).partial_fit(WIDE[:10], Y_WIDE[:10])
    indices = WIDE[10:20].indices.copy()  # few columns of 2000: a journaled batch
    batch = sp.csr_matrix((WIDE[10:20].data, indices, WIDE[10:20].indptr),
                          shape=(10, WIDE.shape[1]))
    alive = weakref.ref(indices)
    model.partial_fit(batch, Y_WIDE[10:20])
    del batch, indices
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize(("psi", "params"), [
    ("softmax", {}), ("eg_pm", {}), ("exp", {"eta": 0.05}), ("pnorm", {}),
    ("sphere", {}), ("simplex", {}), ("eg_pm", {"update": "implicit"}),
])
def test_a_failed_sparse_call_of_outputs_learned_apart_puts_back_every_row(psi, params):
    # One-vs-rest outputs of a CSR batch are learned one after another, each as a
    # state of its own; with long steps one of them rewrites its row in O(n), and
    # every row must first be copied (the batch's record holds only its columns).
    params = {"eta": 6.0, "U": 5.0, **params}
    labels = np.digitize(Y_WIDE, [-0.5, 0.5])
    model = GAClassifier(psi=psi, **params).partial_fit(WIDE[:100], labels[:100],
                                                        classes=[0, 1, 2])
    _fail_then_continue_as_a_copy(model, labels)
    for j in range(3):  # each output learned as a model of that output alone
        alone = GAClassifier(psi=psi, **params).partial_fit(
            WIDE[:100], labels[:100] == j, classes=[False, True])
        for start in (140, 170):
            alone.partial_fit(WIDE[start:start + 30], labels[start:start + 30] == j)
        np.testing.assert_array_equal(model.theta_[j], alone.theta_[0])
