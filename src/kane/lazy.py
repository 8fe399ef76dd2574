"""Lazy exports of a package (PEP 562): a public name imports the module that defines it on first use.

``import kane`` then loads only what it must (no sympy, scipy, h5py, numba, viser, dask or matplotlib), while
``kane.System``, ``from kane import derive``, ``dir(kane)`` and ``__all__`` work as before.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str], modules: tuple[str, ...] = ()):
    """``(__getattr__, __dir__)`` for the package named ``package``: ``exports`` maps each public name to the module
    that defines it (absolute, or relative to ``package``: ".model.system"); ``modules`` are names of the package's
    own submodules given as themselves ("simulate" is ``kane.simulate``). The first use of a name imports its module
    (the import system's per-module lock makes threads that touch it at once wait for one import and get one
    object) and keeps the value in the package's namespace, so later uses do not come here."""
    namespace = sys.modules[package].__dict__
    known = frozenset(exports) | frozenset(modules)

    def __getattr__(name: str):
        if name in modules:
            value = importlib.import_module(f"{package}.{name}")
        elif name in exports:
            value = getattr(importlib.import_module(exports[name], package), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__():
        return sorted(known | set(namespace))

    return __getattr__, __dir__

