"""The system C compiler and the on-disk cache of compiled shared libraries (issue 12, the fast path of DESIGN.md).

A library is built from C source by ``$CC`` (default ``cc``, else ``gcc``) with fixed flags (``-O2``, no fast-math,
no floating-point contraction, so results are those of the printed operation order) and stored in the private
cache (:mod:`.cache`: ``$KANE_CACHE_DIR/c``, default ``~/.cache/kane/c``, 0700) as ``kane_<key>.so`` (0600), where
the key hashes the source, the compiler command and the flags. Beside it, ``kane_<key>.mac`` seals the library's
bytes (HMAC-SHA256 under the cache's own key); a library whose bytes do not match (planted, truncated, corrupted,
half written) is rebuilt before anything loads it. Builds happen in a private temporary directory and reach the
cache by an atomic ``os.replace``, so two processes building the same library at once leave one valid entry
(their outputs are byte-identical: same source, same relative file names).
"""

from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import shlex
import shutil
import subprocess
import tempfile

from ..errors import KaneError
from .cache import private_dir, read_sealed, write_sealed

__all__ = ["CCompileError", "CFLAGS", "find_compiler", "library_key", "build_library", "run_compiler"]

#: flags of every build: optimized, IEEE semantics kept (no -ffast-math, no contraction into FMA)
CFLAGS = ("-std=c99", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno", "-pthread")
LIBS = ("-lm",)


class CCompileError(KaneError):
    """The C compiler is missing or failed; the message names the command and the compiler's first message."""


def find_compiler() -> tuple[tuple[str, ...] | None, str]:
    """(the compiler command as an argument list, or None; a phrase saying which compiler or why none)."""
    return _find(os.environ.get("CC"))


@functools.lru_cache(maxsize=8)
def _find(cc):
    if cc is not None and cc.strip():
        cmd = tuple(shlex.split(cc))
        path = shutil.which(cmd[0])
        if path is None:
            return None, f"CC={cc!r} is not an executable program"
        return (path,) + cmd[1:], f"CC={cc!r}"
    for name in ("cc", "gcc"):
        path = shutil.which(name)
        if path is not None:
            return (path,), name
    return None, "no C compiler (cc or gcc) on PATH and CC is not set"


def library_key(ident: bytes, compiler: tuple) -> str:
    """The cache key of a library: SHA-256 of what identifies its source (the source itself, or a description
    from which it is printed deterministically), the compiler command and the flags."""
    h = hashlib.sha256()
    for part in (ident, "\0".join(compiler).encode(), "\0".join(CFLAGS + LIBS).encode()):
        h.update(part)
        h.update(b"\1")
    return h.hexdigest()


def run_compiler(args: list, cwd, what: str = "C compiler") -> None:
    """Run the compiler command ``args`` in ``cwd``; a :class:`CCompileError` starting with ``what`` that names the
    compiler and the first error line when it cannot run or fails."""
    try:
        res = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CCompileError(f"{what} {shlex.join(args[:1])} could not run: {exc}") from None
    if res.returncode != 0:
        lines = [ln for ln in (res.stderr or res.stdout or "").splitlines() if ln.strip()]
        first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "(no message)")
        raise CCompileError(f"{what} failed ({shlex.join(args[:1])}, exit {res.returncode}): {first.strip()}")


def build_library(source_for, key: str, compiler: tuple) -> tuple[pathlib.Path, bool]:
    """The path of the cached library ``kane_<key>.so``, built from ``source_for(key)`` (the C source, which may
    embed the key) when missing or not verified (its bytes do not match the sealed digest ``kane_<key>.mac``);
    returns (path, built) where built says whether the compiler ran. A library is verified before it is loaded:
    a foreign one (planted, truncated, or sealed with another key) is rebuilt, never loaded."""
    root = private_dir("c")
    lib, check = root / f"kane_{key[:32]}.so", root / f"kane_{key[:32]}.mac"
    if read_sealed(lib, check) is not None:
        return lib, False
    with tempfile.TemporaryDirectory(prefix="kane-build-", dir=root) as tmp:
        src = pathlib.Path(tmp) / "kane.c"
        src.write_text(source_for(key))
        run_compiler(list(compiler) + list(CFLAGS) + ["-o", "kane.so", "kane.c"] + list(LIBS), tmp)
        built = pathlib.Path(tmp) / "kane.so"
        os.chmod(built, 0o600)
        write_sealed(lib, check, built.read_bytes(), staged=built)
    return lib, True
