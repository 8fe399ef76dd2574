"""The compiled-code cache is private and verified (issue 27, item 2): 0700/0600 whatever the umask, a cache others
may write or own is refused for a private one, and nothing planted in it (a module, a foreign library with a
forged checksum, a truncated numba module) is ever executed; the results stay right."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from kane.codegen import ProgramBuilder, c_backend, cache, compile_program
from kane.codegen.c_backend import CFunction
from kane.codegen.c_cache import find_compiler, library_key
from kane.codegen.c_print import selected_program

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(not c_backend.compiler_available()[0], reason="no C compiler on this machine")
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
ARGS = (0.25, np.array([0.3, -0.7]), np.array([1.1]), np.array([2.0, 0.5]), np.zeros(0))


def _program():
    """A small program (2 coordinates, 1 speed, 2 parameters) with powers, functions and a constant prelude."""
    t, q1, q2, u1, a, b = sp.symbols("t q1 q2 u1 a b")
    B = ProgramBuilder({"t": (t,), "q": (q1, q2), "u": (u1,), "params": (a, b), "inputs": ()})
    z = B.assign(sp.sin(q1) * a ** 3 + u1 ** 2 / b)
    return B.build({"y": [z * sp.cos(q2) + t, sp.sqrt(a + q2 ** 2) * z ** -3, sp.exp(b * q1)]})


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A cache root that does not exist yet, and nothing of an earlier cache remembered in this process."""
    root = tmp_path / "home" / "cache"
    monkeypatch.setenv("KANE_CACHE_DIR", str(root))
    monkeypatch.setattr(c_backend, "_libs", {})
    monkeypatch.setattr(c_backend, "_ffis", {})
    monkeypatch.setattr(cache, "_fallbacks", {})
    monkeypatch.setattr(cache, "_keys", {})
    return root


def _library_path(root: pathlib.Path) -> pathlib.Path:
    """Where the cache keeps _program()'s library, found without loading it in this process (a path that the
    process has loaded would be served by the dynamic linker from memory, whatever the file holds now)."""
    prog, outs = selected_program(_program(), ["y"], None)
    key = library_key(c_backend._program_key(prog, outs, None, False), find_compiler()[0])
    (root / "c").mkdir(parents=True, exist_ok=True)
    return root / "c" / f"kane_{key[:32]}.so"


def _reference():
    return compile_program(_program(), ["y"])(*ARGS)[0]


def _forget(monkeypatch):
    """As if another process: no library or FFI loaded, no key read."""
    monkeypatch.setattr(c_backend, "_libs", {})
    monkeypatch.setattr(c_backend, "_ffis", {})
    monkeypatch.setattr(cache, "_keys", {})


@needs_cc
def test_directories_0700_and_files_0600_under_umask_0(fresh):
    old = os.umask(0)
    try:
        fn = CFunction(_program(), ["y"])
        np.testing.assert_allclose(fn(*ARGS)[0], _reference(), rtol=1e-13)
    finally:
        os.umask(old)
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [fresh, *fresh.rglob("*")]}
    assert modes and fresh.parent in [p.parent for p in modes]
    assert stat.S_IMODE(fresh.parent.stat().st_mode) == 0o700  # a missing parent, created by kane too
    for p, mode in modes.items():
        assert mode == (0o700 if p.is_dir() else 0o600), f"{p}: {mode:o}"
    assert {p.suffix for p in modes if p.is_file()} == {".so", ".mac", ".ffi", ".key"}  # no module to import


@needs_cc
def test_a_cache_that_others_may_write_or_own_is_refused_for_a_private_one(fresh, monkeypatch):
    fresh.mkdir(parents=True)
    os.chmod(fresh, 0o777)
    with pytest.warns(cache.CacheWarning, match=f"{fresh}.*(mode 0777)"):
        fn = CFunction(_program(), ["y"])
    np.testing.assert_allclose(fn(*ARGS)[0], _reference(), rtol=1e-13)
    assert list(fresh.iterdir()) == []  # nothing written where others may write
    used = cache.cache_root()
    assert used != fresh and stat.S_IMODE(used.stat().st_mode) == 0o700 and list(used.rglob("*.so"))
    if os.getuid() != 0:
        return
    _forget(monkeypatch)
    monkeypatch.setattr(cache, "_fallbacks", {})
    os.chmod(fresh, 0o700)
    part = fresh / "c"
    part.mkdir(mode=0o700)
    os.chown(part, 54321, -1)  # another user's directory inside a private root
    with pytest.warns(cache.CacheWarning, match=f"{part}.*owned by uid 54321"):
        fn = CFunction(_program(), ["y"])
    np.testing.assert_allclose(fn(*ARGS)[0], _reference(), rtol=1e-13)
    assert list(part.iterdir()) == []


def _planted(marker: pathlib.Path) -> str:
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\nffi = None\nkernel = None\n"


@needs_cc
def test_a_planted_module_is_never_imported(fresh, monkeypatch, tmp_path):
    marker = tmp_path / "module-ran"
    name = "_kane_cffi_" + hashlib.sha256(c_backend._CDEF.encode()).hexdigest()[:16]
    for part in ("c", "cffi"):
        (fresh / part).mkdir(parents=True, exist_ok=True, mode=0o700)
        (fresh / part / f"{name}.py").write_text(_planted(marker))
    CFunction(_program(), ["y"])  # learns where the tables of the declarations are kept
    entry = next((fresh / "cffi").glob("*.ffi"))
    data = f"__import__('os').system('touch {marker}')".encode()  # code where kane expects a literal
    entry.write_bytes(data)
    entry.with_suffix(".mac").write_text(hashlib.sha256(data).hexdigest())
    _forget(monkeypatch)
    fn = CFunction(_program(), ["y"])
    np.testing.assert_allclose(fn(*ARGS)[0], _reference(), rtol=1e-13)
    assert not marker.exists()
    assert entry.read_bytes().startswith(b"{")  # rebuilt as data


def _foreign_library(path: pathlib.Path, marker: pathlib.Path, with_symbols: bool) -> bytes:
    """A shared library that kane did not build: its constructor writes ``marker`` when it is loaded."""
    src = path.with_suffix(".c")
    body = f'#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) {{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n'
    if with_symbols:
        body += 'const char *kane_source_hash(void) { return "forged"; }\nvoid kane_sizes(long *s) { (void)s; }\n'
    src.write_text(body)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(path), str(src)], check=True, capture_output=True)
    return path.read_bytes()


@needs_cc
@pytest.mark.parametrize("with_symbols", [False, True])
def test_a_foreign_library_with_a_forged_checksum_is_rebuilt_not_loaded(fresh, monkeypatch, tmp_path, with_symbols):
    lib = _library_path(fresh)
    marker = tmp_path / "constructor-ran"
    foreign = _foreign_library(tmp_path / "foreign.so", marker, with_symbols)
    os.replace(tmp_path / "foreign.so", lib)
    digest = hashlib.sha256(foreign).hexdigest()
    for sidecar in (lib.with_suffix(".sha256"), lib.with_suffix(".mac")):  # forged: the digest of its bytes
        sidecar.write_text(digest + "\n")
    _forget(monkeypatch)
    fn = CFunction(_program(), ["y"])
    assert fn.built and not marker.exists(), "a foreign library was loaded"
    np.testing.assert_allclose(fn(*ARGS)[0], _reference(), rtol=1e-13)
    assert lib.read_bytes() != foreign


@needs_cc
def test_a_sealed_library_without_kane_symbols_is_rebuilt_not_a_raw_error(fresh, monkeypatch, tmp_path):
    """A library sealed by this cache's key (so built by kane) that is not this program's: rebuilt."""
    lib = _library_path(fresh)
    (tmp_path / "empty.c").write_text("int kane_unrelated(void) { return 1; }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(tmp_path / "empty.so"), str(tmp_path / "empty.c")], check=True)
    cache.write_sealed(lib, lib.with_suffix(".mac"), (tmp_path / "empty.so").read_bytes(), tmp_path / "empty.so")
    _forget(monkeypatch)
    fn = CFunction(_program(), ["y"])
    assert fn.built
    np.testing.assert_allclose(fn(*ARGS)[0], _reference(), rtol=1e-13)


@needs_numba
@pytest.mark.parametrize("damage", ["planted", "truncated"])
def test_a_planted_or_truncated_numba_module_is_rewritten_not_run(fresh, monkeypatch, tmp_path, damage):
    from kane.codegen.numba_backend import NumbaFunction

    for name in [m for m in sys.modules if m.startswith("kane_numba_")]:
        monkeypatch.delitem(sys.modules, name)  # compiled by an earlier test, in another cache
    prog = _program()
    first = NumbaFunction(prog, ["y"])
    path = next((fresh / "numba").glob("kane_numba_*.py"))
    source = path.read_text()
    marker = tmp_path / "numba-module-ran"
    path.write_text(_planted(marker) if damage == "planted" else source[: len(source) // 2])
    monkeypatch.delitem(sys.modules, path.stem)  # as if another process
    fn = NumbaFunction(prog, ["y"])
    assert not marker.exists()
    assert path.read_text() == source
    args = tuple(np.asarray(a, dtype=float) for a in ARGS)
    np.testing.assert_allclose(fn(*args)[0], _reference(), rtol=1e-13)
    np.testing.assert_array_equal(fn(*args)[0], first(*args)[0])
    assert stat.S_IMODE((fresh / "numba" / "__pycache__").stat().st_mode) == 0o700
