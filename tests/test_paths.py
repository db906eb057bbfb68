"""One run, every path: the general path, the one-row path, the CV grid's
configuration and the River learners learn the same rows to the same bits.

Each path is a different caller of the one compiled trial: the general path runs a
batch through ``TrialLoop.run_dense`` or ``run_csr``, the one-row path one row per
``partial_fit`` through ``OneRow``, the CV grid one loop per configuration in lock
step, and ``sklearn_ga.river`` a dict row through ``DictRows``. Where two paths
take the same steps they must agree exactly: theta, intercept, cumulative loss and
predictions, for every psi, with each option that the paths share (the CV grid
searches the explicit rule at a constant rate, unaveraged; the River learners
neither average nor schedule). Kept in the ulp mode's files: an agreement that
held for one rounding of NumPy's transcendental functions only would be no
agreement.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from test_one_row import general_path

from sklearn_ga import PSI, GARegressor, GARegressorCV
from sklearn_ga import river as ga_river

M, N, FIRST = 80, 5, 5
# (A hand-set scale for the psi that have one, and p > 2 for pnorm's own loop.)
SCALE = {"eg_pm": 3.0, "sphere": 2.0}


def stream(sparse, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((M, N))
    if sparse:
        X[rng.random((M, N)) < 0.4] = 0.0
        X[0] = rng.standard_normal(N)  # (every feature known from the first row)
    y = np.tanh(X @ rng.standard_normal(N) / 2)
    return (sp.csr_matrix(X) if sparse else X), y


def base(psi):
    params = {"psi": psi, "p": 3.0 if psi == "pnorm" else 2.0}
    if psi in SCALE:
        params["U"] = SCALE[psi]
    return params


def cases():
    for psi in PSI:
        eta = 0.005 if psi == "burg" else 0.05
        for phi in ("identity", "tanh"):
            for update in (("explicit",) if PSI[psi].geodesic
                           else ("explicit", "implicit")):
                yield psi, {"phi": phi, "update": update, "eta": eta}
        yield psi, {"phi": "tanh", "eta": eta, "average": True}
        yield psi, {"phi": "tanh", "eta": eta, "learning_rate": "invscaling",
                    "power_t": 0.3}
        yield psi, {"phi": "tanh", "eta": "theory"}


CASES = [pytest.param(psi, options, id=f"{psi}-" + "-".join(
    f"{value}" for value in options.values())) for psi, options in cases()]


def general_and_one_row(params, X, y):
    """The same stream through the general path (batches) and the one-row path."""
    general = GARegressor(**params)
    with general_path():
        general.partial_fit(X[:FIRST], y[:FIRST])
        general.partial_fit(X[FIRST:], y[FIRST:])
    one_row = GARegressor(**params).partial_fit(X[:FIRST], y[:FIRST])
    for t in range(FIRST, M):
        one_row.partial_fit(X[t:t + 1], y[t:t + 1])
    return general, one_row


def assert_same_run(model, reference, X):
    np.testing.assert_array_equal(model.theta_, reference.theta_)
    np.testing.assert_array_equal(model.intercept_, reference.intercept_)
    # (Every path adds each trial's loss to the sum as the trial ends.)
    assert model.cumulative_loss_ == reference.cumulative_loss_
    assert model.t_ == reference.t_
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "options"), CASES)
def test_one_row_and_general_paths_learn_the_same_bits(psi, options, sparse):
    X, y = stream(sparse)
    general, one_row = general_and_one_row({**base(psi), **options}, X, y)
    assert_same_run(one_row, general, X)
    # (Also read one row at a time: the one-row predictions' own sums.)
    for t in range(3):
        np.testing.assert_allclose(one_row.predict(X[t:t + 1]),
                                   general.predict(X[t:t + 1]), rtol=1e-13,
                                   atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(("psi", "options"), [
    case for case in CASES if set(case.values[1]) == {"phi", "update", "eta"}
    and case.values[1]["update"] == "explicit"])
def test_the_grids_configuration_is_the_plain_models_run(psi, options, sparse):
    X, y = stream(sparse)
    params = {**base(psi), **options}
    general, _ = general_and_one_row(params, X, y)
    U = params.get("U", 1.0)
    search = GARegressorCV(psi=psi, phi=params["phi"], p=params["p"],
                           etas=[params["eta"]], Us=[U], max_iter=1)
    search.partial_fit(X[:FIRST], y[:FIRST])
    search.partial_fit(X[FIRST:], y[FIRST:])
    np.testing.assert_array_equal(search.thetas_[0], general.theta_)
    np.testing.assert_array_equal(search.theta_, general.theta_)
    np.testing.assert_array_equal(search.intercept_, general.intercept_)
    assert search.progressive_loss_[0] == general.cumulative_loss_
    np.testing.assert_array_equal(search.predict(X), general.predict(X))


def dict_rows(X):
    X = sp.csr_matrix(X)
    return [{f"x{j}": float(v) for j, v in zip(X.indices[X.indptr[t]:X.indptr[t + 1]],
                                                X.data[X.indptr[t]:X.indptr[t + 1]],
                                                strict=True)}
            for t in range(X.shape[0])]


@pytest.mark.parametrize(("psi", "options"), [
    case for case in CASES if set(case.values[1]) <= {"phi", "update", "eta"}])
def test_the_river_learner_is_the_one_row_csr_run(psi, options):
    # A River row is a CSR row of the features in order of arrival: every one
    # arrives in the first row here, so both models hold the same columns.
    X, y = stream(True)
    params = {**base(psi), **options}
    _, one_row = general_and_one_row(params, X, y)
    # (The River learner's default rule is the implicit one.)
    learner = ga_river.GARegressor(**{"update": "explicit", **params})
    for x, target in zip(dict_rows(X), y, strict=True):
        learner.learn_one(x, float(target))
    assert list(learner.weights) == [f"x{j}" for j in range(N)]
    assert np.array_equal(list(learner.weights.values()), one_row.coef_)
    assert learner.intercept == one_row.intercept_[0]
    assert learner.cumulative_loss_ == one_row.cumulative_loss_
    for x, t in zip(dict_rows(X[:3]), range(3), strict=True):
        assert learner.predict_one(x) == pytest.approx(
            one_row.predict(X[t:t + 1])[0], rel=1e-13, abs=1e-15)
