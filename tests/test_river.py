"""sklearn_ga.river: River's own estimator checks; the River learners against the
scikit-learn estimators, River's LogisticRegression and a plain-NumPy oracle of a
stream whose features and classes appear as it goes; atomicity and pickling."""

import importlib
import pickle
import sys

import numpy as np
import pandas as pd
import pytest
from river import checks, datasets, linear_model, optim
from test_reference import oracle_transfer_and_loss, oracle_weights

from sklearn_ga import PSI
from sklearn_ga import GAClassifier as SklearnClassifier
from sklearn_ga import GARegressor as SklearnRegressor
from sklearn_ga.river import GAClassifier, GARegressor

# -- River's checks ------------------------------------------------------------------


def _river_checks():
    for learner in (GARegressor, GAClassifier):
        for params in learner._unit_test_params():
            model = learner(**params)
            for check in checks.yield_checks(model):
                name = f"{learner.__name__}({params})-{check.__name__}"
                yield pytest.param(model, check, id=name)


@pytest.mark.parametrize(("model", "check"), list(_river_checks()))
def test_river_check_estimator(model, check):
    # river.checks.check_estimator, one check at a time.
    assert not model._unit_test_skips()
    check(model.clone())


def test_import_without_river_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "river", None)
    monkeypatch.delitem(sys.modules, "sklearn_ga.river")
    with pytest.raises(ImportError, match=r"pip install 'sklearn-ga\[river\]'"):
        importlib.import_module("sklearn_ga.river")


# -- a stream whose features come and go ---------------------------------------------


def emerging_stream(m=80, seed=0):
    """Rows of up to 8 features: feature j is in the stream from row 6 j on, and each
    row holds a random part of those (at least one); targets from a linear model."""
    rng = np.random.default_rng(seed)
    names = list("hgfedcba")  # (the learners order a row's new features by name)
    rows = []
    for t in range(m):
        present = [name for j, name in enumerate(names) if 6 * j <= t]
        keep = rng.random(len(present)) < 0.7
        keep[rng.integers(len(present))] = True
        x = {name: float(rng.normal()) for name, kept in zip(present, keep,
                                                             strict=True) if kept}
        rows.append((x, 0.5 * sum(x.values()) + 0.1 * rng.normal()))
    return rows


def dense_row(x, columns):
    return np.array([[x.get(name, 0.0) for name in columns]])


def sklearn_on_stream(rows, **params):
    """sklearn_ga.GARegressor through one-row partial_fit calls, a row bringing new
    features adding columns to theta_ at Theta_1's value (set in its attributes:
    an assigned theta_ must keep the fitted shape), so that the next call builds
    its loop on them. Returns the model and its column names."""
    model, columns = SklearnRegressor(**params), []
    for x, y in rows:
        new = sorted(name for name in x if name not in columns)
        if new and columns:
            start = np.full((1, len(new)), PSI[model.psi].start)
            model.__dict__["theta_"] = np.hstack([model.theta_, start])
            model.n_features_in_ += len(new)
        columns += new
        model.partial_fit(dense_row(x, columns), [y])
    return model, columns


STREAM_CASES = [
    {"psi": psi, "update": update, "eta": 0.05, "U": 3.0, "p": 3.0}
    for psi in PSI for update in ("explicit", "implicit", "natural")
    if update == "explicit" or not PSI[psi].geodesic
    if not (update == "natural" and psi == "pnorm")
]


@pytest.mark.parametrize("params", STREAM_CASES,
                         ids=lambda p: f"{p['psi']}-{p['update']}")
def test_regressor_equals_partial_fit_row_by_row(params):
    rows = emerging_stream()
    learner = GARegressor(**params)
    for x, y in rows:
        learner.learn_one(x, y)
    reference, columns = sklearn_on_stream(rows, **params)
    assert list(learner.weights) == columns
    np.testing.assert_allclose([learner.weights[name] for name in columns],
                               reference.coef_, rtol=1e-12, atol=1e-12)
    assert learner.intercept == pytest.approx(reference.intercept_[0], rel=1e-12)
    assert learner.cumulative_loss_ == pytest.approx(reference.cumulative_loss_,
                                                     rel=1e-12)
    assert learner.t_ == reference.t_ == len(rows)
    x = rows[-1][0]
    assert learner.predict_one(x) == pytest.approx(
        reference.predict(dense_row(x, columns))[0], rel=1e-12)


@pytest.mark.parametrize("psi", ["identity", "exp", "pnorm"])
def test_unnormalized_psi_hold_every_feature_from_the_start(psi):
    # A parameter at 0 adds nothing to their normalizer, and an input of 0 does not
    # move it: the model that held the features all along is the same.
    rows = emerging_stream()
    learner = GARegressor(psi=psi, eta=0.05, p=3.0)
    for x, y in rows:
        learner.learn_one(x, y)
    columns = list(learner.weights)
    X = np.vstack([dense_row(x, columns) for x, _ in rows])
    reference = SklearnRegressor(psi=psi, eta=0.05, p=3.0, update="implicit")
    reference.partial_fit(X, [y for _, y in rows])
    np.testing.assert_allclose(list(learner.weights.values()), reference.coef_,
                               rtol=1e-12, atol=1e-12)
    assert learner.cumulative_loss_ == pytest.approx(reference.cumulative_loss_,
                                                     rel=1e-12)


@pytest.mark.parametrize("psi", ["softmax", "eg_pm", "sphere", "simplex"])
def test_normalized_psi_keep_their_weights_where_they_belong(psi):
    learner = GARegressor(psi=psi, eta=0.05, U=2.0, update="explicit")
    for x, y in emerging_stream():
        learner.learn_one(x, y)
        w = np.array(list(learner.weights.values()))
        if psi in ("softmax", "simplex"):
            assert np.all(w >= 0) and w.sum() == pytest.approx(1.0, abs=1e-12)
        elif psi == "eg_pm":
            assert np.abs(w).sum() <= 2.0 + 1e-12
        else:
            assert np.linalg.norm(w) == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("psi", ["softmax", "eg_pm"])
def test_a_new_feature_takes_its_share_from_the_others(psi):
    learner = GARegressor(psi=psi, eta=0.05, U=2.0, update="explicit")
    for x, y in emerging_stream(30):
        learner.learn_one(x, y)
    before = learner.weights
    # A row of the new feature at 0 whose target is the prediction: no step, so the
    # weights after it are those of the model that took the feature in.
    learner.learn_one({"new": 0.0}, learner.predict_one({"new": 0.0}))
    after = learner.weights
    new = after.pop("new")
    shrink = np.array(list(after.values())) / np.array(list(before.values()))
    np.testing.assert_allclose(shrink, shrink[0], rtol=1e-12)
    assert shrink[0] < 1
    if psi == "softmax":  # Z / (Z + 1), the new weight 1 / (Z + 1)
        assert new == pytest.approx(1 - shrink[0], rel=1e-12)
    else:  # Z / (Z + 2), the new weight 0
        assert new == 0.0


# -- classifiers ---------------------------------------------------------------------


def phishing(m=300):
    return list(datasets.Phishing().take(m))


@pytest.mark.parametrize("phi", ["logistic", "tanh", "sign"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_binary_classifier_equals_partial_fit(psi, phi):
    rows = phishing()
    columns = sorted(rows[0][0])
    learner = GAClassifier(psi=psi, phi=phi, eta=0.1, U=4.0)
    reference = SklearnClassifier(psi=psi, phi=phi, eta=0.1, U=4.0)
    for x, y in rows:
        learner.learn_one(x, y)
        reference.partial_fit(dense_row(x, columns), [y], classes=[False, True])
    np.testing.assert_allclose([learner.weights[name] for name in columns],
                               reference.coef_[0], rtol=1e-12, atol=1e-12)
    assert learner.cumulative_loss_ == pytest.approx(reference.cumulative_loss_,
                                                     rel=1e-12)
    x = rows[0][0]
    assert learner.predict_one(x) == reference.predict(dense_row(x, columns))[0]
    if phi != "sign":
        proba = reference.predict_proba(dense_row(x, columns))[0]
        assert learner.predict_proba_one(x) == pytest.approx(
            {False: proba[0], True: proba[1]}, rel=1e-12)


def test_default_classifier_is_rivers_logistic_regression():
    learner, logistic = GAClassifier(), linear_model.LogisticRegression()
    for x, y in phishing(1000):
        assert learner.predict_proba_one(x) == pytest.approx(
            logistic.predict_proba_one(x), rel=1e-9)
        learner.learn_one(x, y)
        logistic.learn_one(x, y)
    assert learner.weights == pytest.approx(logistic.weights, rel=1e-9)
    assert learner.intercept == pytest.approx(logistic.intercept, rel=1e-9)


def test_explicit_regressor_is_rivers_linear_regression():
    # River's squared loss has the gradient 2 (y_hat - y): its rate lr is GA's 2 lr.
    learner = GARegressor(eta=0.02, update="explicit")
    linear = linear_model.LinearRegression(optimizer=optim.SGD(0.01),
                                           intercept_lr=0.01)
    for x, y in emerging_stream(200):
        assert learner.predict_one(x) == pytest.approx(linear.predict_one(x),
                                                       rel=1e-9, abs=1e-12)
        learner.learn_one(x, y)
        linear.learn_one(x, y)
    assert learner.weights == pytest.approx(linear.weights, rel=1e-9)


def softmax_oracle(psi, rows, eta):
    """GA(psi, softmax) of KW01 Figure 5 in plain NumPy on a stream that brings
    features (columns at 0, ordered by name within a row) and classes (rows at 0, in
    order of appearance); a trial with one class known changes nothing."""
    features, classes = [], []
    theta, b, total = np.zeros((0, 0)), np.zeros(0), 0.0
    for x, label in rows:
        new = sorted(name for name in x if name not in features)
        features += new
        theta = np.hstack([theta, np.zeros((theta.shape[0], len(new)))])
        if label not in classes:
            classes.append(label)
            theta = np.vstack([theta, np.zeros((1, len(features)))])
            b = np.append(b, 0.0)
        if len(classes) < 2:
            continue
        xs = np.array([x.get(name, 0.0) for name in features])
        y = np.array([float(c == label) for c in classes])
        omega = np.array([oracle_weights(psi, row) for row in theta])
        y_hat, loss = oracle_transfer_and_loss("softmax", omega @ xs + b, y)
        total += loss
        theta -= eta * np.outer(y_hat - y, xs)
        b -= eta * (y_hat - y)
    omega = np.array([oracle_weights(psi, row) for row in theta])
    return features, classes, omega, b, total


def classes_stream(m=120, seed=1):
    """Rows of features that appear over time and labels of three classes, the third
    appearing late."""
    rows = [(x, "abc"[int(abs(y) * 3) % (2 if t < 50 else 3)])
            for t, (x, y) in enumerate(emerging_stream(m, seed))]
    assert [label for _, label in rows[:50]].count("c") == 0
    return rows


@pytest.mark.parametrize("psi", ["identity", "softmax", "exp"])
def test_softmax_classifier_follows_the_oracle_as_classes_appear(psi):
    rows = classes_stream()
    learner = GAClassifier(psi=psi, phi="softmax", eta=0.1)
    for x, label in rows:
        learner.learn_one(x, label)
    features, classes, omega, b, total = softmax_oracle(psi, rows, 0.1)
    assert list(learner.weights) == classes and sorted(classes) == ["a", "b", "c"]
    for label, row, intercept in zip(classes, omega, b, strict=True):
        weights = learner.weights[label]
        assert list(weights) == features
        np.testing.assert_allclose(list(weights.values()), row, rtol=1e-10, atol=1e-12)
        assert learner.intercept[label] == pytest.approx(intercept, rel=1e-10)
    assert learner.cumulative_loss_ == pytest.approx(total, rel=1e-10)
    proba = learner.predict_proba_one(rows[0][0])
    assert list(proba) == classes and sum(proba.values()) == pytest.approx(1.0)


def test_predictions_before_learning():
    x = {"a": 1.0}
    assert GARegressor().predict_one(x) == 0.0
    assert GAClassifier().predict_proba_one(x) == {False: 0.5, True: 0.5}
    assert GAClassifier().predict_one(x) is False
    softmax = GAClassifier(phi="softmax")
    assert softmax.predict_proba_one(x) == {} and softmax.predict_one(x) is None
    softmax.learn_one(x, "only")
    assert softmax.predict_proba_one(x) == {"only": 1.0}
    assert softmax.predict_one({"b": 2.0}) == "only"


def test_perceptron_has_no_probabilities():
    model = GAClassifier(phi="sign")
    with pytest.raises(NotImplementedError, match="no probabilistic"):
        model.predict_proba_one({"a": 1.0})
    model.learn_one({"a": 1.0}, True)
    assert model.predict_one({"a": 1.0}) is True


# -- mini-batches --------------------------------------------------------------------


def test_learn_many_is_learn_one_row_by_row():
    # Batch j holds the features a, b, ... up to its (j + 2)-th in every row; the
    # third class appears inside a batch.
    rows = [({name: x.get(name, 0.0) for name in "abcdefgh"[:2 + t // 25]}, y)
            for t, (x, y) in enumerate(classes_stream())]
    one, many = GAClassifier(phi="softmax"), GAClassifier(phi="softmax")
    for x, label in rows:
        one.learn_one(x, label)
    for start in range(0, len(rows), 25):
        batch = rows[start:start + 25]
        many.learn_many(pd.DataFrame([x for x, _ in batch]),
                        pd.Series([y for _, y in batch]))
    assert many.weights == one.weights and many.intercept == one.intercept
    # (A batch's losses are summed before they join the total.)
    assert many.cumulative_loss_ == pytest.approx(one.cumulative_loss_, rel=1e-14)
    assert many.t_ == one.t_
    X = pd.DataFrame([x for x, _ in rows[-10:]])
    np.testing.assert_allclose(many.predict_proba_many(X).to_numpy(),
                               [list(one.predict_proba_one(x).values())
                                for x, _ in rows[-10:]], rtol=1e-12)
    assert many.predict_many(X).tolist() == [one.predict_one(x) for x, _ in rows[-10:]]


# -- atomicity and pickling ----------------------------------------------------------


def trained(learner, m=40):
    for x, y in emerging_stream(m):
        if isinstance(learner, GAClassifier):
            y = y > 0
        elif learner.phi == "logistic":
            y = 1 / (1 + np.exp(-y))
        learner.learn_one(x, y)
    return learner


BAD_LEARN_ONE = [
    ("nan", GARegressor, {"a": np.nan}, 1.0, "NaN or infinity"),
    ("inf in a new feature", GARegressor, {"a": 1.0, "zz": np.inf}, 1.0,
     "NaN or infinity"),
    ("a string", GARegressor, {"a": "high"}, 1.0, "feature 'a' is 'high'"),
    ("a string in a new feature", GARegressor, {"zz": "x"}, 1.0, "feature 'zz'"),
    ("target outside phi", lambda: GARegressor(phi="logistic"), {"a": 1.0}, 2.0,
     r"predicts values in \[0, 1\]"),
    ("target not a number", GARegressor, {"a": 1.0}, "x", "y must be a number"),
    ("label not binary", GAClassifier, {"a": 1.0}, "yes", "binary classifier"),
    ("unhashable label", lambda: GAClassifier(phi="softmax"), {"a": 1.0}, [1],
     "hashable"),
    ("divergence", lambda: GARegressor(eta=1e3, update="explicit"), {"a": 1e200},
     1.0, "diverged"),
    ("divergence at a new feature", lambda: GARegressor(eta=1e3, update="explicit"),
     {"zz": 1e200}, 1.0, "diverged"),
]


@pytest.mark.parametrize(("make", "x", "y", "match"),
                         [case[1:] for case in BAD_LEARN_ONE],
                         ids=[case[0] for case in BAD_LEARN_ONE])
def test_a_failed_learn_one_leaves_the_model_as_it_was(make, x, y, match):
    # (Two rows: the runaway check stops eta=1e3 on the stream soon after.)
    model = trained(make(), m=2)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=match):
        model.learn_one(x, y)
    assert pickle.dumps(model) == before
    model.predict_one({"a": 0.5})


@pytest.mark.parametrize("learner", [GARegressor(), GAClassifier()])
def test_a_value_beyond_float64_leaves_the_learner_as_it_was(learner):
    # An int too large for a float64, after a value of the row was gathered into
    # the compiled call's row: the call must put its zeros back.
    model = trained(learner)
    classifier = isinstance(model, GAClassifier)
    predict = model.predict_proba_one if classifier else model.predict_one
    before = pickle.dumps(model), predict({})
    x = {"h": 5.0, "g": 10**400}
    with pytest.raises(ValueError, match="'g' is an int beyond the range of a float64"):
        model.learn_one(x, True if classifier else 1.0)
    with pytest.raises(ValueError, match="'g' is an int beyond"):
        predict(x)
    assert (pickle.dumps(model), predict({})) == before


def test_a_negative_sample_weight_is_refused():
    model = trained(GARegressor())
    with pytest.raises(ValueError, match="w must be finite and >= 0"):
        model.learn_one({"a": 1.0}, 1.0, w=-1.0)
    with pytest.raises(ValueError, match="w must be finite and >= 0"):
        model.learn_many(pd.DataFrame({"a": [1.0]}), pd.Series([1.0]),
                         w=pd.Series([np.inf]))


@pytest.mark.parametrize(("X", "y", "match"), [
    (pd.DataFrame({"a": [1.0, np.nan]}), [1.0, 2.0], "NaN or infinity"),
    (pd.DataFrame({"a": [1.0, 2.0]}), [1.0], "one per sample"),
    (pd.DataFrame([[1.0, 2.0]], columns=["a", "a"]), [1.0], "same name"),
    (pd.DataFrame({"a": [1.0, 1e200], "zz": [0.0, 1.0]}), [1.0, 2.0], "diverged"),
])
def test_a_failed_learn_many_leaves_the_model_as_it_was(X, y, match):
    model = trained(GARegressor(update="explicit"))
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=match):
        model.learn_many(X, pd.Series(y))
    assert pickle.dumps(model) == before


def test_overflowing_predictions_are_an_error():
    model = GARegressor(phi="exp", eta=0.1)
    model.learn_one({"a": 1.0}, 2.0)
    with pytest.raises(ValueError, match="overflowed"):
        model.predict_one({"a": 1e6})
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.predict_one({"a": np.nan})


@pytest.mark.parametrize(("learner", "rows"), [
    (GARegressor(psi="eg_pm"), emerging_stream()),
    (GAClassifier(psi="softmax", phi="softmax"), classes_stream()),
    # (Spare columns inside the loop: a copy holds only the features seen.)
    (GAClassifier(phi="softmax"), classes_stream()),
    (GAClassifier(psi="exp", phi="softmax", eta=0.005), classes_stream()),
])
def test_a_pickled_learner_continues_exactly(learner, rows):
    for x, y in rows[:60]:
        learner.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(learner))
    for model in (learner, copy):
        for x, y in rows[60:]:
            model.learn_one(x, y)
    assert copy.weights == learner.weights
    assert copy.cumulative_loss_ == learner.cumulative_loss_


@pytest.mark.parametrize(("params", "match"), [
    ({"eta": "fast"}, "'eta' parameter"),
    ({"phi": "softmax"}, "GAClassifier"),
    ({"psi": "bogus"}, "'psi' parameter"),
    ({"eta": 0.0}, "'eta' parameter"),
    ({"psi": "sphere", "update": "implicit"}, "geodesics"),
])
def test_bad_parameters_are_refused_at_construction(params, match):
    with pytest.raises(ValueError, match=match):
        GARegressor(**params)


def test_a_runaway_stream_is_stopped_as_partial_fit_stops_it():
    # Explicit steps at eta (||x||^2 + 1) > 2 overshoot more at each trial: the loss
    # grows while every value stays finite, until the runaway check stops it, at
    # the same trial for both APIs, leaving the model as it was.
    learner = GARegressor(eta=3.0, update="explicit")
    estimator = SklearnRegressor(eta=3.0, update="explicit")
    for _ in range(100):
        try:
            estimator.partial_fit(np.ones((1, 2)), [1.0])
        except ValueError as error:
            assert "running away" in str(error)
            break
        learner.learn_one({"a": 1.0, "b": 1.0}, 1.0)
    assert 2 < learner.t_ == estimator.t_ < 100
    before = pickle.dumps(learner)
    with pytest.raises(ValueError, match="running away"):
        learner.learn_one({"a": 1.0, "b": 1.0}, 1.0)
    assert pickle.dumps(learner) == before
