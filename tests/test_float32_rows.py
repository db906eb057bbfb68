"""A float32 X's rows, read by the compiled run one at a time as float64: the model
is the one fit on X converted to float64 first, to the bit, for the psi whose dense
update sums the next trial's dot product in its pass (it reads the next row too)."""

import numpy as np
import pytest

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
