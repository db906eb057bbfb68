"""The package's modules import alone, and their imports form no cycle."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_ga

PACKAGE = Path(sklearn_ga.__file__).parent
MODULES = sorted(info.name for info in pkgutil.iter_modules([str(PACKAGE)]))


def _package_imports(path):
    """The package's modules that the module at ``path`` imports, anywhere in it
    (an import inside a function would hide a cycle from the interpreter)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module.removeprefix("sklearn_ga.")] * (
                node.module.startswith("sklearn_ga."))
        elif isinstance(node, ast.Import):
            names = [a.name.removeprefix("sklearn_ga.") for a in node.names
                     if a.name.startswith("sklearn_ga.")]
        else:
            continue
        imported.update(name.split(".")[0] for name in names)
    return imported


def _cycle(graph):
    """A list of modules that import each other in a circle, or None."""
    done, path = set(), []

    def visit(module):
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return None
        path.append(module)
        for other in sorted(graph.get(module, ())):
            found = visit(other)
            if found:
                return found
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module)
        if found:
            return found
    return None


def test_python_modules_are_found():
    # The walk below sees the modules (a wrong path would make it vacuous).
    assert {"_base", "_engine", "_validation", "losses", "theory"} <= set(MODULES)


def test_no_import_cycle():
    graph = {path.stem: _package_imports(path) for path in PACKAGE.glob("*.py")
             if path.stem != "__init__"}
    assert "_rates" in graph["_configuration"] and "losses" in graph["theory"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


# The package object without running its __init__ (which imports every module in
# one order): the module named is then the first to import, and imports the others.
ALONE = """
import importlib, importlib.util, sys, types
package = types.ModuleType("sklearn_ga")
package.__path__ = importlib.util.find_spec("sklearn_ga").submodule_search_locations
sys.modules["sklearn_ga"] = package
importlib.import_module("sklearn_ga." + sys.argv[1])
"""


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_first_in_a_fresh_interpreter(module):
    result = subprocess.run([sys.executable, "-c", ALONE, module],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
