"""Sphinx configuration of the sklearn-ga documentation (built by ``make docs``)."""

import math
import pkgutil
import re
from pathlib import Path

from sphinx.util import logging

import sklearn_ga
from sklearn_ga import PHI, PSI

logger = logging.getLogger(__name__)
DOC = Path(__file__).resolve().parent
ROOT = DOC.parent

project = "sklearn-ga"
author = "sklearn-ga developers"
copyright = "sklearn-ga developers"
version = release = sklearn_ga.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    # Ships MathJax and points mathjax_path at the copy in _static, so formulas render
    # without fetching anything (the site works offline and in a sandbox).
    "sphinx-mathjax-offline",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"

autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-ga {release}"
html_static_path = ["_static"]
html_css_files = ["sklearn_ga.css"]
# Pages without sections of their own: no empty navigation beside their tables.
html_sidebars = {"benchmarks": [], "changelog": []}
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "secondary_sidebar_items": ["page-toc"],
    "show_toc_level": 2,
}

# Gallery: every examples/plot_*.py runs at build time and its figures become the
# thumbnails; other scripts there (e.g. the ``make demo`` script) are not gallery items.
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"(^|/)(?!plot_)[^/]+\.py$",
    "doc_module": ("sklearn_ga",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"sklearn_ga": None},
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
}


def _fmt(value):
    if value is None:
        return "—"
    return "∞" if math.isinf(value) else f"{value:g}"


def _interval(text):
    return text.replace("[-inf", "(−∞").replace("inf]", "∞)")


def _list_table(header, rows):
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def write_registry_tables():
    """Tables of the psi and phi registries, so the docs list exactly what exists."""
    out = DOC / "generated"
    out.mkdir(exist_ok=True)
    psi_rows = [
        (f'``"{name}"``', entry.description,
         ", ".join(f"``{h}``" for h in entry.hyperparameters) or "—",
         "yes" if entry.constrained else "no")
        for name, entry in PSI.items()
    ]
    (out / "psi_table.inc").write_text(_list_table(
        ("``psi``", "algorithm", "hyper-parameters", "constrained weights"), psi_rows))
    phi_rows = [
        (f'``"{name}"``', _interval(entry.range_text()), _fmt(entry.c),
         ", ".join(est for est, ok in (("GARegressor", entry.regression),
                                       ("GAClassifier", entry.classification)) if ok))
        for name, entry in PHI.items()
    ]
    (out / "phi_table.inc").write_text(_list_table(
        ("``phi``", "range of the targets", "slope bound c (KW01 eq. 29)",
         "estimators"), phi_rows))


def write_module_sections():
    """API sections of the public submodules (e.g. ``sklearn_ga.theory``): each
    module's docstring and every name in its ``__all__``."""
    modules = sorted(m.name for m in pkgutil.iter_modules(sklearn_ga.__path__)
                     if not m.name.startswith("_"))
    (DOC / "generated" / "api_modules.inc").write_text("".join(
        f"``sklearn_ga.{name}``\n{'-' * (len(name) + 15)}\n\n"
        f".. automodule:: sklearn_ga.{name}\n   :members:\n\n"
        for name in modules))


BENCHMARKS_README = ROOT / "benchmarks" / "README.md"
# The page states the machine of the latest results; this is the date of that run.
BENCHMARK_DATE = re.compile(r"^Measured on (\d{4}-\d\d-\d\d)", re.M)
GOAL_NUMBER = re.compile(r"^\d+(\.\d+)?\.? ")
MEASURE = re.compile(r"^(?:(.*?) )?([\d.]+)( MiB)?$")


def latest_benchmarks(readme):
    """The date and the rows of the tables under "Latest results" in
    ``benchmarks/README.md``, as (task, GA's value, reference, its value, unit); a
    row that two tables share is given once."""
    section = readme.split("\n## Latest results\n", 1)[1]
    section = re.split(r"\n#{2,3} ", section, maxsplit=1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or len(cells) != 6 or cells[0] == "case":
            continue
        ga, reference = MEASURE.match(cells[1]), MEASURE.match(cells[2])
        if not (ga and reference and reference[1]):
            continue
        task = GOAL_NUMBER.sub("", cells[0])
        rows.setdefault((task, reference[1]), (
            task, float(ga[2]), reference[1], float(reference[2]),
            "MiB" if ga[3] else "ms"))
    return section.strip().split(",", 1)[0], list(rows.values())


def _digits(value):
    """Three significant digits, without an exponent."""
    return f"{value:.{max(0, 2 - math.floor(math.log10(value)))}f}"


def write_benchmark_table(page):
    """The benchmarks page's table, from ``benchmarks/README.md``'s latest results:
    each task's time with sklearn-ga and with its reference, and their ratio."""
    out = DOC / "generated" / "benchmark_table.inc"
    if not BENCHMARKS_README.exists():
        out.write_text("The table is in ``benchmarks/README.md`` of the repository.\n")
        return
    readme = BENCHMARKS_README.read_text(encoding="utf-8")
    if "\n## Latest results\n" not in readme:
        logger.warning("benchmarks/README.md has no section 'Latest results'")
        return
    date, rows = latest_benchmarks(readme)
    if not rows:
        logger.warning("no table of results under 'Latest results' in "
                       "benchmarks/README.md")
    stated = BENCHMARK_DATE.search(page)
    if not stated or stated[1] != date:
        logger.warning("benchmarks/README.md's latest results are of %s: state their "
                       "date and machine in doc/benchmarks.rst", date)
    table = _list_table(
        ("task", "sklearn-ga", "reference", "ratio"),
        [(task, f"{_digits(ga)} {unit}",
          f"{name.replace('GA ', 'sklearn-ga ')}, {_digits(ref)} {unit}",
          f"{ga / ref:.3g}")
         for task, ga, name, ref, unit in rows])
    out.write_text(table.replace(":header-rows: 1", ":header-rows: 1\n"
                                 "   :widths: 52 14 24 10", 1))


def read_benchmarks_page(app, docname, source):
    """Write the benchmarks page's table before the page is read, and read the page
    again whenever benchmarks/README.md changes."""
    if docname == "benchmarks":
        app.env.note_dependency(str(BENCHMARKS_README))
        write_benchmark_table(source[0])


SPHINX_ROLE = re.compile(r":(?:ref|term):`(?:([^`<]*?)\s*<[^`>]*>|([^`]*))`")


def unlink_sklearn_roles(app, what, name, obj, options, lines):
    """Inherited scikit-learn docstrings cite scikit-learn's own user guide and
    glossary, which this site lacks (and cannot fetch): keep their text only."""
    if getattr(obj, "__module__", "").startswith("sklearn."):
        lines[:] = [SPHINX_ROLE.sub(lambda m: m[1] or m[2], line) for line in lines]


def check_api_complete(app, env):
    """Fail the build (a warning, with -W) if a public name has no API entry."""
    documented = set(env.get_domain("py").objects)
    for name in sklearn_ga.__all__:
        module = getattr(getattr(sklearn_ga, name), "__module__", "sklearn_ga")
        if not {f"sklearn_ga.{name}", f"{module}.{name}"} & documented:
            logger.warning("sklearn_ga.%s is public (in __all__) but not documented; "
                           "add it to doc/api.rst", name)


def setup(app):
    write_registry_tables()
    write_module_sections()
    app.connect("autodoc-process-docstring", unlink_sklearn_roles)
    app.connect("env-check-consistency", check_api_complete)
    app.connect("source-read", read_benchmarks_page)
