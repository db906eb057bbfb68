"""The CV estimators hold a grid of runs: one-row partial_fit runs every
configuration's trial in one compiled call (Grid.learn_row) and gives, bit for bit,
what each configuration's own estimator gives row by row; and they are no plain
estimators with masked parameters."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_ga import GAClassifier, GAClassifierCV, GARegressor, GARegressorCV
from sklearn_ga._search import SearchGA

ETAS = [0.003, 0.03, 0.3]


def stream(m=300, n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 0.0, 1.0], size=(m, n), p=[0.4, 0.2, 0.4])
    return X, np.tanh(X[:, 0] - 0.5 * X[:, 3] + 0.1 * rng.normal(size=m))


@pytest.fixture
def row_calls(monkeypatch):
    """The number of one-row calls the compiled grid call completed."""
    counts = [0]
    trial = SearchGA._one_row_trial

    def counted(self, X, y):
        done = trial(self, X, y)
        counts[0] += done
        return done

    monkeypatch.setattr(SearchGA, "_one_row_trial", counted)
    return counts


def general_path(monkeypatch):
    monkeypatch.setattr(SearchGA, "_one_row_trial", lambda self, X, y: False)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "softmax", "pnorm", "sphere"])
def test_one_row_calls_equal_each_configurations_own_rows(psi, sparse, row_calls):
    X, y = stream()
    form = sp.csr_matrix if sparse else np.asarray
    grid = {"psi": psi, "phi": "tanh", "p": 3.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (softmax's range check)
        search = GARegressorCV(max_iter=1, etas=ETAS, Us=[0.5, 2.0], **grid)
        search.partial_fit(form(X[:20]), y[:20])
    models = [GARegressor(**grid, **params).partial_fit(form(X[:20]), y[:20])
              for params in search.cv_results_["params"]]
    for i in range(20, X.shape[0]):
        search.partial_fit(form(X[i:i + 1]), y[i:i + 1])
        for model in models:
            model.partial_fit(form(X[i:i + 1]), y[i:i + 1])
    assert row_calls[0] == X.shape[0] - 20
    for g, model in enumerate(models):
        np.testing.assert_array_equal(search.thetas_[g], model.theta_)
        np.testing.assert_array_equal(search.intercepts_[g], model.intercept_)
        assert search.progressive_loss_[g] == model.cumulative_loss_
    best = models[search.best_index_]
    assert search.best_index_ == int(np.argmin([m.cumulative_loss_ for m in models]))
    np.testing.assert_array_equal(search.coef_, best.coef_)
    np.testing.assert_array_equal(search.predict(form(X)), best.predict(form(X)))
    assert search.t_ == X.shape[0] and search.cumulative_loss_ == best.cumulative_loss_


@pytest.mark.parametrize("phi", ["logistic", "softmax", "sign"])
def test_classifier_one_row_calls_equal_the_general_path(phi, row_calls, monkeypatch):
    X, y = stream(seed=1)
    labels = np.array(["a", "b", "c"])[np.digitize(y, [-0.3, 0.3])]

    def run():
        search = GAClassifierCV(psi="eg_pm", phi=phi, etas=ETAS, Us=[1.0, 4.0])
        search.partial_fit(X[:20], labels[:20], classes=["a", "b", "c"])
        for i in range(20, X.shape[0]):
            search.partial_fit(X[i:i + 1], labels[i:i + 1])
        return search

    fast = run()
    assert row_calls[0] == X.shape[0] - 20
    general_path(monkeypatch)
    slow = run()
    np.testing.assert_array_equal(fast.thetas_, slow.thetas_)
    np.testing.assert_array_equal(fast.progressive_loss_, slow.progressive_loss_)
    np.testing.assert_array_equal(fast.decision_function(X), slow.decision_function(X))
    assert fast.best_index_ == slow.best_index_


def test_a_trial_not_taken_changes_nothing_and_the_general_path_runs(monkeypatch):
    # A row on which the largest rate diverges: the compiled call undoes the trials
    # of the configurations before it and leaves the row to the general path,
    # which takes the diverged configuration out.
    X, y = stream()
    search = GARegressorCV(max_iter=1, etas=[0.001, 0.01, 10.0]).partial_fit(
        X[:50], y[:50])
    assert np.all(np.isfinite(search.progressive_loss_))
    bad = 1e155 * X[50:51]
    before = {name: np.array(getattr(search, name)) for name in
              ("thetas_", "intercepts_", "progressive_loss_")}
    target = search._selected._one_row_targets(y[50:51],
                                               search._selected._the_run().kept)
    assert search._grid.learn_row(bad, target) == -1
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(search, name), value)
    twin = pickle.loads(pickle.dumps(search))
    search.partial_fit(bad, y[50:51])
    general_path(monkeypatch)
    twin.partial_fit(bad, y[50:51])
    np.testing.assert_array_equal(search.progressive_loss_, twin.progressive_loss_)
    assert np.isinf(search.progressive_loss_[2])
    np.testing.assert_array_equal(search.thetas_[:2], twin.thetas_[:2])


def test_a_parameter_set_sends_the_next_row_to_the_general_path(row_calls):
    X, y = stream()
    search = GARegressorCV(max_iter=1, etas=ETAS).partial_fit(X[:20], y[:20])
    search.partial_fit(X[20:21], y[20:21])
    assert row_calls[0] == 1
    search.set_params(etas=[0.1, 0.2])  # (a grid changed: the general path says so)
    with pytest.raises(ValueError, match="grid"):
        search.partial_fit(X[21:22], y[21:22])
    search.set_params(etas=ETAS, fit_intercept=False)
    intercepts = np.array(search.intercepts_)
    search.partial_fit(X[21:22], y[21:22])
    assert row_calls[0] == 1  # (validated and rebuilt by the general path)
    search.partial_fit(X[22:23], y[22:23])
    assert row_calls[0] == 2
    # (Both rows learned without intercepts: the loops of the new settings.)
    np.testing.assert_array_equal(search.intercepts_, intercepts)


def test_fit_then_one_row_calls_continue_the_grid():
    # fit's finished model predicts until a partial_fit, whose one-pass model then
    # predicts, as after partial_fit of a batch.
    X, y = stream()
    search = GARegressorCV(etas=ETAS, random_state=0).fit(X[:200], y[:200])
    twin = GARegressorCV(etas=ETAS, max_iter=1).fit(X[:200], y[:200])
    assert search.n_iter_ > 2
    for i in range(200, 210):
        search.partial_fit(X[i:i + 1], y[i:i + 1])
        twin.partial_fit(X[i:i + 1], y[i:i + 1])
    assert search.n_iter_ == 1
    np.testing.assert_array_equal(search.coef_, twin.coef_)
    np.testing.assert_array_equal(search.predict(X), twin.predict(X))


def test_the_cv_estimators_hold_plain_models_rather_than_being_them():
    for search, plain in ((GARegressorCV(), GARegressor), (GAClassifierCV(),
                                                           GAClassifier)):
        assert not isinstance(search, plain)
        # None of the plain estimators' parameters that the grid does not search.
        for name in ("eta", "U", "update", "loss", "Y", "alpha", "intercept_eta",
                     "learning_rate", "average", "warm_start"):
            assert not hasattr(search, name), name
    X, y = stream()
    search = GARegressorCV(max_iter=1, etas=ETAS).fit(X, y)
    model = search._selected
    assert type(model) is GARegressor
    assert (model.eta, model.U) == (search.eta_, search.U_)
    assert model.theta_ is search.theta_  # (the grid's row, updated in place)


def test_a_psi_of_weights_in_a_fixed_set_gets_the_range_check():
    # The plain estimators warn where nonnegative weights cannot fit the data; so
    # do the CV estimators, whatever their Us.
    X, y = stream()
    for search in (GARegressorCV(psi="exp", max_iter=1, etas=ETAS),
                   GAClassifierCV(psi="exp", max_iter=1, etas=ETAS)):
        target = y if isinstance(search, GARegressorCV) else y > 0
        with pytest.warns(UserWarning, match="worse than weights of any sign"):
            search.fit(-X, target)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            search.fit(np.abs(X), target)
