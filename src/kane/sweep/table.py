"""The table of a sweep's runs and its validated reading from an open results file (HDF5 or Zarr, one layout).

Every read checks the layout first (the format and version attributes, the JSON column names, ``n_committed`` a
whole number within every dataset's length, each dataset present with its dtype kind and shape, and the bytes to
read below :data:`MAX_READ_BYTES`) and reads only the committed rows; anything else is a
:class:`SweepFileError` naming the file and the dataset or attribute at fault, never a raw KeyError, MemoryError
or OverflowError. A hostile file cannot make the reader allocate more than the limit.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import KaneError
from ..io.trajectory import Trajectory

__all__ = ["SweepFileError", "SweepTable", "header", "check_columns", "read_table", "write_trajectory",
           "read_trajectory", "warnings_text", "warnings_json", "is_format", "printable", "MAX_READ_BYTES", "FORMAT", "VERSION"]

FORMAT = "kane.sweep"
VERSION = 2  # 2: the ``warnings`` column (version 1 files are read with no warnings)
MAX_READ_BYTES = 4 << 30  # the most a sweep file's reader allocates for one table or one trajectory
_KEY = re.compile(r"^[0-9a-f]{64}$")
_TEXT_KINDS = "SOUT"  # bytes, object (h5py's variable-length strings), unicode, numpy's StringDType (Zarr)


class SweepFileError(KaneError, OSError):
    """A sweep file cannot be read or appended: not HDF5, not a kane sweep, or holding other columns."""


@dataclass(frozen=True)
class SweepTable:
    """The runs of a sweep: ``keys`` (N,) content hashes, ``status`` (N,) "done" | "failed", ``messages`` (N,),
    ``params`` (N, len(param_names)) and ``metrics`` (N, len(metric_names)) float arrays; ``warnings`` (N,)
    {warning kind: count} per run (() when unknown); ``model`` the model's name ("" when unknown)."""

    param_names: tuple[str, ...]
    metric_names: tuple[str, ...]
    keys: tuple[str, ...]
    status: tuple[str, ...]
    messages: tuple[str, ...]
    params: np.ndarray
    metrics: np.ndarray
    axes: tuple = ()  # the sweep's axes: (kind "grid" | "random" | "points", names) pairs; () when unknown
    warnings: tuple = ()
    model: str = ""

    def __len__(self) -> int:
        return len(self.keys)

    def column(self, name: str) -> np.ndarray:
        """A parameter or metric column (N,) by name."""
        if name in self.param_names:
            return self.params[:, self.param_names.index(name)]
        if name in self.metric_names:
            return self.metrics[:, self.metric_names.index(name)]
        raise KeyError(f"no column {name!r}; columns: {', '.join(self.param_names + self.metric_names)}")

    def warning_counts(self) -> dict[str, int]:
        """{warning kind: count} over every run."""
        total: dict[str, int] = {}
        for row in self.warnings:
            for kind, count in row.items():
                total[kind] = total.get(kind, 0) + count
        return dict(sorted(total.items()))

    def sorted_by(self, order) -> SweepTable:
        """The rows in the order of ``order`` (a sequence of keys, each in the table)."""
        index = {k: i for i, k in enumerate(self.keys)}
        rows = np.array([index[k] for k in order], dtype=int)
        return SweepTable(self.param_names, self.metric_names, tuple(self.keys[i] for i in rows),
                          tuple(self.status[i] for i in rows), tuple(self.messages[i] for i in rows),
                          self.params[rows], self.metrics[rows], self.axes,
                          tuple(self.warnings[i] for i in rows) if self.warnings else (), self.model)


def header(model: str, param_names, metric_names, axes) -> dict:
    """The attributes of a new results file (HDF5 or Zarr): format, version, model, columns and axes."""
    return dict(format=FORMAT, version=VERSION, model=model, n_committed=0,
                param_names=json.dumps(list(param_names)), metric_names=json.dumps(list(metric_names)),
                axes=json.dumps([[k, list(n)] for k, n in axes]))


def printable(text: str) -> str:
    """``text`` with every control or non-printable character written as a Python escape (``\\x1b``, ``\\n``):
    text read from a file never sends escape sequences to a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def check_columns(table: SweepTable, path, param_names, metric_names) -> None:
    """SweepFileError naming both sets when the file at ``path`` holds other columns than asked."""
    if (table.param_names, table.metric_names) != (tuple(param_names), tuple(metric_names)):
        raise SweepFileError(printable(
            f"sweep file {path} holds another sweep's columns (parameters {', '.join(table.param_names)}; "
            f"metrics {', '.join(table.metric_names)}), not ({', '.join(param_names)}; "
            f"{', '.join(metric_names)}); give another output file"))


def is_format(value) -> bool:
    """Whether ``value`` (a ``format`` attribute as read) says "kane.sweep"."""
    return isinstance(value, (str, bytes)) and (value.decode("utf-8", "replace") if isinstance(value, bytes)
                                                 else value) == FORMAT


def _bad(path, what: str, problem: str) -> SweepFileError:
    return SweepFileError(f"sweep file {path}: {what} {problem}")


def _attr_text(root, path, name: str, default=None) -> str:
    value = root.attrs.get(name, default)
    if value is None:
        raise _bad(path, f"attribute {name!r}", "is missing")
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise _bad(path, f"attribute {name!r}", f"is not text (a {type(value).__name__})")
    return value


def _names(root, path, name: str) -> tuple[str, ...]:
    try:
        names = json.loads(_attr_text(root, path, name))
    except json.JSONDecodeError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _bad(path, f"attribute {name!r}", "is not a JSON list of names")
    return tuple(names)


def _axes(root, path) -> tuple:
    try:
        axes = json.loads(_attr_text(root, path, "axes", "[]"))
    except json.JSONDecodeError:
        axes = None
    ok = isinstance(axes, list) and all(
        isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], list)
        and all(isinstance(n, str) for n in a[1]) for a in axes)
    if not ok:
        raise _bad(path, "attribute 'axes'", "is not a JSON list of [kind, names] pairs")
    return tuple((k, tuple(v)) for k, v in axes)


def _whole(root, path, name: str) -> int:
    value = root.attrs.get(name)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) != int(value) or int(value) < 0:
        raise _bad(path, f"attribute {name!r}", f"= {value!r}: expected a whole number of at least 0")
    return int(value)


def _dataset(root, path, name: str, kinds: str, width: int | None, rows: int, where: str = ""):
    """The dataset ``name`` of ``root`` (called ``where + name`` in messages) checked: present, of a dtype kind in
    ``kinds``, 1-D (``width`` None) or 2-D of ``width`` columns, with at least ``rows`` rows."""
    label = where + name
    try:
        obj = root[name] if name in root else None
    except (KeyError, ValueError, OSError, TypeError) as exc:
        raise _bad(path, f"dataset {label!r}", f"cannot be opened ({type(exc).__name__}: {exc})") from None
    shape, dtype = getattr(obj, "shape", None), getattr(obj, "dtype", None)
    if obj is None or shape is None or dtype is None:
        raise _bad(path, f"dataset {label!r}", "is missing")
    if dtype.kind not in kinds:
        raise _bad(path, f"dataset {label!r}", f"has dtype {dtype}; expected {'text' if 'S' in kinds else 'floats'}")
    want = (rows,) if width is None else (rows, width)
    if len(shape) != len(want) or (width is not None and shape[1] != width) or shape[0] < rows:
        raise _bad(path, f"dataset {label!r}", f"has shape {tuple(shape)}; expected "
                                              f"({rows}{'' if width is None else f', {width}'}) or more rows")
    return obj


def _read(path, name: str, obj, rows) -> np.ndarray:
    try:
        return np.asarray(obj[rows])
    except (OSError, ValueError, TypeError, KeyError, RuntimeError, MemoryError) as exc:
        raise _bad(path, f"dataset {name!r}", f"cannot be read ({type(exc).__name__}: {exc})") from None


def _text(values) -> tuple[str, ...]:
    return tuple(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in values)


def _counts(path, texts) -> tuple:
    out = []
    for i, text in enumerate(texts):
        if text == "{}":  # (most runs warn nothing: no JSON to parse)
            out.append({})
            continue
        try:
            counts = json.loads(text)
        except json.JSONDecodeError:
            counts = None
        if not isinstance(counts, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for k, v in counts.items()):
            raise _bad(path, "dataset 'warnings'", f"row {i}: expected a JSON object of warning counts, got "
                                                   f"{text[:60]!r}")
        out.append(counts)
    return tuple(out)


def _limit(path, what: str, n_bytes: int) -> None:
    if n_bytes > MAX_READ_BYTES:
        raise _bad(path, what, f"claims {n_bytes / 2**30:.3g} GiB, more than the {MAX_READ_BYTES / 2**30:g} GiB "
                               f"a sweep file's reader allocates; the file is damaged or not kane's")


def warnings_text(rows) -> list[str]:
    """The ``warnings`` column of ``rows`` (their seventh item, {kind: count}; {} where absent) as JSON texts."""
    return [warnings_json(r[6] if len(r) > 6 and isinstance(r[6], dict) else {}) for r in rows]


def warnings_json(counts: dict) -> str:
    """One run's {warning kind: count} as the JSON text of the ``warnings`` column."""
    return json.dumps(counts, sort_keys=True) if counts else "{}"


def read_table(root, path) -> SweepTable:
    """The committed runs of an open results file ``root`` (an h5py File or a zarr Group) read from ``path``,
    its layout checked first (SweepFileError naming the file and the dataset or attribute at fault)."""
    if not is_format(root.attrs.get("format")):
        raise SweepFileError(f"sweep file {path}: not a kane sweep file (format {root.attrs.get('format')!r})")
    version = _whole(root, path, "version")
    if version not in (1, VERSION):
        raise _bad(path, "attribute 'version'", f"= {version}: this kane reads versions 1 and {VERSION}")
    p_names, m_names = _names(root, path, "param_names"), _names(root, path, "metric_names")
    axes = _axes(root, path)
    n = _whole(root, path, "n_committed")
    _limit(path, f"n_committed = {n}", n * (8 * (len(p_names) + len(m_names)) + 64 + 3 * 16))
    rows = slice(0, n)
    text = {name: _dataset(root, path, name, _TEXT_KINDS, None, n) for name in ("key", "status", "message")}
    floats = {name: _dataset(root, path, name, "f", len(names), n)
              for name, names in (("params", p_names), ("metrics", m_names))}
    keys = _text(_read(path, "key", text["key"], rows))
    bad = next((i for i, k in enumerate(keys) if not _KEY.match(k)), None)
    if bad is not None:
        raise _bad(path, "dataset 'key'", f"row {bad}: {keys[bad][:70]!r} is not a run's key (64 hex digits)")
    status = _text(_read(path, "status", text["status"], rows))
    bad = next((i for i, s in enumerate(status) if s not in ("done", "failed")), None)
    if bad is not None:
        raise _bad(path, "dataset 'status'", f"row {bad}: {status[bad][:40]!r}; expected 'done' or 'failed'")
    warned = ()
    if version >= 2:
        w = _dataset(root, path, "warnings", _TEXT_KINDS, None, n)
        warned = _counts(path, _text(_read(path, "warnings", w, rows)))
    return SweepTable(p_names, m_names, keys, status, _text(_read(path, "message", text["message"], rows)),
                      _read(path, "params", floats["params"], rows).astype(float),
                      _read(path, "metrics", floats["metrics"], rows).astype(float), axes, warned,
                      _attr_text(root, path, "model", ""))


def write_trajectory(root, key: str, traj, q_names, u_names, create) -> None:
    """Write the trajectory (t, q, u, energy or None) of run ``key`` under ``trajectories/KEY`` of ``root``,
    replacing one left by an append cut short; ``create(group, name, array)`` makes a dataset."""
    group = root.require_group("trajectories")
    if "q_names" not in group.attrs:
        group.attrs.update(q_names=json.dumps(list(q_names)), u_names=json.dumps(list(u_names)))
    if key in group:  # left by an append cut short: its row was never committed
        del group[key]
    g = group.create_group(key)
    for name, value in zip(("t", "q", "u", "energy"), traj):
        if value is not None:
            create(g, name, np.asarray(value, dtype=float))


def read_trajectory(root, table: SweepTable, key: str, path) -> Trajectory:
    """The trajectory of run ``key`` in the open results file ``root`` (its runs ``table``), its layout checked
    (SweepFileError naming the dataset at fault)."""
    try:
        group = root["trajectories"] if "trajectories" in root else None
        g = group[key] if group is not None and key in table.keys and key in group else None
    except (KeyError, ValueError, OSError, TypeError) as exc:
        raise _bad(path, f"group 'trajectories/{key}'", f"cannot be opened ({type(exc).__name__}: {exc})") from None
    if g is None:
        raise SweepFileError(f"sweep file {path}: no trajectory of run {key!r} (kept only for completed runs "
                             f"of a sweep run with trajectories)")
    q_names, u_names = _names(group, path, "q_names"), _names(group, path, "u_names")
    where = f"trajectories/{key}/"
    t = _dataset(g, path, "t", "f", None, 0, where)
    n = t.shape[0]
    _limit(path, f"dataset '{where}t' ({n} samples)", n * 8 * (2 + len(q_names) + len(u_names)))
    arrays = {"t": _read(path, f"{where}t", t, slice(0, n))}
    for name, width in (("q", len(q_names)), ("u", len(u_names))):
        ds = _dataset(g, path, name, "f", width, n, where)
        if ds.shape[0] != n:
            raise _bad(path, f"dataset '{where}{name}'", f"has {ds.shape[0]} rows; its t has {n}")
        arrays[name] = _read(path, f"{where}{name}", ds, slice(0, n))
    energy = None
    if "energy" in g:
        energy = _read(path, f"{where}energy", _dataset(g, path, "energy", "f", None, n, where), slice(0, n))
    i = table.keys.index(key)
    return Trajectory(t=arrays["t"], q=arrays["q"], u=arrays["u"], energy=energy, q_names=q_names, u_names=u_names,
                      source=str(path),
                      params={n: float(v) for n, v in zip(table.param_names, table.params[i]) if "." not in n})
