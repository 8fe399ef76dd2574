"""The description of a sweep's results file for ``kane info SWEEP.h5``: model, swept names and axes, points,
done and failed counts, the failures' reasons and the warnings counted per kind.

Text read from the file (names, messages) is printed with control characters escaped, so a hostile file cannot
send escape sequences to the terminal; a file that is not a valid sweep raises
:class:`kane.sweep.SweepFileError` naming the file and the dataset at fault (the reader checks the layout first).
"""

from __future__ import annotations

import collections

from .results import load_sweep
from .table import SweepTable, printable

__all__ = ["describe", "describe_table"]

_REASONS_SHOWN = 5
_REASON_CHARS = 200


def _reason(message: str) -> str:
    """The first line of a failure's message, shortened."""
    first = printable(message.splitlines()[0] if message else "(no message)")
    return first if len(first) <= _REASON_CHARS else first[: _REASON_CHARS - 3] + "..."


def describe_table(table: SweepTable, source: str) -> str:
    """The lines describing ``table`` (the runs of the sweep file ``source``)."""
    done = sum(s == "done" for s in table.status)
    failed = len(table) - done
    axes = "; ".join(f"{kind} {', '.join(names)}" for kind, names in table.axes) or "(not recorded)"
    lines = [f"sweep file: {printable(source)}", f"model: {printable(table.model) or '(unnamed)'}",
             f"parameters ({len(table.param_names)}): {printable(', '.join(table.param_names)) or '(none)'}",
             f"axes: {printable(axes)}", f"metrics: {len(table.metric_names)} columns",
             f"points: {len(table)} ({done} done, {failed} failed)"]
    for name, column in zip(table.param_names, table.params.T):
        if len(column):
            lines.append(f"  {printable(name)}: {len(set(column.tolist()))} values from {column.min():g} to "
                         f"{column.max():g}")
    reasons = collections.Counter(_reason(m) for m, s in zip(table.messages, table.status) if s == "failed")
    if reasons:
        lines.append(f"failures ({failed}, {len(reasons)} reasons):")
        lines += [f"  {n} x {reason}" for reason, n in reasons.most_common(_REASONS_SHOWN)]
        if len(reasons) > _REASONS_SHOWN:
            lines.append(f"  ... and {len(reasons) - _REASONS_SHOWN} more reasons")
    counts = table.warning_counts()
    runs = sum(bool(w) for w in table.warnings)
    lines.append("warnings: " + (", ".join(f"{printable(k)} {v}" for k, v in counts.items()) + f" (in {runs} runs)"
                                 if counts else "none" if table.warnings else "not recorded (a version 1 file)"))
    return "\n".join(lines)


def describe(path) -> str:
    """The description of the sweep's results at ``path`` (an HDF5 file or a Zarr store), as ``kane info``
    prints it; SweepFileError naming the file and the dataset when it is not a valid sweep file."""
    return describe_table(load_sweep(path), str(path))
