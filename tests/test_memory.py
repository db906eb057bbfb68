"""Input handling without copies: fit and partial_fit never copy a float64 X.

tracemalloc sees every NumPy allocation, so the peak traced memory of a call
bounds everything it allocated; a copy of X alone would be 100% of X's size.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_ga import GAClassifier, GARegressor


def _peak_bytes(function):
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# With U="auto", a psi of simplex weights checks them on the first rows made
# dense (_auto_scale.range_check): at most SCALE_ROWS x 256 numbers whatever X's
# size, more than a tenth of these small X. A number for U skips it.
NO_RANGE_CHECK = {"softmax": {"U": 1.0}}


def _data(m=20_000, n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    return X, np.tanh(X[:, 0] - X[:, 1])


@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_fit_does_not_copy_c_contiguous_float64(psi):
    X, y = _data()
    model = GARegressor(psi=psi, phi="tanh", eta=0.05, max_iter=3, tol=None,
                        random_state=0)
    assert _peak_bytes(lambda: model.fit(X, y)) < 0.1 * X.nbytes
    assert model.t_ == 3 * X.shape[0]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "softmax", "eg_pm", "pnorm"])
def test_the_theory_rate_does_not_copy_x(psi, sparse):
    # eta="theory" (the default) reads b of KW01 eq. (28) off the rows of X: a
    # reduction over rows, which needs no array of X's size. It keeps one bound a
    # row, and the rates of a chunk of trials, two a row: at 100 features, each
    # vector of one number a row is 1% of X.
    X, y = _data(n=100)
    if sparse:
        X[np.abs(X) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sparse else X.nbytes
    model = GARegressor(psi=psi, phi="tanh", p=3.0, max_iter=1, tol=None,
                        **NO_RANGE_CHECK.get(psi, {}))
    assert _peak_bytes(lambda: model.fit(X, y)) < 0.1 * size
    assert model.eta_ > 0


def test_partial_fit_does_not_copy_c_contiguous_float64():
    X, y = _data()
    model = GAClassifier(eta=0.05).partial_fit(X[:10], y[:10] > 0, classes=[0, 1])
    assert _peak_bytes(lambda: model.partial_fit(X, y > 0)) < 0.1 * X.nbytes
    assert model.t_ == 10 + X.shape[0]


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_fit_does_not_copy_canonical_csr(index_type):
    X, y = _data()
    X[np.abs(X) < 0.5] = 0.0  # about 60% nonzeros
    X = sp.csr_matrix(X)
    X.indices, X.indptr = X.indices.astype(index_type), X.indptr.astype(index_type)
    assert X.has_canonical_format
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    model = GARegressor(psi="softmax", phi="tanh", eta=0.05, max_iter=2, tol=None,
                        **NO_RANGE_CHECK["softmax"])
    assert _peak_bytes(lambda: model.fit(X, y)) < 0.1 * size


def test_a_copy_would_be_seen():
    # The measurement itself: an F-ordered X must be copied to C order.
    X, y = _data()
    model = GARegressor(eta=0.01, max_iter=1, tol=None)  # (eta ||x||^2 < 2)
    assert _peak_bytes(lambda: model.fit(np.asfortranarray(X), y)) >= X.nbytes


def test_float32_input_is_accepted_and_equals_float64():
    X, y = _data(m=500)
    X32 = X.astype(np.float32)
    params = dict(psi="eg_pm", phi="tanh", eta=0.05, U=2.0, max_iter=3, tol=None,
                  random_state=0)
    from32 = GARegressor(**params).fit(X32, y)
    from64 = GARegressor(**params).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(from32.coef_, from64.coef_)
    from32.partial_fit(X32, y)
    from64.partial_fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(from32.coef_, from64.coef_)
    assert from32.cumulative_loss_ == from64.cumulative_loss_


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("psi", ["identity", "softmax", "pnorm"])
def test_non_finite_x_is_reported_without_a_separate_pass(bad, sparse, psi):
    # X is not scanned for NaN/inf before the trial loop (that would be a pass
    # over X); the loop's finite check of the activations catches them instead.
    X, y = _data(m=200, n=5)
    model = GARegressor(psi=psi, phi="tanh", eta=0.05, p=3.0).partial_fit(X, y)
    before = model.coef_.copy(), model.t_, model.cumulative_loss_
    X_bad = X.copy()
    X_bad[150, 3] = bad
    X_bad = sp.csr_matrix(X_bad) if sparse else X_bad
    for call in (model.partial_fit, GARegressor(psi=psi, phi="tanh", eta=0.05).fit):
        with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
            call(X_bad, y)
    np.testing.assert_array_equal(model.coef_, before[0])
    assert (model.t_, model.cumulative_loss_) == before[1:]


@pytest.mark.parametrize(("count", "n"),
                         [(1, 100), (1, 2**18), (2, 2**18), (2, 3 * 2**17)])
def test_term_arrays_are_separate_contiguous_and_huge_page_aligned(count, n):
    # The kernel's work arrays: from 2 MiB up one allocation, aligned to 2 MiB (so
    # that it can be backed by huge pages), and at most 2 MiB larger than asked.
    from sklearn_ga._kernel import HUGE_PAGE, _term_arrays

    terms = _term_arrays(count, 2, n)
    assert terms.shape == (count, 2, n) and terms.dtype == np.float64
    assert all(t.flags.c_contiguous for t in terms)
    for i, term in enumerate(terms):
        term[...] = i
    assert [np.unique(t).tolist() for t in terms] == [[i] for i in range(count)]
    if terms.nbytes >= HUGE_PAGE:
        assert terms.ctypes.data % HUGE_PAGE == 0
        assert terms.base.nbytes <= max(terms.nbytes + HUGE_PAGE, 2 * HUGE_PAGE)
    else:
        assert terms.base is None


def test_the_loops_scratch_is_a_few_rows_not_parameter_sized():
    # With an option, dense rows give the loop's scratch rows of n entries: three
    # of them (the implicit, natural and geodesic steps work on whole rows), not
    # one more per output (EG+-'s den of a CSR row, which only its plain CSR run
    # uses).
    rng = np.random.default_rng(0)
    k, n = 20, 20_000
    X, Y = rng.standard_normal((4, n)), rng.dirichlet(np.ones(k), size=4)
    model = GARegressor(psi="softmax", phi="softmax", update="natural", eta=1e-3)
    model.partial_fit(X, Y)
    theta_bytes = model.theta_.nbytes
    peak = _peak_bytes(lambda: model.partial_fit(X, Y))
    # theta's rollback copy, the terms (padded by 2 MiB for huge pages: 0.66 of
    # theta_ here), coef_ and the scratch rows (0.2): 3.9 theta_ sizes, 4.9 when
    # the scratch held a row per output.
    assert peak < 4.4 * theta_bytes, peak / theta_bytes


@pytest.mark.parametrize("psi, options", [
    ("identity", {}),  # eta="theory": the row bounds read the rows too
    ("eg_pm", {"eta": 0.05, "shuffle": False}),
    ("softmax", {"eta": 0.05, "average": True}),
    ("pnorm", {"eta": 0.01, "p": 3.0, "learning_rate": "invscaling"}),
])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_float32_rows_fit_the_float64_model_without_a_copy(psi, options, weighted):
    # The passes read a float32 X as float64 a block of rows at a time: the model
    # is the one fit on X converted to float64, to the bit (the same values in
    # the same trials), and no copy of X is made (a float64 one would be 200%).
    X, y = _data()
    X32 = X.astype(np.float32)
    weights = np.linspace(0.5, 2.0, X.shape[0]) if weighted else None
    model = GARegressor(psi=psi, phi="tanh", U=5.0, max_iter=2, tol=None,
                        random_state=0, **options)
    reference = model.fit(X32.astype(np.float64), y, sample_weight=weights)
    coef, intercept = reference.coef_.copy(), reference.intercept_.copy()
    # (the float64 path's cumulative loss is summed chunk by chunk, as timed)
    loss, t = reference.cumulative_loss_, reference.t_
    assert t == 2 * X.shape[0]
    peak = _peak_bytes(lambda: model.fit(X32, y, sample_weight=weights))
    # The per-row vectors of any fit (targets, order, rates, the theory rate's
    # bounds, and in later passes its quantile and per-row rates): 8 bytes a row
    # each, 4% of these float32 rows; the blocks add at most 1/64 of X.
    assert peak < 0.35 * X32.nbytes
    assert np.array_equal(model.coef_, coef)
    assert np.array_equal(model.intercept_, intercept)
    assert model.t_ == t
    assert model.cumulative_loss_ == pytest.approx(loss, rel=1e-12)


def test_float32_partial_fit_and_classifier_equal_float64():
    X, y = _data()
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)
    for data in (X64, X32):
        model = GAClassifier(eta=0.1, random_state=0, max_iter=2, tol=None)
        model.fit(data, y > 0)
        online = GARegressor(eta=0.01).partial_fit(data[:100], y[:100])
        online.partial_fit(data[100:], y[100:])
        if data is X64:
            expected = model.coef_.copy(), online.coef_.copy(), online.t_
    assert np.array_equal(model.coef_, expected[0])
    assert np.array_equal(online.coef_, expected[1])
    assert online.t_ == expected[2] == X.shape[0]
    assert model.predict(X32).tolist() == model.predict(X64).tolist()


def test_float32_with_nan_is_refused_and_the_model_kept():
    X, y = _data(m=2000)
    X32 = X.astype(np.float32)
    model = GARegressor(eta=0.01).partial_fit(X32, y)
    coef, t = model.coef_.copy(), model.t_
    X32[1500, 3] = np.nan  # in a later block than the first
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(X32, y)
    assert np.array_equal(model.coef_, coef)
    assert model.t_ == t
