"""Standalone C export of Kane's equations (issue 12, item 5): ``model.c``, ``model.h``, ``main.c`` and a Makefile.

The exported library is C99 with ``<math.h>`` only: no Python, no kane, no allocation, no threads, so that a device
controller or a microcontroller build can take it as it is. The straight-line :class:`Program` of the embedded
equations is printed by the C backend's printer (:class:`kane.codegen.c_backend.CPrinter`); u' comes from the same
unrolled LDL^T factorization of M as the numpy and C backends (structural zeros skipped). Quantities of parameters
only are computed once per parameter set by ``<prefix>_init`` into the ``<prefix>_t`` struct; every other
function evaluates straight-line code at one state. RK4 steps are those of :class:`kane.simulate.RK4`, operation
for operation (grid t0 + k dt, the same order of sums), so a run in C equals a Python run to round-off.

The files carry no text of the model's as code (issue 27): every C identifier is generated (``q[3]``, the
parameter fields ``p0``, ``p1``, ...), the model's names appear only in comments, escaped by :func:`_comment`,
and the Makefile holds none at all.
"""

from __future__ import annotations

import math
import pathlib
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import ArgumentError, KaneError
from ..model import joints as J
from .c_backend import CPrinter
from .c_export_text import ENERGY, HEADER, MAIN, MAKEFILE, SOURCE
from .numpy_backend import solve_lines

__all__ = ["CExportOptions", "CExport", "export_c"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
    volatile while _Bool _Complex _Imaginary""".split())


@dataclass(frozen=True)
class CExportOptions:
    """``prefix``: the C name prefix of every exported symbol and of the macros (upper case), an ASCII C
    identifier (letters, digits, underscores; not a keyword);
    ``dt`` [s], ``steps`` and ``t0`` [s]: the RK4 step, the number of steps that ``main.c`` runs and prints, and
    the time it starts from."""

    prefix: str = "model"
    dt: float = 1e-3
    steps: int = 10
    t0: float = 0.0


@dataclass(frozen=True)
class CExport:
    """What :func:`export_c` wrote: the directory and the paths of the four files; the sizes n_q, n_u (independent
    speeds), n_p (parameters), n_w (inputs), n_const (quantities of parameters only, computed by ``init``),
    n_constraint (rows of A u + b), n_configuration (rows of C(q)); ``functions``: the exported C functions."""

    directory: pathlib.Path
    model_c: pathlib.Path
    model_h: pathlib.Path
    main_c: pathlib.Path
    makefile: pathlib.Path
    sizes: dict
    functions: tuple


# (coordinate units, speed units) of each joint kind with joint rates as speeds; "1" for quaternion components
_Q_UNITS = {"revolute": ("rad",), "prismatic": ("m",), "cylindrical": ("rad", "m"), "planar": ("m", "m", "rad"),
            "spherical": ("1",) * 4, "free": ("m", "m", "m", "1", "1", "1", "1")}
_BODY_U_UNITS = {"spherical": ("rad/s",) * 3, "free": ("rad/s",) * 3 + ("m/s",) * 3,
                 "planar": ("m/s", "m/s", "rad/s"), "gimbal": ("rad/s",) * 3}


def _units(model) -> tuple[dict, dict]:
    """(q symbol -> unit, u symbol -> unit) where the joint kind and its speeds tell them."""
    qu, uu = {}, {}
    for pj in model.joints:
        joint = pj.joint
        q_units = _Q_UNITS.get(joint.kind, ("rad",) * joint.nq if joint.kind == "gimbal" else ())
        qs, us = model.q[pj.q_slice], model.u[pj.u_slice]
        qu.update(zip(qs, q_units))
        if joint.speeds is J.Speeds.RATES and joint.nq == joint.nu:
            uu.update((s, f"{unit}/s") for s, unit in zip(us, q_units))
        elif joint.speeds is J.Speeds.BODY:
            uu.update(zip(us, _BODY_U_UNITS.get(joint.kind, q_units and tuple(f"{x}/s" for x in q_units))))
    return qu, uu


#: characters kept as they are in a comment: printable ASCII but for the backslash (a line splice at a line's end),
#: ``*`` and ``/`` (a comment's end or a nested start) and ``?`` (a trigraph: ``??/`` is a backslash)
_PLAIN = frozenset(chr(c) for c in range(0x20, 0x7F)) - set("\\*/?")


def _comment(text) -> str:
    """A user's name as comment text: printable ASCII, every other character (newlines, ``*``, ``/``, ``?``, the
    backslash, non-ASCII) written as ``<U+XXXX>``, so nothing in it can end the comment or splice a line."""
    return "".join(c if c in _PLAIN else f"<U+{ord(c):04X}>" for c in str(text))


def _c_number(value: float, what: str) -> str:
    if not math.isfinite(value):
        raise ArgumentError(f"export-c: {what} is {value!r}; expected a finite number")
    return repr(float(value))


class _Writer:
    """Prints the functions of model.c from the embedded program (one function per group of outputs)."""

    def __init__(self, eqs, prefix: str):
        self.prefix = prefix
        prog = eqs.program
        self.outputs = [n for n in ("M", "f", "qdot", "u_full", "C", "constraint_residual", "kinetic", "potential")
                        if n in prog.outputs and len(prog.outputs[n])]
        self.program = prog.select(self.outputs)
        g = self.program.inputs
        self.groups = {k: tuple(g.get(k, ())) for k in ("t", "q", "u", "params", "inputs")}
        self.fields = [f"p{k}" for k in range(len(self.groups["params"]))]  # generated: a name may be a macro
        names = {s: "t" for s in self.groups["t"]}
        for grp, arr in (("q", "q"), ("u", "u"), ("inputs", "w")):
            names.update({s: f"{arr}[{k}]" for k, s in enumerate(self.groups[grp])})
        pnames = {s: f"p->{f}" for s, f in zip(self.groups["params"], self.fields)}
        const = set(self.groups["params"])
        self.prelude, self.index, self.zero_used = [], {}, False
        printer = CPrinter({**names, **pnames})
        for k, (s, e) in enumerate(self.program.assignments):
            if e.free_symbols <= const:
                const.add(s)
                n = len(self.prelude)
                self.prelude.append(f"    m->c[{n}] = {printer.doprint(e)};")
                printer.names[s] = f"m->c[{n}]"
            self.index[s] = k
        self.names = {**names, **{s: f"m->p.{f}" for s, f in zip(self.groups["params"], self.fields)},
                      **{s: v for s, v in printer.names.items() if v.startswith("m->c[")}}

    def uses(self, prog, group) -> bool:
        syms = set(self.groups[group])
        return any(e.free_symbols & syms for _, e in prog.assignments) or any(
            e.free_symbols & syms for m in prog.outputs.values() for e in m)

    def function(self, head: str, args: tuple, targets, solve=None, ret=None) -> str:
        """A C function ``head`` whose body writes ``targets`` [(output name, C array)] and, with ``solve`` (a C
        array), M^-1 f into it; ``ret``: an output returned as a double. ``args``: the groups in the signature."""
        names = [n for n, _ in targets] + ([ret] if ret else []) + (["M", "f"] if solve else [])
        prog = self.program.select(dict.fromkeys(names))
        printer = CPrinter(dict(self.names))
        lines = []
        for grp, arr in (("q", "q"), ("u", "u"), ("inputs", "w")):  # every signature has m and t
            if grp not in args and self.uses(prog, grp):
                lines.append(f"    const double *{arr} = {self.prefix}_zero_;")
                self.zero_used = True
        lines.append("    " + " ".join(f"(void){a};" for a in ("m", "t", "q", "u", "w") if a in self._cargs(args)))
        for s, e in prog.assignments:
            if s in self.names:
                continue
            text = printer.doprint(e)
            printer.names[s] = f"z_{self.index[s]}"
            lines.append(f"    const double z_{self.index[s]} = {text};")
        for name, arr in targets:
            lines += [f"    {arr}[{i}] = {printer.doprint(e) if e != 0 else '0.0'};"
                      for i, e in enumerate(prog.outputs[name])]
        if solve:
            M, f = prog.outputs["M"], prog.outputs["f"]
            n = M.shape[0]
            lines += [f"    const double {ln};" for ln in solve_lines(M, f, printer.doprint)]
            lines += [f"    {solve}[{i}] = x{i};" for i in range(n)]
        if ret:
            lines.append(f"    return {printer.doprint(prog.outputs[ret][0])};")
        return f"{head} {{\n" + "\n".join(lines) + "\n}\n"

    @staticmethod
    def _cargs(args):
        return ["m"] + [{"inputs": "w"}.get(a, a) for a in args]


def _by_name(values, symbols, what):
    """Values of ``symbols`` from a mapping name -> value, or the array as it is."""
    if not isinstance(values, Mapping):
        return values
    missing = [str(s) for s in symbols if str(s) not in values]
    if missing:
        raise ArgumentError(f"export-c: {what} has no value for {', '.join(missing)}")
    return [values[str(s)] for s in symbols]


def _state(model, u_independent, q0, u0):
    """(q0 (n_q,), u0 (n_u independent,)) from the arguments (arrays, or mappings name -> value) or the model's
    initial values."""
    q = np.array(model.q0 if q0 is None else _by_name(q0, model.q, "q0"), dtype=float).reshape(-1)
    if u0 is None:
        u0 = {str(s): v for s, v in zip(model.u, model.u0)}
    u = np.array(_by_name(u0, u_independent, "u0"), dtype=float).reshape(-1)
    if q.shape != (model.n_q,) or u.shape != (len(u_independent),):
        raise ArgumentError(f"export-c: expected q0 with {model.n_q} and u0 with {len(u_independent)} values, got "
                            f"{q.size} and {u.size}")
    return q, u


def export_c(eqs, directory, *, q0=None, u0=None, params=None, inputs=None,
             options: CExportOptions = CExportOptions()) -> CExport:
    """Write ``model.c``, ``model.h``, ``main.c`` and ``Makefile`` of the equations ``eqs`` (:class:`kane.Equations`)
    into ``directory`` (created if missing). ``params`` and ``inputs`` (dict name -> value or arrays in model
    order) set the defaults written into the parameter struct and the input array; ``q0`` (n_q,) and ``u0`` (n_u
    independent speeds; arrays or mappings name -> value) the initial state of ``main.c`` (default: the model's).
    Raises :class:`KaneError` naming the directory when it is a file or cannot be written."""
    prefix = options.prefix
    if not _IDENT.fullmatch(prefix) or prefix in _C_KEYWORDS:
        raise ArgumentError(f"export-c: prefix {prefix!r} is not a C identifier")
    if not (options.dt > 0 and math.isfinite(options.dt)) or int(options.steps) < 1:
        raise ArgumentError(f"export-c: expected dt > 0 [s] and steps >= 1, got dt = {options.dt!r}, "
                            f"steps = {options.steps!r}")
    model = eqs.model
    w = _Writer(eqs, prefix)
    p_val, w_val = model.parameter_values(params), model.input_values(inputs)
    q_0, u_0 = _state(model, tuple(eqs.u_independent), q0, u0)
    out = w.program.outputs
    nq, nu, n_w = model.n_q, len(eqs.u_independent), len(w.groups["inputs"])
    sizes = {"n_q": nq, "n_u": nu, "n_p": len(w.fields), "n_w": n_w, "n_const": len(w.prelude),
             "n_constraint": len(out["constraint_residual"]) if "constraint_residual" in out else 0,
             "n_configuration": len(out["C"]) if "C" in out else 0,
             "n_u_full": len(out["u_full"]) if "u_full" in out and eqs.u_dependent else 0}
    P = prefix
    mt = f"const {P}_t *m"
    funcs = [("rhs", f"void {P}_rhs({mt}, double t, const double *q, const double *u, const double *w, "
                     "double *qdot, double *udot)", ("t", "q", "u", "inputs"), [("qdot", "qdot")], "udot", None),
             ("mass_matrix", f"void {P}_mass_matrix({mt}, double t, const double *q, double *M)", ("t", "q"),
              [("M", "M")], None, None),
             ("forcing", f"void {P}_forcing({mt}, double t, const double *q, const double *u, const double *w, "
                         "double *f)", ("t", "q", "u", "inputs"), [("f", "f")], None, None),
             ("kinetic_energy", f"double {P}_kinetic_energy({mt}, double t, const double *q, const double *u)",
              ("t", "q", "u"), [], None, "kinetic")]
    if eqs.has_potential:
        funcs.append(("potential_energy", f"double {P}_potential_energy({mt}, double t, const double *q)",
                      ("t", "q"), [], None, "potential"))
    if sizes["n_u_full"]:
        funcs.append(("full_speeds", f"void {P}_full_speeds({mt}, double t, const double *q, const double *u, "
                                     "double *u_full)", ("t", "q", "u"), [("u_full", "u_full")], None, None))
    if sizes["n_constraint"]:
        funcs.append(("constraint_residual", f"void {P}_constraint_residual({mt}, double t, const double *q, "
                      "const double *u, double *r)", ("t", "q", "u"), [("constraint_residual", "r")], None, None))
    if sizes["n_configuration"]:
        funcs.append(("configuration_residual", f"void {P}_configuration_residual({mt}, double t, const double *q, "
                      "double *C)", ("t", "q"), [("C", "C")], None, None))
    bodies = "\n".join(w.function(head, args, targets, solve, ret) for _, head, args, targets, solve, ret in funcs)
    qu, uu = _units(model)
    pdef = ", ".join(_c_number(v, f"parameter {n}") for n, v in zip(model.parameters, p_val)) or "0.0"
    text = {
        "P": P, "U": P.upper(), "name": _comment(model.name), "nq": nq, "nu": nu, "np": sizes["n_p"], "nw": n_w,
        "nc": sizes["n_const"], "ncon": sizes["n_constraint"], "nhol": sizes["n_configuration"],
        "nufull": sizes["n_u_full"],
        "listing": _listing(model, eqs, w, (q_0, u_0, p_val, w_val), qu, uu),
        "fields": "\n".join(f"    double {f}; /* {_comment(n)}, default {float(v)!r} */"
                             for f, n, v in zip(w.fields, model.parameters, p_val))
                  or "    double unused_; /* the model has no parameters */",
        "decls": "\n".join(head + ";" for _, head, *_ in funcs),
        "pdef": pdef,
        "wdef": ", ".join(_c_number(v, f"input {n}") for n, v in zip(model.inputs, w_val)) or "0.0",
        "q0": ", ".join(_c_number(v, "q0") for v in q_0), "u0": ", ".join(_c_number(v, "u0") for v in u_0),
        "prelude": "\n".join(w.prelude) or "    (void)p;", "functions": bodies,
        "energy": f"\ndouble {P}_energy({mt}, double t, const double *q, const double *u);" if eqs.has_potential
                  else "",
        "energy_body": ENERGY.format(P=P) if eqs.has_potential else "",
        "zero": f"static const double {P}_zero_[{P.upper()}_NU + {P.upper()}_NW + 1] = {{0.0}};\n"
                if w.zero_used else "",
        "dt": repr(float(options.dt)), "steps": int(options.steps), "t0": _c_number(options.t0, "t0"),
    }
    return _write(pathlib.Path(directory), {"model.h": HEADER, "model.c": SOURCE, "main.c": MAIN,
                                            "Makefile": MAKEFILE}, text, sizes, funcs, eqs.has_potential)


def _listing(model, eqs, w, values, qu, uu) -> str:
    """The header comment's table of q, u, inputs and parameters (index, name, unit where known, default)."""
    q_0, u_0, p_val, w_val = (np.asarray(v, dtype=float).tolist() for v in values)
    rows = [" * q (generalized coordinates; q0: the initial state of main.c):"]
    rows += [f" *   q[{k}]  {_comment(s)}  [{qu.get(s, '?')}]  q0 = {v!r}"
             for k, (s, v) in enumerate(zip(model.q, q_0))]
    rows.append(" * u (independent generalized speeds; u0: the initial state of main.c):")
    rows += [f" *   u[{k}]  {_comment(s)}  [{uu.get(s, '?')}]  u0 = {v!r}" for k, (s, v) in
             enumerate(zip(eqs.u_independent, u_0))]
    if eqs.u_dependent:
        rows.append(f" * dependent speeds (from u by {w.prefix}_full_speeds): "
                    f"{', '.join(_comment(s) for s in eqs.u_dependent)}")
    rows.append(" * inputs w (held constant over a step):" + ("" if model.inputs else " none"))
    rows += [f" *   w[{k}]  {_comment(s)}  default {v!r}" for k, (s, v) in enumerate(zip(model.inputs, w_val))]
    rows.append(f" * parameters ({w.prefix}_params fields; units as the model file gives them):"
                + ("" if model.parameters else " none"))
    rows += [f" *   {f} ({_comment(s)})  default {v!r}"
             for f, s, v in zip(w.fields, model.parameters, p_val)]
    rows.append(" * units: [rad] angle, [m] length, [1] quaternion component, [?] not known from the joint kind")
    return "\n".join(rows)


def _write(directory: pathlib.Path, templates: dict, text: dict, sizes: dict, funcs, has_energy) -> CExport:
    if directory.exists() and not directory.is_dir():
        raise KaneError(f"export-c: the output directory {directory} is a file; expected a directory")
    paths = {}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, template in templates.items():
            path = directory / name
            path.write_text(template.format(**text), encoding="utf-8")
            paths[name] = path
    except OSError as exc:
        raise KaneError(f"export-c: cannot write into the output directory {directory}: "
                        f"{exc.strerror or exc}") from None
    P = text["P"]
    names = tuple(f"{P}_{n}" for n, *_ in funcs) + ((f"{P}_energy",) if has_energy else ()) + (
        f"{P}_init", f"{P}_rk4_step", f"{P}_rk4")
    return CExport(directory, paths["model.c"], paths["model.h"], paths["main.c"], paths["Makefile"], sizes, names)
