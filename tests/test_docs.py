"""The Python code shown in the documentation runs and does what the text says.

Sphinx does not execute ``code-block`` directives (only the gallery), so the blocks of
the pages below are run here, in order, in one namespace per page.
"""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import joblib
import numpy as np
import pytest

DOC = Path(__file__).resolve().parent.parent / "doc"
CODE_BLOCK = re.compile(r"^\.\. code-block:: python\n\n((?:(?: {3}.*)?\n)+)", re.M)


def run_page(page):
    blocks = CODE_BLOCK.findall((DOC / page).read_text(encoding="utf-8"))
    assert blocks, f"no Python code block found in {page}"
    namespace = {}
    for block in blocks:
        exec(textwrap.dedent(block), namespace)
    return namespace


def test_getting_started_example():
    ns = run_page("getting_started.rst")
    model = ns["model"]
    assert model.t_ == 5000
    # The page says: total on-line loss about 33, the five weights +-0.5 recovered.
    assert 30 < model.cumulative_loss_ < 37
    np.testing.assert_allclose(model.coef_[:5], [0.5, -0.5, 0.5, 0.5, -0.5], atol=0.02)
    assert np.abs(model.coef_[5:]).max() < 0.02


def test_model_selection_examples():
    ns = run_page("user_guide/model_selection.rst")
    # The comment on the page shows this result.
    assert ns["search"].best_params_ == {"U": 2.5, "eta": 0.3}
    assert ns["best_U"] == 2.5
    # GARegressorCV picks the configuration the hand-written loop picks.
    assert (ns["model"].eta_, ns["model"].U_) == (ns["best_eta"], ns["best_U"])


def test_sgd_equivalence_example():
    ns = run_page("user_guide/sgd_comparison.rst")
    np.testing.assert_allclose(ns["ga"].coef_, ns["sgd"].coef_, rtol=1e-12)
    np.testing.assert_allclose(ns["ga"].intercept_, ns["sgd"].intercept_, rtol=1e-12)



def test_saving_atomically(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = run_page("user_guide/persistence.rst")
    model, save_atomically = ns["model"], ns["save_atomically"]
    X = np.random.default_rng(1).normal(size=(20, 5))
    for restored in (ns["restored"], ns["checked"]):
        np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model.joblib",
                                                               "model.skops"]
    # A dump that fails half-way leaves the saved model whole, and no temporary file.
    before = (tmp_path / "model.joblib").read_bytes()

    def failing_dump(model, file):
        file.write(before[: len(before) // 2])
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_atomically(model, "model.joblib", dump=failing_dump)
    assert (tmp_path / "model.joblib").read_bytes() == before
    assert len(list(tmp_path.iterdir())) == 2


def test_saving_atomically_survives_a_killed_process(tmp_path):
    # The process dies while writing: the model at the path stays the old one.
    source = "\n".join(textwrap.dedent(block) for block in CODE_BLOCK.findall(
        (DOC / "user_guide/persistence.rst").read_text(encoding="utf-8")))
    script = source + textwrap.dedent("""
        import signal
        model.partial_fit(X, np.tanh(X[:, 2]))

        def dump_then_die(model, file):
            joblib.dump(model, file)
            file.flush()
            os.kill(os.getpid(), signal.SIGKILL)

        save_atomically(model, "model.joblib", dump=dump_then_die)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                            capture_output=True, timeout=120)
    assert result.returncode == -9, result.stderr.decode()
    first = joblib.load(tmp_path / "model.joblib")
    assert first.t_ == 200  # the model saved before, not the one being written
    leftovers = [path.name for path in tmp_path.iterdir()
                 if path.name.startswith(".saving-")]
    assert len(leftovers) == 1


def test_practical_guide_figures():
    ns = run_page("user_guide/practical.rst")
    # The page's comments: U about 144, R^2 about 0.45, 0.48 and -3.4.
    assert 130 < ns["U"] < 160
    r2, GARegressor, U = ns["r2"], ns["GARegressor"], ns["U"]
    assert 0.4 < r2(GARegressor(random_state=0)) < 0.5
    assert 0.43 < r2(GARegressor(psi="eg_pm", U=U, random_state=0)) < 0.53
    assert r2(GARegressor(psi="eg_pm", U=U, intercept_eta="eta", random_state=0)) < -3


def test_streaming_examples():
    ns = run_page("user_guide/streaming.rst")
    # The comments on the page show these results.
    assert ns["model"].t_ == 2000
    assert round(float(np.mean(ns["errors"][-500:])), 2) == 0.1
    assert str(ns["accuracy"]) == "Accuracy: 89.04%"
