"""The generic recursive-dynamics kernel in C: one library for every model, built once and cached on disk.

The source (:mod:`.c_kernel_text`) loops over a model's arrays (parent indices, joint kinds and their
parameters, placements, inertias), as Pinocchio's and MuJoCo's kernels do, so a new model needs no C build. It is
compiled by the system compiler with the flags of :mod:`.c_cache` and cached under the hash of its source, like
every library of :mod:`.c_backend`; :func:`kernel_library` loads it once per process.
"""

from __future__ import annotations

import hashlib

from .c_backend import _cffi, load_library
from .c_kernel_text import SOURCE

__all__ = ["KernelLibrary", "kernel_library", "CDEF"]

CDEF = """
const char *kane_source_hash(void);
int kk_eval(int what, long B, const long *sizes, const int *ib, const double *db, const double *g, const int *lam,
            const double *q, const double *u, const double *x, double *out, double *work);
"""
_IDENT = b"kane-recursive-kernel\0" + hashlib.sha256(SOURCE.encode()).digest()


class KernelLibrary:
    """The loaded kernel: ``lib`` (its ``kk_eval``), ``ffi`` (cffi, ABI mode) and ``built`` (whether this process
    ran the compiler for it)."""

    def __init__(self, lib, ffi, built: bool):
        self.lib, self.ffi, self.built = lib, ffi, built


_loaded: list = []


def kernel_library() -> KernelLibrary:
    """The kernel library, compiled on the first call ever (about a second) and loaded from the cache after that;
    raises :class:`kane.codegen.c_cache.CCompileError` when no C compiler works."""
    if _loaded:
        return _loaded[0]
    lib, built = load_library(_IDENT, lambda: SOURCE, CDEF)
    kl = KernelLibrary(lib, _cffi(CDEF), built)
    if not _loaded:
        _loaded.append(kl)
    return _loaded[0]
