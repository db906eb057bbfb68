"""Docstring parts written from the registries, so that the lists of choices in
the estimators' docs cannot drift from what they accept: a docstring names a part
by its token (``[psi choices]``, ...) and :func:`fill_docstring` writes it in."""

import textwrap

from ._phi import CLASSIFICATION_PHI, PHI, REGRESSION_PHI
from ._psi import PSI


def _choices(names):
    return "{" + ", ".join(f'"{name}"' for name in names) + "}"


def _listing(parts, indent):
    """``parts`` joined in one paragraph, wrapped at 88 columns under ``indent``."""
    return textwrap.fill("; ".join(parts) + ".", width=88 - indent,
                         break_on_hyphens=False).replace(
        "\n", "\n" + " " * indent)


def _table(header, rows, indent):
    """An RST simple table of a header and (name, text) rows under ``indent``."""
    rows = [header, *rows]
    width = max(12, *(len(name) for name, _ in rows))
    rule = "=" * width + " " + "=" * max(len(text) for _, text in rows)
    lines = [f"{name:<{width}} {text}" for name, text in rows]
    return ("\n" + " " * indent).join([rule, lines[0], rule, *lines[1:], rule])


def _parts(indent):
    return {
        "[psi choices]": _choices(PSI),
        "[regression phi choices]": _choices(
            name for name in PHI if name in REGRESSION_PHI),
        "[one-output regression phi choices]": _choices(
            name for name in PHI if name in REGRESSION_PHI and not PHI[name].rowwise),
        "[classification phi choices]": _choices(
            name for name in PHI if name in CLASSIFICATION_PHI),
        "[all phi choices]": _choices(PHI),
        "[bregman psi choices]": _choices(
            name for name, entry in PSI.items() if entry.potential is not None),
        "[additive psi choices]": _choices(
            name for name, entry in PSI.items() if not entry.geodesic),
        "[psi descriptions]": _listing(
            [f'``"{entry.name}"``: {entry.description}' for entry in PSI.values()],
            indent),
        # b_{X,psi} of KW01 eq. (28), or why there is none, for the additive psi.
        "[input bound table]": _table(
            ("psi", "b_{X,psi}"),
            [(entry.name, entry.bound_text or f"none: {entry.no_input_bound}")
              for entry in PSI.values() if not entry.geodesic], indent),
        "[psi ranges]": _listing(
            [f'{entry.weight_range} for ``"{entry.name}"``'
             for entry in PSI.values()], indent),
    }


def fill_docstring(cls):
    """Write the registries' parts into the docstrings of ``cls`` and of its
    methods (a class decorator); a token's indent is that of its line."""
    for owner in (cls, *vars(cls).values()):
        doc = getattr(owner, "__doc__", None)
        if not doc or "[" not in doc:
            continue
        lines = []
        for line in doc.split("\n"):
            indent = len(line) - len(line.lstrip())
            for token, text in _parts(indent).items():
                line = line.replace(token, text)
            lines.append(line)
        try:
            owner.__doc__ = "\n".join(lines)
        except (AttributeError, TypeError):  # (a property's or builtin's)
            pass
    return cls
