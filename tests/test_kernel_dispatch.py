"""The compiled loop's psi formulas serve every code, and fail loudly otherwise.

Each formula of ``_src/psi.pxi`` names the codes it serves and aborts for any
other (``_unknown_psi``): a psi added to the codes but forgotten in one formula
must stop the process, not compute another psi's answer. The hook
``_psi_dispatch`` calls every formula, as the loop would, in a child process.
"""

import subprocess
import sys

import pytest
from sklearn_ga._kernel import PsiCode


def _dispatch(code):
    """Run the hook for ``code`` in a child process: (return code, stderr)."""
    script = f"from sklearn_ga._kernel import _psi_dispatch; _psi_dispatch({code})"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=120)
    return done.returncode, done.stderr


@pytest.mark.parametrize("code", list(PsiCode), ids=lambda code: code.name)
def test_every_formula_serves_every_code(code):
    returncode, stderr = _dispatch(int(code))
    assert returncode == 0, stderr


def test_an_unknown_code_aborts_with_its_formula_named():
    unknown = max(int(code) for code in PsiCode) + 1
    returncode, stderr = _dispatch(unknown)
    assert returncode != 0
    assert f"no case for psi code {unknown} in _stored_terms" in stderr
