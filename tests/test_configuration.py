"""The configuration of a run: the parameters resolved once, the one door through
which psi and eta reach the compiled loop."""

import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from sklearn_ga import PHI, PSI, GARegressor
from sklearn_ga._configuration import Configuration


def test_parameters_resolve_to_the_registries_entries():
    config = Configuration.build("GARegressor", psi="pnorm", p=2.0, phi="tanh", Y=0.5)
    assert config.psi is PSI["pnorm"] and config.phi is PHI["tanh"]
    # pnorm at p = 2 is gradient descent: that loop runs.
    assert config.loop_psi is PSI["identity"]
    assert config.psi_name == "pnorm" and config.Y == 0.5
    np.testing.assert_array_equal(config.clip, PHI["tanh"].activation_bounds(0.5))
    assert Configuration.build("GARegressor", psi="pnorm", p=3.0).loop_psi is (
        PSI["pnorm"])


def test_a_configuration_pickles_as_its_parameters():
    config = Configuration.build("GARegressor", psi="eg_pm", eta="theory", U=3.0)
    copy = pickle.loads(pickle.dumps(config))
    assert copy == config and hash(copy) == hash(config)
    assert copy.psi is config.psi  # (resolved again in the registries)
    assert copy != Configuration.build("GARegressor", psi="eg_pm", eta="theory")


@pytest.mark.parametrize(("given", "words"), [
    ({"psi": "sphere", "update": "natural"}, "geodesics"),
    ({"update": "implicit", "phi": "sign"}, r"eq\. \(22\)"),
    ({"loss": "square", "phi": "sign"}, "never updates"),
    ({"psi": "burg", "alpha": 0.1}, "not the start"),
    ({"phi": "softmax", "Y": 1.0}, "Y clips"),
])
def test_combinations_the_papers_do_not_define_are_refused(given, words):
    with pytest.raises(ValueError, match=words):
        Configuration.build("GARegressor", **given)


def test_the_model_predicts_with_the_configuration_it_was_fitted_with():
    X = np.random.default_rng(0).standard_normal((50, 3))
    model = GARegressor(phi="tanh", Y=0.5, eta=0.05).fit(X, np.tanh(X[:, 0]) / 2)
    expected = model.predict(X)
    model.set_params(phi="identity", Y=None)
    assert model._fitted.phi_name == "tanh"
    np.testing.assert_array_equal(model.predict(X), expected)


def test_river_learners_hold_no_scikit_learn_estimator():
    river = pytest.importorskip("sklearn_ga.river")
    learner = river.GARegressor(psi="eg_pm")
    learner.learn_one({"a": 1.0}, 0.5)
    assert not any(isinstance(value, BaseEstimator) for value in vars(learner).values())
    assert isinstance(learner._config, Configuration)
