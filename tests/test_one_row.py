"""The one-row fast path of predict, decision_function, predict_proba and
partial_fit: the same numbers as the general path, the same errors, the same state
after an error; and it steps aside whenever the general path has more to do."""

import contextlib
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_ga import GAClassifier, GARegressor
from sklearn_ga._base import BaseGA
from sklearn_ga._one_row import one_row_path
from sklearn_ga._psi import PSI


@contextlib.contextmanager
def general_path():
    """A context in which every call takes the general path."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BaseGA, "_one_row_trial", lambda self, X, y: False)
        patch.setattr(BaseGA, "_one_row_activations",
                      lambda self, X, outputs=False: None)
        yield


@pytest.fixture
def fast_calls(monkeypatch):
    """Counts of the one-row calls the fast path completed."""
    counts = {"trial": 0, "activations": 0}
    trial, activations = BaseGA._one_row_trial, BaseGA._one_row_activations

    def counted_trial(self, X, y):
        done = trial(self, X, y)
        counts["trial"] += done
        return done

    def counted_activations(self, X, outputs=False):
        A = activations(self, X, outputs)
        counts["activations"] += A is not None
        return A

    monkeypatch.setattr(BaseGA, "_one_row_trial", counted_trial)
    monkeypatch.setattr(BaseGA, "_one_row_activations", counted_activations)
    return counts


def stream(m=60, n=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    return X, X @ rng.normal(size=n) + 0.1 * rng.normal(size=m)


def outputs(model, x):
    """Everything a fitted model predicts for x."""
    names = ["predict", "decision_function", "predict_proba", "predict_log_proba"]
    return [getattr(model, name)(x) for name in names if hasattr(model, name)]


CASES = [
    (GARegressor(eta=0.05), lambda y: y),
    (GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=3.0, Y=0.9),
     lambda y: np.tanh(y) * 0.9),
    (GARegressor(psi="softmax", phi="logistic", eta=0.2, update="implicit"),
     lambda y: 1 / (1 + np.exp(-y))),
    (GAClassifier(eta=0.1), lambda y: y > 0),
    (GAClassifier(psi="pnorm", p=3.0, phi="tanh", eta=0.1), lambda y: y > 0),
    (GAClassifier(phi="softmax", eta=0.1), lambda y: np.digitize(y, [-1, 1])),
    (GAClassifier(phi="sign", eta=0.1),
     lambda y: np.where(y > 0, "yes", "no")),
    (GARegressor(eta=0.05, learning_rate="invscaling", power_t=0.5), lambda y: y),
    (GARegressor(psi="eg_pm", eta=0.1, U=3.0, average=8), lambda y: y),
    (GAClassifier(eta=0.2, learning_rate="invscaling", average=True),
     lambda y: y > 0),
    # The defaults: the rate follows the rows (lowered by a row that raises the
    # bound), and the runaway check watches the loss.
    (GARegressor(), lambda y: y * np.linspace(0.5, 4.0, y.shape[0])),
    (GARegressor(psi="exp", phi="exp"), lambda y: np.exp(y / 4)),
    (GAClassifier(), lambda y: y > 0),
    (GARegressor(psi="eg_pm", U=4.0, learning_rate="invscaling", power_t=0.3),
     lambda y: y),
    (GARegressor(psi="pnorm", p=3.0, average=True), lambda y: y),
    (GARegressor(psi="burg", phi="exp"), lambda y: np.exp(y / 4)),
]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("model", "target"), CASES,
                         ids=lambda case: repr(case) if not callable(case) else "")
def test_fast_path_returns_what_the_general_path_returns(model, target, sparse,
                                                         fast_calls):
    X, y = stream()
    y = target(y)
    if sparse:  # (rows of 1 to 5 entries, and one of none)
        X[np.random.default_rng(1).random(X.shape) < 0.4] = 0.0
        X[np.arange(X.shape[0]), np.arange(X.shape[0]) % X.shape[1]] = 0.0
        X[20] = 0.0
        X = sp.csr_matrix(X)
    fast = pickle.loads(pickle.dumps(model)).partial_fit(
        X[:5], y[:5], **({"classes": np.unique(y)} if "Classifier" in repr(model)
                         else {}))
    general = pickle.loads(pickle.dumps(fast))
    changes = fast.n_eta_changes_
    for t in range(5, X.shape[0]):
        x, target_t = X[t:t + 1], y[t:t + 1]
        got = outputs(fast, x)
        fast.partial_fit(x, target_t)
        with general_path():
            expected = outputs(general, x)
            general.partial_fit(x, target_t)
        # (The one-row path sums the activations in the loop's order, the general
        # path by BLAS: the last bits may differ.)
        for a, b in zip(got, expected, strict=True):
            if a.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
            else:
                np.testing.assert_array_equal(a, b)
    # Every row took the one-row path, but those that lowered the rate of
    # eta="theory" (which the general path computes), and all of phi="exp"'s,
    # whose rate's constant follows the rows.
    lowered = general.n_eta_changes_ - changes
    follows = model.eta == "theory" and model.phi == "exp"
    assert fast_calls["trial"] == (0 if follows else X.shape[0] - 5 - lowered)
    # (An averaging model predicts a CSR row through the general path.)
    assert fast_calls["activations"] >= (0 if sparse and model.average
                                         else X.shape[0] - 5)
    np.testing.assert_array_equal(fast.theta_, general.theta_)
    np.testing.assert_array_equal(fast.coef_, general.coef_)
    np.testing.assert_array_equal(fast.intercept_, general.intercept_)
    assert fast.cumulative_loss_ == general.cumulative_loss_
    assert fast.t_ == general.t_ and fast.n_iter_ == general.n_iter_ == 1
    assert fast.eta_ == general.eta_
    assert fast.n_eta_changes_ == general.n_eta_changes_


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", sorted(PSI))
def test_rows_of_equal_bounds_keep_the_paths_together(psi, sparse):
    # +-1 rows all have the bound of the first (KW01 eq. 28): a row is taken by
    # the one-row path only if its bound, computed as the general path computes
    # it, does not exceed the largest seen. A bound computed otherwise on one path
    # would lower the rate there and not on the other.
    rng = np.random.default_rng(4)
    X = rng.choice([-1.0, 1.0], size=(80, 9)) * rng.uniform(0.5, 2.0)
    y = np.tanh(X[:, :3].sum(axis=1))
    X = sp.csr_matrix(X) if sparse else X
    fast = GARegressor(psi=psi, phi="tanh", U=3.0).partial_fit(X[:3], y[:3])
    general = pickle.loads(pickle.dumps(fast))
    for t in range(3, X.shape[0]):
        fast.partial_fit(X[t:t + 1], y[t:t + 1])
        with general_path():
            general.partial_fit(X[t:t + 1], y[t:t + 1])
    np.testing.assert_array_equal(fast.theta_, general.theta_)
    np.testing.assert_array_equal(fast.intercept_, general.intercept_)
    assert fast.cumulative_loss_ == general.cumulative_loss_
    assert (fast.eta_, fast.n_eta_changes_) == (general.eta_, general.n_eta_changes_)


def test_one_row_rate_factors_are_the_batch_ones():
    from sklearn_ga._kernel import invscaling_factor, invscaling_factors

    factors = invscaling_factors(0, 5000, 0.37)
    assert [invscaling_factor(t + 1, 0.37) for t in range(5000)] == factors.tolist()
    np.testing.assert_allclose(factors, np.arange(1, 5001) ** -0.37, rtol=4e-16)


def _fitted_regressor():
    X, y = stream()
    return GARegressor(eta=0.05).partial_fit(X, y)


def _fitted_classifier():
    X, y = stream()
    return GAClassifier(eta=0.05).partial_fit(X, y > 0, classes=[False, True])


ROW = stream()[0][:1]
BAD_CALLS = [
    ("X NaN", _fitted_regressor, np.where(np.arange(6) == 2, np.nan, ROW), [1.0]),
    ("X inf", _fitted_regressor, np.where(np.arange(6) == 0, np.inf, ROW), [1.0]),
    ("X huge", _fitted_regressor, ROW * 1e300, [1.0]),
    ("X too wide", _fitted_regressor, np.hstack([ROW, ROW]), [1.0]),
    ("X 1-D", _fitted_regressor, ROW[0], [1.0]),
    ("y NaN", _fitted_regressor, ROW, [np.nan]),
    ("y inf", _fitted_regressor, ROW, [np.inf]),
    ("y two values", _fitted_regressor, ROW, [1.0, 2.0]),
    ("y 2-D", _fitted_regressor, ROW, [[1.0]]),
    ("y outside phi", lambda: GARegressor(phi="logistic", eta=0.1).partial_fit(
        ROW, [0.5]), ROW, [1.5]),
    ("diverges", lambda: GARegressor(eta=1e3).partial_fit(ROW, [0.5]), ROW * 1e200,
     [1e200]),
    ("CSR NaN", _fitted_regressor,
     sp.csr_matrix(np.where(np.arange(6) == 2, np.nan, ROW)), [1.0]),
    ("CSR too wide", _fitted_regressor, sp.csr_matrix(np.hstack([ROW, ROW])), [1.0]),
    ("CSR diverges", lambda: GARegressor(eta=1e3).partial_fit(ROW, [0.5]),
     sp.csr_matrix(ROW * 1e200), [1e200]),
    ("label unknown", _fitted_classifier, ROW, ["maybe"]),
    ("label NaN", _fitted_classifier, ROW, [np.nan]),
    ("X NaN, classifier", _fitted_classifier,
     np.where(np.arange(6) == 2, np.nan, ROW), [True]),
]


@pytest.mark.parametrize(("make", "X", "y"), [case[1:] for case in BAD_CALLS],
                         ids=[case[0] for case in BAD_CALLS])
def test_fast_path_raises_what_the_general_path_raises(make, X, y):
    y = np.asarray(y)
    for method in ("partial_fit", "predict", "decision_function", "predict_proba"):
        results = []
        for path in ("fast", "general"):
            model = make()
            if not hasattr(model, method):
                break
            before = pickle.dumps(model)
            args = (X, y) if method == "partial_fit" else (X,)
            with general_path() if path == "general" else contextlib.nullcontext():
                try:
                    value = getattr(model, method)(*args)
                except Exception as error:  # noqa: BLE001 (compared below)
                    results.append((type(error), str(error)))
                    assert pickle.dumps(model) == before
                    continue
            if value is model:  # (partial_fit: what it learned)
                value = np.hstack([model.theta_.ravel(), model.intercept_,
                                   model.cumulative_loss_])
            results.append(("returned", value))
        if results and results[0][0] == "returned":
            if method == "partial_fit" or results[0][1].dtype.kind != "f":
                np.testing.assert_array_equal(results[0][1], results[1][1])
            else:  # (activations summed in the loop's order, or by BLAS)
                np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-13)
        elif results:
            assert results[0] == results[1]


def test_fast_path_follows_set_params(fast_calls):
    X, y = stream()
    model = GARegressor(eta=0.05).partial_fit(X[:5], y[:5])
    model.partial_fit(X[5:6], y[5:6])
    model.set_params(eta=0.2)
    model.partial_fit(X[6:7], y[6:7])  # a new loop, at the new rate
    reference = GARegressor(eta=0.05).partial_fit(X[:6], y[:6])
    reference.set_params(eta=0.2).partial_fit(X[6:7], y[6:7])
    np.testing.assert_array_equal(model.theta_, reference.theta_)
    assert model.eta_ == 0.2
    model.set_params(eta=-1.0)
    with pytest.raises(InvalidParameterError, match="'eta' parameter"):
        model.partial_fit(X[7:8], y[7:8])
    model.set_params(eta=0.2)
    model.partial_fit(X[7:8], y[7:8])
    model.partial_fit(X[8:9], y[8:9])
    # (The first row at each rate builds its loop; then eta is again the object of
    # the last call that succeeded, whose loop continues.)
    assert fast_calls["trial"] == 3


def test_fast_path_follows_assigned_parameters(fast_calls):
    X, y = stream()
    models = [GARegressor(eta=0.05).partial_fit(X[:5], y[:5]) for _ in range(2)]
    for model in models:
        model.theta_ = np.zeros_like(model.theta_)
    models[0].partial_fit(X[5:6], y[5:6])
    assert fast_calls["trial"] == 0  # (the loop's parameters are no longer theta_)
    models[0].partial_fit(X[6:7], y[6:7])
    assert fast_calls["trial"] == 1
    with general_path():
        models[1].partial_fit(X[5:6], y[5:6]).partial_fit(X[6:7], y[6:7])
    np.testing.assert_array_equal(models[0].theta_, models[1].theta_)
    np.testing.assert_array_equal(models[0].intercept_, models[1].intercept_)


@pytest.mark.parametrize("X", [
    np.asfortranarray(stream()[0][:2])[:1], stream()[0][:1].astype(np.float32),
    stream()[0][:1, ::-1], stream()[0][:1].tolist(),
], ids=["fortran-slice", "float32", "strided", "list"])
def test_other_one_row_inputs_take_the_general_path(X, fast_calls):
    X_all, y = stream()
    model = GARegressor(eta=0.05).partial_fit(X_all[:5], y[:5])
    model.partial_fit(X, y[:1])
    reference = GARegressor(eta=0.05).partial_fit(X_all[:5], y[:5])
    with general_path():
        reference.partial_fit(np.array(X, dtype=np.float64), y[:1])
    np.testing.assert_array_equal(model.theta_, reference.theta_)
    assert fast_calls["trial"] == 0


def test_class_weights_take_the_general_path(fast_calls):
    X, y = stream()
    labels = y > 0
    weighted = GAClassifier(eta=0.1, class_weight={False: 2.0, True: 0.5})
    weighted.partial_fit(X[:5], labels[:5], classes=[False, True])
    general = pickle.loads(pickle.dumps(weighted))
    for t in range(5, 20):
        weighted.partial_fit(X[t:t + 1], labels[t:t + 1])
        with general_path():
            general.partial_fit(X[t:t + 1], labels[t:t + 1])
    np.testing.assert_array_equal(weighted.theta_, general.theta_)
    assert fast_calls["trial"] == 0


@pytest.mark.parametrize("psi", sorted(PSI))
def test_the_compiled_row_bound_is_the_registrys(psi):
    # The one-row path lowers no rate: a row whose bound (KW01 eq. 28) exceeds the
    # largest seen takes the general path. The compiled bound must be psi's.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 7)) * rng.uniform(0.1, 10.0, size=(40, 1))
    X[3] = 0.0
    X[4, :3] = 0.0
    U, p = 2.5, 3.0
    model = GARegressor(psi=psi, U=U, p=p).partial_fit(X[:2], [0.5, 0.2])
    calls = one_row_path(model).calls
    entry = PSI[psi]
    for row, target in zip(X, rng.normal(scale=3.0, size=40), strict=True):
        y = np.array([target])
        expected = float(entry.row_bounds(row[None, :], U, p)[0])
        if entry.growing_weights:
            growth = entry.weight_power  # (update="explicit")
            expected *= max(abs(target), 1.0) ** growth
        assert calls.bound(row[None, :], y) == pytest.approx(expected, rel=1e-13)


def _unsorted_row(contiguous=True):
    row = sp.csr_matrix(stream()[0][:1])
    data, indices = row.data[::-1], row.indices[::-1]
    if contiguous:
        data, indices = data.copy(), indices.copy()
    return sp.csr_matrix((data, indices, row.indptr), shape=row.shape)


def _int64_row():
    row = sp.csr_matrix(stream()[0][:1])
    row.indices, row.indptr = row.indices.astype(np.int64), row.indptr.astype(np.int64)
    return row


@pytest.mark.parametrize("X", [
    sp.csr_matrix(stream()[0][:1]).astype(np.float32),
    _int64_row(), _unsorted_row(), _unsorted_row(contiguous=False),
], ids=["float32", "int64-indices", "unsorted", "strided"])
def test_other_csr_rows_take_the_general_path(X, fast_calls):
    X_all, y = stream()
    model = GARegressor(eta=0.05).partial_fit(X_all[:5], y[:5])
    predicted = model.predict(X)
    model.partial_fit(X, y[:1])
    reference = GARegressor(eta=0.05).partial_fit(X_all[:5], y[:5])
    with general_path():
        expected = reference.predict(X.toarray().astype(np.float64))
        reference.partial_fit(X.toarray().astype(np.float64), y[:1])
    np.testing.assert_allclose(predicted, expected, rtol=1e-13)
    np.testing.assert_array_equal(model.theta_, reference.theta_)
    assert fast_calls["trial"] == fast_calls["activations"] == 0
