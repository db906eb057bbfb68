"""Test session set-up.

* scikit-learn's array-API estimator checks run only when SciPy's array-API support is
  switched on, before SciPy is first imported.
* Hypothesis profiles: ``ci`` (the default) keeps the fuzz tests to a few minutes and
  is derandomized, so a run fails or passes the same way every time; ``thorough``
  draws ten times as many examples, afresh on each run, to search for new failures.
* ``without_runaway_check``: a fixture for tests of arithmetic at diverging rates.
* ``SKLEARN_GA_ULP_MODE=1``: NumPy's transcendental functions round otherwise, as
  they do on CPUs with AVX-512 (``tests/ulp_mode.py``), installed before any test
  module imports the library.
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=200, derandomize=True,
                          print_blob=True)
settings.register_profile("thorough", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if os.environ.get("SKLEARN_GA_ULP_MODE") == "1":
    from ulp_mode import install

    install()


@pytest.fixture
def without_runaway_check(monkeypatch):
    """Tests of the loop's arithmetic at rates that diverge on purpose (long steps,
    terms under- and overflowing): the check that stops a run whose loss runs away
    while staying finite (``sklearn_ga._passes.RUNAWAY_RATIO``) is off."""
    monkeypatch.setattr("sklearn_ga._passes.RUNAWAY_RATIO", np.inf)
