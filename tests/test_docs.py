"""The Python code shown in the documentation runs and does what the text says.

Sphinx does not execute ``code-block`` directives (only the gallery), so the blocks of
the pages below are run here, in order, in one namespace per page.
"""

import re
import textwrap
from pathlib import Path

import numpy as np

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

