"""The estimators inside Pipeline and GridSearchCV; clone and pickle."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ga import GAClassifier, GARegressor


def sparse_target(m=600, n=40, seed=0):
    """Two relevant features of n (l1 norm of the target: 3), small noise."""
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(m, n))
    return X, 2.0 * X[:, 0] - X[:, 1] + 0.05 * rng.normal(size=m)


def test_grid_search_over_eta_and_U_in_a_pipeline():
    X, y = sparse_target()
    pipeline = make_pipeline(StandardScaler(), GARegressor(
        psi="eg_pm", max_iter=5, tol=None, random_state=0))
    grid = {"garegressor__eta": [1e-4, 1e-2, 1e-1],
            "garegressor__U": [0.5, 4.0]}
    search = GridSearchCV(pipeline, grid, cv=3, n_jobs=2).fit(X, y)
    # U = 0.5 cannot reach a target of l1 norm 3; eta = 1e-4 barely moves in 5 epochs.
    assert search.best_params_["garegressor__U"] == 4.0
    assert search.best_params_["garegressor__eta"] > 1e-4
    assert search.best_score_ > 0.95
    coef = search.best_estimator_[-1].coef_
    assert np.abs(coef[2:]).max() < 0.1 < abs(coef[1]) < abs(coef[0])


def test_classifier_grid_search_and_probabilities():
    X, y = sparse_target(seed=1)
    labels = np.where(y > 0, "up", "down")
    search = GridSearchCV(GAClassifier(psi="eg_pm", U=4.0, max_iter=5, tol=None,
                                       random_state=0),
                          {"eta": [1e-3, 1e-1]}, cv=3, n_jobs=2).fit(X, labels)
    assert search.best_score_ > 0.9
    proba = search.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(search.classes_[proba.argmax(axis=1)],
                                  search.predict(X))


def test_clone_and_pickle_keep_the_model():
    X, y = sparse_target(m=200)
    model = GARegressor(psi="eg_pm", phi="identity", eta=0.05, U=4.0).partial_fit(X, y)
    fresh = clone(model)
    assert fresh.get_params() == model.get_params()
    assert not hasattr(fresh, "coef_")
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    # Learning continues identically after the round trip.
    np.testing.assert_array_equal(restored.partial_fit(X, y).coef_,
                                  model.partial_fit(X, y).coef_)
    assert restored.t_ == model.t_ == 400


@pytest.mark.parametrize("psi", ["pnorm", "eg_pm"])
def test_a_model_pickled_before_pnorms_anchors_continues(psi):
    # The loop's buffers of the previous version end before pnorm's anchors (the
    # last normalizer whose power was taken, and that power): a copy takes the
    # power afresh at its first trial, and continues as the model does.
    X, y = sparse_target(m=200)
    model = GARegressor(psi=psi, eta=0.05, p=3.5).partial_fit(X, y)
    state = model.__getstate__()
    key, (num, den, buffers, touched, averages) = state["_kept_terms"]
    assert averages is None
    state["_kept_terms"] = key, (num, den, buffers[:9], touched)
    restored = GARegressor.__new__(GARegressor)
    restored.__setstate__(state)
    np.testing.assert_allclose(restored.partial_fit(X, y).coef_,
                               model.partial_fit(X, y).coef_, rtol=1e-12)


@pytest.mark.parametrize("recorded", [False, True])
def test_a_model_pickled_before_predictions_recorded_their_phi_still_predicts(
        recorded):
    # Models pickled by earlier versions have no configuration: they predicted with
    # the phi and Y they recorded (_fitted_phi, _fitted_Y), or before those, with
    # phi and Y, which are what they were fitted with.
    X, y = sparse_target(m=200)
    labels = np.where(y > 0, "pos", "neg")
    for model, method in ((GARegressor(phi="tanh", eta=0.05, Y=0.5), "predict"),
                          (GAClassifier(eta=0.05), "predict_proba")):
        model.fit(X, labels if method == "predict_proba" else np.tanh(y))
        expected = getattr(model, method)(X)
        fitted = model.__dict__.pop("_fitted")
        if recorded:  # (set_params since the fit: the recorded ones predict)
            model.__dict__.update(_fitted_psi=fitted.psi_name, _fitted_U=model.U_,
                                  _fitted_phi=fitted.phi_name, _fitted_Y=fitted.Y)
            model.set_params(phi="identity", Y=None)
        restored = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(getattr(restored, method)(X), expected)
