"""How the packages of psi and phi assemble their registries: each family module
defines its entries (instances of the package's entry class), and the registry
holds them by name in the order of their kernel codes. A psi or a phi is
registered by being defined, so that adding one touches no list elsewhere."""

import importlib
import pkgutil


def registry(package, path, entry_type):
    """``{name: entry}`` of the ``entry_type`` instances that the public modules
    of ``package`` (its ``__name__`` and ``__path__``) define, by code."""
    entries = {}
    for module in pkgutil.iter_modules(path):
        if not module.name.startswith("_"):
            family = importlib.import_module(f"{package}.{module.name}")
            entries.update((value.name, value) for value in vars(family).values()
                           if isinstance(value, entry_type))
    return dict(sorted(entries.items(), key=lambda item: item[1].code))
