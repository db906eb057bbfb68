"""The River learners' defaults against River's own linear models, on River's
bundled streams, by progressive validation behind River's StandardScaler."""

import pytest
from river import datasets, evaluate, linear_model, metrics, preprocessing

from sklearn_ga.river import GAClassifier, GARegressor


def progressive(stream, model, metric):
    return evaluate.progressive_val_score(
        stream, preprocessing.StandardScaler() | model, metric).get()


@pytest.mark.parametrize("stream", [datasets.TrumpApproval, datasets.ChickWeights],
                         ids=lambda stream: stream.__name__)
@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_default_regressor_is_at_least_rivers_linear_regression(stream, psi):
    # (EG±: eta="theory" and U="auto", doubled from 1 as the weights need.)
    ours = progressive(stream(), GARegressor(psi=psi), metrics.MAE())
    rivers = progressive(stream(), linear_model.LinearRegression(), metrics.MAE())
    assert ours <= rivers


@pytest.mark.parametrize("stream", [datasets.Phishing, datasets.Bananas],
                         ids=lambda stream: stream.__name__)
def test_default_classifier_is_at_least_rivers_logistic_regression(stream):
    ours = progressive(stream(), GAClassifier(), metrics.Accuracy())
    rivers = progressive(stream(), linear_model.LogisticRegression(),
                         metrics.Accuracy())
    assert ours >= rivers
