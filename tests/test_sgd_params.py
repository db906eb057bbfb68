"""The controls shared with scikit-learn's SGD: class_weight, coef_init and
intercept_init, early_stopping on a validation split.

Each is checked against an independent reference: the equivalent sample weights
(written from the "balanced" formula), SGDRegressor / SGDClassifier where the
mathematics coincides (psi = identity, constant rate, no penalty, no shuffling), and
the plain-NumPy transcriptions of KW01 Figure 5 (tests/test_reference.py) and of
KMWW's geodesic steps (tests/test_updates.py) started from the given weights.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from test_reference import ETA, P, U, figure5, make_inputs, regression_targets
from test_updates import oracle

from sklearn_ga import PSI, GAClassifier, GAClassifierCV, GARegressor

SGD = {"penalty": None, "learning_rate": "constant", "eta0": ETA, "shuffle": False}
GEODESIC = [name for name in PSI if PSI[name].geodesic]
ADDITIVE = [name for name in PSI if not PSI[name].geodesic]


def _as(X, sparse):
    return sp.csr_matrix(X) if sparse else X


def _state(model):
    return (np.array(model.coef_), np.array(model.intercept_), model.cumulative_loss_,
            model.t_)


def assert_same_state(a, b, rtol=1e-12):
    for left, right in zip(_state(a), _state(b), strict=True):
        np.testing.assert_allclose(left, right, rtol=rtol, atol=1e-14)


def balanced(labels):
    """n_samples / (n_classes * count of the label), written from its definition."""
    classes, codes, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return labels.shape[0] / (classes.shape[0] * counts[codes])


# -- class_weight -------------------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(("psi", "phi"), [("identity", "logistic"),
                                          ("eg_pm", "softmax"), ("sphere", "tanh"),
                                          ("softmax", "sign")])
def test_balanced_is_the_equivalent_sample_weight(psi, phi, n_classes, sparse):
    rng = np.random.default_rng(0)
    X = _as(make_inputs(rng, 90, 6, sparse), sparse)
    frequencies = np.array([0.7, 0.2, 0.1])[:n_classes]
    labels = rng.choice(np.array(["a", "b", "c"])[:n_classes], size=90,
                        p=frequencies / frequencies.sum())
    weights = rng.uniform(0.2, 2.0, size=90)
    params = {"psi": psi, "phi": phi, "eta": ETA, "U": U, "max_iter": 3, "tol": None,
              "random_state": 0}
    weighted = GAClassifier(class_weight="balanced", **params).fit(
        X, labels, sample_weight=weights)
    plain = GAClassifier(**params).fit(X, labels,
                                       sample_weight=weights * balanced(labels))
    assert_same_state(weighted, plain)
    assert not np.allclose(weighted.coef_, GAClassifier(**params).fit(
        X, labels, sample_weight=weights).coef_)


def test_class_weight_dict_is_sgd_classifiers():
    """Binary log loss: SGDClassifier multiplies the step by the class's weight."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 5))
    y = np.where(X @ rng.normal(size=5) + rng.normal(size=120) > 0.5, 7, 3)
    class_weight = {3: 0.5, 7: 3.0}
    ga = GAClassifier(eta=ETA, class_weight=class_weight)
    sgd = SGDClassifier(loss="log_loss", class_weight=class_weight, **SGD)
    for rows in np.split(np.arange(120), [50]):
        ga.partial_fit(X[rows], y[rows], classes=[3, 7])
        sgd.partial_fit(X[rows], y[rows], classes=[3, 7])
        np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)


def test_balanced_partial_fit_as_sgd_classifier():
    """Refused on the first call, as SGDClassifier does; after fit, each call
    balances its own batch."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4))
    y = (rng.uniform(size=60) < 0.3).astype(int)
    for model in (GAClassifier(eta=ETA, class_weight="balanced"),
                  SGDClassifier(class_weight="balanced")):
        with pytest.raises(ValueError, match="not supported for partial_fit"):
            model.partial_fit(X, y, classes=[0, 1])
        assert not hasattr(model, "classes_")
    params = {"eta": ETA, "max_iter": 2, "tol": None, "random_state": 0}
    weighted = GAClassifier(class_weight="balanced", **params).fit(X[:40], y[:40])
    weighted.partial_fit(X[40:], y[40:])
    plain = GAClassifier(**params).fit(X[:40], y[:40],
                                       sample_weight=balanced(y[:40]))
    plain.partial_fit(X[40:], y[40:], sample_weight=balanced(y[40:]))
    assert_same_state(weighted, plain)
    before = _state(weighted)
    with pytest.raises(ValueError, match="class_weight='balanced'.*every class"):
        weighted.partial_fit(X[:3], [1, 1, 1])
    for was, now in zip(before, _state(weighted), strict=True):
        np.testing.assert_array_equal(was, now)


@pytest.mark.parametrize(("class_weight", "message"), [
    ({0: 1.0, 5: 2.0}, "not in class_weight"),
    ({0: -1.0}, "finite non-negative"),
    ({1: np.inf}, "finite non-negative"),
])
def test_bad_class_weight_leaves_the_model(class_weight, message):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 3)), np.arange(30) % 2
    model = GAClassifier(eta=ETA).partial_fit(X, y, classes=[0, 1])
    before = _state(model)
    model.set_params(class_weight=class_weight)
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X, y)
    for was, now in zip(before, _state(model), strict=True):
        np.testing.assert_array_equal(was, now)
    with pytest.raises(ValueError, match=message):
        GAClassifier(eta=ETA, class_weight=class_weight).fit(X, y)


def test_set_class_weight_between_partial_fit_calls():
    """set_params(class_weight=...) weighs the calls after it, not those before."""
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(80, 3)), rng.integers(0, 3, size=80)
    class_weight = {0: 2.0, 1: 0.5, 2: 1.0}
    model = GAClassifier(phi="softmax", eta=ETA).partial_fit(X[:40], y[:40],
                                                             classes=[0, 1, 2])
    model.set_params(class_weight=class_weight).partial_fit(X[40:], y[40:])
    plain = GAClassifier(phi="softmax", eta=ETA).partial_fit(X[:40], y[:40],
                                                             classes=[0, 1, 2])
    plain.partial_fit(X[40:], y[40:], sample_weight=np.array([2.0, 0.5, 1.0])[y[40:]])
    assert_same_state(model, plain)


@pytest.mark.parametrize("cv", [None, 3])
def test_cv_classifier_class_weight_is_the_equivalent_sample_weight(cv):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 4))
    y = np.digitize(X @ rng.normal(size=4) + rng.normal(size=150), [0.8, 1.6])
    grid = {"phi": "softmax", "etas": [0.01, 0.1, 1.0], "cv": cv, "random_state": 0}
    weighted = GAClassifierCV(class_weight="balanced", **grid).fit(X, y)
    plain = GAClassifierCV(**grid).fit(X, y, sample_weight=balanced(y))
    assert_same_state(weighted, plain)
    np.testing.assert_allclose(weighted.cv_results_["mean_test_loss"],
                               plain.cv_results_["mean_test_loss"], rtol=1e-12)
    if cv is None:
        weighted.partial_fit(X[:20], y[:20])
        plain.partial_fit(X[:20], y[:20], sample_weight=balanced(y[:20]))
        assert_same_state(weighted, plain)


# -- coef_init, intercept_init ------------------------------------------------------

def weights_in_range(psi, rng, k, n):
    """Random weights of psi's range, some near its edges."""
    if psi in ("softmax", "simplex"):
        W = rng.dirichlet(np.full(n, 0.3), size=k)
        return np.maximum(W, 1e-30) / np.maximum(W, 1e-30).sum(axis=1, keepdims=True)
    if psi in ("exp", "burg"):
        return rng.exponential(size=(k, n)) + 1e-20
    W = rng.normal(size=(k, n))
    if psi == "eg_pm":
        return W / np.abs(W).sum(axis=1, keepdims=True) * U * np.array(
            [0.5, 0.999, 1e-3][:k])[:, None]
    if psi == "sphere":
        return U * W / np.linalg.norm(W, axis=1, keepdims=True)
    return W


@pytest.mark.parametrize("psi", PSI)
def test_inverse_of_psi_gives_the_weights_back(psi):
    rng = np.random.default_rng(6)
    for p in (2.0, 3.0, 40.0):
        W = weights_in_range(psi, rng, 3, 9)
        theta = PSI[psi].inverse(W, U, p)
        np.testing.assert_allclose(PSI[psi].weights(theta, U, p), W, rtol=1e-11,
                                   atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("psi", PSI)
def test_fit_starts_from_coef_init(psi, k, sparse):
    """One epoch without shuffling from coef_init is the on-line run of the papers
    started from those weights."""
    rng = np.random.default_rng(7)
    X = make_inputs(rng, 50, 6, sparse)
    Y = regression_targets("tanh", rng, 50, k)
    W, b = weights_in_range(psi, rng, k, 6), rng.uniform(-0.5, 0.5, size=k)
    coef, intercept = (W[0], b[0]) if k == 1 else (W, b)
    model = GARegressor(psi=psi, phi="tanh", eta=ETA, U=U, p=P, max_iter=1,
                        tol=None, shuffle=False)
    model.fit(_as(X, sparse), Y[:, 0] if k == 1 else Y, coef_init=coef,
              intercept_init=intercept)
    if PSI[psi].geodesic:
        weights, intercepts, total, _ = oracle(psi, "tanh", X, Y, start=(W, b))
    else:
        weights, intercepts, total = figure5(psi, "tanh", X, Y, start=(W, b))
    np.testing.assert_allclose(np.reshape(model.coef_, (k, 6)), weights, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(model.intercept_, intercepts, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.cumulative_loss_, total, rtol=1e-9)


def test_coef_init_is_sgd_regressors():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 4))
    y = X @ rng.normal(size=4) + 0.3
    coef, intercept = rng.normal(size=4), np.array([1.5])
    ga = GARegressor(eta=ETA, max_iter=3, tol=None, shuffle=False, average=False)
    ga.fit(X, y, coef_init=coef, intercept_init=intercept)
    sgd = SGDRegressor(max_iter=3, tol=None, **SGD).fit(
        X, y, coef_init=coef, intercept_init=intercept)
    np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10)
    np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)
    fixed = GARegressor(eta=ETA, fit_intercept=False).fit(X, y, intercept_init=2.0)
    np.testing.assert_array_equal(fixed.intercept_, [2.0])  # as SGD's: it stays


def test_coef_init_with_warm_start_replaces_the_fitted_weights():
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    params = {"eta": ETA, "max_iter": 2, "tol": None, "shuffle": False}
    model = GARegressor(warm_start=True, **params).fit(X, y)
    fitted_intercept = model.intercept_.copy()
    coef = np.array([1.0, -1.0, 0.5])
    model.fit(X, y, coef_init=coef)
    assert model.t_ == 160  # the fit continued
    fresh = GARegressor(**params).fit(X, y, coef_init=coef,
                                      intercept_init=fitted_intercept)
    np.testing.assert_array_equal(model.coef_, fresh.coef_)
    np.testing.assert_array_equal(model.intercept_, fresh.intercept_)


@pytest.mark.parametrize(("psi", "coef", "message"), [
    ("softmax", [0.5, 0.6, -0.1], "probability simplex"),
    ("softmax", [0.5, 0.5, 0.0], "positive"),
    ("eg_pm", [1.0, -1.0, 0.5], "strictly inside the l1 ball"),
    ("exp", [1.0, 0.0, 2.0], "positive"),
    ("burg", [1.0, -2.0, 2.0], "positive"),
    ("sphere", [1.0, 1.0, 1.0], "sphere of radius"),
    ("simplex", [0.2, 0.2, 0.2], "probability simplex"),
    ("identity", [1.0, np.nan, 0.0], "NaN or infinity"),
    ("identity", [1.0, 2.0], r"shape \(2,\).*\(1, 3\)"),
    ("identity", [[1.0, 2.0, 3.0]] * 2, r"shape \(2, 3\)"),
])
def test_coef_init_outside_the_range_of_psi(psi, coef, message):
    rng = np.random.default_rng(10)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    model = GARegressor(psi=psi, eta=ETA, U=U, warm_start=True).fit(X, y)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=message):
        model.fit(X, y, coef_init=coef)
    assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match="intercept_init has shape"):
        model.fit(X, y, intercept_init=[0.0, 1.0])


# -- early stopping -----------------------------------------------------------------

def test_early_stopping_is_sgd_regressors():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, 30))
    y = X[:, 0] + rng.normal(size=200)
    params = {"max_iter": 100, "tol": 1e-4, "n_iter_no_change": 3,
              "early_stopping": True, "validation_fraction": 0.2, "random_state": 4}
    ga = GARegressor(eta=ETA, shuffle=False, average=False, **params).fit(X, y)
    sgd = SGDRegressor(**SGD, **params).fit(X, y)
    assert 3 < ga.n_iter_ == sgd.n_iter_ < 100
    np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10)
    np.testing.assert_allclose(ga.intercept_, sgd.intercept_, rtol=1e-10)


def test_early_stopping_is_sgd_classifiers():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(300, 20))
    y = np.where(X[:, 0] + 2 * rng.normal(size=300) > 0, "yes", "no")
    params = {"max_iter": 100, "tol": 1e-3, "n_iter_no_change": 2,
              "early_stopping": True, "random_state": 1}
    ga = GAClassifier(eta=ETA, shuffle=False, **params).fit(X, y)
    sgd = SGDClassifier(loss="log_loss", **SGD, **params).fit(X, y)
    assert ga.n_iter_ == sgd.n_iter_ < 100
    np.testing.assert_allclose(ga.coef_, sgd.coef_, rtol=1e-10)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_early_stopping_watches_the_validation_score(sparse):
    """More features than samples: the on-line loss on the training rows falls
    epoch after epoch while the held-out R^2 peaks and falls. fit stops
    n_iter_no_change epochs after the best score and keeps the last model: the
    plain fit of as many epochs on the training rows."""
    rng = np.random.default_rng(13)
    X = make_inputs(rng, 100, 150, sparse)
    y = X[:, 0] + 0.5 * rng.normal(size=100)
    params = {"eta": 0.005, "random_state": 0}
    model = GARegressor(early_stopping=True, validation_fraction=0.3,
                        n_iter_no_change=4, tol=0.0, max_iter=200, **params)
    model.fit(_as(X, sparse), y)
    scores = model.validation_scores_
    best = int(np.argmax(scores))
    assert model.n_iter_ == scores.shape[0] == best + 1 + 4 < 200
    train, held = next(ShuffleSplit(test_size=0.3, random_state=0).split(X))
    train.sort()
    losses = []
    for epochs in range(1, model.n_iter_ + 1):
        plain = GARegressor(max_iter=epochs, tol=None, **params)
        plain.fit(_as(X[train], sparse), y[train])
        assert plain.score(X[held], y[held]) == pytest.approx(scores[epochs - 1],
                                                              rel=1e-12)
        losses.append(plain.cumulative_loss_ - sum(losses))
    assert np.all(np.diff(losses) < 0)  # the training loss keeps falling
    assert np.all(scores[best + 1:] < scores[best])  # the validation score does not
    assert_same_state(model, plain)


def test_early_stopping_split_is_stratified():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(60, 3))
    y = np.repeat([0, 1, 2], [40, 10, 10])
    model = GAClassifier(phi="softmax", eta=ETA, early_stopping=True,
                         validation_fraction=0.1, max_iter=3, tol=None,
                         random_state=2).fit(X, y)
    _, held = next(StratifiedShuffleSplit(test_size=0.1, random_state=2).split(X, y))
    assert set(y[held]) == {0, 1, 2}
    assert model.t_ == 3 * (60 - held.size)
    assert model.validation_scores_.shape == (3,)


def test_early_stopping_refusals():
    rng = np.random.default_rng(15)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    model = GARegressor(eta=ETA, early_stopping=True)
    with pytest.raises(ValueError, match="early_stopping should be False"):
        model.partial_fit(X, y)
    assert not hasattr(model, "theta_")
    _, held = next(ShuffleSplit(test_size=0.1, random_state=0).split(X))
    weights = np.ones(30)
    weights[held] = 0.0
    with pytest.raises(ValueError, match="validation set are all zero"):
        model.set_params(random_state=0).fit(X, y, sample_weight=weights)
    assert not hasattr(model, "theta_")
    model.fit(X, y)  # partial_fit after fit continues, as SGD's
    assert model.validation_scores_ is not None
    model.partial_fit(X, y)
    assert model.validation_scores_ is None
    assert GARegressor(eta=ETA).fit(X, y).validation_scores_ is None
