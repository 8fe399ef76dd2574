"""Numba kernels compiled once per machine: :func:`kernel` is ``numba.njit(nogil=True)`` with numba's on-disk cache
stamped by kane's own sources, so that a change to any file of the kane package compiles every kernel again.

numba stamps a cached function with the modification time and size of its own file only, so a kernel calling a
kernel of another module would load stale machine code after that module changed (numba issue #9483, "cache
invalidation fails to recognize changes in functions defined in a different file"). Here every kernel's cache
carries one digest of the (path, size, mtime_ns) of every ``.py`` file of the package (:func:`source_stamp`,
computed once per process), which numba compares on load as it does its own stamp. The cache files are numba's,
in ``__pycache__`` beside the sources (or numba's user-wide cache directory when that is not writable), made by
numba from these sources only.

:func:`with_globals` makes the compiled variant of a Python function whose callees are compiled kernels. Without
numba, :func:`kernel` returns the Python function. Should numba's cache internals change shape (the
stamp cannot be set), the kernel compiles without a cache, never with numba's file-only stamp.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import types
from pathlib import Path

__all__ = ["HAVE_NUMBA", "kernel", "source_stamp", "with_globals"]

HAVE_NUMBA = importlib.util.find_spec("numba") is not None  # imported on the first kernel (import kane stays light)
_PACKAGE = Path(__file__).resolve().parent
_STAMP: dict = {}
_LOCK = threading.Lock()


def source_stamp() -> str:
    """The digest of (relative path, size, mtime_ns) of every ``.py`` file of the kane package (once per
    process): the stamp of every cached kernel."""
    with _LOCK:
        if "stamp" not in _STAMP:
            digest = hashlib.sha256()
            for root, dirs, files in os.walk(_PACKAGE):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(f for f in files if f.endswith(".py")):
                    path = os.path.join(root, name)
                    st = os.stat(path)
                    digest.update(f"{os.path.relpath(path, _PACKAGE)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            _STAMP["stamp"] = digest.hexdigest()
        return _STAMP["stamp"]


def kernel(function, *, cache: bool = True, inline: bool = False):
    """``function`` compiled by numba on first call (nogil), cached on disk under :func:`source_stamp` when
    ``cache``; the Python function itself without numba. ``inline``: numba inlines it into its compiled callers
    (``inline="always"``: for a small function called in a hot loop, where the call itself costs)."""
    if not HAVE_NUMBA:
        return function
    import numba

    mode = "always" if inline else "never"
    if not cache:
        return numba.njit(cache=False, nogil=True, inline=mode)(function)
    compiled = numba.njit(cache=True, nogil=True, inline=mode)(function)
    index = getattr(getattr(compiled, "_cache", None), "_cache_file", None)
    if index is None or not hasattr(index, "_source_stamp"):
        return numba.njit(cache=False, nogil=True, inline=mode)(function)
    index._source_stamp = ("kane", source_stamp())
    return compiled


def with_globals(function, **names):
    """A copy of ``function`` whose global ``names`` are bound to other objects (a compiled kernel's compiled
    callees, the Python function keeping the Python ones)."""
    return types.FunctionType(function.__code__, dict(function.__globals__, **names), function.__name__,
                              function.__defaults__, function.__closure__)
