"""FMU export of Kane's equations (issue 31, item 2): an FMI 2.0 FMU for Model Exchange and Co-Simulation.

The FMU (a zip) holds ``modelDescription.xml`` (both interface elements, units, parameters, the states q and u with
their derivatives, the inputs and the outputs: energies [J] and constraint residuals), ``sources/`` (the C export's
``model.c`` and ``model.h``, and the FMI wrapper ``fmu.c`` of :mod:`.fmu_text`) and
``binaries/<platform>/<modelIdentifier>.so``, built by the system C compiler with the C backend's flags (IEEE
semantics, no contraction). Co-Simulation's ``fmi2DoStep`` takes classical RK4 steps of the C export's
``model_rk4_step`` (those of :class:`kane.simulate.RK4`), at most ``rk4_max_step`` [s] each (a tunable parameter,
default the export's ``dt``); Model Exchange gives q', u' to the importer's integrator.

No text of the model's is code: C identifiers are generated (see :mod:`.c_export`), and in the XML every name and
description is written with its non-printable characters as ``<U+XXXX>`` and XML-escaped. The GUID is the hash of
the description and the sources.
"""

from __future__ import annotations

import enum
import hashlib
import math
import os
import pathlib
import platform
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from typing import Mapping

from ..errors import ArgumentError, KaneError
from .c_cache import CFLAGS, LIBS, CCompileError, find_compiler, run_compiler
from .c_export import _C_KEYWORDS, _IDENT, CExportOptions, _state, _units, export_c
from .fmu_text import WRAPPER

__all__ = ["FmiType", "FmuOptions", "FmuExport", "export_fmu"]


class FmiType(enum.Enum):
    """The FMI interfaces the FMU offers: ``BOTH`` (Model Exchange and Co-Simulation), ``ME`` or ``CS``."""

    BOTH = "both"
    ME = "me"
    CS = "cs"


@dataclass(frozen=True)
class FmuOptions:
    """``fmi_type``: a :class:`FmiType` (or its value); ``dt`` [s]: the default experiment's step and the default
    ``rk4_max_step`` of doStep; ``model_identifier``: the binary's name, an ASCII C identifier (None: the model's
    name when it is one, else ``kane_model``); ``t_start``, ``t_end`` [s]: the default experiment. None: a loaded
    model's ``[simulation]`` values (its dt, else 1e-3 s), else dt = 1e-3 s, 0 to 1 s."""

    fmi_type: FmiType | str = FmiType.BOTH
    dt: float | None = None
    model_identifier: str | None = None
    t_start: float | None = None
    t_end: float | None = None


@dataclass(frozen=True)
class FmuExport:
    """What :func:`export_fmu` wrote: the FMU ``path``, its ``model_identifier``, ``guid``, ``fmi_types`` (of "ME",
    "CS"), ``platform`` (e.g. "linux64"), the ``value_references`` of its Real variables (name as in the XML ->
    reference; names with their non-printable characters as ``<U+XXXX>``), the ``model_description`` text and the
    C export's ``sizes``."""

    path: pathlib.Path
    model_identifier: str
    guid: str
    fmi_types: tuple
    platform: str
    value_references: Mapping[str, int]
    model_description: str
    sizes: dict


#: the units kane writes (name -> SI base-unit exponents of FMI 2.0's BaseUnit)
UNITS = {"rad": {"rad": 1}, "m": {"m": 1}, "s": {"s": 1}, "kg": {"kg": 1}, "N": {"kg": 1, "m": 1, "s": -2},
         "N.m": {"kg": 1, "m": 2, "s": -2}, "J": {"kg": 1, "m": 2, "s": -2}, "m/s": {"m": 1, "s": -1},
         "rad/s": {"rad": 1, "s": -1}, "m/s2": {"m": 1, "s": -2}, "rad/s2": {"rad": 1, "s": -2},
         "1/s": {"s": -1}, "1/s2": {"s": -2}, "1": {}}
_RATE = {"rad": "rad/s", "m": "m/s", "1": "1/s", "rad/s": "rad/s2", "m/s": "m/s2", "1/s": "1/s2"}


_FORCE = {"rad": "N.m", "m": "N"}


def _input_units(model, q_units: dict) -> dict:
    """input symbol -> unit, for the inputs that are a joint's generalized force alone (a torque about a revolute
    axis [N.m], a force along a prismatic one [N])."""
    units, inputs = {}, set(model.inputs)
    for load in model.joint_loads:
        qs = model.q[model.joints[load.joint].q_slice]
        for s, Q in zip(qs, load.Q):
            if Q in inputs and q_units.get(s) in _FORCE:
                units.setdefault(Q, set()).add(_FORCE[q_units[s]])
    return {s: u.pop() for s, u in units.items() if len(u) == 1}


def _printable(value) -> str:
    """User text as the FMU shows it: non-printable characters (line breaks, tabs, controls, format characters)
    written as ``<U+XXXX>``."""
    return "".join(c if c.isprintable() else f"<U+{ord(c):04X}>" for c in str(value))


def _text(value) -> str:
    """User text for an XML attribute: :func:`_printable`, then the five XML specials escaped."""
    s = _printable(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace('"', "&quot;").replace("'", "&apos;")


def _num(value, what: str) -> str:
    v = float(value)
    if not math.isfinite(v):
        raise ArgumentError(f"export-fmu: {what} is {v!r}; expected a finite number")
    return repr(v)


def _platform() -> tuple[str, str]:
    """(FMI 2.0 platform folder, shared library suffix) of this machine."""
    bits = "64" if platform.architecture()[0] == "64bit" else "32"
    system = platform.system()
    if system == "Linux":
        return f"linux{bits}", ".so"
    if system == "Darwin":
        return f"darwin{bits}", ".dylib"
    raise KaneError(f"export-fmu: building an FMU binary on {system} is not supported (Linux and macOS are)")


def _source(equations_or_model):
    """(equations, q0, u0, params, inputs, name, description, simulation settings or None)."""
    src = equations_or_model
    if hasattr(src, "derive") and hasattr(src, "simulation") and hasattr(src, "system"):  # a LoadedModel
        eqs = src.derive()
        return (eqs, dict(src.q0), dict(src.u0), dict(src.parameters), dict(src.inputs), src.name,
                getattr(src, "description", "") or "", src.simulation)
    if hasattr(src, "program") and hasattr(src, "model") and hasattr(src, "u_independent"):  # Equations
        return src, None, None, None, None, src.model.name, "", None
    raise ArgumentError(f"export-fmu: expected kane Equations or a loaded model, got {type(src).__name__}")


@dataclass(frozen=True)
class _Var:
    name: str
    causality: str
    variability: str
    initial: str | None
    start: str | None
    unit: str | None
    description: str
    derivative: int | None = None


def _variables(eqs, res, cexp_values, has_potential, dt) -> tuple[list[_Var], list[str]]:
    """The Real variables in value-reference order (q, u, q', u', inputs, parameters, rk4_max_step, outputs) and the
    C lines of the outputs."""
    model = eqs.model
    q_0, u_0, p_val, w_val = cexp_values
    qu, uu = _units(model)
    states = [(s, qu.get(s), v, "generalized coordinate") for s, v in zip(model.q, q_0)]
    states += [(s, uu.get(s), v, "independent generalized speed") for s, v in zip(eqs.u_independent, u_0)]
    out = [_Var(str(s), "local", "continuous", "exact", _num(v, f"the initial value of {s}"), unit, what)
           for s, unit, v, what in states]
    out += [_Var(f"der({s})", "local", "continuous", None, None, _RATE.get(unit), f"time derivative of {s}",
                 derivative=k + 1) for k, (s, unit, _, _) in enumerate(states)]
    wu = _input_units(model, qu)
    out += [_Var(str(s), "input", "continuous", None, _num(v, f"input {s}"), wu.get(s), "input (held over a step)")
            for s, v in zip(model.inputs, w_val)]
    out += [_Var(str(s), "parameter", "fixed", "exact", _num(v, f"parameter {s}"), None, "parameter")
            for s, v in zip(model.parameters, p_val)]
    out.append(_Var("rk4_max_step", "parameter", "tunable", "exact", _num(dt, "dt"), "s",
                    "the longest RK4 step of doStep (Co-Simulation) [s]"))
    lines = ["        c->out[0] = model_kinetic_energy(&c->m, c->t, q, u);"]
    outs = [_Var("kinetic_energy", "output", "continuous", None, None, "J", "kinetic energy [J]")]
    if has_potential:
        lines += ["        c->out[1] = model_potential_energy(&c->m, c->t, q);",
                  "        c->out[2] = c->out[0] + c->out[1];"]
        outs += [_Var("potential_energy", "output", "continuous", None, None, "J", "potential energy [J]"),
                 _Var("energy", "output", "continuous", None, None, "J", "total energy [J]")]
    n_con, n_cfg = res.sizes["n_constraint"], res.sizes["n_configuration"]
    if n_con:
        lines.append(f"        model_constraint_residual(&c->m, c->t, q, u, c->out + {len(outs)});")
        outs += [_Var(f"constraint_residual[{k}]", "output", "continuous", None, None, None,
                      f"row {k} of the velocity constraints A u + b") for k in range(n_con)]
    if n_cfg:
        lines.append(f"        model_configuration_residual(&c->m, c->t, q, c->out + {len(outs)});")
        outs += [_Var(f"configuration_residual[{k}]", "output", "continuous", None, None, None,
                      f"row {k} of the configuration constraints C(q)") for k in range(n_cfg)]
    out += outs
    seen = {}
    for v in out:
        key = _printable(v.name)
        if key in seen:
            raise ArgumentError(f"export-fmu: two variables of the FMU are named {v.name!r} (a {seen[key]} and a "
                                f"{v.causality}); rename one in the model")
        seen[key] = v.causality
    return out, lines


def _description(name, description, ident, variables, types, times, version) -> str:
    """modelDescription.xml with ``@GUID@`` where the GUID goes; ``times``: (dt, t_start, t_end) [s]."""
    dt, t_start, t_end = times
    files = '      <SourceFiles>\n        <File name="fmu.c"/>\n        <File name="model.c"/>\n      </SourceFiles>'
    x = ['<?xml version="1.0" encoding="UTF-8"?>',
         f'<fmiModelDescription fmiVersion="2.0" modelName="{_text(name)}" guid="@GUID@" '
         f'description="{_text(description)}" generationTool="kane {_text(version)}" '
         'variableNamingConvention="flat" numberOfEventIndicators="0">']
    if "ME" in types:
        x += [f'  <ModelExchange modelIdentifier="{ident}" completedIntegratorStepNotNeeded="true" '
              'canNotUseMemoryManagementFunctions="true" canGetAndSetFMUstate="false" canSerializeFMUstate="false" '
              'providesDirectionalDerivative="false">', files.replace("      ", "    ", 1), "  </ModelExchange>"]
    if "CS" in types:
        x += [f'  <CoSimulation modelIdentifier="{ident}" canHandleVariableCommunicationStepSize="true" '
              'canInterpolateInputs="false" maxOutputDerivativeOrder="0" canRunAsynchronuously="false" '
              'canNotUseMemoryManagementFunctions="true" canGetAndSetFMUstate="false" canSerializeFMUstate="false" '
              'providesDirectionalDerivative="false">', files.replace("      ", "    ", 1), "  </CoSimulation>"]
    x.append("  <UnitDefinitions>")
    for unit, base in UNITS.items():
        attrs = "".join(f' {k}="{e}"' for k, e in base.items())
        x.append(f'    <Unit name="{unit}">\n      <BaseUnit{attrs}/>\n    </Unit>')
    x += ["  </UnitDefinitions>",
          f'  <DefaultExperiment startTime="{_num(t_start, "t_start")}" stopTime="{_num(t_end, "t_end")}" '
          f'stepSize="{_num(dt, "dt")}"/>', "  <ModelVariables>"]
    for vr, v in enumerate(variables):
        attrs = [f'name="{_text(v.name)}"', f'valueReference="{vr}"', f'description="{_text(v.description)}"',
                 f'causality="{v.causality}"', f'variability="{v.variability}"']
        if v.initial:
            attrs.append(f'initial="{v.initial}"')
        real = [f'unit="{v.unit}"'] * (v.unit is not None) + [f'start="{v.start}"'] * (v.start is not None) + [
            f'derivative="{v.derivative}"'] * (v.derivative is not None)
        x.append(f'    <!-- index {vr + 1} -->\n    <ScalarVariable {" ".join(attrs)}>\n'
                 f'      <Real{"".join(" " + a for a in real)}/>\n    </ScalarVariable>')
    outputs = [k + 1 for k, v in enumerate(variables) if v.causality == "output"]
    derivs = [k + 1 for k, v in enumerate(variables) if v.derivative is not None]
    x += ["  </ModelVariables>", "  <ModelStructure>"]
    for tag, idx in (("Outputs", outputs), ("Derivatives", derivs), ("InitialUnknowns", sorted(outputs + derivs))):
        if idx:
            x += [f"    <{tag}>"] + [f'      <Unknown index="{k}"/>' for k in idx] + [f"    </{tag}>"]
    x += ["  </ModelStructure>", "</fmiModelDescription>", ""]
    return "\n".join(x)


def _identifier(options: FmuOptions, name: str) -> str:
    ident = options.model_identifier
    if ident is None:
        ident = name if name.isascii() and _IDENT.fullmatch(name) and name not in _C_KEYWORDS else "kane_model"
    elif not (ident.isascii() and _IDENT.fullmatch(ident)) or ident in _C_KEYWORDS:
        raise ArgumentError(f"export-fmu: model_identifier {ident!r} is not an ASCII C identifier")
    return ident


def export_fmu(equations_or_model, path, options: FmuOptions = FmuOptions(), *, q0=None, u0=None, params=None,
               inputs=None) -> FmuExport:
    """Write the FMU of ``equations_or_model`` (:class:`kane.Equations`, or a loaded model file, whose initial
    state, parameters, inputs and ``[simulation]`` times it takes) to ``path`` (``*.fmu``). ``q0``, ``u0``,
    ``params``, ``inputs`` (mappings name -> value, or arrays in model order) override the start values.
    Raises :class:`KaneError` naming the path, the option or the variable at fault; :class:`CCompileError` when
    no C compiler is found or it fails."""
    path = pathlib.Path(path)
    if path.suffix.lower() != ".fmu":
        raise ArgumentError(f"export-fmu: the output {path} must end in .fmu")
    if path.is_dir():
        raise KaneError(f"export-fmu: the output {path} is a directory; expected a .fmu file")
    try:
        fmi_type = options.fmi_type if isinstance(options.fmi_type, FmiType) else FmiType(str(options.fmi_type))
    except ValueError:
        raise ArgumentError(f"export-fmu: fmi_type {options.fmi_type!r}; expected both, me or cs") from None
    eqs, fq0, fu0, fp, fw, name, description, sim = _source(equations_or_model)
    q0, u0, params, inputs = (a if a is not None else b for a, b in ((q0, fq0), (u0, fu0), (params, fp),
                                                                     (inputs, fw)))
    dt, t_start, t_end = (v if v is not None else getattr(sim, k, None) or d for v, k, d in (
        (options.dt, "dt", 1e-3), (options.t_start, "t_start", 0.0), (options.t_end, "t_end", 1.0)))
    if isinstance(dt, bool) or not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise ArgumentError(f"export-fmu: dt must be a finite step > 0 [s], got {dt!r}")
    if not (math.isfinite(t_start) and math.isfinite(t_end) and t_end > t_start):
        raise ArgumentError(f"export-fmu: expected finite t_start < t_end [s], got {t_start!r} and {t_end!r}")
    times = (float(dt), float(t_start), float(t_end))
    types = {"both": ("ME", "CS"), "me": ("ME",), "cs": ("CS",)}[fmi_type.value]
    ident = _identifier(options, str(name))
    plat, suffix = _platform()
    cmd, why = find_compiler()
    if cmd is None:
        raise CCompileError(f"export-fmu: {why}")
    model = eqs.model
    with tempfile.TemporaryDirectory(prefix="kane-fmu-") as tmp:
        tmp = pathlib.Path(tmp)
        res = export_c(eqs, tmp / "src", q0=q0, u0=u0, params=params, inputs=inputs,
                       options=CExportOptions(prefix="model", dt=dt, steps=1, t0=t_start))
        values = (*_state(model, tuple(eqs.u_independent), q0, u0), model.parameter_values(params),
                  model.input_values(inputs))
        variables, out_lines = _variables(eqs, res, values, eqs.has_potential, dt)
        from .. import __version__

        xml = _description(name, description, ident, variables, types, times, __version__)
        n_out = sum(v.causality == "output" for v in variables)
        wrapper = WRAPPER.substitute(nout=n_out, has_me=int("ME" in types), has_cs=int("CS" in types),
                                     guid="@GUID@", t0=_num(t_start, "t_start"), dt=_num(dt, "dt"),
                                     outputs="\n".join(out_lines),
                                     param_cases="\n".join(f"    case {k}: return &c->p.p{k};"
                                                            for k in range(res.sizes["n_p"])))
        sources = {"model.c": res.model_c.read_text(), "model.h": res.model_h.read_text(), "fmu.c": wrapper}
        h = hashlib.sha256()
        for part in (xml, *sources.values()):
            h.update(part.encode())
            h.update(b"\0")
        guid = "{" + str(uuid.UUID(bytes=h.digest()[:16])) + "}"
        xml, sources["fmu.c"] = xml.replace("@GUID@", guid), wrapper.replace("@GUID@", guid)
        build = tmp / "build"
        build.mkdir()
        for fname, text in sources.items():
            (build / fname).write_text(text, encoding="utf-8")
        binary = _compile(cmd, build, ident + suffix)
        _write_zip(path, xml, sources, f"binaries/{plat}/{ident}{suffix}", binary)
    refs = {_printable(v.name): k for k, v in enumerate(variables)}
    return FmuExport(path, ident, guid, types, plat, refs, xml, dict(res.sizes))


def _compile(cmd, build: pathlib.Path, out_name: str) -> bytes:
    flags = [f for f in CFLAGS if f != "-pthread"] + ["-fvisibility=hidden"]
    args = list(cmd) + flags + ["-o", out_name, "fmu.c", "model.c"] + list(LIBS)
    run_compiler(args, build, "export-fmu: the C compiler")
    return (build / out_name).read_bytes()


def _write_zip(path: pathlib.Path, xml: str, sources: dict, binary_name: str, binary: bytes) -> None:
    """The FMU, written to a temporary file beside ``path`` and renamed onto it (fixed dates: the same model
    gives the same bytes but for the binary)."""
    entries = [("modelDescription.xml", xml.encode(), 0o644)]
    entries += [(f"sources/{n}", t.encode(), 0o644) for n, t in sources.items()]
    entries.append((binary_name, binary, 0o755))
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".kane-fmu-", suffix=".part", dir=path.parent)
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data, mode in entries:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (0o100000 | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise KaneError(f"export-fmu: cannot write the FMU {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            pathlib.Path(tmp).unlink(missing_ok=True)
