"""A float32 X's rows, read by the compiled run one at a time as float64: the model
is the one fit on X converted to float64 first, to the bit, for the psi whose dense
update sums the next trial's dot product in its pass (it reads the next row too),
and on CSR rows (each row's values converted just before its trial)."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from sklearn_ga import GAClassifier, GARegressor


def _rows(m=211, n=37, seed=3):
    # n = 37: the passes' blocks of eight and four coordinates and a scalar tail.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)).astype(np.float32)
    return X, X[:, :3].sum(axis=1) + 0.1 * rng.standard_normal(m)


@pytest.mark.parametrize("psi", ["identity", "softmax", "exp", "eg_pm", "burg"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_float32_rows_fit_the_float64_model(psi, shuffle):
    X32, y = _rows()
    options = {} if psi == "identity" else {"psi": psi, "U": 5.0}
    eta = 0.001 if psi == "burg" else 0.02
    fits = [GARegressor(eta=eta, max_iter=3, tol=None, shuffle=shuffle,
                        random_state=0, **options).fit(X, y)
            for X in (X32.astype(np.float64), X32)]
    assert np.array_equal(fits[1].coef_, fits[0].coef_)
    assert np.array_equal(fits[1].intercept_, fits[0].intercept_)
    assert fits[1].path_measure_ == fits[0].path_measure_
    assert fits[1].cumulative_loss_ == pytest.approx(fits[0].cumulative_loss_,
                                                     rel=1e-12)
    assert fits[1].t_ == fits[0].t_ == 3 * X32.shape[0]


@pytest.mark.parametrize("psi", ["identity", "softmax", "eg_pm"])
def test_float32_rows_of_three_classes(psi):
    X32, y = _rows()
    labels = np.digitize(y, [-1.0, 1.0])
    options = {} if psi == "identity" else {"psi": psi, "U": 5.0}
    fits = [GAClassifier(eta=0.05, max_iter=2, tol=None, random_state=1,
                         **options).fit(X, labels)
            for X in (X32.astype(np.float64), X32)]
    assert fits[0].coef_.shape == (3, X32.shape[1])
    assert np.array_equal(fits[1].coef_, fits[0].coef_)
    assert np.array_equal(fits[1].intercept_, fits[0].intercept_)
    assert fits[1].predict(X32).tolist() == fits[0].predict(X32).tolist()


def _csr_rows(index_type, m=400, n=300, nnz=12, seed=5):
    # Rows of a few nonzeros in many columns, one empty row; canonical CSR.
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.choice(n, size=(m, nnz)), axis=1)
    X = sp.csr_matrix((rng.standard_normal(m * nnz), columns.ravel(),
                       np.arange(0, m * nnz + 1, nnz)), shape=(m, n))
    X.sum_duplicates()
    X = X.astype(np.float32)
    X.data[X.indptr[7]:X.indptr[8]] = 0.0
    X.eliminate_zeros()
    X.indices, X.indptr = X.indices.astype(index_type), X.indptr.astype(index_type)
    return X, np.asarray(X[:, :20].sum(axis=1), dtype=np.float64).ravel()


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("psi, options", [
    ("identity", {}),  # eta="theory": the row bounds read the float32 rows too
    ("softmax", {"eta": 0.05}),  # a lazy CSR run, U="auto" from the first rows
    ("exp", {"eta": 0.02, "U": 5.0, "average": True}),
    ("eg_pm", {"eta": 0.05, "U": 5.0}),
    ("pnorm", {"eta": 0.02, "p": 3.0, "learning_rate": "invscaling"}),
    ("sphere", {"eta": 0.02, "U": 5.0}),
    ("burg", {"eta": 0.001, "U": 5.0}),
])
def test_float32_csr_rows_fit_the_float64_model(index_type, psi, options):
    # run_csr converts each float32 row just before its trial: the model is the
    # one fit on the values converted to float64 first, to the bit.
    X32, y = _csr_rows(index_type)
    X64 = X32.astype(np.float64)
    assert X32.dtype == np.float32 and X32.indices.dtype == index_type
    weights = np.linspace(0.5, 2.0, X32.shape[0])
    fits = [GARegressor(psi=psi, max_iter=3, tol=None, random_state=0, **options)
            .fit(X, y, sample_weight=weights) for X in (X64, X32)]
    assert np.array_equal(fits[1].coef_, fits[0].coef_)
    assert np.array_equal(fits[1].intercept_, fits[0].intercept_)
    assert fits[1].path_measure_ == fits[0].path_measure_
    assert fits[1].cumulative_loss_ == fits[0].cumulative_loss_
    assert fits[1].t_ == fits[0].t_ == 3 * X32.shape[0]
    online = [clone(fits[0]) for X in (X64, X32)]
    for model, X in zip(online, (X64, X32), strict=True):  # partial_fit, the same runs
        model.partial_fit(X[:150], y[:150]).partial_fit(X[150:], y[150:])
    assert np.array_equal(online[1].coef_, online[0].coef_)
    assert online[1].cumulative_loss_ == online[0].cumulative_loss_


def test_float32_csr_fit_makes_no_copy_of_x():
    # A float64 copy of the values alone would be as large as X (data + indices).
    X32, y = _csr_rows(np.int32, m=20_000, n=5_000, nnz=50)
    size = X32.data.nbytes + X32.indices.nbytes + X32.indptr.nbytes
    model = GARegressor(psi="softmax", eta=0.05, U=1.0, max_iter=2, tol=None,
                        random_state=0)
    model.fit(X32, y)  # (the first fit imports and caches)
    tracemalloc.start()
    try:
        model.fit(X32, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The per-row vectors of any fit (targets, order, the start activations):
    # 8 bytes a row each, 2% of these rows of 400 bytes.
    assert peak < 0.15 * size


def test_float32_csr_with_nan_is_refused_and_the_model_kept():
    X32, y = _csr_rows(np.int32)
    model = GARegressor(psi="softmax", eta=0.05, U=1.0, max_iter=1, tol=None)
    model.partial_fit(X32, y)
    coef = model.coef_.copy()
    bad = X32.copy()
    bad.data[5] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(bad, y)
    assert np.array_equal(model.coef_, coef)
