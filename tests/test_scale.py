"""Scaling with existing engines: GridSearchCV on a Dask cluster, streams from disk.

Dask, distributed and dask-ml are optional extras of the package (``[dask]``) and part
of the test extra, so these tests always run under ``make test``.
"""

import dask.array as da
import distributed
import numpy as np
from dask_ml.wrappers import Incremental
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV

from sklearn_ga import GARegressor


def sparse_target(m=2000, n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(m, n))
    return X, np.tanh(X[:, 0] - 0.5 * X[:, 7] + 0.05 * rng.normal(size=m))


def test_grid_search_on_a_local_dask_cluster_matches_the_default_backend():
    X, y = sparse_target(m=600)
    grid = {"eta": [0.01, 0.1, 1.0], "U": [0.5, 2.0]}
    search = GridSearchCV(GARegressor(psi="eg_pm", phi="tanh", max_iter=3, tol=None,
                                      random_state=0), grid, cv=3, n_jobs=-1)
    expected = search.fit(X, y).best_params_
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            with parallel_backend("dask"):
                found = GridSearchCV(search.estimator, grid, cv=3, n_jobs=-1).fit(X, y)
            # The work ran on the cluster's worker processes.
            assert len(client.scheduler_info()["workers"]) == 2
    assert found.best_params_ == expected
    np.testing.assert_allclose(found.cv_results_["mean_test_score"],
                               search.cv_results_["mean_test_score"], rtol=1e-12)


def test_partial_fit_over_a_memory_mapped_file_equals_one_pass(tmp_path):
    X, y = sparse_target()
    np.save(tmp_path / "X.npy", X)
    del X
    stream = np.load(tmp_path / "X.npy", mmap_mode="r")  # never loaded as a whole
    model = GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=2.0)
    for start in range(0, stream.shape[0], 256):
        model.partial_fit(stream[start:start + 256], y[start:start + 256])
    in_memory = GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=2.0)
    in_memory.partial_fit(np.load(tmp_path / "X.npy"), y)
    np.testing.assert_allclose(model.coef_, in_memory.coef_, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(model.cumulative_loss_, in_memory.cumulative_loss_,
                               rtol=1e-9)


def test_incremental_over_dask_blocks_equals_one_pass():
    X, y = sparse_target()
    dX, dy = da.from_array(X, chunks=(300, X.shape[1])), da.from_array(y, chunks=300)
    incremental = Incremental(GARegressor(psi="eg_pm", phi="tanh", eta=0.1,
                                                   U=2.0), shuffle_blocks=False)
    incremental.fit(dX, dy)
    in_memory = GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=2.0).partial_fit(X, y)
    np.testing.assert_allclose(incremental.estimator_.coef_, in_memory.coef_,
                               rtol=1e-9, atol=1e-15)
    assert incremental.estimator_.t_ == X.shape[0]
