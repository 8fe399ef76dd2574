"""Checked reading of kane's HDF5 files (trajectories, real-time logs, assembly frames): layout first, then slices.

A file from elsewhere may lack a dataset, hold text where numbers belong, claim 3e9 rows in a chunked dataset
that stores none, link to another file, or carry escape sequences in its attributes. The helpers here look before
they read: :func:`dataset` checks that a name is a plain dataset in this file (a hard link: no soft or external
link, no virtual or external storage), of a numeric dtype, of the expected rank and row width; :func:`read_rows`
checks the size of a slice against ``max_bytes`` before it allocates; :func:`text_attr` and :func:`json_attr`
check an attribute's type and size. Every failure is a :class:`HDF5LayoutError` naming the file and the dataset
or attribute. :func:`printable` escapes control characters of text read from a file before it is printed.

    >>> with h5py.File(path, "r") as f:
    ...     t = read_rows(dataset(f, "t", path, ndim=1), n, path)
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Sequence

import h5py
import numpy as np

from ..errors import ArgumentError, KaneError

__all__ = ["HDF5LayoutError", "MAX_READ_BYTES", "MAX_ATTR_BYTES", "dataset", "read_rows", "text_attr", "json_attr",
           "name_list", "printable", "format_of",
           "unreadable_as_layout_error"]

MAX_READ_BYTES = 2 << 30  # one slice read from a dataset [bytes]: 2 GiB (a run of 10^7 samples of 26 states)
MAX_ATTR_BYTES = 16 << 20  # one attribute [bytes]
_NUMERIC = "fiub"  # float, signed and unsigned integers, bool
_CONTROL = {**{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}, ord("\t"): "\\t", ord("\n"): "\\n",
            ord("\r"): "\\r", **{c: f"\\x{c:02x}" for c in range(0x80, 0xA0)},
            **{c: f"\\u{c:04x}" for c in (0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}}


class HDF5LayoutError(ArgumentError):
    """An HDF5 file kane reads does not have the layout kane wrote: ``path`` the file, ``item`` the dataset or
    attribute at fault; the message says what was expected."""

    def __init__(self, path, item: str, expected: str):
        self.path, self.item = str(path), str(item)
        super().__init__(f"{printable(self.path)}: {printable(self.item)}: {expected}")


def printable(text: object) -> str:
    """``text`` with its control characters (C0, DEL, C1, line separators and bidirectional overrides) written
    as escapes (``\\x1b``, ``\\n``, ``\\u202e``): safe to print on a terminal."""
    return str(text).translate(_CONTROL)


def dataset(f: h5py.Group, name: str, path, *, ndim: int, width: Sequence[int] | int | None = None,
            kinds: str = _NUMERIC, required: bool = True) -> h5py.Dataset | None:
    """The dataset ``name`` of ``f`` (file ``path``), checked: a hard link to a dataset stored in this file, of
    a dtype kind in ``kinds``, rank ``ndim`` and (for ``ndim`` > 1) row shape ``width``. None when it is missing
    and not ``required``."""
    try:
        link = f.get(name, getlink=True)
        if link is None:
            if required:
                raise HDF5LayoutError(path, name, "missing (expected a dataset)")
            return None
        if not isinstance(link, h5py.HardLink):
            raise HDF5LayoutError(path, name, f"is a {type(link).__name__} (expected a dataset stored in the file)")
        ds = f[name]
        if not isinstance(ds, h5py.Dataset):
            raise HDF5LayoutError(path, name, f"is a {type(ds).__name__} (expected a dataset)")
        if ds.is_virtual or ds.external:
            raise HDF5LayoutError(path, name, "stores its data in other files (expected data in this file)")
        dtype, shape = ds.dtype, ds.shape
    except HDF5LayoutError:
        raise
    except (OSError, KeyError, ValueError, TypeError, RuntimeError) as exc:
        raise HDF5LayoutError(path, name, f"cannot be opened ({exc})") from None
    if dtype.kind not in kinds or dtype.fields is not None or dtype.subdtype is not None:
        raise HDF5LayoutError(path, name, f"dtype {dtype} (expected numbers)")
    if shape is None or len(shape) != ndim:
        raise HDF5LayoutError(path, name, f"shape {shape} (expected {ndim} dimension{'s' * (ndim > 1)})")
    if width is not None and tuple(shape[1:]) != tuple(np.atleast_1d(width)):
        raise HDF5LayoutError(path, name, f"shape {shape} (expected rows of shape {tuple(np.atleast_1d(width))})")
    return ds


def read_rows(ds: h5py.Dataset, n: int | None, path, *, max_bytes: int = MAX_READ_BYTES,
              dtype=float) -> np.ndarray:
    """The first ``n`` rows of ``ds`` (all when None; at most its length) as ``dtype``, refused before anything is
    allocated when they would take more than ``max_bytes``."""
    rows = ds.shape[0] if n is None else max(0, min(int(n), ds.shape[0]))
    row = math.prod(ds.shape[1:])
    size = rows * row * max(np.dtype(dtype).itemsize, ds.dtype.itemsize)
    if size > max_bytes:
        raise HDF5LayoutError(path, ds.name.lstrip("/"), f"{rows} rows of {row} values, {size / 2**20:.0f} MiB: "
                              f"more than the limit of {max_bytes / 2**20:.0f} MiB (not read)")
    try:
        return np.asarray(ds[:rows], dtype=dtype)
    except (OSError, ValueError, TypeError, RuntimeError, MemoryError) as exc:
        raise HDF5LayoutError(path, ds.name.lstrip("/"), f"cannot be read ({exc})") from None


def _attr(attrs: h5py.AttributeManager, name: str, path):
    try:
        if name not in attrs:
            return None
        aid = attrs.get_id(name)
        if aid.get_storage_size() > MAX_ATTR_BYTES:
            raise HDF5LayoutError(path, f"attribute {name}", f"{aid.get_storage_size()} bytes (more than "
                                  f"{MAX_ATTR_BYTES} bytes, not read)")
        return attrs[name]
    except HDF5LayoutError:
        raise
    except (OSError, KeyError, ValueError, TypeError, RuntimeError) as exc:
        raise HDF5LayoutError(path, f"attribute {name}", f"cannot be read ({exc})") from None


def text_attr(attrs: h5py.AttributeManager, name: str, path, default: str | None = None) -> str:
    """The text attribute ``name`` (a scalar string, UTF-8 decoded with replacement); ``default`` when it is
    missing (an error when ``default`` is None)."""
    value = _attr(attrs, name, path)
    if value is None:
        if default is None:
            raise HDF5LayoutError(path, f"attribute {name}", "missing (expected text)")
        return default
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "OSU":
        value = value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    raise HDF5LayoutError(path, f"attribute {name}", f"a {type(value).__name__} (expected text)")


def format_of(f: h5py.Group) -> str | None:
    """The ``format`` attribute of the file ``f`` when it is text, else None (never an error: a file whose root
    cannot be read has no format)."""
    try:
        return text_attr(f.attrs, "format", "", default="") or None
    except (HDF5LayoutError, OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


@contextlib.contextmanager
def unreadable_as_layout_error(path, item: str = "file structure") -> Iterator[None]:
    """Within the block, what h5py raises for a damaged file (an unreadable object header, a bad checksum)
    becomes an :class:`HDF5LayoutError` naming ``path`` (and ``item``, where the reader has no better name)."""
    try:
        yield
    except (OSError, KeyError, ValueError, RuntimeError) as exc:
        if isinstance(exc, KaneError):
            raise
        raise HDF5LayoutError(path, item, f"cannot be read ({type(exc).__name__}: {exc})") from None


def json_attr(attrs: h5py.AttributeManager, name: str, path, kind: type, default=None):
    """The JSON text attribute ``name`` parsed, required to be a ``kind`` (list or dict); ``default`` when it is
    missing (an error when ``default`` is None)."""
    if default is not None and _attr(attrs, name, path) is None:
        return default
    text = text_attr(attrs, name, path)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HDF5LayoutError(path, f"attribute {name}", f"not JSON ({printable(exc)})") from None
    if not isinstance(value, kind):
        raise HDF5LayoutError(path, f"attribute {name}", f"a JSON {type(value).__name__} (expected a JSON "
                              f"{'list' if kind is list else 'object'})")
    return value


def name_list(attrs: h5py.AttributeManager, name: str, path, count: int | None = None,
              default: list | None = None) -> tuple[str, ...]:
    """The JSON list of names ``name`` (strings; ``count`` of them when given)."""
    names = json_attr(attrs, name, path, list, default)
    if not all(isinstance(v, str) for v in names):
        raise HDF5LayoutError(path, f"attribute {name}", "holds items that are not text (expected names)")
    if count is not None and len(names) != count:
        raise HDF5LayoutError(path, f"attribute {name}", f"{len(names)} names for {count} columns")
    return tuple(names)
