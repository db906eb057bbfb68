"""Bad input gets a ValueError that says what is wrong, and loses nothing.

Every case runs against a fitted model and then checks that the model's state (all
its attributes, compared value by value) and its predictions are exactly what they
were before the failing call.
"""

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
from sklearn_ga._kernel import TrialLoop

from sklearn_ga import (
    PHI,
    PSI,
    GAClassifier,
    GAClassifierCV,
    GARegressor,
    GARegressorCV,
)
from sklearn_ga.losses import divergence, matching_loss, potential
from sklearn_ga.theory import input_bound

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(40, 4))
Y_REAL = X @ np.array([1.0, -2.0, 0.5, 0.0])
Y_UNIT = (Y_REAL - Y_REAL.min()) / np.ptp(Y_REAL)  # in [0, 1]
LABELS = np.where(Y_REAL > 0, "pos", "neg")


def with_value(array, index, value):
    array = array.astype(float).copy()
    array[index] = value
    return array


def state(model):
    """The model's attributes, by value, and its kept compiled loops' state: their
    terms, by their own serialization (a deepcopy drops them), their parameters,
    and whether the model's parameters are still theirs (its next call continues
    them). Not its training lock, nor the configuration that its parameters
    resolve to (made again after set_params)."""
    attributes = {name: value for name, value in vars(model).items()
                  if name not in ("_run", "_config", "_lock", "_grid", "_selected",
                                  "_finished_model")}
    values = copy.deepcopy(attributes)
    run = vars(model).get("_run")
    if run is not None:  # (its counters, rate state, averages; not its lock)
        values["_run"] = copy.deepcopy(run.__getstate__())
    kept = None if run is None else run.kept
    if kept is not None:
        values["_kept_loop"] = {
            "key": kept.key, "loop": loop_state(kept.loop),
            "theta": np.array(kept.theta), "intercept": np.array(kept.intercept),
            "holds": kept.holds(model.theta_, model.intercept_, kept.key)}
    # A CV estimator's grid (its runs' parameters, losses and loops) and the
    # models of its selected configuration, by value.
    grid = vars(model).get("_grid")
    if grid is not None:
        values["_grid"] = {
            "configs": grid.configs, "t": grid.t, "settings": grid.config.settings,
            "thetas": np.array(grid.thetas), "intercepts": np.array(grid.intercepts),
            "losses": np.array(grid.losses),
            "loops": {g: loop_state(loop) for g, loop in (grid.loops or {}).items()}}
    for name in ("_selected", "_finished_model"):
        held = vars(model).get(name)
        if held is not None:
            values[name] = state(held)
    return values


def loop_state(loop):
    num, den, buffers, touched, averages = loop.terms()
    return {"num": num, "den": den, "buffers": buffers, "touched": touched,
            "averages": averages}


def assert_same_state(before, after):
    assert before.keys() == after.keys()
    for name, value in before.items():
        if isinstance(value, dict):
            assert_same_state(value, after[name])
        elif isinstance(value, np.ndarray | list):
            np.testing.assert_array_equal(after[name], value, err_msg=name)
        else:
            assert after[name] == value, name


def fitted_regressor(**params):
    return GARegressor(eta=0.05, **params).partial_fit(X, Y_REAL)


def fitted_classifier(**params):
    return GAClassifier(eta=0.05, **params).partial_fit(X, LABELS,
                                                        classes=["neg", "pos"])


# (id, model factory, failing call, words the message must contain)
CASES = [
    ("nan-in-X-fit", fitted_regressor, lambda m: m.fit(with_value(X, (3, 1), np.nan),
                                                       Y_REAL), ["NaN"]),
    ("inf-in-X-partial_fit", fitted_regressor,
     lambda m: m.partial_fit(with_value(X, (0, 0), np.inf), Y_REAL), ["infinity"]),
    ("nan-in-y", fitted_regressor,
     lambda m: m.partial_fit(X, with_value(Y_REAL, 5, np.nan)), ["NaN"]),
    ("inf-in-y-classifier-X", fitted_classifier,
     lambda m: m.partial_fit(with_value(X, (2, 2), -np.inf), LABELS), ["infinity"]),
    # The kept loop learns the rows before the bad one: its terms, normalizers and
    # counters are put back (state() compares them).
    ("nan-in-a-later-csr-row", lambda: GARegressor(psi="eg_pm", eta=0.1).partial_fit(
        sp.csr_matrix(X), Y_REAL), lambda m: m.partial_fit(
        sp.csr_matrix(with_value(X, (39, 1), np.nan)), Y_REAL), ["NaN"]),
    # An averaging model's sums are put back with its loop (trial 71: the 31st of
    # the call).
    ("nan-in-a-later-csr-row-averaged", lambda: GARegressor(
        psi="eg_pm", eta=0.1, average=True).partial_fit(sp.csr_matrix(X), Y_REAL),
     lambda m: m.partial_fit(sp.csr_matrix(with_value(X, (39, 1), np.nan)), Y_REAL),
     ["NaN"]),
    ("diverges-in-a-later-row-averaged-from-5", lambda: GARegressor(
        psi="softmax", eta=0.1, average=5).partial_fit(X, Y_REAL),
     lambda m: m.partial_fit(with_value(X, (30, 2), 1e300), Y_REAL),
     ["diverged at trial 71"]),
    ("nan-in-X-predict", fitted_regressor,
     lambda m: m.predict(with_value(X, (1, 1), np.nan)), ["NaN"]),
    ("wrong-n-features-predict", fitted_regressor,
     lambda m: m.predict(X[:, :3]), ["3 features", "expecting 4"]),
    ("wrong-n-features-partial_fit", fitted_regressor,
     lambda m: m.partial_fit(np.hstack([X, X]), Y_REAL), ["8 features", "expecting 4"]),
    ("wrong-n-features-classifier", fitted_classifier,
     lambda m: m.decision_function(X[:, :2]), ["2 features"]),
    ("y-wrong-length", fitted_regressor,
     lambda m: m.partial_fit(X, Y_REAL[:-1]), ["inconsistent numbers of samples"]),
    ("y-outside-logistic",
     lambda: GARegressor(phi="logistic", eta=0.05).partial_fit(X, Y_UNIT),
     lambda m: m.partial_fit(X, Y_UNIT + 0.5), ["[0, 1]", "Rescale y"]),
    ("y-outside-tanh", lambda: GARegressor(phi="tanh", eta=0.05).partial_fit(
        X, 2 * Y_UNIT - 1),
     lambda m: m.partial_fit(X, Y_REAL), ["phi='tanh'", "[-1, 1]"]),
    ("y-negative-exp", lambda: GARegressor(phi="exp", eta=0.01).partial_fit(X, Y_UNIT),
     lambda m: m.partial_fit(X, Y_UNIT - 1), ["phi='exp'", "[0, inf]"]),
    ("y-off-simplex", lambda: GARegressor(phi="softmax", eta=0.05).partial_fit(
        X, np.column_stack([Y_UNIT, 1 - Y_UNIT])),
     lambda m: m.partial_fit(X, np.column_stack([Y_UNIT, Y_UNIT])), ["simplex"]),
    ("softmax-1d-y", lambda: GARegressor(phi="softmax", eta=0.05).partial_fit(
        X, np.column_stack([Y_UNIT, 1 - Y_UNIT])),
     lambda m: m.partial_fit(X, Y_UNIT), ["2-D targets"]),
    ("more-outputs-later", fitted_regressor,
     lambda m: m.partial_fit(X, np.column_stack([Y_REAL, Y_REAL])), ["output"]),
    ("unknown-psi", fitted_regressor,
     lambda m: m.set_params(psi="adagrad").fit(X, Y_REAL),
     ["'psi' parameter", "'eg_pm'", "'pnorm'"]),
    ("unknown-phi", fitted_regressor,
     lambda m: m.set_params(phi="relu").partial_fit(X, Y_REAL),
     ["'phi' parameter", "'arctan'", "'logistic'"]),
    ("classifier-phi-arctan", fitted_classifier,
     lambda m: m.set_params(phi="arctan").fit(X, LABELS),
     ["'phi' parameter", "'sign'"]),
    ("eta-zero", fitted_regressor, lambda m: m.set_params(eta=0).fit(X, Y_REAL),
     ["'eta' parameter", "range (0.0, inf)"]),
    ("eta-negative", fitted_regressor,
     lambda m: m.set_params(eta=-0.1).partial_fit(X, Y_REAL), ["'eta' parameter"]),
    ("U-zero", fitted_regressor,
     lambda m: m.set_params(U=0.0).partial_fit(X, Y_REAL), ["'U' parameter"]),
    ("p-below-2", fitted_regressor,
     lambda m: m.set_params(p=1.5).partial_fit(X, Y_REAL), ["'p' parameter"]),
    ("unseen-label", fitted_classifier,
     lambda m: m.partial_fit(X, np.where(Y_REAL > 1, "new", LABELS)),
     ["'new'", "classes"]),
    # Labels of another type than the fitted ones do not compare with them (str
    # against int in object arrays): still a ValueError, as for any unseen label.
    ("label-type-changed", lambda: GAClassifier(eta=0.05).fit(X, LABELS.astype(object)),
     lambda m: m.partial_fit(X, (Y_REAL > 0).astype(int)), ["[0, 1]", "classes"]),
    ("cv-label-type-changed",
     lambda: GAClassifierCV(etas=[0.01, 0.1]).fit(X, LABELS.astype(object)),
     lambda m: m.partial_fit(X, (Y_REAL > 0).astype(int)), ["[0, 1]", "classes"]),
    ("classes-changed", fitted_classifier,
     lambda m: m.partial_fit(X, LABELS, classes=["neg", "pos", "new"]), ["classes"]),
    ("continuous-y-classifier", fitted_classifier,
     lambda m: m.fit(X, Y_REAL), ["Unknown label type", "continuous"]),
    ("one-class", fitted_classifier,
     lambda m: m.fit(X, np.full(40, "pos")), ["at least 2 classes"]),
    ("empty-X", fitted_regressor,
     lambda m: m.partial_fit(X[:0], Y_REAL[:0]), ["0 sample"]),
    ("empty-predict", fitted_regressor, lambda m: m.predict(X[:0]), ["0 sample"]),
    ("3d-X", fitted_regressor,
     lambda m: m.partial_fit(X[:, :, None], Y_REAL), ["dim 3", "2"]),
    ("string-X", fitted_regressor,
     lambda m: m.partial_fit(X.astype(str).astype(object) + "x", Y_REAL), ["float"]),
    ("negative-sample-weight", fitted_regressor,
     lambda m: m.partial_fit(X, Y_REAL, sample_weight=-np.ones(40)),
     ["Negative values", "sample_weight"]),
    ("diverges", fitted_regressor,
     lambda m: m.set_params(eta=1e3).partial_fit(100 * X, Y_REAL),
     ["diverged at trial", "eta=1000", "StandardScaler"]),
    ("diverges-late-in-fit-warm-start", lambda: fitted_regressor(warm_start=True),
     lambda m: m.set_params(eta=0.5, tol=None, max_iter=20).fit(3 * X, 100 * Y_REAL),
     ["diverged at trial", "eta=0.5"]),
    ("complex-X", fitted_regressor,
     lambda m: m.partial_fit(X + 1j, Y_REAL), ["Complex data not supported"]),
    ("2d-y-classifier", fitted_classifier,
     lambda m: m.partial_fit(X, np.column_stack([LABELS, LABELS])),
     ["y should be a 1d"]),
    ("nan-predict_proba", fitted_classifier,
     lambda m: m.predict_proba(with_value(X, (0, 0), np.nan)), ["NaN"]),
    ("nan-score", fitted_classifier,
     lambda m: m.score(with_value(X, (0, 0), np.nan), LABELS), ["NaN"]),
    ("cv-nan-in-X", lambda: GARegressorCV(etas=[0.01, 0.1]).fit(X, Y_REAL),
     lambda m: m.partial_fit(with_value(X, (4, 3), np.nan), Y_REAL), ["NaN"]),
    ("cv-unseen-label", lambda: GAClassifierCV(etas=[0.01, 0.1]).fit(X, LABELS),
     lambda m: m.partial_fit(X, np.where(Y_REAL > 1, "new", LABELS)), ["'new'"]),
    ("cv-bad-etas", lambda: GARegressorCV(etas=[0.01, 0.1]).fit(X, Y_REAL),
     lambda m: m.set_params(etas=[0.1, 0.0]).partial_fit(X, Y_REAL),
     ["etas must hold positive"]),
    ("cv-grid-changed", lambda: GARegressorCV(etas=[0.01, 0.1]).fit(X, Y_REAL),
     lambda m: m.set_params(etas=[0.1, 0.2]).partial_fit(X, Y_REAL),
     ["grid", "first call"]),
    ("exp-overflows-in-predict", lambda: GARegressor(phi="exp", eta=0.01).partial_fit(
        X, Y_UNIT), lambda m: m.predict(1e6 * X), ["overflow"]),
]


@pytest.mark.parametrize(("make_model", "call", "words"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_raises_and_changes_nothing(make_model, call, words):
    model = make_model()
    before = state(model)
    predictions = model.predict(X)
    with pytest.raises(ValueError) as error:
        call(model)
    for word in words:
        assert re.search(re.escape(word), str(error.value)), (word, str(error.value))
    model.set_params(**{name: before[name] for name in model.get_params()})
    assert_same_state(before, state(model))
    np.testing.assert_array_equal(model.predict(X), predictions)


def test_partial_fit_needs_classes_on_first_call():
    model = GAClassifier(eta=0.1)
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        model.partial_fit(X, LABELS)
    assert not hasattr(model, "coef_")


def test_first_partial_fit_with_labels_of_another_type_than_classes():
    model = GAClassifier(eta=0.1)
    with pytest.raises(ValueError, match="not among the classes"):
        model.partial_fit(X, LABELS.astype(object), classes=[0, 1])
    assert not hasattr(model, "coef_")


def test_predict_before_fit_says_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted yet"):
        GARegressor().predict(X)


@pytest.mark.parametrize("make_model, y", [
    (GARegressor, Y_REAL), (GAClassifier, LABELS),
    (lambda: GARegressorCV(etas=[0.01, 0.1]), Y_REAL),
    (lambda: GAClassifierCV(etas=[0.01, 0.1]), LABELS),
], ids=["regressor", "classifier", "regressor-cv", "classifier-cv"])
def test_fitted_only_after_a_fit_that_succeeds(make_model, y):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    model = make_model()
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    with pytest.raises(ValueError):
        model.fit(with_value(X, (3, 1), np.nan), y)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    check_is_fitted(model.fit(X, y))


def test_sign_classifier_has_no_probabilities():
    model = fitted_classifier(phi="sign")
    assert not hasattr(model, "predict_proba")
    assert not hasattr(model, "predict_log_proba")
    with pytest.raises(AttributeError) as error:
        model.predict_proba(X)
    assert "no probabilistic predictions" in str(error.value.__cause__)


def test_binary_softmax_scores_that_overflow_are_an_error():
    # The score is the difference of the two activations, each finite (1.5e308
    # and its negative): their difference is not, and was returned as inf.
    rng = np.random.default_rng(0)
    X_train = rng.standard_normal((100, 2))
    model = GAClassifier(phi="softmax", eta=0.5, fit_intercept=False)
    model.fit(X_train, (X_train[:, 0] > 0).astype(int))
    x = np.array([[1.5e308 / np.abs(model.coef_[:, 0]).max(), 0.0]])
    assert np.all(np.isfinite(x @ model.coef_.T))
    with pytest.raises(ValueError, match="activations .* overflowed"):
        model.decision_function(x)
    np.testing.assert_array_equal(model.predict(x), [1])


@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_theory_rate_that_overflows_is_an_error(psi):
    # Inputs of 1e-160 bound b by 2e-320 (b = max ||x||^2 for GD; U^2-scaled for
    # EG+-): 1 / (2 b c) is not a number, and the fit had run with eta = inf.
    X_tiny = np.full((3, 2), 1e-160)
    model = GARegressor(psi=psi, U=1e-160 if psi == "eg_pm" else 1.0,
                        fit_intercept=False)
    with pytest.raises(ValueError, match="eta='theory' is not available: .*rate "
                                         "overflows.* Scale the inputs"):
        model.fit(X_tiny if psi == "identity" else X_tiny * 1e160, [0.5, 1.0, 2.0])
    assert not hasattr(model, "coef_")


def dia(X):
    return sp.dia_matrix(X)


def unsorted_csr(X):
    """The same matrix with each row's column indices reversed."""
    csr = sp.csr_matrix(X)
    data, indices = csr.data.copy(), csr.indices.copy()
    for start, stop in zip(csr.indptr[:-1], csr.indptr[1:], strict=True):
        data[start:stop] = data[start:stop][::-1]
        indices[start:stop] = indices[start:stop][::-1]
    shuffled = sp.csr_matrix((data, indices, csr.indptr), shape=csr.shape)
    assert not shuffled.has_sorted_indices
    return shuffled


@pytest.mark.parametrize("convert", [dia, unsorted_csr, sp.csc_array],
                         ids=["dia", "unsorted-csr", "csc_array"])
def test_other_sparse_layouts_learn_like_dense(convert):
    expected = GARegressor(psi="eg_pm", eta=0.05, U=3.0).partial_fit(X, Y_REAL)
    model = GARegressor(psi="eg_pm", eta=0.05, U=3.0).partial_fit(convert(X), Y_REAL)
    np.testing.assert_allclose(model.coef_, expected.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.predict(convert(X)), expected.predict(X),
                               rtol=1e-12)


def test_one_sample_and_one_feature():
    one_sample = GARegressor(eta=0.1).partial_fit(X[:1], Y_REAL[:1])
    np.testing.assert_allclose(one_sample.coef_, 0.1 * Y_REAL[0] * X[0])
    one_feature = GARegressor(eta=0.1).fit(X[:, :1], 2 * X[:, 0])
    assert one_feature.coef_.shape == (1,)
    np.testing.assert_allclose(one_feature.coef_, [2.0], atol=1e-3)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: divergence(np.zeros((2, 3)), np.full((2, 3), np.inf), psi="softmax"),
     "theta contains infinity"),
    (lambda: divergence(np.zeros(3), [0.0, np.nan, 1.0], psi="eg_pm"), "NaN"),
    (lambda: potential([np.inf, 0.0], psi="exp"), "z contains infinity"),
    (lambda: matching_loss([0.5, np.nan], [0.5, 0.5], phi="logistic"), "NaN"),
    (lambda: matching_loss([0.5, 2.0], [0.5, 0.5], phi="logistic"), "[0, 1]"),
    (lambda: matching_loss([0.5], [0.5, 0.5], phi="tanh"), "shape"),
    (lambda: matching_loss([0.5], [0.5], phi="relu"), "choose one of"),
    (lambda: input_bound(with_value(X, (0, 0), np.nan), "identity"), "NaN"),
], ids=["divergence-inf", "divergence-nan", "potential-inf", "loss-nan",
        "loss-range", "loss-shape", "loss-phi", "bound-nan"])
def test_loss_and_theory_functions_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


@pytest.mark.parametrize("tol", [1e-3, None])
@pytest.mark.usefixtures("without_runaway_check")
def test_a_growing_loss_is_reported_not_taken_for_convergence(tol):
    # eta ||x||^2 > 2: every GD step overshoots and the weights grow geometrically
    # while staying finite; the loss rises from epoch to epoch. (The runaway check
    # stops this run in its first epoch: tests/test_rates.py.)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = X @ np.array([1.0, -1.0, 0.5, 0.0])
    with pytest.warns(ConvergenceWarning, match="loss grew.*smaller eta"):
        model = GARegressor(eta=0.6, tol=tol, max_iter=8, random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.max(np.abs(model.coef_)) > 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GARegressor(eta=0.05, tol=tol, max_iter=8, random_state=0).fit(X, y)


@pytest.mark.parametrize("classes, message", [
    (["a", "b", 3], "Mix of label input types"),
    ([0, 1, 2.5], "Unknown label type"),
    ([[0, 1], [1, 0]], "1-D array is needed"),
])
def test_partial_fit_rejects_classes_that_are_not_labels(classes, message):
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    model = GAClassifier()
    expected = f"are not class labels: .*{message}.*np.unique"
    with pytest.raises(ValueError, match=expected):
        model.partial_fit(X, [0, 1], classes=classes)
    assert not hasattr(model, "classes_")
    model.partial_fit(X, [0, 1], classes=[0, 1])
    before, coef = copy.deepcopy(model.__dict__), model.coef_.copy()
    with pytest.raises(ValueError, match="are not class labels"):
        model.partial_fit(X, [0, 1], classes=classes)
    assert set(model.__dict__) == set(before)
    np.testing.assert_array_equal(model.coef_, coef)


@pytest.mark.parametrize("make_model, change", [
    (lambda: GAClassifier(phi="logistic", eta=0.1), {"phi": "softmax"}),
    (lambda: GAClassifier(phi="softmax", eta=0.1), {"phi": "tanh"}),
    (lambda: GAClassifierCV(phi="logistic", etas=[0.1, 1.0]), {"phi": "softmax"}),
])
def test_a_phi_with_another_number_of_outputs_cannot_continue(make_model, change):
    # Binary logistic learns one output, softmax two: the state cannot carry over.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    model = make_model().partial_fit(X, y, classes=[0, 1])
    before = copy.deepcopy(model.__dict__)
    model.set_params(**change)
    with pytest.raises(ValueError, match="output.*call fit"):
        model.partial_fit(X, y)
    np.testing.assert_array_equal(model.theta_, before["theta_"])
    if "warm_start" in model.get_params():
        model.set_params(warm_start=True, max_iter=3, tol=None)
        with pytest.raises(ValueError, match="output"):
            model.fit(X, y)
        np.testing.assert_array_equal(model.theta_, before["theta_"])


@pytest.mark.parametrize("make_model", [
    lambda: GARegressor(eta=0.1), lambda: GARegressorCV(etas=[0.1, 1.0]),
])
def test_another_psi_cannot_continue_the_stream(make_model):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X[:, 0]
    model = make_model().partial_fit(X, y)
    before = copy.deepcopy(model.__dict__)
    model.set_params(psi="sphere")
    with pytest.raises(ValueError, match="psi='identity'.*call fit"):
        model.partial_fit(X, y)
    np.testing.assert_array_equal(model.theta_, before["theta_"])
    model.set_params(psi="identity").partial_fit(X, y)  # set back: continues


def test_theory_rate_follows_the_parameters_it_depends_on():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = np.tanh(X[:, 0])
    model = GARegressor(eta=0.5).partial_fit(X, y)
    model.set_params(eta="theory").partial_fit(X, y)
    assert model.eta_ == GARegressor().partial_fit(X, y).eta_
    pm = GARegressor(psi="eg_pm", U=1.0).partial_fit(X, y)
    first = pm.eta_
    pm.partial_fit(X, 2 * y)  # same parameters: the first batch's rate stays
    assert pm.eta_ == first
    pm.set_params(U=100.0).partial_fit(X, y)
    assert pm.eta_ == GARegressor(psi="eg_pm", U=100.0).partial_fit(X, y).eta_
    assert pm.eta_ < first / 1000


def test_the_compiled_loop_refuses_rows_or_targets_of_another_width():
    # The loop reads without bounds checks: a caller's shape error must not read
    # past the arrays.
    loop = TrialLoop(PSI["identity"].code, PHI["identity"].code, np.zeros((1, 3)),
                     np.zeros(1), 0.1, 1.0, 2.0, True)
    order, no_weights = np.arange(4, dtype=np.intp), np.empty(0)
    for X, Y in ((np.zeros((4, 3)), np.zeros((4, 2))), (np.zeros((4, 2)),
                                                         np.zeros((4, 1)))):
        with pytest.raises(ValueError, match="TrialLoop of 1 x 3 parameters"):
            loop.run_dense(X, Y, no_weights, order)
    X = sp.csr_matrix(np.ones((4, 3)))
    with pytest.raises(ValueError, match="2 targets"):
        loop.run_csr(X.data, X.indices, X.indptr, 3, np.zeros((4, 2)), no_weights,
                     order)
    # A CSR matrix of 40 columns (another thread may have refitted the model on 3
    # features after X was validated: this crashed the interpreter).
    wide = sp.csr_matrix(np.ones((4, 40)))
    with pytest.raises(ValueError, match="rows of 40 features"):
        loop.run_csr(wide.data, wide.indices, wide.indptr, 40, np.zeros((4, 1)),
                     no_weights, order)
    # Targets, weights and the order of another length than the rows.
    for Y, weights, trials in ((np.zeros((3, 1)), no_weights, order),
                               (np.zeros((4, 1)), np.ones(3), order),
                               (np.zeros((4, 1)), no_weights, order + 1)):
        with pytest.raises(ValueError, match="4 rows"):
            loop.run_dense(np.zeros((4, 3)), Y, weights, trials)
        with pytest.raises(ValueError, match="4 rows"):
            loop.run_csr(X.data, X.indices, X.indptr, 3, Y, weights, trials)
    with pytest.raises(ValueError, match="intercept"):
        TrialLoop(PSI["identity"].code, PHI["identity"].code, np.zeros((2, 3)),
                  np.zeros(1), 0.1, 1.0, 2.0, True)


def test_later_partial_fit_calls_check_labels_as_the_first_does():
    # Later calls compare classes= and y with the fitted classes instead of
    # re-running scikit-learn's label checks; the outcomes must be the same.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    labels = np.array([0, 1, 2] * 10)
    fresh = GAClassifier(eta=0.1)
    fitted = GAClassifier(eta=0.1).partial_fit(X, labels, classes=[0, 1, 2])
    for model, kwargs in ((fresh, {"classes": [0, 1, 2]}), (fitted, {})):
        with pytest.raises(ValueError, match="Unknown label type"):
            model.partial_fit(X, labels + 0.5, **kwargs)
    for bad in ([0, 1], [0, 1, 3], ["a", "b", 3]):
        with pytest.raises(ValueError, match="classes="):
            fitted.partial_fit(X, labels, classes=bad)
    with pytest.warns(DataConversionWarning):
        fitted.partial_fit(X, labels[:, None])
    fitted.partial_fit(X, labels.astype(float), classes=np.array([0, 1, 2]))
    np.testing.assert_array_equal(fitted.classes_, [0, 1, 2])


def test_an_overflowing_loss_sum_is_an_error():
    # Steps s * eta are ordinary (0.1), but the losses weighted by s = 1e308 overflow.
    X = np.array([[1.0, 0.5], [0.5, -1.0], [1.0, 1.0]])
    model = GARegressor(eta=1e-309, max_iter=1, tol=None)
    with pytest.raises(ValueError, match="diverged at trial 3 .* losses overflowed"):
        model.fit(X, [3.0, -2.0, 1.0], sample_weight=[1e308, 1e308, 1e308])
    assert not hasattr(model, "coef_")


def test_divergence_found_at_the_end_of_a_batch_names_its_last_trial():
    model = GARegressor(eta=1e10)
    with pytest.raises(ValueError, match="diverged at trial 1 "):
        model.partial_fit([[1e300]], [1.0])


@pytest.mark.parametrize("psi", ["sphere", "simplex"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_a_geodesic_step_whose_input_norm_overflows_is_an_error(psi, sparse):
    # |x|^2 = 1e310 overflows: the step's length is not finite. It was skipped
    # without a word on dense rows (the trial counted, the weights unmoved).
    model = GARegressor(psi=psi, phi="tanh", eta=1e-3, fit_intercept=False)
    model.partial_fit([[1.0, 0.0, 0.0]], [0.5])
    before = pickle.dumps(model)
    X = np.array([[1e155, 0.0, 0.0]])
    with pytest.raises(ValueError, match="diverged at trial 2 .* scale the inputs"):
        model.partial_fit(sp.csr_matrix(X) if sparse else X, [-1.0])
    assert pickle.dumps(model) == before
    # A step of 1e154 still moves the weights.
    moved = model.partial_fit(X / 10, [-1.0]).coef_
    assert not np.allclose(moved, pickle.loads(before).coef_)


def test_a_sphere_of_radius_1e155_takes_its_steps():
    # c = omega . x is about U |x|: c^2 overflowed, though the step is finite (an
    # arc of eta |r| g, invisible on this radius), and the trial was reported as
    # diverged.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([-0.5, 0.5, 0.1])
    model = GARegressor(psi="sphere", phi="tanh", U=1e155, eta=1e-3,
                        fit_intercept=False).partial_fit(X, y)
    assert np.linalg.norm(model.coef_ / 1e155) == pytest.approx(1.0, rel=1e-12)
    assert model.t_ == 3


def test_restart_hints_name_only_parameters_the_estimator_has():
    # The CV estimators have no warm_start: their fit always starts over.
    search = GAClassifierCV(etas=[0.01, 0.1]).fit(X, LABELS)
    with pytest.raises(ValueError, match="call fit to start over") as error:
        search.partial_fit(X, np.where(Y_REAL > 1, "new", LABELS))
    assert "warm_start" not in str(error.value)
    search = GARegressorCV(etas=[0.01, 0.1]).fit(X, Y_REAL).set_params(psi="eg_pm")
    with pytest.raises(ValueError, match="call fit to start over") as error:
        search.partial_fit(X, Y_REAL)
    assert "warm_start" not in str(error.value)
    with pytest.raises(ValueError, match="fit with warm_start=False"):
        fitted_classifier().partial_fit(X, np.where(Y_REAL > 1, "new", LABELS))
