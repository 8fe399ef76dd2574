"""The work of ``kane linearize MODEL [--at NAME=VALUE ...] [--steady NAMES] [--sweep NAME=START:STOP:N]
[--plot FILE]``: parse the options (numbers only, never evaluated text), linearize at the model's initial state
with the given changes, or sweep one name, and return the report as text."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError
from .linearize import linearizer
from .stability import eigenvalue_sweep
from .steady import steady_motion

__all__ = ["parse_assignment", "parse_sweep", "linearize_report"]


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ArgumentError(f"{what}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ArgumentError(f"{what}: expected a finite number, got {text!r}")
    return value


def parse_assignment(text: str) -> tuple[str, float]:
    """``"NAME=VALUE"`` -> (name, value)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ArgumentError(f"--at {text!r}: expected NAME=VALUE, such as lean=0.1")
    return name.strip(), _number(value.strip(), f"--at {name.strip()}")


def parse_sweep(text: str) -> tuple[str, np.ndarray]:
    """``"NAME=START:STOP:N"`` -> (name, N values from START to STOP)."""
    name, sep, rng = text.partition("=")
    parts = rng.split(":")
    if not sep or not name.strip() or len(parts) != 3:
        raise ArgumentError(f"--sweep {text!r}: expected NAME=START:STOP:N, such as v=0:10:101")
    start, stop = (_number(p, f"--sweep {name.strip()}") for p in parts[:2])
    n = _number(parts[2], f"--sweep {name.strip()} N")
    if n != int(n) or n < 2:
        raise ArgumentError(f"--sweep {text!r}: N must be a whole number of at least 2, got {parts[2]!r}")
    return name.strip(), np.linspace(start, stop, int(n))


def linearize_report(lm, equations, at=(), steady=(), sweep=None, plot=None, ignorable=None) -> str:
    """The text of ``kane linearize``: ``lm`` a :class:`kane.io.model_file.LoadedModel`, ``equations`` derived
    from it; ``at`` strings NAME=VALUE (coordinates, speeds, parameters, inputs); ``steady`` unknowns to solve
    for a steady motion first; ``sweep`` NAME=START:STOP:N; ``plot`` a file for the eigenvalue plot of a sweep
    (default ``<model name>_<swept name>_eigenvalues.png`` in the current directory); ``ignorable`` the cyclic
    coordinates and symmetries to take out (default: all those found)."""
    model = equations.model
    q_names, u_names = [str(s) for s in model.q], [str(s) for s in equations.u_independent]
    p_names, w_names = [str(s) for s in model.parameters], [str(s) for s in model.inputs]
    q = {n: float(lm.q0[n]) for n in q_names}
    u = {n: float(lm.u0[n]) for n in u_names}
    params = {n: float(lm.parameters[n]) for n in p_names if n in lm.parameters}
    inputs = {n: float(v) for n, v in lm.inputs.items() if n in w_names and n not in lm.input_laws}
    for name, value in map(parse_assignment, at):
        for target, known in ((q, q_names), (u, u_names), (params, p_names), (inputs, w_names)):
            if name in known:
                target[name] = value
                break
        else:
            raise ArgumentError(f"--at {name}: unknown name; known: coordinates {', '.join(q_names)}; independent "
                                f"speeds {', '.join(u_names)}; parameters {', '.join(p_names) or 'none'}; "
                                f"inputs {', '.join(w_names) or 'none'}")
    name, values = parse_sweep(sweep) if sweep is not None else (None, None)
    lz = linearizer(equations)
    steady = tuple(steady)
    lines = []
    scheduled = [n for n in lm.input_laws if n in w_names]
    if scheduled:  # a schedule is a function of time: the operating point holds each input at one value
        lines.append("inputs at the operating point: " + ", ".join(f"{n} = {inputs.get(n, lm.inputs.get(n, 0.0)):g}"
                                                                   for n in scheduled)
                     + " (the model file schedules them as functions of time; set one with --at NAME=VALUE)")
    if steady:
        sm = steady_motion(equations, q, u, steady, 0.0, params, inputs, ignorable=ignorable)
        q, u = sm.q, sm.u
        lines.append("steady motion: " + ", ".join(f"{k} = {v:.12g}" for k, v in sm.values.items())
                     + f" (residual {np.max(np.abs(sm.residual), initial=0.0):.3g}, {sm.iterations} Newton steps)")
    if sweep is None:
        lin = lz.at(q, u, 0.0, params, inputs, warn=False, ignorable=ignorable)
        lines.append(str(lin))
        lines.append("A =")
        lines.append(np.array2string(lin.A, precision=6, max_line_width=140, suppress_small=True))
        if lin.B.size:
            lines.append("B =")
            lines.append(np.array2string(lin.B, precision=6, max_line_width=140, suppress_small=True))
        return "\n".join(lines) + "\n"
    result = eigenvalue_sweep(equations, name, values, q, u, 0.0, params, inputs, steady=steady or None,
                              ignorable=ignorable)
    lines.append(f"eigenvalues of ({', '.join(result.state_names)}) for {name} from {values[0]:g} to "
                 f"{values[-1]:g} ({len(values)} values)")
    lines.append(result.table())
    plot = plot or f"{lm.name}_{name}_eigenvalues.png"
    result.plot(plot)
    lines.append(f"wrote the eigenvalue plot to {plot}")
    return "\n".join(lines) + "\n"
