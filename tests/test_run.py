"""The run: one object holds what a model carries between calls, and every path
(fit, partial_fit, the one-row calls, copies) commits there."""

import copy
import pickle

import numpy as np
import pytest

from sklearn_ga import GARegressor
from sklearn_ga._run import Run

RNG = np.random.default_rng(3)
X = RNG.standard_normal((40, 4))
y = X @ np.array([0.5, -0.2, 0.0, 0.1])


def test_the_run_holds_the_counters_the_model_gives_out():
    model = GARegressor(eta=0.05).fit(X, y)
    run = model._run
    assert isinstance(run, Run)
    assert (model.t_, model.cumulative_loss_, model.n_iter_) == (
        run.t, run.cumulative_loss, run.n_iter)
    # (Nothing else of the run is kept in the estimator's own attributes.)
    assert not {"t_", "cumulative_loss_", "_kept_loop", "_rate_state",
                "_one_row", "_training"} & set(vars(model))


def test_a_one_row_call_commits_to_the_run():
    model = GARegressor(eta=0.05).partial_fit(X, y)
    run, t, loss = model._run, model.t_, model.cumulative_loss_
    model.partial_fit(X[:1], y[:1])
    assert run.one_row  # (the call took the one-row path)
    assert model.t_ == run.t == t + 1
    assert model.cumulative_loss_ == run.cumulative_loss > loss


def test_a_call_that_raises_leaves_the_run_as_it_was():
    model = GARegressor(eta=0.05).partial_fit(X, y)
    before = model._run.snapshot()
    with pytest.raises(ValueError):
        model.partial_fit(np.vstack([X[:3], [[np.nan] * 4]]), y[:4])
    after = model._run.snapshot()
    assert all(a is b or a == b for a, b in zip(before, after, strict=True))
    assert model.t_ == X.shape[0]


@pytest.mark.parametrize("duplicate", [copy.deepcopy,
                                       lambda m: pickle.loads(pickle.dumps(m))])
def test_a_copy_has_a_run_of_its_own_that_continues_the_same(duplicate):
    model = GARegressor(psi="pnorm", p=3.0, average=True, eta=0.05).partial_fit(X, y)
    other = duplicate(model)
    assert other._run is not model._run and other._run.lock is not model._run.lock
    model.partial_fit(X, y)
    other.partial_fit(X, y)
    np.testing.assert_array_equal(other.coef_, model.coef_)
    assert (other.t_, other.cumulative_loss_) == (model.t_, model.cumulative_loss_)
