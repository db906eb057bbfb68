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


def test_eg_pm_classifier_where_no_linear_model_fits():
    # Bananas: the majority class is 55.2 % of the rows and River's best SGD rate
    # barely beats it. Theorem 3's worst-case rate keeps EG± chasing the last labels
    # (0.528); tuned by the loss so far (KW01 eq. 31) it falls, and EG± is at least
    # River's LogisticRegression() there. (On Phishing it stays 3 rows below.)
    ours = progressive(datasets.Bananas(), GAClassifier(psi="eg_pm"),
                       metrics.Accuracy())
    rivers = progressive(datasets.Bananas(), linear_model.LogisticRegression(),
                         metrics.Accuracy())
    theory = progressive(datasets.Bananas(), GAClassifier(psi="eg_pm", eta="theory"),
                         metrics.Accuracy())
    assert ours >= rivers > theory
