"""Numba backend: a :class:`Program` compiled to machine code, for one state or a parallel loop over a batch.

Optional (``pip install numba``): the same straight-line code as the numpy backend's scalar variant, printed
into a module whose file name is the hash of its source, so that numba's on-disk cache serves later processes.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import types

import numpy as np
import sympy as sp

from .cache import private_dir, write_private
from .numpy_backend import GROUPS, ScalarPrinter, print_assignments, solve_lines
from .program import Program

__all__ = ["NumbaFunction"]


_lock = threading.Lock()


def _module(src: str) -> types.ModuleType:
    """The module of the printed source ``src``. Its file under the private cache (:mod:`.cache`, ``numba``) is
    where numba keeps the machine code across processes; kane executes its own ``src``, never the file's text: a
    file that differs (truncated, planted) is rewritten first, so numba's cache index matches what runs."""
    name = "kane_numba_" + hashlib.sha256(src.encode()).hexdigest()[:20]
    with _lock:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__kane_source__", None) == src:
            return module
        root = private_dir("numba", ("__pycache__",))  # numba's index and machine code: as private as the rest
        path = root / f"{name}.py"
        try:
            same = path.read_bytes() == src.encode()
        except OSError:
            same = False
        if not same:
            write_private(path, src.encode())
        module = types.ModuleType(name)
        module.__file__ = str(path)
        module.__kane_source__ = src
        sys.modules[name] = module  # numba's cache finds the kernel's globals by module name
        exec(compile(src, str(path), "exec"), module.__dict__)  # noqa: S102 - kane's printed source, not the file
        return module


class NumbaFunction:
    """A Program's outputs compiled by numba: ``fn(t, q, u, params, inputs) -> tuple of arrays`` as the numpy
    backend's functions; a 2-D q (B, n_q) runs a parallel loop (``prange``) over the batch axis.

    The kernel is straight-line float code printed from the Program's assignments; quantities of parameters only
    are computed once per parameter vector by a Python prelude. The source is written to a file named by its
    content hash under ``$KANE_CACHE_DIR`` (default ``~/.cache/kane``) so that numba caches the machine code
    across processes: the first compilation of a large model takes seconds, later ones load from the cache.
    """

    def __init__(self, program: Program, outputs, *, linear_solve=None):
        self.outputs = tuple(outputs)
        prog = program.select(self.outputs + (tuple(linear_solve[:2]) if linear_solve else ()))
        printer = ScalarPrinter()
        rename, head = {}, []
        for g in GROUPS:
            for k, s in enumerate(prog.inputs.get(g, ())):
                rename[s] = sp.Symbol(f"{g}_{k}")
                if g != "params":
                    head.append(f"    {g}_{k} = t" if g == "t" else f"    {g}_{k} = {g}[{k}]")
        params = list(prog.inputs.get("params", ()))
        const_lines, body, cnames, _ = print_assignments(prog, printer, rename)
        pre = [f"    params_{k} = params[{k}]" for k in range(len(params))] + const_lines
        cnames += [f"params_{k}" for k in range(len(params))]
        head += [f"    {c} = consts[{k}]" for k, c in enumerate(cnames)]
        self.parts, off, outs = [], 0, []
        for name in self.outputs:
            m, shape = prog.outputs[name], prog.shape(name)
            outs += [f"    out[{off + idx}] = {printer.doprint(e.xreplace(rename))}"
                     for idx, e in enumerate(m) if e != 0]
            self.parts.append((off, off + len(m), tuple(shape)))
            off += len(m)
        if linear_solve is not None:  # u' = M^-1 f by the numpy backend's unrolled LDL^T (structural zeros skipped)
            M, f = prog.outputs[linear_solve[0]], prog.outputs[linear_solve[1]]
            n = M.shape[0]
            outs += ["    " + ln for ln in solve_lines(M, f, lambda e: printer.doprint(e.xreplace(rename)))]
            outs += [f"    out[{off + i}] = x{i}" for i in range(n)]
            self.parts.append((off, off + n, (n,)))
            self.outputs += (linear_solve[2],)
            off += n
        self.size = off
        self._vector = len(self.parts) == 1 and len(self.parts[0][2]) == 1
        jit = "@numba.njit(cache=True, error_model='numpy'{})"
        self.source = src = (
            "import math\nimport numpy as np\nimport numba\n\n\n"
            "def prelude(params):\n" + "\n".join(pre) + f"\n    return np.array([{', '.join(cnames)}] + [0.0])\n\n\n"
            + jit.format("") + "\ndef kernel(t, q, u, consts, inputs, out):\n" + "\n".join(head + body + outs)
            + "\n    return 0\n\n\n" + jit.format(", parallel=True")
            + "\ndef batch_kernel(t, Q, U, consts, INP, OUT):\n    for k in numba.prange(Q.shape[0]):\n"
            "        kernel(t[k], Q[k], U[k], consts, INP[k], OUT[k])\n    return 0\n")
        module = _module(src)
        self.prelude, self.kernel, self.batch_kernel = module.prelude, module.kernel, module.batch_kernel
        self._last = (None, None)  # (parameter key, constants): replaced whole, so threads never mix two

    def constants(self, params):
        key = params.tobytes()
        last = self._last
        if key != last[0]:
            last = self._last = (key, self.prelude(params))
        return last[1]

    def __call__(self, t, q, u, params, inputs):
        consts = self.constants(params)
        if q.ndim == 1:
            out = np.zeros(self.size)
            self.kernel(float(t), q, u, consts, inputs, out)
            if self._vector:
                return (out,)
            return tuple(out[a:b] if len(s) == 1 else out[a:b].reshape(s) for a, b, s in self.parts)
        B = q.shape[0]
        out = np.zeros((B, self.size))
        q = np.ascontiguousarray(q, dtype=float)
        u = np.ascontiguousarray(np.broadcast_to(u, (B,) + u.shape[-1:]), dtype=float)
        inputs = np.ascontiguousarray(np.broadcast_to(inputs, (B,) + inputs.shape[-1:]), dtype=float)
        t = np.ascontiguousarray(np.broadcast_to(np.asarray(t, dtype=float), (B,)))
        self.batch_kernel(t, q, u, consts, inputs, out)
        return tuple(out[:, a:b].reshape((B,) + s) for a, b, s in self.parts)
