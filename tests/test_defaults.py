"""The defaults work on real data: every valid configuration of every estimator fits
scikit-learn's bundled data sets with its default rate; meta-estimators work around
the defaults; EG± fits an uncentred target; a loss that runs away is an error."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import StackingClassifier
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.feature_selection import SelectFromModel
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import Ridge
from sklearn.model_selection import HalvingGridSearchCV, KFold, cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ga import (
    PHI,
    PSI,
    GAClassifier,
    GAClassifierCV,
    GARegressor,
    GARegressorCV,
)
from sklearn_ga._passes import initial_model_loss

X_DIABETES, Y_DIABETES = load_diabetes(return_X_y=True)
X_DIABETES = StandardScaler().fit_transform(X_DIABETES)
X_IRIS, Y_IRIS = load_iris(return_X_y=True)
X_IRIS = StandardScaler().fit_transform(X_IRIS)


def diabetes_targets(phi):
    """The diabetes progression, mapped into the range of phi."""
    unit = (Y_DIABETES - Y_DIABETES.min()) / np.ptp(Y_DIABETES)  # [0, 1]
    return {"identity": Y_DIABETES, "exp": Y_DIABETES, "logistic": unit,
            "tanh": 2 * unit - 1, "arctan": 1.5 * (2 * unit - 1),
            "softmax": np.column_stack([unit, 1 - unit])}[phi]


def valid(psi, phi, update, loss):
    """Whether the estimators accept this configuration (see Engine._options)."""
    return not ((PSI[psi].geodesic and update != "explicit")
                or (update == "implicit" and (loss != "matching" or phi == "sign"))
                or (loss == "square" and phi == "sign"))


CONFIGURATIONS = [
    (estimator, psi, phi, update, loss)
    for estimator in (GARegressor, GAClassifier)
    for psi in PSI
    for phi in PHI
    if (PHI[phi].regression if estimator is GARegressor else PHI[phi].classification)
    for update in ("explicit", "implicit", "natural")
    for loss in ("matching", "square")
    if valid(psi, phi, update, loss)
    and not (update == "natural" and PSI[psi].no_natural_rate)  # (the test below)
]


# (max_iter=1000 may end before the loss stops improving: a warning, not a failure.)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator, psi, phi, update, loss", CONFIGURATIONS,
                         ids=lambda value: getattr(value, "__name__", value))
def test_every_configuration_fits_real_data_with_its_defaults(estimator, psi, phi,
                                                              update, loss):
    model = estimator(psi=psi, phi=phi, update=update, loss=loss, random_state=0)
    if estimator is GARegressor:
        X, y = X_DIABETES, diabetes_targets(phi)
    else:
        X, y = X_IRIS, Y_IRIS
    model.fit(X, y)
    prediction = model.predict(X)
    assert np.all(np.isfinite(prediction)) if estimator is GARegressor else (
        set(prediction) <= set(Y_IRIS))
    assert np.isfinite(model.eta_) and model.eta_ > 0
    if estimator is GAClassifier:
        assert model.score(X, y) > 0.5  # (three classes: chance is 1/3)
    # partial_fit, one row per call, from scratch.
    stream = estimator(psi=psi, phi=phi, update=update, loss=loss)
    for i in range(0, 60):
        extra = {"classes": np.unique(Y_IRIS)} if estimator is GAClassifier else {}
        stream.partial_fit(X[i:i + 1], y[i:i + 1], **extra)
    assert np.all(np.isfinite(stream.coef_))


def test_a_natural_step_without_a_rule_refuses_the_default_rate_clearly():
    refused = [name for name in PSI if PSI[name].no_natural_rate]
    assert refused == ["burg"]
    for psi in refused:
        model = GARegressor(psi=psi, update="natural")
        with pytest.raises(ValueError, match="eta='theory' is not available for "
                                             f"psi='{psi}' with update='natural'"
                                             ".*numeric eta"):
            model.fit(X_DIABETES, Y_DIABETES)
        assert not hasattr(model, "coef_")


# (Not burg: the CV grid's rates, from 1e-4, all diverge on the raw diabetes target.)
@pytest.mark.parametrize("psi", [name for name in PSI if name != "burg"])
@pytest.mark.parametrize("estimator, phis", [
    (GARegressorCV, ["identity", "logistic", "exp"]),
    (GAClassifierCV, ["logistic", "softmax", "sign"]),
])
def test_the_cv_estimators_fit_real_data_with_their_defaults(estimator, phis, psi):
    for phi in phis:
        if estimator is GARegressorCV:
            X, y = X_DIABETES, diabetes_targets(phi)
        else:
            X, y = X_IRIS, Y_IRIS
        model = estimator(psi=psi, phi=phi).fit(X, y)
        assert np.all(np.isfinite(model.predict(X)))


def test_meta_estimators_work_around_the_defaults():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    # The Perceptron (phi="sign") one-vs-rest, and calibrated: its default rate.
    ovr = OneVsRestClassifier(GAClassifier(phi="sign")).fit(X_IRIS, Y_IRIS)
    assert ovr.score(X_IRIS, Y_IRIS) > 0.7  # (chance: 1/3; versicolor is not
    # separable from the rest)
    calibrated = CalibratedClassifierCV(GAClassifier(phi="sign")).fit(X, y)
    assert calibrated.score(X, y) > 0.9
    assert np.allclose(calibrated.predict_proba(X).sum(axis=1), 1.0)
    frozen = CalibratedClassifierCV(FrozenEstimator(GAClassifier().fit(X, y)))
    assert frozen.fit(X, y).score(X, y) > 0.9
    stacked = StackingClassifier([("logistic", GAClassifier()),
                                  ("eg", GAClassifier(psi="eg_pm", U=10.0))],
                                 final_estimator=GAClassifier()).fit(X, y)
    assert stacked.score(X, y) > 0.9
    # phi="exp" predicts positive targets: exp(y) of the standardized progression.
    standardized = (Y_DIABETES - Y_DIABETES.mean()) / Y_DIABETES.std()
    transformed = TransformedTargetRegressor(GARegressor(phi="exp"), func=np.exp,
                                             inverse_func=np.log)
    assert transformed.fit(X_DIABETES, standardized).score(
        X_DIABETES, standardized) > 0.2
    # EG±'s weights select the features a sparse target needs.
    rng = np.random.default_rng(0)
    wide = rng.normal(size=(400, 30))
    target = 3 * wide[:, 2] - 2 * wide[:, 7] + 5.0
    selector = SelectFromModel(GARegressor(psi="eg_pm", U=5.0), max_features=2)
    assert set(np.flatnonzero(selector.fit(wide, target).get_support())) == {2, 7}
    search = HalvingGridSearchCV(GARegressor(), {"psi": ["identity", "eg_pm"],
                                                 "U": [1.0, 100.0]},
                                 random_state=0).fit(X_DIABETES, Y_DIABETES)
    assert search.best_score_ > 0.3


def test_eg_pm_fits_an_uncentred_target_as_well_as_gradient_descent():
    # Raw diabetes progression (mean 152), standardized inputs, U the l1 norm of a
    # ridge fit's weights: the intercept's own rate lets EG± reach the target's
    # mean, which the weights' rate (U^2 max ||x||_inf^2 in its b) could not.
    X, y = load_diabetes(return_X_y=True)
    ridge = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    U = np.abs(ridge[-1].coef_).sum()
    folds = KFold(5, shuffle=True, random_state=0)

    def r2(model):
        return cross_val_score(make_pipeline(StandardScaler(), model), X, y,
                               cv=folds).mean()

    gradient_descent = r2(GARegressor(random_state=0))
    eg_pm = r2(GARegressor(psi="eg_pm", U=U, random_state=0))
    assert gradient_descent > 0.4
    assert eg_pm >= gradient_descent - 0.05
    # The plain algorithm (the intercept at the weights' rate) cannot.
    assert r2(GARegressor(psi="eg_pm", U=U, intercept_eta="eta",
                          random_state=0)) < 0


def test_a_loss_that_runs_away_is_an_error_and_changes_nothing():
    # eta ||x||^2 > 2: every gradient descent step overshoots, and the weights grow
    # geometrically while staying finite.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X @ np.array([1.0, -1.0, 0.5, 0.0]) + 10.0
    model = GARegressor(eta=0.6)
    with pytest.raises(ValueError, match="diverged at trial .*running away"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")
    stream = GARegressor(eta=0.6)
    with pytest.raises(ValueError, match="diverged at trial .*running away"):
        for i in range(X.shape[0]):
            before = (stream.coef_.copy(), stream.t_) if i else None
            stream.partial_fit(X[i:i + 1], y[i:i + 1])
    np.testing.assert_array_equal(stream.coef_, before[0])
    assert stream.t_ == before[1] == i
    assert np.max(np.abs(stream.coef_)) < 1e6  # (stopped long before an overflow)
    # The same stream at the default rate, and at a numeric one below the bound.
    for eta in ("theory", 0.05):
        model = GARegressor(eta=eta)
        for i in range(X.shape[0]):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        assert model.score(X, y) > 0.9


@pytest.mark.parametrize("psi", ["identity", "softmax", "exp"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_runs_sum_the_initial_loss_of_a_dense_batch(psi, dtype):
    # The runaway check's reference, summed by the first pass's run on a dense X
    # (_passes.count_initial_loss), is the NumPy sum of initial_model_loss; a
    # sample weight counts its row's loss s times; two outputs sum both.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 7)).astype(dtype)
    Y = np.column_stack([X @ np.arange(7.0), X[:, 0] - 2.0])
    weights = rng.uniform(0.0, 2.0, size=500)
    model = GARegressor(psi=psi, U=5.0, eta=1e-3, max_iter=2, tol=None)
    model.fit(X, Y, sample_weight=weights)
    reference = initial_model_loss(X, Y, weights, psi, "identity", 5.0, model.p)
    assert model._the_run().initial_loss == pytest.approx(2 * reference, rel=1e-12)
    classifier = GAClassifier(psi="exp", eta=1e-3, max_iter=1, tol=None)
    classifier.fit(X, Y[:, 0] > 0)
    labels = (Y[:, :1] > 0).astype(float)
    assert classifier._the_run().initial_loss == pytest.approx(
        initial_model_loss(X, labels, None, "exp", "logistic", 1.0, 2.0), rel=1e-12)


def test_no_false_alarm_when_the_target_jumps_or_the_model_is_changed():
    # A level shift of the target by 1000 standard deviations, and U changed by
    # hand mid-stream, make the losses jump; they then fall as the model learns.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 5))
    y = X @ np.array([0.5, -0.2, 0.0, 0.3, 0.1])
    y[300:] += 1000.0
    model = GARegressor(psi="eg_pm", U=2.0)
    for start in range(0, 600, 20):
        model.partial_fit(X[start:start + 20], y[start:start + 20])
        if start == 200:
            model.set_params(U=50.0)
    assert np.mean(np.abs(model.predict(X[500:]) - y[500:])) < 20.0  # (of 1000)


def test_fit_averages_from_the_noise_floor_of_its_rate():
    # average="auto": the epochs' on-line losses are those of the plain run (the
    # averages do not steer it); from the end of the first epoch that does not
    # improve on the best by tol * m, fit averages: the model of average=that
    # trial + 1, bit for bit.
    X, y = X_DIABETES, Y_DIABETES
    m, tol = X.shape[0], 1e-3
    params = {"eta": 0.01, "random_state": 0, "tol": tol}
    totals = [0.0] + [GARegressor(max_iter=j, **{**params, "tol": None}).fit(X, y)
                      .cumulative_loss_ for j in range(1, 40)]
    epoch_losses = np.diff(totals)
    floor = next(j for j in range(1, epoch_losses.size)
                 if epoch_losses[j] > epoch_losses[:j].min() - tol * m)
    model = GARegressor(**params).fit(X, y)
    same = GARegressor(average=(floor + 1) * m + 1, **params).fit(X, y)
    np.testing.assert_array_equal(model.coef_, same.coef_)
    np.testing.assert_array_equal(model.intercept_, same.intercept_)
    # The last weights carry the noise of the constant rate; their average comes
    # near least squares (an independent reference) in predictions.
    plain = GARegressor(average=False, **params).fit(X, y)
    least = Ridge(alpha=1e-8).fit(X, y).predict(X)

    def excess(estimator):
        return np.mean((estimator.predict(X) - least) ** 2)

    assert excess(model) < 0.25 * excess(plain)
    # One epoch, and partial_fit, are the on-line algorithm: no averaging.
    for call in (lambda e: e.set_params(max_iter=1).fit(X, y),
                 lambda e: e.partial_fit(X, y)):
        auto, off = (call(GARegressor(**params, average=a)) for a in ("auto", False))
        np.testing.assert_array_equal(auto.coef_, off.coef_)
        np.testing.assert_array_equal(auto.coef_, np.asarray(auto.theta_)[0])
