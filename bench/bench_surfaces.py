"""NURBS surface evaluation and one NURBS-NURBS contact evaluation (issue 16): point, tangents and second
derivatives of a rational bicubic patch (8 x 8 control points), kane.surfaces.NurbsSurface (its compiled kernel,
kane.surfaces.nurbs_c, and its numpy evaluator) against geomdl (Piegl & Tiller in pure Python) in the same process.

Printed: time per call for one point, time per point when 10,000 points go in one vectorized call (geomdl has
no vectorized derivative call: it is looped), the ratios, and the largest difference between the results.
Then the closest-point Newton solve on the same patch (time per solve, iterations), and one contact of two
bicubic patches (a dome on a free body touching the wavy patch fixed in the ground): the four common-normal
conditions and their 4 x 4 Jacobian with both surfaces' derivatives (kane.surfaces.common_normal_conditions), and
the rolling joint's five position and tangency rows with their Jacobian in the quaternion coordinates
(RollingContactDynamics.constraint_jacobian; target < 50 us), compiled and numpy; geomdl's cost of the two
surface evaluations alone (it has no contact conditions) is the peer's lower bound.

Run: ``python bench/bench_surfaces.py`` or ``python bench/run.py surfaces``.
"""

from __future__ import annotations

import timeit

import numpy as np

import kane
from kane import joints as J
from kane.algorithms.cartesian_contact import RollingContact, RollingContactDynamics
from kane.surfaces import NurbsSurface, closest_point, common_normal_conditions

__all__ = ["bicubic_patch", "dome", "dome_contact", "run"]


def bicubic_patch(n: int = 8, seed: int = 0) -> NurbsSurface:
    """A wavy rational bicubic patch over [0, 1]^2 with n x n control points and random weights in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    P = np.stack([u, v, 0.2 * np.sin(4 * u) * np.cos(3 * v)], -1)
    knots = np.concatenate([[0.0] * 4, np.linspace(0, 1, n - 2)[1:-1], [1.0] * 4])
    return NurbsSurface(P, rng.uniform(0.5, 2.0, (n, n)), knots, knots, 3, 3, name="bench patch")


def dome(n: int = 6) -> NurbsSurface:
    """A bicubic cap z = 0.8 (x^2 + y^2) over [-0.3, 0.3]^2 (n x n control points sampled on it), opening upward."""
    u, v = np.meshgrid(np.linspace(-0.3, 0.3, n), np.linspace(-0.3, 0.3, n), indexing="ij")
    knots = np.concatenate([[0.0] * 4, np.linspace(0, 1, n - 2)[1:-1], [1.0] * 4])
    return NurbsSurface(np.stack([u, v, 0.8 * (u**2 + v**2)], -1), None, knots, knots, 3, 3, name="dome")


def dome_contact(numpy: bool = False):
    """(RollingContactDynamics, q): a free body carrying :func:`dome` touching :func:`bicubic_patch` fixed in the
    ground, placed in contact (gap below 1e-12); ``numpy`` keeps both surfaces on the numpy evaluator."""
    patch, cap = bicubic_patch(), dome()
    if numpy:
        for surface in (patch, cap):
            surface._fast = (None, None)  # the compiled kernel's slot: empty = the numpy evaluator
    s = kane.System("puck", gravity=(0, 0, -9.81))
    s.add_body("puck", mass=1.0, inertia=(0.01, 0.01, 0.01))
    s.add_joint("ground", "puck", J.Free(), name="free")
    cd = RollingContactDynamics(s, [RollingContact("touch", "ground", patch, "puck", cap, (0.5, 0.5, 0.5, 0.5))])
    qb = np.array([0.5, 0.5, 0.3, 1.0, 0.04, -0.03, 0.05])
    for _ in range(4):  # lower the body along the normal by the gap
        g = cd._all(0.0, np.concatenate([qb, cd._solve_z(qb).ravel()]), None)[0]
        qb[:3] -= g["gap"] * g["n1"]
    return cd, cd.initial_state(qb)[0]


def _contact_rows(rows: dict) -> None:
    for label, numpy in (("compiled", False), ("numpy", True)):
        cd, q = dome_contact(numpy)
        c, moved = cd.contacts[0], cd._moved(0, q[:7].reshape(1, 7))[2]
        z = q[7:]
        rows[f"conditions_{label}"] = _best(lambda: common_normal_conditions(c.surface1, moved, z), 500)
        rows[f"contact_jacobian_{label}"] = _best(lambda: cd.constraint_jacobian(0.0, q), 500)
        values = cd.constraint_jacobian(0.0, q).values
        print(f"contact of two bicubic patches ({label:8s}): common-normal conditions + 4 x 4 Jacobian "
              f"{rows[f'conditions_{label}'] * 1e6:7.1f} us; joint rows + quaternion Jacobian "
              f"{rows[f'contact_jacobian_{label}'] * 1e6:7.1f} us (target < 50 us); |rows| {np.abs(values).max():.1e}")
    print(f"ratios numpy / compiled: conditions "
          f"{rows['conditions_numpy'] / rows['conditions_compiled']:.1f}x, joint rows "
          f"{rows['contact_jacobian_numpy'] / rows['contact_jacobian_compiled']:.1f}x")


def _best(fn, number, repeat=5):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def _geomdl(S: NurbsSurface):
    try:
        from geomdl import NURBS
    except ImportError:
        return None
    peer = NURBS.Surface(normalize_kv=False)
    peer.degree_u, peer.degree_v = S.degree_u, S.degree_v
    Pw = np.concatenate([S.control_points * S.weights[..., None], S.weights[..., None]], -1)
    peer.set_ctrlpts(Pw.reshape(-1, 4).tolist(), *S.weights.shape)
    peer.knotvector_u, peer.knotvector_v = S.knots_u.tolist(), S.knots_v.tolist()
    return peer


def run(n_points: int = 10_000) -> dict:
    S = bicubic_patch()
    rng = np.random.default_rng(1)
    s, t = rng.uniform(0, 1, n_points), rng.uniform(0, 1, n_points)
    S_np = bicubic_patch()
    S_np._fast = (None, None)  # the compiled kernel's slot: empty = the numpy evaluator
    compiled = S._kernel() is not None
    rows = {"kane_single": _best(lambda: S.derivatives(0.3, 0.7), 2000),
            "kane_vector": _best(lambda: S.derivatives(s, t), 5) / n_points,
            "numpy_single": _best(lambda: S_np.derivatives(0.3, 0.7), 500),
            "numpy_vector": _best(lambda: S_np.derivatives(s, t), 5) / n_points}
    label = "compiled" if compiled else "numpy (no C compiler)"
    print(f"kane {label}: one point (S, S_s, S_t, S_ss, S_st, S_tt): {rows['kane_single'] * 1e6:8.2f} us per call")
    print(f"kane {label}: {n_points} points in one call:               {rows['kane_vector'] * 1e6:8.3f} us per "
          "point")
    print(f"kane numpy evaluator: one point {rows['numpy_single'] * 1e6:8.2f} us per call, {n_points} points "
          f"{rows['numpy_vector'] * 1e6:8.3f} us per point; numpy / compiled: one point "
          f"{rows['numpy_single'] / rows['kane_single']:.1f}x, vectorized {rows['numpy_vector'] / rows['kane_vector']:.1f}x")
    peer = _geomdl(S)
    if peer is not None:
        rows["geomdl_single"] = _best(lambda: peer.derivatives(0.3, 0.7, order=2), 500)
        m = 1000
        rows["geomdl_loop"] = _best(lambda: [peer.derivatives(a, b, order=2) for a, b in zip(s[:m], t[:m])], 1, 3) / m
        d = S.derivatives(s[:m], t[:m])
        got = np.stack([d.point, d.d_s, d.d_t, d.d_ss, d.d_st, d.d_tt], 1)
        want = np.array([[k[0][0], k[1][0], k[0][1], k[2][0], k[1][1], k[0][2]]
                         for k in (np.array(peer.derivatives(a, b, order=2)) for a, b in zip(s[:m], t[:m]))])
        rows["max_difference"] = float(np.abs(got - want).max())
        print(f"geomdl one point:                                  {rows['geomdl_single'] * 1e6:8.2f} us per call")
        print(f"geomdl looped over {m} points:                   {rows['geomdl_loop'] * 1e6:8.2f} us per point")
        print(f"ratios geomdl / kane: one point {rows['geomdl_single'] / rows['kane_single']:.1f}x, "
              f"vectorized {rows['geomdl_loop'] / rows['kane_vector']:.0f}x; largest difference "
              f"{rows['max_difference']:.1e}")
    else:
        print("geomdl is not installed: no peer timing")
    targets = S.point(s[:50], t[:50]) + 0.05 * rng.standard_normal((50, 3))
    starts = np.clip(np.stack([s[:50], t[:50]], 1) + 0.05 * rng.standard_normal((50, 2)), 0, 1)
    results = []
    rows["closest"] = _best(lambda: results.extend(closest_point(S, x, a, b) for x, (a, b) in zip(targets, starts)),
                            1, 3) / 50
    iters = [r.iterations for r in results[:50]]
    rows["closest_numpy"] = _best(lambda: [closest_point(S_np, x, a, b) for x, (a, b) in zip(targets, starts)],
                                  1, 3) / 50
    print(f"closest point (Newton, 50 targets 0.05 m off the patch): {rows['closest'] * 1e6:8.1f} us per solve, "
          f"iterations mean {np.mean(iters):.1f} max {max(iters)}, converged {sum(r.converged for r in results[:50])}"
          f"/50; with the numpy evaluator {rows['closest_numpy'] * 1e6:8.1f} us per solve")
    _contact_rows(rows)
    if peer is not None:
        rows["geomdl_two_surfaces"] = 2 * rows["geomdl_single"]
        print(f"geomdl: the two surface evaluations of one contact alone {rows['geomdl_two_surfaces'] * 1e6:8.1f} us "
              f"({rows['geomdl_two_surfaces'] / rows['conditions_compiled']:.0f}x kane's compiled conditions)")
    return rows


if __name__ == "__main__":
    run()
