"""Streams that ship with River, learned one row per partial_fit with the default
rate: on-line standardized inputs (River's StandardScaler) and raw ones. The
default follows the rows' scale, so nothing blows up, and the progressive
(test-then-train) score is about that of River's default linear models."""

import numpy as np
import pytest

river = pytest.importorskip("river")
from river import (  # noqa: E402
    base,
    datasets,
    evaluate,
    linear_model,
    metrics,
    preprocessing,
)

from sklearn_ga import GAClassifier, GARegressor  # noqa: E402


class OneRowAtATime(base.Estimator):
    """A GA estimator as a River model: each ``learn_one`` is a partial_fit of one
    row, the features in the order of the first row's keys."""

    def __init__(self, estimator, classes=None):
        self.estimator, self.classes, self.keys = estimator, classes, None

    def _row(self, x):
        if self.keys is None:
            self.keys = list(x)
        return np.array([[float(x.get(key, 0.0)) for key in self.keys]])

    def learn_one(self, x, y):
        extra = {"classes": self.classes} if self.classes is not None else {}
        self.estimator.partial_fit(self._row(x), np.array([y]), **extra)

    def predict_one(self, x):
        if not hasattr(self.estimator, "theta_"):
            return None if self.classes is not None else 0.0
        return self.estimator.predict(self._row(x))[0]


class Regressor(OneRowAtATime, base.Regressor):
    pass


class Classifier(OneRowAtATime, base.Classifier):
    pass


def progressive(dataset, model, metric, scaled=True):
    pipeline = preprocessing.StandardScaler() | model if scaled else model
    return evaluate.progressive_val_score(dataset(), pipeline, metric).get()


@pytest.mark.parametrize("name", ["ChickWeights", "TrumpApproval"])
def test_regression_streams(name):
    dataset = getattr(datasets, name)
    ours = GARegressor()
    mae = progressive(dataset, Regressor(ours), metrics.MAE())
    reference = progressive(dataset, linear_model.LinearRegression(), metrics.MAE())
    assert mae <= 1.05 * reference, (mae, reference)
    assert np.max(np.abs(ours.coef_)) < 1e3 and ours.n_eta_changes_ > 0
    raw = GARegressor()
    raw_mae = progressive(dataset, Regressor(raw), metrics.MAE(), scaled=False)
    assert np.isfinite(raw_mae) and raw_mae < 2 * mae
    assert np.all(np.isfinite(raw.coef_)) and np.max(np.abs(raw.coef_)) < 1e3


@pytest.mark.parametrize("name", ["Phishing", "Bananas"])
def test_classification_streams(name):
    dataset = getattr(datasets, name)
    ours = GAClassifier()
    accuracy = progressive(dataset, Classifier(ours, [False, True]),
                           metrics.Accuracy())
    reference = progressive(dataset, linear_model.LogisticRegression(),
                            metrics.Accuracy())
    assert accuracy >= reference - 0.01, (accuracy, reference)
    assert np.max(np.abs(ours.coef_)) < 1e3
    raw = GAClassifier()
    raw_accuracy = progressive(dataset, Classifier(raw, [False, True]),
                               metrics.Accuracy(), scaled=False)
    assert raw_accuracy > 0.5 and np.max(np.abs(raw.coef_)) < 1e3
