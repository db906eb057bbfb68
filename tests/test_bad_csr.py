"""Malformed and non-canonical CSR input: refused before the compiled loop reads
it, or checked row by row as the loop reads it in a first fit, with the model
unchanged; a false canonical flag is not trusted; a CSR step past the exponent
range equals the dense one.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from test_bad_input import assert_same_state, state

from sklearn_ga import GAClassifier, GARegressor, GARegressorCV


def _csr(data, indices, indptr, shape, canonical=None):
    """A CSR matrix built without scipy's checks (as a caller may hand one over)."""
    X = sp.csr_matrix(shape)
    X.data, X.indices, X.indptr = (np.asarray(data, float),
                                   np.asarray(indices, np.int32),
                                   np.asarray(indptr, np.int32))
    if canonical is not None:
        X.has_canonical_format = canonical
    return X


@pytest.mark.parametrize("indices, indptr", [
    ([0, 1, 10_000_000], [0, 2, 3]),   # column index far past n
    ([0, 1, 5], [0, 2, 3]),            # just past n
    ([0, 1, -5], [0, 2, 3]),           # negative
    ([0, 1, 2], [0, 9, 3]),            # indptr past the indices
    ([0, 1, 2], [0, 2, 1]),            # decreasing indptr
    ([0, 1, 2], [1, 2, 3]),            # indptr not starting at 0
], ids=["far", "just-past", "negative", "indptr-past", "decreasing", "offset"])
@pytest.mark.parametrize("canonical", [None, True])
def test_malformed_csr_is_refused_before_the_loop(indices, indptr, canonical):
    # The compiled loop reads X's structure without bounds checks: a malformed
    # matrix (scipy builds one without complaint) must be refused, not read.
    X = _csr([1.0, 2.0, 3.0], indices, indptr, (2, 3), canonical)
    # The default eta="theory" reads X (b of eq. 28) before the loop does; at a
    # given eta, fit's loop checks each row before it reads it (softmax: a lazy
    # run, whose end writes theta back for the rows it ran).
    for model in (GARegressor(eta=0.1), GARegressor(psi="eg_pm"),
                  GARegressor(psi="softmax", eta=0.1),
                  GARegressor(psi="pnorm", eta=0.1), GARegressorCV(etas=[0.1])):
        with pytest.raises(ValueError, match="malformed CSR"):
            model.fit(X, [1.0, 2.0])
    # Predictions go through scipy's product, which reads it unchecked too; later
    # calls of partial_fit check their input in a lighter way.
    fitted = GAClassifier(eta=0.1).fit(np.eye(3)[:2], [0, 1])
    for method in (fitted.predict, fitted.decision_function, fitted.predict_proba,
                   lambda X: fitted.partial_fit(X, [0, 1])):
        with pytest.raises(ValueError, match="malformed CSR"):
            method(X)


# (U=1: the scale eta=0.05 suits, for EG±.)
@pytest.mark.parametrize("make_model", [
    lambda psi: GARegressor(psi=psi, eta=0.05, U=1.0, p=3.0, shuffle=True,
                            random_state=0),
    lambda psi: GAClassifier(psi=psi, phi="logistic", eta=0.05, U=1.0, p=3.0,
                             random_state=0),
    # (psi = identity: theta held outputs innermost, 360 entries for 30 columns)
    lambda psi: GAClassifier(psi=psi, phi="softmax", eta=0.05, U=1.0, p=3.0,
                             random_state=0),
], ids=["regressor", "classifier-outputs-apart", "classifier-softmax"])
@pytest.mark.parametrize("psi", ["identity", "softmax", "eg_pm", "pnorm"])
@pytest.mark.parametrize("flaw", ["index-past-n", "negative-index", "indptr-past",
                                  "decreasing-indptr", "unsorted", "duplicate"])
def test_fit_checks_each_csr_row_before_reading_it(make_model, psi, flaw):
    # fit at a given eta leaves the structure to its loop's rows: the flawed row
    # comes last in X, after trials that change the parameters. A malformed X is
    # refused, and the model is as it was; an unsorted one is learned as sorted.
    rng = np.random.default_rng(1)
    dense = sp.random(60, 30, density=0.2, format="csr", random_state=rng)
    dense.data = rng.uniform(-1, 1, dense.data.size)
    flawed = dense.copy()
    last = slice(flawed.indptr[-2], flawed.indptr[-1])
    assert last.stop - last.start >= 3
    if flaw == "index-past-n":
        flawed.indices[last.stop - 1] = 10_000_000
    elif flaw == "negative-index":
        flawed.indices[last.start] = -4
    elif flaw == "indptr-past":
        flawed.indptr[-2] = flawed.indptr[-1] + 50
    elif flaw == "decreasing-indptr":
        flawed.indptr[-2] = flawed.indptr[-3] - 1
    elif flaw == "unsorted":
        flawed.indices[last] = flawed.indices[last][::-1].copy()
        flawed.data[last] = flawed.data[last][::-1].copy()
    else:
        flawed.indices[last.start + 1] = flawed.indices[last.start]
        dense = _csr(flawed.data.copy(), flawed.indices.copy(), flawed.indptr.copy(),
                     flawed.shape)
        dense.sum_duplicates()  # (in place)
    flawed.has_canonical_format = True  # (not trusted)
    classifier = isinstance(make_model(psi), GAClassifier)
    y = np.arange(60) % 3 if classifier else dense @ np.ones(30)
    model = make_model(psi).fit(dense[::2], y[::2])
    if flaw in ("unsorted", "duplicate"):
        reference = make_model(psi).fit(dense.toarray(), y)
        np.testing.assert_allclose(model.fit(flawed, y).theta_, reference.theta_,
                                   rtol=1e-12, atol=1e-15)
        return
    before = state(model)
    with pytest.raises(ValueError, match="malformed CSR"):
        model.fit(flawed, y)
    assert_same_state(before, state(model))


@pytest.mark.parametrize("psi", ["identity", "softmax", "eg_pm", "pnorm"])
def test_a_false_canonical_flag_is_not_trusted(psi):
    # Duplicated and unsorted indices flagged canonical: summed as scipy would.
    X = _csr([1.0, 2.0, 3.0, 4.0, -1.0], [2, 0, 0, 1, 3], [0, 3, 5], (2, 4), True)
    expected = _csr([1.0, 2.0, 3.0, 4.0, -1.0], [2, 0, 0, 1, 3], [0, 3, 5], (2, 4))
    expected.sum_duplicates()
    y = [1.0, 0.5]
    model = GARegressor(psi=psi, eta=0.1, p=3.0).partial_fit(X, y)
    reference = GARegressor(psi=psi, eta=0.1, p=3.0).partial_fit(expected.toarray(), y)
    np.testing.assert_allclose(model.theta_, reference.theta_, rtol=1e-12)


@pytest.mark.parametrize("make_model", [
    lambda: GARegressor(psi="softmax", eta=1.0, fit_intercept=False),
    lambda: GARegressor(psi="exp", eta=1e-3, fit_intercept=False),
])
def test_one_step_past_the_exponent_range_on_csr_equals_dense(make_model):
    # theta jumps by about 1000 in one step: e^{theta - shift} overflows against the
    # row's old shift, and the lazy CSR run must not take ln(inf) for theta.
    X = np.array([[10.0, 0.0, 1.0]])
    y = np.array([100.0])
    dense = make_model().partial_fit(X, y)
    assert np.all(np.isfinite(dense.theta_))
    sparse = make_model().partial_fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.theta_, dense.theta_, rtol=1e-12)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12)
