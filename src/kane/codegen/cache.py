"""The private, verified on-disk cache of compiled code (issue 27, item 2): ``$KANE_CACHE_DIR`` (default
``~/.cache/kane``) and its parts (``c``, ``numba``, ``cffi``).

* Directories are created 0700 and files 0600 whatever the umask. A cache directory that another user owns, or
  that group or others may write (mode & 0o022), is refused with a :class:`CacheWarning` naming it, and a private
  temporary directory (``tempfile.mkdtemp``, 0700, removed at exit) serves this process instead.
* What kane loads from the cache is sealed: beside an entry, ``<entry>.mac`` holds HMAC-SHA256 of its bytes under
  a random key kept in the cache root (``kane.key``, 0600). A file written by anyone who does not hold the key (a
  planted library with a matching SHA-256 "sidecar", a truncated write, an entry of another machine) fails the
  check and is rebuilt; it is never loaded. The key's secrecy rests on the root being verified private.
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import os
import pathlib
import secrets
import shutil
import stat
import tempfile
import threading
import warnings

__all__ = ["CacheWarning", "cache_root", "private_dir", "seal", "read_sealed", "write_private", "write_sealed"]

_KEY_BYTES = 32
_lock = threading.RLock()
_fallbacks: dict = {}  # refused root -> this process's private replacement
_keys: dict = {}  # root -> key


class CacheWarning(UserWarning):
    """The cache directory is not private to this user: kane uses a private temporary one instead."""


def _configured_root() -> pathlib.Path:
    return pathlib.Path(os.environ.get("KANE_CACHE_DIR") or pathlib.Path.home() / ".cache" / "kane")


def _why_not_private(path: pathlib.Path) -> str | None:
    """Why ``path`` (an existing directory) is not private to this user, or None when it is."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not this user ({os.getuid()})"
    if st.st_mode & 0o022:
        return f"group or others may write it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _make_private(path: pathlib.Path) -> None:
    """Create ``path`` and its missing parents, each 0700 whatever the umask."""
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue
        os.chmod(d, 0o700)  # mkdir's mode passes through the umask; chmod's does not


def _private(path: pathlib.Path, inner: tuple = ()) -> pathlib.Path:
    """``path`` if it and its subdirectories ``inner`` are (or are created) private to this user, else this
    process's private fallback (with ``inner`` in it), with a warning naming the directory at fault and why."""
    with _lock:
        if path in _fallbacks:
            return _fallbacks[path]
        why, at = None, path
        try:
            for at in (path, *(path / d for d in inner)):
                _make_private(at)
                why = _why_not_private(at)
                if why is not None:
                    break
        except OSError as exc:
            why = f"it cannot be created or read ({exc.strerror or exc})"
        if why is None:
            return path
        fallback = pathlib.Path(tempfile.mkdtemp(prefix="kane-cache-"))
        atexit.register(shutil.rmtree, fallback, True)
        for d in inner:
            _make_private(fallback / d)
        _fallbacks[path] = fallback
        warnings.warn(f"kane: the cache directory {at} is not used because {why}; using the private directory "
                      f"{fallback} for this process instead (set KANE_CACHE_DIR to a directory of your own, mode "
                      "0700)", CacheWarning, stacklevel=4)
        return fallback


def cache_root() -> pathlib.Path:
    """The cache root, verified private (or this process's private fallback)."""
    return _private(_configured_root())


def private_dir(part: str, inner: tuple = ()) -> pathlib.Path:
    """The cache's directory ``part`` (``"c"``, ``"numba"``, ...) and its subdirectories ``inner`` (where another
    library keeps files it trusts, as numba's ``__pycache__``), created 0700 and verified private."""
    return _private(cache_root() / part, tuple(inner))


def _key(root: pathlib.Path) -> bytes:
    """The cache's sealing key: random, created once (0600) in the private root."""
    with _lock:
        key = _keys.get(root)
        if key is not None:
            return key
        path = root / "kane.key"
        try:
            key = path.read_bytes()
        except FileNotFoundError:
            key = b""
        if len(key) != _KEY_BYTES:
            fd, tmp = tempfile.mkstemp(prefix=".kane-key-", dir=root)  # 0600
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(_KEY_BYTES))
            try:
                if key:  # a bad key is replaced: what it sealed is rebuilt
                    os.replace(tmp, path)
                else:  # the first: a process that creates one at the same time keeps the same, the first linked
                    os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                pathlib.Path(tmp).unlink(missing_ok=True)
            key = path.read_bytes()
        _keys[root] = key
        return key


def seal(data: bytes) -> str:
    """HMAC-SHA256 (hex) of ``data`` under the cache's key."""
    return hmac.new(_key(cache_root()), data, hashlib.sha256).hexdigest()


def read_sealed(path: pathlib.Path, mac: pathlib.Path) -> bytes | None:
    """The bytes of ``path`` when ``mac`` holds their seal, else None (missing, foreign, truncated)."""
    try:
        data, expected = path.read_bytes(), mac.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return data if hmac.compare_digest(seal(data), expected) else None


def write_private(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (0600) by an atomic ``os.replace``: a reader sees the old file or the new one."""
    fd, tmp = tempfile.mkstemp(prefix=".kane-", suffix=".tmp", dir=path.parent)  # 0600 whatever the umask
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise


def write_sealed(path: pathlib.Path, mac: pathlib.Path, data: bytes, staged: pathlib.Path | None = None) -> None:
    """Write ``data`` to ``path`` (0600; ``staged``: a file of this filesystem that already holds it) and its seal
    to ``mac``, each by an atomic ``os.replace``: a reader sees an old entry or the whole new one."""
    if staged is None:
        write_private(path, data)
    else:
        os.chmod(staged, 0o600)
        os.replace(staged, path)
    write_private(mac, (seal(data) + "\n").encode())
