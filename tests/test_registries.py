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
from sklearn_ga.theory import input_bound

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
    # (The registries' own packages, _psi/ and _phi/, are not globbed.)
    found = {path.name: _name_branches(path) for path in PACKAGE.glob("*.py")}
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
    with pytest.raises(TypeError, match="exactly one"):
        replace(PSI["identity"], no_input_bound="no reason")
    with pytest.raises(TypeError, match="exactly one"):
        replace(PSI["exp"], no_input_bound=None)
    assert all((e.input_bound is None) != (e.no_input_bound is None)
               for e in PSI.values())


def test_registry_types():
    # One class per psi, holding its formulas, each entry the one of its class.
    assert all(isinstance(entry, Parameterization) for entry in PSI.values())
    assert len({type(entry) for entry in PSI.values()}) == len(PSI)
    for entry in PSI.values():
        assert type(entry).__module__.startswith("sklearn_ga._psi.")
        assert all(callable(getattr(entry, formula))
                   for formula in ("weights", "inverse", "row_bounds", "same_as"))
        # (A potential and its divergence come together, for the additive psi.)
        assert (entry.potential is None) == (entry.divergence is None) == (
            entry.geodesic)
    assert all(isinstance(entry, TransferFunction) for entry in PHI.values())
    assert len({type(entry) for entry in PHI.values()}) == len(PHI)
    for entry in PHI.values():
        assert type(entry).__module__.startswith("sklearn_ga._phi.")
        assert all(callable(getattr(entry, formula))
                   for formula in ("transfer", "potential", "loss"))
        # (sign alone has no inverse, no loss from predictions, no probability.)
        assert (entry.inverse is None) == (entry.prediction_loss is None) == (
            entry.threshold)


@pytest.mark.parametrize("estimator", [sklearn_ga.GARegressor, sklearn_ga.GAClassifier,
                                       sklearn_ga.GARegressorCV,
                                       sklearn_ga.GAClassifierCV])
def test_docstrings_list_the_registries_choices(estimator):
    # The lists are written from the registries: a new psi is documented at once.
    doc = estimator.__doc__
    line = next(line for line in doc.splitlines() if line.strip().startswith("psi :"))
    assert line.strip() == ("psi : {" + ", ".join(f'"{name}"' for name in PSI)
                            + '}, default="identity"')
    for method in (estimator.__doc__, estimator.fit.__doc__):
        assert "[psi" not in method and "phi choices]" not in method
    if "coef_init" in estimator.fit.__doc__:  # (the range of each psi)
        assert all(f'``"{name}"``' in estimator.fit.__doc__ for name in PSI)


def test_the_input_bounds_table_has_a_row_per_additive_psi():
    # theory.input_bound's table of b_{X,psi} is the entries' bound_text (or why
    # there is none): a new psi gets its row from its entry.
    lines = [line.strip() for line in input_bound.__doc__.splitlines()]
    rules = [i for i, line in enumerate(lines) if line.startswith("====")]
    assert len(rules) == 3
    rows = dict(line.split(None, 1) for line in lines[rules[1] + 1:rules[2]])
    additive = [name for name in PSI if not PSI[name].geodesic]
    assert list(rows) == additive
    for name in additive:
        assert rows[name] == (PSI[name].bound_text
                              or f"none: {PSI[name].no_input_bound}")
