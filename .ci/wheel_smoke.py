"""Smoke test of the installed wheel, run by .ci/run in a fresh venv outside the tree.

The package must come from the venv (not the checkout), hold its licence and no
kernel sources, have a compiled module of at most 2 MiB, fit, and learn one row
through River's API with what the [river] extra alone installs (no pandas, which
only the test extra brings).
"""

import importlib.metadata
import importlib.util
from pathlib import Path

import numpy as np

import sklearn_ga
from sklearn_ga import GARegressor

assert "site-packages" in Path(sklearn_ga.__file__).parts, sklearn_ga.__file__

files = importlib.metadata.files("sklearn-ga")
names = [file.name for file in files]
assert "LICENSE" in names, names
sources = [str(f) for f in files if f.suffix in {".c", ".pyx", ".pxi", ".h"}]
assert not sources, sources
(kernel,) = [f for f in files if f.name.startswith("_kernel.") and f.suffix == ".so"]
size = Path(kernel.locate()).stat().st_size
assert size <= 2 * 2**20, f"{kernel}: {size} bytes"

rng = np.random.default_rng(0)
X = rng.normal(size=(200, 5))
y = X @ np.array([1.0, -1.0, 0.5, 0.0, 2.0])
model = GARegressor().fit(X, y)
assert model.t_ == 200 * model.n_iter_, model.t_
assert model.score(X, y) > 0.9, model.score(X, y)

assert importlib.util.find_spec("pandas") is None, "pandas came with the extra"
from sklearn_ga.river import GAClassifier as RiverClassifier  # noqa: E402
from sklearn_ga.river import GARegressor as RiverRegressor  # noqa: E402

RiverClassifier().learn_one({"a": 1.0}, True)
learner = RiverRegressor()
learner.learn_one({"a": 1.0, "b": -2.0}, 3.0)
assert learner.t_ == 1, learner.t_
assert np.isfinite(learner.predict_one({"a": 1.0, "b": -2.0}))

print(f"wheel smoke test passed: sklearn-ga {sklearn_ga.__version__}, "
      f"kernel {size / 2**20:.2f} MiB")
