"""sklearn_ga.river's dict rows: a row's cost does not grow with the features seen
(the coordinates the calls touch, counted), learn_one bit-identical to the
one-row CSR partial_fit of the same rows as features arrive, the normalized psi's
weights where they belong as a large vocabulary grows, frames of pandas and
polars, and every bad input refused by name, the model unchanged."""

import pickle
import types

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from sklearn_ga import PSI
from sklearn_ga import GAClassifier as SklearnClassifier
from sklearn_ga import GARegressor as SklearnRegressor
from sklearn_ga.river import GAClassifier, GARegressor


def vocabulary_stream(m, vocabulary, keys=20, seed=0):
    """Rows of ``keys`` features drawn from the first names of a vocabulary that
    grows linearly to ``vocabulary`` names over the m rows (new names on most
    rows), and labels of a hidden linear model."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(vocabulary)
    rows = []
    for t in range(m):
        seen = max(keys, vocabulary * (t + 1) // m)
        columns = rng.choice(seen, keys, replace=False)
        values = rng.random(keys)
        rows.append(({f"w{c}": v for c, v in zip(columns.tolist(), values.tolist(),
                                                  strict=True)},
                     bool(truth[columns] @ values > 0)))
    return rows


@pytest.mark.parametrize("psi", ["identity", "eg_pm", "softmax", "pnorm"])
def test_the_work_of_a_row_does_not_grow_with_the_features_seen(psi):
    # DictRows counts the coordinates its calls read or write (the rows' entries,
    # the new columns, and every O(n) pass: a whole save, a recompute of the
    # normalizers, a widened theta): per row it stays about the same from 2,000
    # features to 20,000.
    model = GAClassifier(psi=psi, U=5.0, p=3.0)
    rows = vocabulary_stream(4000, 20_000)
    work = []
    for start in range(0, len(rows), 1000):
        before = model._rows.work
        for x, y in rows[start:start + 1000]:
            model.learn_one(x, y)
            model.predict_one(x)
        work.append((model._rows.work - before) / 1000)
    assert len(model.weights) > 15_000
    assert work[-1] < 1.5 * work[1]
    # (The entries of a row, its new features and TOUCH_LIMIT's recomputes.)
    assert work[-1] < 3 * 20


@pytest.mark.parametrize("psi", ["identity", "exp", "pnorm"])
def test_a_new_feature_of_several_outputs_costs_o_of_k(psi):
    # phi="softmax" with k = 3 classes: theta keeps spare columns inside the loop
    # (a psi without normalizer, or pnorm's, which a column at 0 leaves as it
    # is), doubled when full, so that the work per row,
    # new features included, stays about k times a row's entries.
    rng = np.random.default_rng(4)
    model = GAClassifier(psi=psi, phi="softmax", eta=0.05, p=3.0)
    rows = vocabulary_stream(4000, 20_000)
    work = []
    for start in range(0, len(rows), 1000):
        before = model._rows.work if model._rows is not None else 0
        for x, _ in rows[start:start + 1000]:
            model.learn_one(x, int(rng.integers(3)))
        work.append((model._rows.work - before) / 1000)
    assert model._rows.inside and len(model.weights[0]) > 15_000
    assert work[-1] < 1.5 * work[1]
    assert work[-1] < 3 * 3 * 20


def test_a_new_feature_does_not_rewrite_the_others():
    model = GARegressor(psi="softmax", eta=0.05, update="explicit")
    for x, y in vocabulary_stream(300, 5000):
        model.learn_one(x, float(y))
    loop = model._loop
    theta = np.array(model._theta[:, :len(model._features)])
    terms = loop.terms()[0][:, :theta.shape[1]].copy()
    # A row of one feature held and one new, whose target is its prediction: no
    # step, so the parameters and terms held are untouched.
    x = {"w0": 0.0, "new": 0.0}
    model.learn_one(x, model.predict_one(x))
    assert model._features["new"] == theta.shape[1]
    np.testing.assert_array_equal(model._theta[:, :theta.shape[1]], theta)
    np.testing.assert_array_equal(model._loop.terms()[0][:, :theta.shape[1]], terms)


def one_row_csr(x, columns, n):
    indices = np.array(sorted(columns[name] for name in x), np.int32)
    names = {column: name for name, column in columns.items()}
    return sp.csr_matrix((np.array([x[names[i]] for i in indices]), indices,
                          [0, len(indices)]), shape=(1, n))


@pytest.mark.parametrize("psi", ["identity", "exp", "pnorm", "burg"])
@pytest.mark.parametrize("update", ["explicit", "implicit"])
def test_learn_one_is_bit_identical_to_one_row_csr_partial_fit(psi, update):
    # A feature enters at Theta_1, which these psi leave out of any normalizer
    # (pnorm's ||theta||_q gains nothing from a 0): the scikit-learn estimator
    # that holds every feature from the start runs the same compiled trials on
    # the same CSR rows (columns in order of arrival).
    rows = vocabulary_stream(600, 3000)
    learner = GARegressor(psi=psi, phi="identity", eta=0.02, update=update, p=3.0)
    columns = {}
    for x, _ in rows:
        for name in sorted(name for name in x if name not in columns):
            columns[name] = len(columns)
    reference = SklearnRegressor(psi=psi, eta=0.02, update=update, p=3.0)
    for x, y in rows:
        target = float(y) - 0.5
        learner.learn_one(x, target)
        reference.partial_fit(one_row_csr(x, columns, len(columns)), [target])
    n = len(learner.weights)
    assert list(learner.weights) == list(columns)
    assert np.array_equal(list(learner.weights.values()), reference.coef_[:n])
    assert learner.intercept == reference.intercept_[0]
    assert learner.cumulative_loss_ == reference.cumulative_loss_
    x = rows[-1][0]
    assert learner.predict_one(x) == pytest.approx(
        reference.predict(one_row_csr(x, columns, len(columns)))[0], rel=1e-14)


@pytest.mark.parametrize("psi", ["softmax", "eg_pm", "simplex", "sphere"])
def test_normalized_weights_stay_put_as_a_vocabulary_grows(psi):
    U = 3.0
    model = GAClassifier(psi=psi, U=U, eta=0.05)
    for x, y in vocabulary_stream(1500, 6000):
        model.learn_one(x, y)
    w = np.array(list(model.weights.values()))
    assert w.shape[0] > 5000
    if psi in ("softmax", "simplex"):
        assert np.all(w >= 0) and w.sum() == pytest.approx(1.0, abs=1e-12)
    elif psi == "eg_pm":
        assert np.abs(w).sum() <= U * (1 + 1e-12)
    else:
        assert np.linalg.norm(w) == pytest.approx(U, rel=1e-12)


def test_learn_many_is_learn_one_with_new_columns():
    rows = vocabulary_stream(200, 40, keys=5)
    names = sorted({name for x, _ in rows for name in x})
    one, many = GAClassifier(psi="eg_pm", U=4.0), GAClassifier(psi="eg_pm", U=4.0)
    for start in range(0, 200, 50):
        batch = rows[start:start + 50]
        columns = names[:10 + start // 5]
        X = pd.DataFrame([[x.get(name, 0.0) for name in columns] for x, _ in batch],
                         columns=columns)
        for row, (_, y) in zip(X.to_dict("records"), batch, strict=True):
            one.learn_one(row, y)
        many.learn_many(X, pd.Series([y for _, y in batch]))
    assert many.weights == one.weights and many.intercept == one.intercept
    assert many.t_ == one.t_ == 200


def test_polars_frames():
    pl = pytest.importorskip("polars")
    X = {"a": [1.0, -1.0, 0.5], "b": [0, 1, 1]}
    y = [True, False, True]
    model, reference = GAClassifier(), GAClassifier()
    model.learn_many(pl.DataFrame(X), pl.Series(y))
    reference.learn_many(pd.DataFrame(X), pd.Series(y))
    assert model.weights == reference.weights
    predicted = model.predict_many(pl.DataFrame(X))
    assert isinstance(predicted, pl.Series)
    assert predicted.to_list() == reference.predict_many(pd.DataFrame(X)).tolist()
    proba = model.predict_proba_many(pl.DataFrame(X))
    assert isinstance(proba, pl.DataFrame) and proba.columns == ["False", "True"]
    np.testing.assert_array_equal(
        proba.to_numpy(), reference.predict_proba_many(pd.DataFrame(X)).to_numpy())


def test_predict_many_keeps_a_pandas_index():
    model = GARegressor()
    X = pd.DataFrame({"a": [1.0, 2.0]}, index=[10, 20])
    model.learn_many(X, pd.Series([1.0, 2.0], index=X.index))
    assert list(model.predict_many(X).index) == [10, 20]


def test_any_mapping_is_a_row():
    mappings = [{"a": 1.0, "b": 2.0}, types.MappingProxyType({"a": 1.0, "b": 2.0}),
                pd.Series({"a": 1.0, "b": 2.0})]
    models = [GARegressor() for _ in mappings]
    for model, x in zip(models, mappings, strict=True):
        model.learn_one(x, 1.0)
        assert model.predict_one(x) == models[0].predict_one(mappings[0])
    assert models[1].weights == models[2].weights == models[0].weights


def trained(model):
    for x, y in vocabulary_stream(30, 60, keys=4):
        model.learn_one(x, y if isinstance(model, GAClassifier) else float(y))
    return model


BAD_ROWS = [
    ("None value", GARegressor, {"w0": None}, 1.0, {}, TypeError, "'w0' is None"),
    ("numeric string", GARegressor, {"w1": "1.5"}, 1.0, {}, ValueError,
     "feature 'w1' is '1.5'"),
    ("numeric string, new feature", GARegressor, {"zz": "1.5"}, 1.0, {}, ValueError,
     "feature 'zz'"),
    ("int beyond float64", GARegressor, {"w1": 10**400}, 1.0, {}, ValueError,
     "'w1' is an int beyond"),
    ("not a mapping", GARegressor, [("w1", 1.0)], 1.0, {}, TypeError,
     "mapping of feature names"),
    ("string target", GARegressor, {"w1": 1.0}, "2", {}, ValueError,
     "y must be a number; got '2'"),
    ("target beyond float64", GARegressor, {"w1": 1.0}, 10**400, {}, ValueError,
     "y is an int beyond"),
    ("string weight", GARegressor, {"w1": 1.0}, 1.0, {"w": "1"}, TypeError,
     "w must be a number"),
    ("NaN label", lambda: GAClassifier(phi="softmax"), {"w1": 1.0}, float("nan"), {},
     ValueError, "missing label"),
    ("None label", lambda: GAClassifier(phi="softmax"), {"w1": 1.0}, None, {},
     ValueError, "missing label"),
    ("NumPy NaN label", lambda: GAClassifier(phi="softmax"), {"w1": 1.0},
     np.float64("nan"), {}, ValueError, "missing label"),
]


@pytest.mark.parametrize(("make", "x", "y", "kwargs", "error", "match"),
                         [case[1:] for case in BAD_ROWS],
                         ids=[case[0] for case in BAD_ROWS])
def test_a_bad_row_is_refused_by_name(make, x, y, kwargs, error, match):
    model = make()
    if isinstance(model, GAClassifier) and model.phi == "softmax":
        for t, (row, label) in enumerate(vocabulary_stream(30, 60, keys=4)):
            model.learn_one(row, "abc"[t % 3] if label else "d")
    else:
        trained(model)
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        model.learn_one(x, y, **kwargs)
    assert pickle.dumps(model) == before
    if x != {"w1": 1.0}:  # (a bad feature value: predictions refuse it too)
        with pytest.raises(error, match=match):
            model.predict_one(x)


def test_missing_labels_do_not_become_classes():
    model = GAClassifier(phi="softmax")
    model.learn_one({"a": 1.0}, "x")
    for _ in range(3):
        with pytest.raises(ValueError, match="missing label"):
            model.learn_one({"a": 1.0}, float("nan"))
    assert model._classes == ["x"]
    assert list(model.predict_proba_one({"a": 1.0})) == ["x"]


@pytest.mark.parametrize(("X", "match"), [
    (pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}), "column 'b' of X is of type"),
    (pd.DataFrame({"a": [1.0, np.nan]}), "in column 'a'"),
    (pd.DataFrame({"a": [1.0, None]}, dtype=object), "column 'a'"),
])
def test_a_bad_frame_is_refused_by_column(X, match):
    model = trained(GARegressor())
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=match):
        model.learn_many(X, pd.Series([1.0, 2.0]))
    assert pickle.dumps(model) == before


def test_psi_registry_entries_enter_at_their_start():
    # Every psi's new feature starts at Theta_1's value (the registry's start).
    for psi, entry in PSI.items():
        if psi == "burg":
            continue
        model = GARegressor(psi=psi, update="explicit", U=2.0, p=3.0)
        model.learn_one({"a": 0.0}, model.predict_one({"a": 0.0}))
        model.learn_one({"a": 0.0, "b": 0.0}, model.predict_one({"a": 0.0}))
        assert np.array_equal(model._theta[0, :2], [entry.start] * 2), psi


@pytest.mark.parametrize("psi", ["identity", "exp"])
def test_theory_rate_is_partial_fits_from_the_rows_seen(psi):
    # eta="theory" follows the rows as one-row partial_fit calls do: rows that
    # raise the bound, or bring a larger sample weight, lower the rates first; the
    # others run at the rates held. (The first row brings every name, at 0 but
    # its own: the intercept's rate, intercept_eta="auto", reads the number of
    # features, which the estimator holds from the start.)
    rows = vocabulary_stream(400, 2000)
    names = sorted({name for x, _ in rows for name in x})
    rows[0] = ({**dict.fromkeys(names, 0.0), **rows[0][0]}, rows[0][1])
    rng = np.random.default_rng(1)
    weights = rng.choice([1.0, 0.5, 2.0, 3.0], len(rows), p=[0.85, 0.05, 0.05, 0.05])
    learner = GARegressor(psi=psi, eta="theory", update="explicit")
    columns = {name: column for column, name in enumerate(names)}
    reference = SklearnRegressor(psi=psi, eta="theory")
    for (x, y), w in zip(rows, weights, strict=True):
        target = 2.0 * float(y) - 1.0
        learner.learn_one(x, target, w)
        reference.partial_fit(one_row_csr(x, columns, len(columns)), [target],
                              sample_weight=None if w == 1.0 else [w])
    n = len(learner.weights)
    assert np.array_equal(list(learner.weights.values()), reference.coef_[:n])
    assert learner.intercept == reference.intercept_[0]
    assert learner.cumulative_loss_ == reference.cumulative_loss_
    assert learner._pair() == (reference.eta_, reference.intercept_eta_)
    assert reference.eta_ < 0.5  # (the rate fell from 1 / (2c))
    # The rate's state survives a pickle.
    copy = pickle.loads(pickle.dumps(learner))
    x, y = rows[0]
    copy.learn_one(x, 1.0, 4.0)
    learner.learn_one(x, 1.0, 4.0)
    assert copy.weights == learner.weights


def test_theory_rate_of_learn_many_is_learn_ones():
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.standard_normal((300, 4)) * [1.0, 2.0, 0.5, 4.0],
                     columns=list("abcd"))
    y = pd.Series(X.to_numpy() @ [1.0, -2.0, 0.5, 0.0] + 3.0)
    w = pd.Series(rng.choice([1.0, 2.0, 0.5], 300, p=[0.9, 0.05, 0.05]))
    many, one = (GARegressor(eta="theory", update="explicit") for _ in range(2))
    many.learn_many(X, y, w)
    for x, target, weight in zip(X.to_dict("records"), y, w, strict=True):
        one.learn_one(x, target, weight)
    assert many.weights == one.weights
    assert many.intercept == one.intercept
    assert many._pair() == one._pair() != (0.5, 0.5)


def scaled_stream(m, scale, seed=3):
    """Rows of 5 features whose target is ``scale`` times their first."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 5))
    return [(dict(zip("abcde", row.tolist(), strict=True)), scale * row[0])
            for row in X]


def test_auto_u_doubles_as_the_weights_press_and_keeps_them(monkeypatch):
    # A target 40 x_a needs ||w||_1 = 40: U_ starts at 1 and doubles while the
    # weights press on the ball (and not beyond 4 times what they need); each
    # doubling keeps the weights.
    from sklearn_ga import _river_rates

    learner = GARegressor(psi="eg_pm")
    assert learner._eta() == "theory"
    kept = []
    press = _river_rates._Rates._press

    def watched(self):
        before = (self.U_, self.weights)
        press(self)
        if self.U_ != before[0]:
            assert self.U_ == 2 * before[0]
            kept.append(np.allclose(list(self.weights.values()),
                                    list(before[1].values()), rtol=1e-12,
                                    atol=1e-15))

    monkeypatch.setattr(_river_rates._Rates, "_press", watched)
    for x, y in scaled_stream(3000, 40.0):
        learner.learn_one(x, y)
    assert 40.0 <= learner.U_ <= 4 * 40.0
    assert kept and all(kept)
    assert learner.weights["a"] == pytest.approx(40.0, rel=0.05)
    copy = pickle.loads(pickle.dumps(learner))
    assert copy.U_ == learner.U_
    x, y = scaled_stream(1, 40.0, seed=4)[0]
    assert copy.predict_one(x) == learner.predict_one(x)


def test_a_hand_set_u_is_used_unchanged():
    learner = GARegressor(psi="eg_pm", U=2.0)
    for x, y in scaled_stream(500, 40.0):
        learner.learn_one(x, y)
    assert learner.U_ == 2.0
    assert sum(map(abs, learner.weights.values())) <= 2.0 * (1 + 1e-12)


# Every psi whose Theta_1 adds nothing to a normalizer (or has none): a feature
# entering mid-stream is one held from the start at Theta_1.
UNNORMALIZED = {"identity", "exp", "pnorm", "burg"}


@pytest.mark.parametrize(("psi", "arriving"), [
    *((psi, False) for psi in PSI), *((psi, True) for psi in sorted(UNNORMALIZED))])
def test_softmax_learn_one_is_bit_identical_to_one_row_partial_fit(psi, arriving):
    # k = 3 outputs. The River learner meets its classes at zero weight (trials
    # that step by 0), the estimator is given them at its first call; then both
    # learn the same rows. Held: the first row brings every name (at 0 but its
    # own), so every psi runs the same trials; arriving: features enter as rows
    # bring them, the same model for the psi whose Theta_1 adds nothing to a
    # normalizer, and for the others the newcomer takes its share (not a model
    # of the estimator's).
    rng = np.random.default_rng(5)
    rows = [(x, 2 if label else int(rng.integers(3)))
            for x, label in vocabulary_stream(300, 600)]
    if not arriving:
        names = sorted({name for x, _ in rows for name in x})
        rows[0] = ({**dict.fromkeys(names, 0.0), **rows[0][0]}, rows[0][1])
    columns = {}
    for x, _ in rows:
        for name in sorted(name for name in x if name not in columns):
            columns[name] = len(columns)
    params = {"psi": psi, "phi": "softmax", "eta": 0.05, "p": 3.0}
    if psi in ("eg_pm", "sphere"):
        params["U"] = 3.0
    learner, reference = GAClassifier(**params), SklearnClassifier(**params)
    for label in range(3):
        learner.learn_one(rows[0][0], label, 0.0)
    for t, (x, label) in enumerate(rows):
        learner.learn_one(x, label)
        reference.partial_fit(one_row_csr(x, columns, len(columns)), [label],
                              **({"classes": [0, 1, 2]} if t == 0 else {}))
    weights = np.array([list(learner.weights[label].values()) for label in range(3)])
    assert list(learner.weights[0]) == list(columns)
    assert np.array_equal(weights, reference.coef_)
    assert list(learner.intercept.values()) == reference.intercept_.tolist()
    assert learner.cumulative_loss_ == reference.cumulative_loss_
    assert learner.t_ == reference.t_ + 3


@pytest.mark.parametrize("psi", list(PSI))
def test_regressor_learn_one_is_bit_identical_for_every_psi(psi):
    # As test_learn_one_is_bit_identical_to_one_row_csr_partial_fit, every psi:
    # the first row brings every name (new names arriving too for the
    # unnormalized psi, which that test covers).
    rows = vocabulary_stream(300, 600)
    names = sorted({name for x, _ in rows for name in x})
    rows[0] = ({**dict.fromkeys(names, 0.0), **rows[0][0]}, rows[0][1])
    columns = {name: column for column, name in enumerate(names)}
    params = {"psi": psi, "eta": 0.02, "update": "explicit", "p": 3.0}
    if psi in ("eg_pm", "sphere"):
        params["U"] = 3.0
    learner, reference = GARegressor(**params), SklearnRegressor(**params)
    for x, y in rows:
        target = float(y) + (0.5 if PSI[psi].growing_weights else -0.5)
        learner.learn_one(x, target)
        reference.partial_fit(one_row_csr(x, columns, len(columns)), [target])
    assert np.array_equal(list(learner.weights.values()), reference.coef_)
    assert learner.intercept == reference.intercept_[0]
    assert learner.cumulative_loss_ == reference.cumulative_loss_


@pytest.mark.parametrize("psi", ["identity", "exp", "pnorm"])
def test_a_pickle_of_spare_columns_continues_exactly(psi):
    # A copy holds the features seen, without the spare columns; as new features
    # arrive it widens theta, their terms at Theta_1 as the original's spare ones.
    rng = np.random.default_rng(6)
    rows = [(x, int(rng.integers(3))) for x, _ in vocabulary_stream(400, 2000)]
    learner = GAClassifier(psi=psi, phi="softmax", eta=0.05, p=3.0)
    for x, label in rows[:200]:
        learner.learn_one(x, label)
    assert learner._rows.inside and learner._theta.shape[1] > len(learner.weights[0])
    copy = pickle.loads(pickle.dumps(learner))
    for model in (learner, copy):
        for x, label in rows[200:]:
            model.learn_one(x, label)
    assert copy.weights == learner.weights and copy.intercept == learner.intercept
    assert copy.cumulative_loss_ == learner.cumulative_loss_
