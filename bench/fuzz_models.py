"""Fuzzer of TOML model files: hostile mutations of the example files, each loaded, derived, compiled and
evaluated in a worker process under a per-file time limit.

Every file must end as "ok" or as a :class:`kane.KaneError` whose message names the file; anything else is
counted: a raw exception (another exception type), a hang (the time limit passed: the worker is killed), a
crash (the worker died), an injection (a marker file that code smuggled into the model would create exists
afterwards), or a KaneError that does not name the file. Loads that take more than a second of CPU time are
counted too (the first files of a worker pay for sympy's cold caches).

    python bench/fuzz_models.py --files 5000 --seed 1 --workers 2 --limit 10 --keep out/fuzz

prints the counts, the rate [files/s] and the first examples of each failure (with ``--keep``, the failing
files are written there to reproduce them).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import tempfile
import time
import tomllib
from pathlib import Path

from _fuzz import FuzzResult, Limit, Task, common_arguments, outcome_of, print_summary, run_pool

__all__ = ["EXAMPLES", "FuzzResult", "mutate", "to_toml", "check_text", "fuzz", "main"]

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))
FAILURES = ("raw", "hang", "crash", "injection", "unnamed", "slow_load")


def _hostile_values(marker: str, param: str) -> list:
    """Values put in place of a number, an expression, a name or a table (``marker``: the injection target)."""
    touch = f"__import__('os').system('touch {marker}')"
    return [
        0, -1, 1e308, -1e308, 5e-324, 2 ** 63 - 1, -(2 ** 63), math.inf, -math.inf, math.nan, True, "", "   ",
        [], {}, [[]], [1, 2], [0, 0, 0, 0], {"a": 1}, "1e308*10", "-1e308*10", "exp(710)", "exp(709)", "sinh(711)",
        "cosh(1000)", "exp(exp(exp(exp(exp(1)))))", f"{param}**{param}**{param}**{param}", "10**10**10",
        "9**9**9", "2**1023*2", "pi**pi**pi**pi", "exp(exp(exp(10)))", "1/0", "0/0", "log(0)", "sqrt(-1)",
        "acos(2)", "(-1)**0.5", "1e309", "-1e309", "1e-400", "tan(pi/2)", "atan2(0, 0)", "x" * 10_001,
        "(" * 300 + "1" + ")" * 300, "-" * 400 + "1", "sin(" * 150 + "1" + ")" * 150, "2" + "**2" * 60,
        "+".join(f"sin({param}*{i})" for i in range(1, 600)), "*".join([param] * 2000),
        touch, f"open('{marker}', 'w').write('x')", f"exec(\"open('{marker}','w')\")", "eval('1')",
        "lambda: 0", "().__class__.__bases__", "q[0]", "[1, 2]", "{1: 2}", "1 if 1 else 2", "a and b",
        "max(1)", "min()", "Heaviside(0, 0, 0)", "sin(1, 2)", "sin(x=1)", "nan", "inf", "oo", "zoo", "I", "1j",
        "t", "u1", "q1", "stretch", "ground", "sign", "abs(-3)**64", "10**64**64", "1e200*1e200",
        "exp(-1e308)", "(1e308+1e308)/2", "1 +", "\x00", "\u2212 1", "1_000", "0x10", "1e400-1e400",
        "__builtins__", "_x", f"{param}**-1", "0**-1", "(2**1024)**0.5", "max(" + ",".join("x" * 1) * 1 + ")",
    ]


def _hostile_names(marker: str) -> list:
    return ["ground", "t", "pi", "e", "a b", "import os", "__class__", "sin", "", "x" * 1000, "None", "True",
            "lambda", "def", "q1", "u1", "1abc", "ñu", "stretch", f"__import__('os').system('touch {marker}')",
            "a;import os", "g"]


def _leaves(doc, path=()):
    """Paths to every value of a parsed document (tables and lists included)."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append(path + (k,))
            out.extend(_leaves(v, path + (k,)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append(path + (i,))
            out.extend(_leaves(v, path + (i,)))
    return out


def _parent(doc, path):
    for p in path[:-1]:
        doc = doc[p]
    return doc


def _toml_key(k) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else '"' + _toml_str(k) + '"'


def _toml_str(s: str) -> str:
    return "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in s)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return '"' + _toml_str(v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(doc: dict) -> str:
    """TOML text of a parsed document (tables of scalars and arrays of tables, as in the model files)."""
    lines = []
    for name, value in doc.items():
        if isinstance(value, dict):
            lines.append(f"[{_toml_key(name)}]")
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            for item in value:
                lines.append(f"[[{_toml_key(name)}]]")
                lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in item.items()]
        else:
            lines.insert(0, f"{_toml_key(name)} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def mutate(text: str, rng: random.Random, marker: str) -> str:
    """One hostile mutation of a model file's text: a value, a name, a key or a table changed, or the text
    edited line by line. ``marker`` is the path that injected code would create."""
    doc = tomllib.loads(text)
    params = list(doc.get("parameters", {})) or ["t"]
    param = rng.choice(params)
    kind = rng.random()
    if kind < 0.08:  # text edits: lines dropped, duplicated or swapped, quoted headers, truncation
        lines = text.splitlines()
        i = rng.randrange(len(lines))
        edit = rng.randrange(4)
        if edit == 0:
            del lines[i]
        elif edit == 1:
            lines.insert(i, lines[i])
        elif edit == 2:
            lines = [re.sub(r"^\[(\[?)(\w+)(\]?)\]", r'[\1"\2"\3]', x) for x in lines]
            lines.insert(i, "bogus = 1")
        else:
            lines = lines[:i]
        return "\n".join(lines)
    if kind < 0.14:  # zero degrees of freedom: every joint a weld
        for j in doc.get("joints", []):
            for k in ("coordinates", "speed_names", "q0", "u0", "speeds", "axis", "sequence", "n_free"):
                j.pop(k, None)
            j["type"] = "weld"
        doc.pop("constraints", None)
        doc.get("simulation", {}).pop("dependent", None)
        return to_toml(doc)
    if kind < 0.20:  # a body or a parameter renamed to a hostile name (references follow)
        names = _hostile_names(marker)
        if doc.get("bodies") and rng.random() < 0.6:
            body = rng.choice(doc["bodies"])
            old, new = body.get("name"), rng.choice(names)
            text = to_toml(doc)
            return text.replace(f'"{old}"', '"' + _toml_str(new) + '"') if isinstance(old, str) else text
        if doc.get("parameters"):
            new = rng.choice(names)
            doc["parameters"] = {(new if k == param else k): v for k, v in doc["parameters"].items()}
            return to_toml(doc)
    if kind < 0.26:  # a parameter-only sum in a centre of mass or a placement
        terms = "+".join(f"sin({param}*{i})" for i in range(1, rng.randrange(100, 900)))
        for b in doc.get("bodies", []):
            if "com" in b:
                b["com"] = [terms[:9990], 0, 0]
                break
        return to_toml(doc)
    paths = _leaves(doc)
    path = rng.choice(paths)
    parent = _parent(doc, path)
    action = rng.random()
    if action < 0.12 and isinstance(parent, dict):
        del parent[path[-1]]
    elif action < 0.2 and isinstance(parent, dict):
        parent[rng.choice(["bogus", "Name", "mass ", "type", "axis"])] = rng.choice(_hostile_values(marker, param))
    else:
        parent[path[-1]] = rng.choice(_hostile_values(marker, param))
    try:
        return to_toml(doc)
    except TypeError:
        return text


def check_text(text: str, path: str, backend: str | None = None, full: bool = True) -> tuple[str, str]:
    """Load, derive, compile (``backend``: None for kane's default) and evaluate one model file's text (only
    load it unless ``full``): ("ok", "") or (outcome, detail)."""
    import numpy as np

    from kane.io.model_file import parse_model

    stage = "load"
    try:
        t0 = time.process_time()  # CPU time: the machine may be shared
        lm = parse_model(text, path)
        if time.process_time() - t0 > 1.0:
            return "slow_load", f"{time.process_time() - t0:.2f} s of CPU time"
        if not full:
            return "ok", ""
        stage = "derive"
        dyn = lm.derive().compile(backend)
        stage = "evaluate"
        q0, u0 = lm.initial_state(dyn)
        inputs = lm.input_function(dyn)
        t_start = lm.simulation.t_start
        with np.errstate(all="ignore"):
            w = inputs(t_start, q0, u0) if inputs else None
            dyn.rhs(t_start, q0, u0, params=dict(lm.parameters), inputs=w)
        return "ok", ""
    except BaseException as exc:  # noqa: BLE001 - the point is to count every exception
        return outcome_of(exc, stage, None if stage == "evaluate" else Path(path).name)  # evaluate: the Python API


def _texts(n: int, seed: int, marker: str, full_every: int = 1):
    rng = random.Random(seed)
    sources = [(p.name, p.read_text(encoding="utf-8")) for p in EXAMPLES]
    for i in range(n):
        name, text = sources[i % len(sources)]
        yield f"fuzz_{i:05d}_{name}", mutate(text, rng, marker), i % full_every == 0


def fuzz(n: int, seed: int = 1, workers: int = 2, limit_s: float = 10.0, keep: Path | None = None,
         backend: str | None = None, full_every: int = 1) -> FuzzResult:
    """Run ``n`` mutated files (``seed`` fixes them) on ``workers`` processes, each file within ``limit_s`` [s],
    compiled with ``backend`` (None: kane's default); every ``full_every``-th file is loaded, derived, compiled
    and evaluated, the others only loaded."""
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "INJECTED")
        tasks = (Task(name, (text, name, full), text=text) for name, text, full in _texts(n, seed, marker, full_every))

        def checker(slot):
            os.chdir(tmp)
            return lambda text, name, full: check_text(text, name, backend, full)

        def injected(task):
            if os.path.exists(marker):
                os.remove(marker)
                return "injection", "the marker file was created"
            return None

        return run_pool(tasks, checker, workers, Limit(limit_s), keep, FAILURES, after=injected)


def main(argv=None) -> FuzzResult:
    ap = common_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), limit_s=10.0)
    ap.add_argument("--backend", choices=["c", "numba", "numpy"], help="compile with this backend")
    args = ap.parse_args(argv)
    r = fuzz(args.files, args.seed, args.workers, args.limit, args.keep, args.backend)
    print_summary(r, args.workers)
    return r


if __name__ == "__main__":
    main()
