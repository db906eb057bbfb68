"""Inputs in every form a scikit-learn user passes give the same model as float64 C."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from sklearn_ga import GAClassifier, GARegressor

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(50, 4))
Y = np.tanh(X @ np.array([1.0, -1.0, 0.5, 0.0]))


def reference():
    return GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=2.0).partial_fit(X, Y)


@pytest.mark.parametrize("convert", [
    lambda X: np.asfortranarray(X),
    lambda X: X[:, ::-1][:, ::-1],  # non-contiguous view
    lambda X: X.tolist(),
    sp.csc_matrix, sp.coo_matrix, sp.csr_array,
    lambda X: pd.DataFrame(X, columns=list("abcd")),
    lambda X: pd.DataFrame(X),  # no string names
], ids=["fortran", "strided", "list", "csc", "coo", "csr_array", "frame", "frame-int"])
def test_input_forms_give_the_same_model(convert):
    model = GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=2.0)
    model.partial_fit(convert(X), list(Y))
    expected = reference()
    np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.cumulative_loss_, expected.cumulative_loss_,
                               rtol=1e-12)


LATER_FORMS = {
    "fortran": np.asfortranarray, "strided": lambda X: X[:, ::-1][:, ::-1],
    "float32": lambda X: X.astype(np.float32), "list": lambda X: X.tolist(),
    "csr": sp.csr_matrix, "csr-float32": lambda X: sp.csr_matrix(X, dtype=np.float32),
    "csr_array": sp.csr_array, "coo": sp.coo_matrix, "frame-int": pd.DataFrame,
}


@pytest.mark.parametrize("form", LATER_FORMS)
def test_later_calls_in_every_input_form_learn_as_float64_c(form):
    # After the first call, partial_fit checks a float ndarray or CSR batch without
    # validate_data: the same learning as the general path.
    batch = LATER_FORMS[form](X[25:])
    dense = np.asarray(batch.toarray() if sp.issparse(batch) else batch, dtype=float)
    expected = reference().partial_fit(dense, Y[25:])
    model = reference().partial_fit(batch, Y[25:])
    np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.cumulative_loss_, expected.cumulative_loss_,
                               rtol=1e-12)


def test_sample_weights_in_an_array_learn_as_in_a_list():
    # A float ndarray of weights is checked without check_array; a list goes
    # through it, with the same errors.
    weights = RNG.uniform(0, 2, size=Y.shape[0])
    models = [reference() for _ in range(2)]
    models[0].partial_fit(X, Y, sample_weight=weights)
    models[1].partial_fit(X, Y, sample_weight=list(weights))
    np.testing.assert_array_equal(models[0].coef_, models[1].coef_)
    assert models[0].cumulative_loss_ == models[1].cumulative_loss_
    for bad, message in [(-weights, "Negative values"), (weights[:-1], "50"),
                         (np.where(weights > 1, np.nan, weights), "NaN"),
                         (weights[:, None], "1D"), (0 * weights, "non-zero")]:
        for form in (np.asarray, lambda w: w.tolist()):
            with pytest.raises(ValueError, match=message):
                models[0].partial_fit(X, Y, sample_weight=form(bad))


def test_later_calls_with_string_labels_learn_as_with_a_list():
    # A NumPy array of str labels is checked without validate_data; a list goes
    # through it.
    labels = np.where(Y > 0, "spam", "ham")
    models = [GAClassifier(eta=0.1).partial_fit(X[:25], labels[:25],
                                                classes=["ham", "spam"])
              for _ in range(2)]
    models[0].partial_fit(X[25:], labels[25:])
    models[1].partial_fit(X[25:], list(labels[25:]))
    np.testing.assert_array_equal(models[0].coef_, models[1].coef_)
    assert models[0].cumulative_loss_ == models[1].cumulative_loss_
    for y in (np.where(Y > 0, "spam", "eggs"), list(np.where(Y > 0, "spam", "eggs"))):
        with pytest.raises(ValueError, match=r"labels \['eggs'\] that are not"):
            models[0].partial_fit(X, y)


@pytest.mark.parametrize("convert", [
    lambda X: np.asfortranarray(X), lambda X: X[:, ::-1][:, ::-1],
    lambda X: X.astype(np.float32), lambda X: np.sign(X).astype(np.int64),
    lambda X: X.tolist(), sp.csr_matrix, lambda X: sp.csr_matrix(X, dtype=np.float32),
    sp.csr_array, lambda X: pd.DataFrame(X),
], ids=["fortran", "strided", "float32", "int", "list", "csr", "csr-float32",
        "csr_array", "frame-int"])
def test_predictions_of_every_input_form_are_those_of_float64_c(convert):
    model = reference()
    converted = convert(X)
    expected = np.asarray(sp.csr_matrix(converted).toarray() if sp.issparse(converted)
                          else np.asarray(converted, dtype=np.float64))
    # (CSR products sum in another order: equal to rounding.)
    np.testing.assert_allclose(model.predict(converted), model.predict(expected),
                               rtol=1e-14)
    classifier = GAClassifier(eta=0.1, max_iter=5, tol=None, random_state=0)
    classifier.fit(X, Y > 0)
    # (1 - p rounds to 1e-16 absolute.)
    np.testing.assert_allclose(classifier.predict_proba(converted),
                               classifier.predict_proba(expected), rtol=1e-14,
                               atol=1e-15)


def test_predictions_check_inputs_as_scikit_learn_does():
    model = reference()
    for bad, message in [(np.full((2, 4), np.inf), "infinity"),
                         (np.full((2, 4), np.nan, dtype=np.float32), "NaN"),
                         (np.empty((0, 4)), "0 sample"), (X[0], "2D array"),
                         (X[:, :3], "3 features"), (X.astype(complex), "[Cc]omplex"),
                         (sp.csr_matrix(np.full((2, 4), np.nan)), "NaN"),
                         (sp.csr_matrix(X[:, :3]), "3 features"),
                         (sp.csr_matrix((0, 4)), "0 sample")]:
        with pytest.raises(ValueError, match=message):
            model.predict(bad)
    named = GARegressor(eta=0.1).fit(pd.DataFrame(X, columns=list("abcd")), Y)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        named.predict(X)


@pytest.mark.parametrize("form", [np.asarray, sp.csr_matrix])
def test_finite_inputs_whose_sum_overflows_predict_without_warnings(form):
    model = GARegressor(eta=0.1).partial_fit(X, Y)
    big = np.zeros((2, 4))
    big[:, 0] = 1e308  # finite, but their sum is not
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predicted = model.predict(form(big))
    np.testing.assert_array_equal(predicted, big @ model.coef_ + model.intercept_[0])


def test_float32_and_integer_inputs_are_learned_in_float64():
    signs = np.sign(X)
    for dtype in (np.float32, np.int64):
        model = GARegressor(eta=0.1).partial_fit(signs.astype(dtype), Y)
        expected = GARegressor(eta=0.1).partial_fit(signs, Y)
        np.testing.assert_array_equal(model.coef_, expected.coef_)
        assert model.coef_.dtype == np.float64


def test_feature_names_are_recorded_and_checked():
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    model = GARegressor(eta=0.1).fit(frame, Y)
    np.testing.assert_array_equal(model.feature_names_in_, ["w", "x", "y", "z"])
    assert model.n_features_in_ == 4
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame.rename(columns={"w": "v"}))
    without = GARegressor(eta=0.1).fit(X, Y)
    assert not hasattr(without, "feature_names_in_")


def test_fit_resets_and_warm_start_continues():
    model = GARegressor(eta=0.1, max_iter=3, tol=None, shuffle=False)
    first = model.fit(X, Y).coef_.copy()
    np.testing.assert_array_equal(model.fit(X, Y).coef_, first)  # fit starts afresh
    assert model.t_ == 150 and model.n_iter_ == 3
    model.set_params(warm_start=True, max_iter=1)
    model.fit(X, Y)
    assert model.t_ == 200
    longer = GARegressor(eta=0.1, max_iter=4, tol=None, shuffle=False).fit(X, Y)
    np.testing.assert_allclose(model.coef_, longer.coef_, rtol=1e-12)


def test_fit_stops_when_the_online_loss_stops_improving():
    model = GARegressor(eta=0.1, max_iter=1000, tol=1e-3, random_state=0).fit(X, Y)
    assert model.n_iter_ < 1000
    assert model.t_ == 50 * model.n_iter_


def test_shuffle_follows_random_state():
    fit = [GARegressor(eta=0.1, max_iter=3, tol=None, random_state=seed).fit(X, Y)
           for seed in (0, 0, 1)]
    np.testing.assert_array_equal(fit[0].coef_, fit[1].coef_)
    assert not np.array_equal(fit[0].coef_, fit[2].coef_)


def test_multioutput_regression_shapes():
    Y2 = np.column_stack([Y, -Y, 0.5 * Y])
    model = GARegressor(phi="tanh", eta=0.1).partial_fit(X, Y2)
    assert model.coef_.shape == (3, 4) and model.intercept_.shape == (3,)
    assert model.predict(X).shape == (50, 3)
    single = GARegressor(phi="tanh", eta=0.1).partial_fit(X, Y)
    assert single.coef_.shape == (4,) and single.predict(X).shape == (50,)
    np.testing.assert_allclose(model.coef_[0], single.coef_, rtol=1e-12)


@pytest.mark.parametrize("phi", ["logistic", "tanh", "softmax"])
def test_classifier_probabilities_are_normalized(phi):
    labels = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    model = GAClassifier(phi=phi, eta=0.5, max_iter=20, tol=None, random_state=0)
    model.fit(X, labels)
    proba = model.predict_proba(X)
    assert proba.shape == (50, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba, rtol=1e-10)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)],
                                  model.predict(X))
    assert model.score(X, labels) > 0.8


def test_predictions_are_the_fitted_models_until_the_next_fit():
    # set_params takes effect at the next fit, as for any scikit-learn estimator: a
    # binary logistic model (one output) set to phi="softmax" (two outputs) must not
    # read its one row as a softmax of one class, nor a new Y clip its predictions.
    labels = np.where(Y > 0, "pos", "neg")
    classifier = GAClassifier(eta=0.1).fit(X, labels)
    proba = classifier.predict_proba(X)
    classifier.set_params(phi="softmax")
    np.testing.assert_array_equal(classifier.predict_proba(X), proba)
    np.testing.assert_array_equal(classifier.predict_log_proba(X), np.log(proba))
    classifier.set_params(phi="sign")
    assert hasattr(classifier, "predict_proba")  # the fitted phi has probabilities
    regressor = reference()
    predictions = regressor.predict(X)
    regressor.set_params(Y=0.01, phi="identity")
    np.testing.assert_array_equal(regressor.predict(X), predictions)
    # The next fit or partial_fit learns, and predicts, with the new parameters.
    regressor.partial_fit(X[:1], Y[:1])
    assert np.abs(regressor.predict(X)).max() <= 0.01
    classifier.set_params(phi="tanh").partial_fit(X[:1], labels[:1])
    A = classifier.decision_function(X)
    np.testing.assert_allclose(classifier.predict_proba(X)[:, 1], (1 + np.tanh(A)) / 2)
