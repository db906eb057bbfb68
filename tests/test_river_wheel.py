"""The ``[river]`` extra is enough on its own: a wheel built from the tree,
installed with it into a fresh virtual environment (no pandas, which only the test
extra brings), imports sklearn_ga.river and learns a row. It builds the kernel and
downloads River's dependencies (minutes): it runs where SKLEARN_GA_WHEEL_TEST=1."""

import os
import pathlib
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    os.environ.get("SKLEARN_GA_WHEEL_TEST") != "1",
    reason="builds a wheel and a fresh venv: set SKLEARN_GA_WHEEL_TEST=1",
)

SCRIPT = """
import importlib.util
from sklearn_ga.river import GAClassifier, GARegressor
assert importlib.util.find_spec("pandas") is None, "pandas came with the extra"
model = GARegressor()
model.learn_one({"a": 1.0, "b": 2.0}, 1.0)
assert model.predict_one({"a": 1.0}) > 0.0
GAClassifier().learn_one({"a": 1.0}, True)
print("ok")
"""


def test_the_river_extra_is_enough(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path / "dist"), str(ROOT)], check=True)
    (wheel,) = (tmp_path / "dist").glob("sklearn_ga-*.whl")
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[river]"],
                   check=True)
    result = subprocess.run([str(python), "-c", SCRIPT], check=True,
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.stdout.strip() == "ok"
