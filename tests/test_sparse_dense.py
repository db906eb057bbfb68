"""The CSR path of the trial loop learns exactly what the dense path learns.

The kernel has two code paths per psi: dense rows recompute the weights of a row
from theta after each update, CSR rows update only the touched coordinates and the
normalizer incrementally (O(nnz) per trial). Both must agree on the same data, for
every (psi, phi), in fit (shuffled epochs) and partial_fit.
"""


import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor, GARegressorCV

RTOL, ATOL = 1e-9, 1e-12


def _inputs(m=120, n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * (rng.random((m, n)) < 0.25)
    X[0] = 0.0  # an empty row
    return X


def _regression_targets(phi, m, seed=1):
    rng = np.random.default_rng(seed)
    if phi == "softmax":
        return rng.dirichlet(np.ones(3), size=m)
    low, high = {"identity": (-2, 2), "logistic": (0, 1), "tanh": (-1, 1),
                 "arctan": (-1.2, 1.2), "exp": (0, 3)}[phi]
    y = rng.uniform(low, high, size=m)
    if phi in ("logistic", "tanh"):
        y[:4] = [low, high, high, low]  # the edges of the range, where phi saturates
    return y


def _assert_same_model(dense, sparse):
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(sparse.theta_, dense.theta_, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=RTOL,
                               atol=ATOL)
    np.testing.assert_allclose(sparse.cumulative_loss_, dense.cumulative_loss_,
                               rtol=RTOL)
    assert sparse.t_ == dense.t_


def _eta(psi, phi):
    # EGU, Burg and the exponential transfer have no slope bound: small steps.
    if (psi, phi) == ("burg", "exp"):  # (weights and predictions grow each other)
        return 2e-4
    return {2: 0.002, 1: 0.02, 0: 0.1}[(psi in ("exp", "burg")) + (phi == "exp")]


REGRESSION = [(psi, phi) for psi in PSI for phi in PHI if PHI[phi].regression]
CLASSIFICATION = [(psi, phi) for psi in PSI for phi in PHI if PHI[phi].classification]


@pytest.mark.parametrize("psi, phi", REGRESSION)
def test_regressor_csr_equals_dense(psi, phi):
    X = _inputs()
    y = _regression_targets(phi, X.shape[0])
    params = dict(psi=psi, phi=phi, eta=_eta(psi, phi), U=3.0, p=3.0, max_iter=4,
                  tol=None, random_state=0)
    dense = GARegressor(**params).fit(X, y)
    sparse = GARegressor(**params).fit(sp.csr_matrix(X), y)
    _assert_same_model(dense, sparse)
    dense.partial_fit(X, y)
    sparse.partial_fit(sp.csr_matrix(X), y)
    _assert_same_model(dense, sparse)


@pytest.mark.parametrize("psi, phi", CLASSIFICATION)
def test_classifier_csr_equals_dense(psi, phi):
    X = _inputs()
    labels = np.random.default_rng(2).integers(0, 3, size=X.shape[0])
    params = dict(psi=psi, phi=phi, eta=_eta(psi, phi), U=3.0, p=3.0, max_iter=4,
                  tol=None, random_state=0)
    dense = GAClassifier(**params).fit(X, labels)
    sparse = GAClassifier(**params).fit(sp.csr_matrix(X), labels)
    _assert_same_model(dense, sparse)
    np.testing.assert_array_equal(sparse.predict(X), dense.predict(X))


@pytest.mark.parametrize("psi", list(PSI))
def test_csr_with_many_features_equals_dense(psi):
    # n much larger than the nonzeros of the data: most coordinates are never
    # touched, so the normalizers live on incremental updates alone.
    rng = np.random.default_rng(3)
    m, n = 300, 2000
    X = np.zeros((m, n))
    for row in X:
        row[rng.choice(n, size=5, replace=False)] = rng.standard_normal(5)
    y = np.tanh(X[:, :50].sum(axis=1))
    # (Burg's weights grow without bound as a parameter nears 0: a smaller eta.)
    params = dict(psi=psi, phi="tanh", eta=0.05 if psi == "burg" else 0.5, U=5.0,
                  p=2 * np.log(n))
    dense = GARegressor(**params).partial_fit(X, y)
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), y)
    _assert_same_model(dense, sparse)


@pytest.mark.parametrize("psi", list(PSI))
def test_non_canonical_csr_equals_dense(psi):
    # Duplicate column indices in a row mean their sum (scipy's convention), and
    # unsorted indices are allowed: the input is not modified.
    X = _inputs(m=40, n=8)
    y = np.tanh(X[:, 0] - X[:, 1])
    csr = sp.csr_matrix(X)
    data, indices, indptr = [], [], [0]
    for i in range(X.shape[0]):
        cols, vals = csr.indices[csr.indptr[i]:csr.indptr[i + 1]], csr[i].data
        for col, val in zip(cols[::-1], vals[::-1], strict=True):
            data += [0.25 * val, 0.75 * val]
            indices += [col, col]
        indptr.append(len(data))
    messy = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)),
                          shape=X.shape)
    assert not messy.has_canonical_format
    before = messy.data.copy(), messy.indices.copy()
    params = dict(psi=psi, phi="tanh", eta=0.3, U=2.0, p=3.0)
    dense = GARegressor(**params).partial_fit(X, y)
    sparse = GARegressor(**params).partial_fit(messy, y)
    _assert_same_model(dense, sparse)
    np.testing.assert_array_equal(messy.data, before[0])
    np.testing.assert_array_equal(messy.indices, before[1])


def dense_and_csr(params, X, y):
    """What a dense and a CSR call of ``GARegressor(**params).partial_fit`` end in:
    the error's message, or the parameters."""
    outcomes = []
    for form in (np.asarray, sp.csr_matrix):
        model = GARegressor(**params)
        try:
            model.partial_fit(form(X), y)
        except ValueError as error:
            outcomes.append(str(error))
        else:
            outcomes.append((model.theta_.copy(), model.intercept_.copy()))
    return outcomes


@pytest.mark.parametrize("psi", ["eg_pm", "exp"])
@pytest.mark.parametrize("phi", ["identity", "tanh"])
def test_implicit_steps_past_the_doubles_are_decided_alike(psi, phi):
    # eta U past the largest double (KW01 eq. 22 at an infinite rate): a zero of a
    # dense row met inf * 0 (NaN), which CSR rows, without it, never meet, and the
    # clipping of the activation turned that NaN into -inf: a dense row diverged, or
    # learned nothing, where a CSR row learned. An infinite step of an x_i != 0
    # is a divergence on both paths; a row of zeros changes no parameter. (The trial
    # reported is the first whose prediction reads a non-finite weight: a CSR row
    # without that coordinate does not read it.)
    rng = np.random.default_rng(7)
    for eta, U in [(1e300, 1e150), (1e100, 1e300), (1e200, 1e150), (1e100, 1e150),
                   (1.0, 1e10)]:
        for _ in range(6):
            X = rng.choice([0.0, -0.46, 1.0, 3e-5, -1e5], size=(3, rng.integers(1, 3)))
            y = rng.uniform(-0.9, 0.9, 3) * (1.0 if phi == "tanh" else 10.0)
            dense, csr = dense_and_csr({"psi": psi, "phi": phi, "update": "implicit",
                                        "eta": eta, "U": U}, X, y)
            if isinstance(dense, str) or isinstance(csr, str):
                assert "diverged at trial" in dense and "diverged at trial" in csr
            else:
                for a, b in zip(dense, csr, strict=True):
                    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-15)


def test_a_row_of_zeros_learns_its_intercept_at_an_infinite_rate():
    # eta U = 1e400: b' = b - eta (tanh(b') - y) is b' = arctanh(y) to rounding.
    for form in (np.asarray, sp.csr_matrix):
        model = GARegressor(psi="eg_pm", phi="tanh", update="implicit", eta=1e100,
                            U=1e300).partial_fit(form(np.zeros((1, 2))), [-0.42])
        np.testing.assert_allclose(model.intercept_, np.arctanh(-0.42), rtol=1e-12)
        np.testing.assert_array_equal(model.theta_, 0.0)


INDEX_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64]


@pytest.mark.parametrize("indices, indptr", [
    *[(kind, kind) for kind in INDEX_TYPES], (np.int32, np.int64),
    (np.uint16, np.int8)], ids=lambda kind: np.dtype(kind).name)
def test_every_integer_index_type_gives_the_int32_model(indices, indptr):
    # scipy holds CSR indices of any integer type; the loop reads int32 or int64
    # (converted once per call, in Python). 12 rows of 30 features: int8 holds nnz.
    X = sp.csr_matrix(_inputs(m=12))
    y = _regression_targets("identity", X.shape[0])
    typed = X.copy()
    typed.indices, typed.indptr = X.indices.astype(indices), X.indptr.astype(indptr)
    given = typed.indices.copy(), typed.indptr.copy()
    wide = sp.csr_matrix((np.ones(3), [5, 700, 1999], [0, 1, 3]), shape=(2, 2000))
    typed_wide = wide.copy()
    typed_wide.indices = wide.indices.astype(np.int16)
    for make in (lambda: GARegressor(psi="eg_pm", eta=0.1, random_state=0),
                 lambda: GARegressorCV(psi="eg_pm", etas=[0.01, 0.1], random_state=0)):
        reference, model = make().fit(X, y), make().fit(typed, y)
        np.testing.assert_array_equal(model.coef_, reference.coef_)
        np.testing.assert_array_equal(model.predict(typed), reference.predict(X))
        reference.partial_fit(X, y)
        model.partial_fit(typed, y)
        np.testing.assert_array_equal(model.coef_, reference.coef_)
        assert model.cumulative_loss_ == reference.cumulative_loss_
    # A few rows of many features are predicted from their columns' weights.
    model = GARegressor(psi="eg_pm", eta=0.1).partial_fit(wide, [1.0, 2.0])
    np.testing.assert_array_equal(model.predict(typed_wide), model.predict(wide))
    np.testing.assert_array_equal(typed.indices, given[0])  # (X is not changed)
    np.testing.assert_array_equal(typed.indptr, given[1])


def test_indices_that_are_no_integers_are_refused():
    X = sp.csr_matrix(_inputs(m=12))
    y = _regression_targets("identity", X.shape[0])
    model = GARegressor().fit(X, y)
    X.indices = X.indices.astype(np.float64)
    for call in (lambda: GARegressor().fit(X, y), lambda: model.partial_fit(X, y),
                 lambda: model.predict(X)):
        with pytest.raises(ValueError, match="indices have dtype float64"):
            call()


@pytest.mark.parametrize("psi", ["softmax", "eg_pm", "exp"])
@pytest.mark.usefixtures("without_runaway_check")
def test_csr_terms_that_underflow_and_grow_back_equal_dense(psi):
    # In a CSR run the exponential terms carry theta (theta = ln term + shift) and
    # theta is written back at the end; a term driven below 1e-300 hands theta back
    # to the parameter array. Push coordinate 1 about 750 below the others (its
    # weight underflows to 0), then back up past them, in steps under 30 (the
    # multiplicative path), with other coordinates touched in between.
    n, steps = 4, 35
    X = np.zeros((2 * steps + 40, n))
    X[:, 1] = 1.0
    X[::3, 2] = 0.5
    X[1::5, 3] = -0.25
    y = np.r_[np.full(steps, -25.0), np.full(steps + 40, 20.0)]
    params = dict(psi=psi, eta=1.0, U=1.0, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X[:steps], y[:steps])
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X[:steps]), y[:steps])
    _assert_same_model(dense, sparse)
    assert sparse.theta_[0, 1] < -700  # e^{theta_1 - shift} < 1e-300
    lowest, highest = sparse.theta_[0, 1], -np.inf
    for t in range(steps, X.shape[0]):
        dense.partial_fit(X[t:t + 1], y[t:t + 1])
        sparse.partial_fit(sp.csr_matrix(X[t:t + 1]), y[t:t + 1])
        _assert_same_model(dense, sparse)
        highest = max(highest, sparse.theta_[0, 1])
    assert highest > lowest + 700  # it grew back


@pytest.mark.parametrize("psi", ["softmax", "eg_pm"])
def test_csr_terms_growing_past_e30_are_reshifted_equal_dense(psi):
    # Short steps (under 1/2, the grouped multiplicative loop) drive theta_0 up by
    # about 720 in 2000 trials: a term above e^30 must re-shift the row, or it would
    # overflow near e^709. n = 200 so that no periodic recompute (every 32 n touched
    # coordinates) does it instead.
    X = np.zeros((2000, 200))
    X[:, 0] = 1.0
    X[::7, 1] = 0.5
    y = np.full(2000, 10.0)
    params = dict(psi=psi, eta=0.04, U=1.0, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X, y)
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), y)
    assert sparse.theta_[0, 0] > 709
    _assert_same_model(dense, sparse)


def test_csr_pnorm_terms_growing_past_e30_are_reshifted_equal_dense():
    # theta_0 grows from 0 to 1e13: its term |theta / shift|^p must re-shift the row
    # once above e^30 (then the shift follows theta), or later terms are computed in
    # the wrong units (and would overflow past |theta / shift| ~ 1e12 at p = 25).
    X = np.zeros((30, 200))
    X[:, 0] = 1.0
    X[::3, 1] = 0.5
    y = np.full(30, 1e13)
    params = dict(psi="pnorm", p=25.0, eta=0.5, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X, y)
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), y)
    assert sparse.theta_[0, 0] > 1e12
    _assert_same_model(dense, sparse)


@pytest.mark.parametrize("p", [40.0, 40.5, 65.0])
@pytest.mark.usefixtures("without_runaway_check")
def test_csr_pnorm_step_past_every_power_in_one_trial_equals_dense(p):
    # One step takes theta from 0.01 to -1e10: in units of the old shift its term
    # |theta / shift|^(p - 1) = 1e12^(p - 1) overflows, though the model (one feature:
    # its weight is theta) is representable. The row must be measured in a new shift,
    # not reported as diverged (integer p takes its powers by products, others by
    # exp and log).
    X = np.array([[1.0], [1e7]])
    y = np.array([1.0, 0.0])
    params = dict(psi="pnorm", p=p, eta=0.01, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X, y)
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), y)
    assert sparse.coef_[0] < -1e9
    _assert_same_model(dense, sparse)


@pytest.mark.parametrize("update", ["explicit", "implicit"])
@pytest.mark.parametrize("p", [3.0, 24.95])
def test_pnorm_learns_subnormal_parameters_dense_and_csr(p, update):
    # The first step leaves theta_0 = 1e-309, below the smallest normal double: a
    # row measured in units of it (1 / 1e-309 overflows) was reported as diverged.
    # The fourth row's implicit step on CSR input measures the untouched theta_1,
    # subnormal too, in units of its own.
    X = np.array([[1e-300, 0.0], [1.0, 0.0], [0.0, 1e-300], [1.0, 0.0], [1.0, 1.0]])
    y = np.ones(5)
    params = dict(psi="pnorm", p=p, eta=1e-9, update=update, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X[:4], y[:4])
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X[:4]), y[:4])
    assert 0 < sparse.theta_[0, 1] < 1e-300 < sparse.theta_[0, 0]
    expected = PSI["pnorm"].weights(sparse.theta_, 1.0, p)[0]
    np.testing.assert_allclose(sparse.coef_, expected, rtol=1e-12)
    _assert_same_model(dense, sparse)
    dense.partial_fit(X[4:], y[4:])
    sparse.partial_fit(sp.csr_matrix(X[4:]), y[4:])
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12)


def test_csr_short_steps_beside_underflowed_terms_equal_dense():
    # Short steps (the grouped multiplicative loop) on a row whose terms underflow:
    # EG+- driven far outside its l1 ball puts theta_0 near 7500, so every other
    # coordinate's e^{theta - shift} and theta_0's e^{-theta - shift} are 0 and theta
    # lives in the parameter array. A second pass with a small eta must still move it.
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(3000, 5))
    params = dict(psi="eg_pm", eta=0.5, U=5.0, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X, 8.0 * X[:, 0])
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), 8.0 * X[:, 0])
    assert sparse.theta_[0, 0] > 7000
    before = sparse.theta_.copy()
    y = 4.0 * X[:, 0] + X[:, 1]
    dense.set_params(eta=1e-3).partial_fit(X, y)
    sparse.set_params(eta=1e-3).partial_fit(sp.csr_matrix(X), y)
    assert np.abs(sparse.theta_ - before).max() > 1.0
    _assert_same_model(dense, sparse)


@pytest.mark.parametrize("psi", ["sphere", "simplex"])
def test_csr_long_geodesic_steps_equal_dense(psi):
    # Large steps rebuild the whole row from its weights (KMWW Examples 2 and 3, the
    # kernel's long geodesic step); in a CSR pass, where the terms hold theta, the
    # row's theta is brought up to date first. Several rows per pass, so the terms
    # hold theta across such steps. Only 20: steps this long are chaotic (a change
    # of X by 1e-15 relative changes the weights by ~1 after 200 trials, dense alone).
    X = _inputs(m=20, n=8) * 4.0
    y = np.tanh(X[:, 0] - X[:, 1] + X[:, 2])
    params = dict(psi=psi, phi="tanh", eta=8.0, U=1.0)
    dense = GARegressor(**params).partial_fit(X, y)
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), y)
    _assert_same_model(dense, sparse)


def test_csr_eg_pm_reshift_past_300_of_one_output_equals_dense():
    # During a CSR pass EG+- stores one term per coordinate (den = e^{-2 shift} / num)
    # while every row's shift is at most 300. Output 0 drives theta_0 past 700 in
    # one pass, which ends that form for both rows mid-pass: output 1, whose
    # parameters stay small, must carry on from its own terms, not stale ones.
    X = np.zeros((2000, 200))
    X[:, 0] = 1.0
    X[::7, 1] = 0.5
    X[::3, 2] = -0.25
    Y = np.c_[np.full(2000, 10.0), 0.5 + 0.1 * np.sin(np.arange(2000))]
    params = dict(psi="eg_pm", eta=0.04, U=1.0, fit_intercept=False)
    dense = GARegressor(**params).partial_fit(X, Y)
    sparse = GARegressor(**params).partial_fit(sp.csr_matrix(X), Y)
    assert sparse.theta_[0, 0] > 700 and np.abs(sparse.theta_[1]).max() < 300
    assert np.abs(sparse.theta_[1]).max() > 0.1  # output 1 moved
    _assert_same_model(dense, sparse)


@pytest.mark.parametrize("psi", ["softmax", "eg_pm", "exp", "sphere", "simplex"])
def test_a_wide_batch_writes_back_every_parameter_it_touched(psi):
    # A CSR run of these psi keeps theta in its terms and writes back, at its end,
    # the coordinates its rows touched when they are fewer than n, in blocks: here
    # 600 distinct coordinates (several blocks) of 4000, each touched once.
    rng = np.random.default_rng(5)
    m, nnz, n = 30, 20, 4000
    columns = np.sort(rng.permutation(n)[:m * nnz].reshape(m, nnz), axis=1)
    X = sp.csr_matrix((rng.uniform(-1, 1, m * nnz), columns.ravel(),
                       np.arange(0, m * nnz + 1, nnz)), shape=(m, n))
    y = np.asarray(X[:, :nnz].sum(axis=1)).ravel() + rng.normal(size=m)
    dense = GARegressor(psi=psi, eta=0.5, U=3.0).partial_fit(X.toarray(), y)
    sparse = GARegressor(psi=psi, eta=0.5, U=3.0).partial_fit(X, y)
    assert np.count_nonzero(dense.theta_ != dense.theta_[0, -1]) > 500  # all moved
    _assert_same_model(dense, sparse)


def _wide_csr(m, n, nnz, seed):
    rng = np.random.default_rng(seed)
    columns = np.sort(np.argsort(rng.random((m, n)), axis=1)[:, :nnz], axis=1)
    return sp.csr_matrix((rng.uniform(-1, 1, m * nnz), columns.ravel(),
                          np.arange(0, m * nnz + 1, nnz)), shape=(m, n))


@pytest.mark.parametrize("psi", ["sphere", "simplex"])
def test_a_long_csr_stream_keeps_geodesic_weights_on_their_manifold(psi):
    # A CSR run updates the geodesic normalizer sum num^2 by the change of the touched
    # terms only (KMWW Examples 2, 3), never summing it afresh before 32 n touched
    # coordinates: after 4000 rows it must still put the weights on the sphere of
    # radius U, or on the simplex, to rounding.
    X = _wide_csr(4000, 2000, 10, seed=6)
    y = np.tanh(X[:, :20].sum(axis=1).A.ravel())
    model = GARegressor(psi=psi, phi="tanh", eta=0.3, U=2.0).partial_fit(X, y)
    assert np.abs(model.theta_ - model.theta_[0, 0]).max() > 0.1  # it learned
    if psi == "sphere":
        np.testing.assert_allclose(np.linalg.norm(model.coef_), 2.0, rtol=1e-13)
    else:
        np.testing.assert_allclose(model.coef_.sum(), 1.0, rtol=1e-13)
    dense = GARegressor(psi=psi, phi="tanh", eta=0.3, U=2.0).partial_fit(X.toarray(), y)
    _assert_same_model(dense, model)
