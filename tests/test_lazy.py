"""Lazy exports (kane.lazy, issue 28 item 8): ``import kane`` and ``kane --version`` load none of the heavy
packages; every public name still resolves, once, to the object its module defines, from any thread."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kane

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("numba", "sympy", "dask", "viser", "matplotlib", "distributed", "scipy", "h5py", "mpmath", "rich")
LAZY_PACKAGES = ("kane", "kane.simulate", "kane.io", "kane.studies", "kane.viz", "kane.switching", "kane.codegen",
                 "kane.surfaces")


def _fresh(code: str) -> str:
    """stdout of ``code`` run by this Python in a fresh process with this checkout's kane first on the path."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


_LOADED = f"sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))"


def test_import_kane_loads_no_heavy_package_and_no_kane_module_but_the_lazy_table():
    got = json.loads(_fresh(f"import json, sys; import kane; print(json.dumps([{_LOADED}, "
                            "sorted(m for m in sys.modules if m.startswith('kane'))]))"))
    assert got == [[], ["kane", "kane.lazy"]]


def test_kane_version_and_help_load_no_heavy_package():
    for argv in (["kane", "--version"], ["kane", "--help"]):
        out = _fresh(f"import json, sys; sys.argv = {argv!r}; from kane.cli import main\n"
                     f"try:\n    main()\nexcept SystemExit:\n    pass\nprint(json.dumps({_LOADED}))")
        assert json.loads(out.splitlines()[-1]) == [], argv


def test_eight_threads_touching_kane_derive_at_once_get_the_one_function():
    """A fresh process: 8 threads released together by a barrier each read kane.derive (the first use imports
    kane.symbolic.derive under the import lock); all get the function that module defines."""
    code = """
import json, threading, kane
barrier, got = threading.Barrier(8), [None] * 8
def touch(k):
    barrier.wait()
    got[k] = kane.derive
threads = [threading.Thread(target=touch, args=(k,)) for k in range(8)]
for th in threads: th.start()
for th in threads: th.join()
import sys
print(json.dumps([len({id(g) for g in got}), all(g is sys.modules["kane.symbolic.derive"].derive for g in got)]))
"""
    assert json.loads(_fresh(code)) == [1, True]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_resolves_to_its_module_object_and_is_listed(package):
    pkg = importlib.import_module(package)
    table = {**pkg._EXPORTS, **dict.fromkeys(getattr(pkg, "_MODULES", ()), None)}
    modules = set(getattr(pkg, "_MODULES", ()))  # submodules reached as attributes, listed in __all__ or not
    assert set(pkg.__all__) <= set(table) <= set(pkg.__all__) | {"Method"} | modules
    assert all(importlib.util.find_spec(f"{package}.{m}") is not None for m in modules)
    assert set(pkg.__all__) <= set(dir(pkg))
    for name in pkg.__all__:
        value = getattr(pkg, name)
        if table[name] is None:
            assert value is sys.modules[f"{package}.{name}"], name
        else:
            assert value is getattr(importlib.import_module(table[name], package), name), name
        assert pkg.__dict__[name] is value  # kept: the next use does not come back to the lazy table
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        getattr(pkg, "no_such_name")


def test_from_import_of_a_lazy_name():
    from kane import Formulation, System, derive  # noqa: F401

    assert System is importlib.import_module("kane.model.system").System
    assert derive is importlib.import_module("kane.symbolic.derive").derive
    assert Formulation is importlib.import_module("kane.options").Formulation


@pytest.mark.parametrize("package", [p for p in LAZY_PACKAGES if p != "kane"])
def test_a_subpackage_table_names_only_its_own_modules_or_the_bottom_layer(package):
    """tests/test_layout.py reads import statements; the lazy tables import by name, so their targets are checked
    here: a subpackage's names come from its own modules (or kane.options, at the bottom of the layout)."""
    pkg = importlib.import_module(package)
    targets = {importlib.util.resolve_name(m, package) for m in pkg._EXPORTS.values()}
    assert all(t.startswith(package + ".") or t == "kane.options" for t in targets), sorted(targets)


def test_a_subpackage_is_an_attribute_of_kane_before_anything_imported_it():
    """kane.symbolic.RedundantConstraintWarning in a fresh process (a test file run alone did not find it)."""
    code = "import kane, json; print(json.dumps([kane.symbolic.RedundantConstraintWarning.__name__, " \
           "kane.symbolic.__name__]))"
    assert json.loads(_fresh(code)) == ["RedundantConstraintWarning", "kane.symbolic"]
