"""The registries of psi and phi carry the facts the package asks about them."""

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import sklearn_ga
from sklearn_ga import PHI, PSI
from sklearn_ga._codes import PhiCode, PsiCode
from sklearn_ga._phi import TransferFunction
from sklearn_ga._psi import Parameterization

PACKAGE = Path(sklearn_ga.__file__).parent
NAMES = set(PSI) | set(PHI)


def _name_branches(path):
    """The lines of ``path`` that compare a value with a psi or phi name."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            values = []
            for operand in [node.left, *node.comparators]:
                values += getattr(operand, "elts", [operand])
            if any(isinstance(v, ast.Constant) and v.value in NAMES for v in values):
                lines.append(node.lineno)
    return lines


def test_no_branch_on_names_outside_the_registries():
    # Code asks an entry's fields, so that a new psi or phi needs no edit elsewhere.
    found = {path.name: _name_branches(path) for path in PACKAGE.glob("*.py")
             if path.name not in ("_psi.py", "_phi.py")}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_name_branch_finder_finds_them(tmp_path):
    path = tmp_path / "branches.py"
    path.write_text('a = phi == "sign"\nb = psi in ("pnorm", "x")\nc = u == "v"\n')
    assert _name_branches(path) == [1, 2]


@pytest.mark.parametrize("entry", [*PSI.values(), *PHI.values()],
                         ids=lambda entry: entry.name)
def test_entries_are_keyword_only(entry):
    with pytest.raises(TypeError):
        type(entry)(entry.name, entry.code)


def test_codes_come_from_the_codes_module():
    assert {entry.code for entry in PSI.values()} == set(PsiCode)
    assert {entry.code for entry in PHI.values()} == set(PhiCode)
    assert all(type(entry.code) is PsiCode for entry in PSI.values())
    assert all(type(entry.code) is PhiCode for entry in PHI.values())


def test_a_psi_gives_a_bound_or_the_reason_for_none():
    entry = PSI["identity"]
    with pytest.raises(TypeError, match="exactly one"):
        replace(entry, no_input_bound="no reason")
    with pytest.raises(TypeError, match="exactly one"):
        replace(entry, input_bound=None)
    assert all((e.input_bound is None) != (e.no_input_bound is None)
               for e in PSI.values())


def test_registry_types():
    assert all(type(entry) is Parameterization for entry in PSI.values())
    assert all(type(entry) is TransferFunction for entry in PHI.values())
