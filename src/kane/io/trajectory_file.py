"""Helpers of trajectory files (:mod:`kane.io.trajectory`): opening one while another process holds its HDF5 lock,
choosing between ``X`` and ``X.partial``, and the checked records of a file (events, modes, stats, parameters)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import h5py
import numpy as np

from .h5_read import HDF5LayoutError, dataset, json_attr, printable, read_rows, text_attr
from .output_path import TrajectoryFileError

__all__ = ["PARTIAL_SUFFIX", "h5open", "pick_file", "jsonl_records", "stats_fields", "params_of"]

PARTIAL_SUFFIX = ".partial"
_LOCK_WAIT_S = 5.0


def h5open(path: Path, mode: str, options: dict | None = None) -> h5py.File:
    """Open an HDF5 file, waiting up to 5 s while another process holds its lock (a reader or a flushing
    writer), then without the lock, noting so in ``options`` (the writer's, kept between flushes, so that a
    reader holding the file for long delays one flush only); a version-1 file of a killed SWMR writer is read in
    SWMR mode. In plain words when it cannot be opened."""
    deadline = time.monotonic() + _LOCK_WAIT_S
    options = {} if options is None else options
    while True:
        try:
            return h5py.File(path, mode, **options)
        except OSError as exc:
            text = str(exc)
            if " lock" in text.lower() and "locking" not in options:  # not "sblock" of a truncated file
                if time.monotonic() > deadline:
                    options["locking"] = False
                time.sleep(0.02)
                continue
            if mode == "r" and "already open for write" in text and "swmr" not in options:
                options["swmr"] = True
                continue
            what = "read" if mode == "r" else "write"
            reason = "no such file or directory" if isinstance(exc, FileNotFoundError) else \
                "permission denied" if isinstance(exc, PermissionError) else text
            raise TrajectoryFileError(f"cannot {what} trajectory file {path}: {reason}") from exc


def jsonl_records(f: h5py.File, name: str, n_bytes: int | None, path: Path, fields: dict) -> list[dict]:
    """The records of the JSON-lines byte stream ``name`` (its first ``n_bytes``), each an object with ``fields``
    (name -> type); a line cut short by a killed flush is skipped, a record of another shape is an error."""
    ds = dataset(f, name, path, ndim=1, kinds="iu", required=False)
    raw = b"" if ds is None else read_rows(ds, n_bytes, path, dtype=np.uint8).tobytes()
    out = []
    for k, line in enumerate(raw.split(b"\n")):
        if line.strip(b"\x00 \t\r"):
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            bad = [key for key, kind in fields.items() if not isinstance(record, dict) or
                   not isinstance(record.get(key, {} if kind is dict else None), kind)]
            if bad:
                raise HDF5LayoutError(path, name, f"line {k + 1} is not a record with {', '.join(fields)} "
                                      f"(bad: {', '.join(bad)})")
            out.append(record)
    return out


def stats_fields(f: h5py.File, path: Path, fields: dict) -> dict:
    """The attribute ``stats`` (JSON) checked against ``fields`` (a dataclass's fields: name -> Field); a file
    without it gives the ``method`` attribute only."""
    d = json_attr(f.attrs, "stats", path, dict, default={"method": text_attr(f.attrs, "method", path, "")})
    out = {}
    for name, fld in fields.items():
        v = d.get(name, fld.default)
        kind = {"method": str, "loop": str, "loop_reason": str, "wall_time_s": (int, float)}.get(name, int)
        if not (isinstance(v, kind) and not isinstance(v, bool) or (v is None and name == "n_rejected")):
            raise HDF5LayoutError(path, "attribute stats", f"field {name} is {printable(repr(v))[:80]} (expected a "
                                  f"{'text' if kind is str else 'number'})")
        out[name] = v
    return out


def params_of(f: h5py.File, path: Path) -> dict[str, float]:
    """The attribute ``params``: a JSON object of names to numbers."""
    params = json_attr(f.attrs, "params", path, dict, default={})
    bad = [k for k, v in params.items() if isinstance(v, bool) or not isinstance(v, (int, float))]
    if bad:
        raise HDF5LayoutError(path, "attribute params", f"{printable(bad[0])!r} is not a number")
    try:
        return {k: float(v) for k, v in params.items()}
    except OverflowError:
        raise HDF5LayoutError(path, "attribute params", "a number too large for a float") from None


def pick_file(path: str | os.PathLike) -> Path:
    """``path``, or ``path + '.partial'`` when only that exists or it is newer (a later run killed or going)."""
    p = Path(path)
    if p.name.endswith(PARTIAL_SUFFIX):
        candidates = [p]
    else:
        candidates = [c for c in (p, Path(str(p) + PARTIAL_SUFFIX)) if c.is_file()]
    if not candidates or not candidates[0].exists():
        raise TrajectoryFileError(f"no trajectory file {p}" + ("" if p.name.endswith(PARTIAL_SUFFIX) else
                                                               f" (nor {p}{PARTIAL_SUFFIX} of a run in progress)"))
    return max(candidates, key=lambda c: (c.stat().st_mtime_ns, c.name.endswith(PARTIAL_SUFFIX)))
