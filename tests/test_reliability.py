"""A long-running learner: long streams, persistence, threads, and fuzzed input.

The fuzz tests use hypothesis; the ``ci`` profile (tests/conftest.py) bounds their
run time.
"""

import copy
import io
import pickle
import subprocess
import sys
import threading

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
import skops.io
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sklearn_ga import (
    PHI,
    PSI,
    SKOPS_TRUSTED_TYPES,
    GAClassifier,
    GAClassifierCV,
    GARegressor,
    GARegressorCV,
)

# -- long streams ----------


def drifting_stream(n_features, rows, seed):
    """Inputs whose best weights lie outside every psi's reach: theta keeps growing."""
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(rows, n_features))
    X[:, 0] = 1.0
    return X, 50.0 * X[:, 0] - 50.0 * X[:, 1]


@pytest.mark.parametrize(("psi", "params"), [
    ("softmax", {}), ("eg_pm", {"U": 2.0}), ("exp", {}), ("pnorm", {"p": 4.0}),
])
def test_ten_million_trials_stay_finite_and_normalized(psi, params):
    X, y = drifting_stream(6, 100_000, seed=1)
    model = GARegressor(psi=psi, eta=0.05 if psi != "exp" else 1e-4,
                        fit_intercept=False, **params)
    for _ in range(100):  # 10^7 trials in all
        model.partial_fit(X, y)
    assert model.t_ == 10**7
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.theta_))
    assert np.isfinite(model.cumulative_loss_)
    if psi == "softmax":
        assert np.abs(model.theta_).max() > 1e3  # far past where e^theta overflows
        assert np.all(model.coef_ >= 0)
        assert abs(model.coef_.sum() - 1.0) < 1e-9
    if psi == "eg_pm":
        assert np.abs(model.theta_).max() > 1e3
        assert np.abs(model.coef_).sum() <= 2.0 * (1 + 1e-9)
        assert abs(np.abs(model.coef_).sum() - 2.0) < 1e-9  # pressed to the boundary
    np.testing.assert_allclose(model.predict(X[:3]), X[:3] @ model.coef_, rtol=1e-12)


# -- persistence ----------

MODELS = [
    lambda X, y: GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=3.0).partial_fit(
        X, np.tanh(y)),
    lambda X, y: GAClassifier(psi="pnorm", phi="softmax", eta=0.1, p=3.0).partial_fit(
        X, np.digitize(y, [-1, 1]), classes=[0, 1, 2]),
    lambda X, y: GARegressorCV(psi="eg_pm", etas=[0.01, 0.1], Us=[1, 4]).partial_fit(
        X, y),
    lambda X, y: GAClassifierCV(phi="sign", etas=[0.01, 0.1]).partial_fit(
        X, y > 0, classes=[False, True]),
]


def pickle_round_trip(model):
    return pickle.loads(pickle.dumps(model))


def joblib_round_trip(model):
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    buffer.seek(0)
    return joblib.load(buffer)


def skops_round_trip(model):
    data = skops.io.dumps(model)
    assert set(skops.io.get_untrusted_types(data=data)) <= set(SKOPS_TRUSTED_TYPES)
    return skops.io.loads(data, trusted=SKOPS_TRUSTED_TYPES)


@pytest.mark.parametrize("round_trip", [pickle_round_trip, joblib_round_trip,
                                        skops_round_trip])
@pytest.mark.parametrize("make_model", MODELS)
def test_round_trip_predicts_and_learns_identically(make_model, round_trip):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0])
    model = make_model(X[:100], y[:100])
    restored = round_trip(model)
    assert type(restored) is type(model)
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    # Learning continues exactly as it would have without the round trip.
    target = y[100:] if not hasattr(model, "classes_") else (
        model.classes_[np.digitize(y[100:], [-1, 1]) % len(model.classes_)])
    if isinstance(model, GARegressor) and model.phi == "tanh":
        target = np.tanh(target)
    model.partial_fit(X[100:], target)
    restored.partial_fit(X[100:], target)
    np.testing.assert_array_equal(restored.coef_, model.coef_)
    assert restored.cumulative_loss_ == model.cumulative_loss_


# -- threads ----------


def test_predict_from_eight_threads_gives_identical_results():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 30))
    model = GAClassifier(psi="eg_pm", phi="softmax", eta=0.1, U=5.0).partial_fit(
        X, np.argmax(X[:, :3], axis=1), classes=[0, 1, 2])
    expected = model.predict_proba(X)
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        results[i] = [model.predict_proba(X) for _ in range(20)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for per_thread in results:
        for proba in per_thread:
            np.testing.assert_array_equal(proba, expected)


def test_fits_in_threads_match_sequential_fits():
    """Concurrent kernels (the loop runs without the GIL) share no state."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 20))
    y = np.tanh(X[:, 0] - X[:, 1])
    etas = [0.001, 0.01, 0.03, 0.1]
    sequential = [GARegressor(psi="eg_pm", phi="tanh", eta=eta, U=3.0).partial_fit(
        X, y).coef_ for eta in etas]
    found = {}

    def work(eta):
        found[eta] = GARegressor(psi="eg_pm", phi="tanh", eta=eta, U=3.0).partial_fit(
            X, y).coef_

    threads = [threading.Thread(target=work, args=(eta,)) for eta in etas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for eta, coef in zip(etas, sequential, strict=True):
        np.testing.assert_array_equal(found[eta], coef)


# Two threads train one estimator (CSR batches of a fixed size, and one-row batches
# whose stored entries grow call by call, reallocating the loop's row buffers) while
# a third predicts. Run in a subprocess: a crash fails the test.
TWO_TRAINERS = """
import sys
import threading

import numpy as np
import scipy.sparse as sp

from sklearn_ga import PSI, GARegressor

U, P, N_FEATURES = 2.0, 3.0, 20_000


def batch(rng, rows, per_row):
    columns = rng.choice(N_FEATURES, size=(rows, per_row))
    X = sp.csr_matrix((rng.uniform(-1, 1, rows * per_row), columns.ravel(),
                       np.arange(0, rows * per_row + 1, per_row)),
                      shape=(rows, N_FEATURES))
    X.sum_duplicates()
    return X, np.tanh(np.asarray(X.sum(axis=1)).ravel())


def check(psi):
    rng = np.random.default_rng(0)
    model = GARegressor(psi=psi, phi="tanh", eta=0.05, U=U, p=P)
    model.partial_fit(*batch(rng, 10, 5))
    fixed = [batch(rng, 300, 8) for _ in range(20)]
    growing = [batch(rng, 1, per_row) for per_row in range(1, 400, 2)]
    accepted, errors = [10], []
    barrier = threading.Barrier(3)

    def train(batches):
        barrier.wait()
        for X, y in batches:
            try:
                model.partial_fit(X, y)
            except Exception as error:  # (clean batches: none expected)
                errors.append(repr(error))
            else:
                accepted.append(X.shape[0])

    def predict():
        barrier.wait()
        for _ in range(100):
            predictions = model.predict(fixed[0][0])
            if not np.all(np.abs(predictions) <= 1.0):
                errors.append(f"a prediction outside [-1, 1]: {predictions}")

    threads = [threading.Thread(target=train, args=(fixed,)),
               threading.Thread(target=train, args=(growing,)),
               threading.Thread(target=predict)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, (psi, errors)
    assert model.t_ == sum(accepted), (psi, model.t_, sum(accepted))
    expected = PSI[psi].weights(model.theta_, U, P)[0]
    assert np.allclose(model.coef_, expected, rtol=0, atol=1e-9), (psi, np.abs(
        model.coef_ - expected).max())
    if psi == "eg_pm":
        assert np.abs(model.coef_).sum() <= U * (1 + 1e-9)
    if psi in ("softmax", "simplex"):
        assert model.coef_.min() >= 0 and abs(model.coef_.sum() - 1) < 1e-9


for psi in PSI:
    check(psi)
print("every psi")
"""


def test_two_threads_training_one_estimator_take_turns():
    result = subprocess.run([sys.executable, "-c", TWO_TRAINERS],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr  # (-11: a segmentation fault)
    assert result.stdout.strip() == "every psi"


@pytest.mark.parametrize("duplicate", [
    copy.copy, copy.deepcopy, clone, pickle_round_trip, joblib_round_trip,
    skops_round_trip])
def test_copies_train_under_locks_of_their_own(duplicate):
    model = GARegressor(eta=0.1).partial_fit(np.eye(3), [1.0, 2.0, 3.0])
    lock = model._training_lock()
    with lock:  # (reentrant: pickling inside a call of this thread is no deadlock)
        other = duplicate(model)
    assert "_run" not in model.__getstate__()  # (its state only, without the lock)
    assert other._training_lock() is not lock
    other.partial_fit(np.eye(3), [1.0, 2.0, 3.0])
    assert other.t_ == (3 if duplicate is clone else 6)


def test_a_call_waits_for_the_call_that_trains():
    # While this thread holds the model's lock (as a running call would), a
    # partial_fit in another thread cannot run: it runs once the lock is free.
    model = GARegressor(eta=0.1).partial_fit(np.eye(3), [1.0, 2.0, 3.0])
    started = threading.Event()

    def train():
        started.set()
        model.partial_fit(np.eye(3), [1.0, 2.0, 3.0])

    thread = threading.Thread(target=train)
    with model._training_lock():
        thread.start()
        started.wait()
        thread.join(timeout=0.2)
        assert thread.is_alive() and model.t_ == 3
    thread.join()
    assert model.t_ == 6


def test_grid_search_with_the_threading_backend():
    rng = np.random.default_rng(2)
    X = rng.choice([-1.0, 1.0], size=(600, 30))
    y = np.tanh(X[:, 0] - X[:, 1])
    grid = {"eta": [0.01, 0.1], "U": [0.5, 3.0]}
    estimator = GARegressor(psi="eg_pm", phi="tanh", max_iter=3, tol=None,
                            random_state=0)
    expected = GridSearchCV(estimator, grid, cv=3).fit(X, y)
    with parallel_backend("threading", n_jobs=2):
        threaded = GridSearchCV(estimator, grid, cv=3, n_jobs=2).fit(X, y)
    assert threaded.best_params_ == expected.best_params_ == {"eta": 0.1, "U": 3.0}
    np.testing.assert_array_equal(threaded.cv_results_["mean_test_score"],
                                  expected.cv_results_["mean_test_score"])


# -- fuzzing ----------

REGRESSION = [(psi, phi) for psi in PSI for phi in PHI if PHI[phi].regression]
magnitudes = st.sampled_from([1e-300, 1e-8, 1.0, 1e3, 1e8, 1e150])


def targets_for(phi, raw):
    """Map raw values into the range of phi (closed ends included)."""
    squashed = np.tanh(raw)
    if phi == "identity":
        return raw
    if phi == "logistic":
        return np.clip(0.5 + 0.6 * squashed, 0, 1)
    if phi == "tanh":
        return np.clip(1.2 * squashed, -1, 1)
    if phi == "arctan":
        return 1.5 * squashed
    if phi == "exp":
        return np.abs(raw)
    if phi == "softmax":
        Y = np.column_stack([np.abs(squashed), 1 - np.abs(squashed)])
        return Y / Y.sum(axis=1, keepdims=True)
    raise AssertionError(phi)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(REGRESSION),
    shape=st.tuples(st.integers(1, 30), st.integers(1, 8)),
    scale=magnitudes,
    eta=st.sampled_from([1e-6, 1e-2, 1.0, 1e3]),
    sparse=st.booleans(),
    data=st.data(),
)
def test_fuzz_regressor_never_returns_garbage(config, shape, scale, eta, sparse, data):
    psi, phi = config
    raw = data.draw(arrays(np.float64, shape, elements=st.floats(-1, 1)))
    X = raw * scale
    y = targets_for(phi, raw.sum(axis=1) * min(scale, 1e3))
    X = sp.csr_matrix(X) if sparse else X
    model = GARegressor(psi=psi, phi=phi, eta=eta, U=2.0, p=3.0)
    try:
        model.partial_fit(X, y)
    except ValueError as error:
        assert str(error)  # a message, and nothing learned
        assert not hasattr(model, "coef_")
        return
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.cumulative_loss_)
    before = pickle.dumps(model)
    try:
        prediction = model.predict(X)
    except ValueError as error:
        assert "overflow" in str(error)
        assert pickle.dumps(model) == before
        return
    assert np.all(np.isfinite(prediction))
    # A second batch that fails leaves the model exactly as it was.
    try:
        with np.errstate(over="ignore"):
            model.partial_fit(X * 1e300, y)
    except ValueError:
        assert pickle.dumps(model) == before


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    psi=st.sampled_from(list(PSI)),
    phi=st.sampled_from([name for name in PHI if PHI[name].classification]),
    m=st.integers(2, 40),
    n_classes=st.integers(2, 4),
    scale=magnitudes,
    seed=st.integers(0, 2**16),
)
def test_fuzz_classifier_never_returns_garbage(psi, phi, m, n_classes, scale, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3)) * scale
    y = rng.integers(0, n_classes, size=m)
    model = GAClassifier(psi=psi, phi=phi, eta=0.1, U=2.0, p=3.0)
    try:
        model.partial_fit(X, y, classes=np.arange(n_classes))
    except ValueError as error:
        assert "diverged" in str(error) and not hasattr(model, "coef_")
        return
    try:
        labels = model.predict(X)
    except ValueError as error:
        assert "overflow" in str(error)
        return
    assert set(labels) <= set(range(n_classes))
    if phi != "sign":
        proba = model.predict_proba(X)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
