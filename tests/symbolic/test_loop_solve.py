"""The C backend's looped LDL^T solve (large mass matrices: code of size n^2 instead of n^3, issue 12 memory) gives
the u' of Kane's equations as the unrolled solve and the numpy backend do, on a seeded random tree."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import kane
from kane.codegen import c_backend, c_print
from kane.codegen.c_backend import CFunction

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "algorithms"))
from _trees import assert_close, random_state, random_tree  # noqa: E402

pytestmark = pytest.mark.skipif(not c_backend.compiler_available()[0], reason="no C compiler on this machine")


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("KANE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(c_backend, "_libs", {})


def test_looped_solve_equals_the_unrolled_one_and_numpy(monkeypatch):
    model = random_tree(6, kinds=["spherical", "prismatic"], extra_revolute=1).compile()
    eqs = kane.derive(model)
    n = len(eqs.u_independent)
    assert n > 3 and n <= c_print.LOOP_SOLVE_ABOVE  # small: printed unrolled unless the threshold is lowered
    solve = ("M", "f", "udot")
    unrolled = CFunction(eqs.program, ["M", "f"], linear_solve=solve)
    assert "kane_ldlt(" not in unrolled.source
    monkeypatch.setattr(c_print, "LOOP_SOLVE_ABOVE", 3)
    looped = CFunction(eqs.program, ["M", "f"], linear_solve=solve)
    assert f"kane_ldlt({n}, A, A + {n * (n + 1) // 2}, out + " in looped.source and looped.lib is not unrolled.lib
    monkeypatch.setattr(c_print, "SPLIT_ABOVE", 10)  # a long kernel: M and f written into the z's array in parts
    monkeypatch.setattr(c_print, "SPLIT_PART", 40)
    split = CFunction(eqs.program, ["M", "f"], linear_solve=solve)
    assert "kane_part1(" in split.source and f"kane_ldlt({n}, Z + " in split.source
    ref = eqs.compile(backend="numpy")
    p, w = model.parameter_values(), model.input_values({"drive": -0.4})
    rng = np.random.default_rng(2)
    for k in range(3):
        q, u = random_state(model, rng)
        M, f, udot = looped(0.3 * k, q, u, p, w)
        assert_close(udot, np.linalg.solve(M, f), 1e-12, f"looped u' against numpy's LU, state {k}")
        assert_close(udot, ref.udot(0.3 * k, q, u, inputs={"drive": -0.4}), 1e-12, f"against numpy, state {k}")
        # the same operations in the same order as the unrolled solve (its structural zeros subtract exact zeros)
        assert np.array_equal(udot, unrolled(0.3 * k, q, u, p, w)[2]), f"against the unrolled solve, state {k}"
        assert np.array_equal(udot, split(0.3 * k, q, u, p, w)[2]), f"the kernel in parts, state {k}"
