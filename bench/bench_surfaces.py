"""NURBS surface evaluation (issue 16): point, tangents and second derivatives of a rational bicubic patch
(8 x 8 control points), kane.surfaces.NurbsSurface against geomdl (Piegl & Tiller in pure Python) in the same
process.

Printed: time per call for one point, time per point when 10,000 points go in one vectorized call (geomdl has
no vectorized derivative call: it is looped), the ratios, and the largest difference between the two results.
Also the closest-point Newton solve on the same patch (time per solve, iterations).

Run: ``python bench/bench_surfaces.py``.
"""

from __future__ import annotations

import timeit

import numpy as np

from kane.surfaces import NurbsSurface, closest_point

__all__ = ["bicubic_patch", "run"]


def bicubic_patch(n: int = 8, seed: int = 0) -> NurbsSurface:
    """A wavy rational bicubic patch over [0, 1]^2 with n x n control points and random weights in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    P = np.stack([u, v, 0.2 * np.sin(4 * u) * np.cos(3 * v)], -1)
    knots = np.concatenate([[0.0] * 4, np.linspace(0, 1, n - 2)[1:-1], [1.0] * 4])
    return NurbsSurface(P, rng.uniform(0.5, 2.0, (n, n)), knots, knots, 3, 3, name="bench patch")


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
    rows = {"kane_single": _best(lambda: S.derivatives(0.3, 0.7), 2000),
            "kane_vector": _best(lambda: S.derivatives(s, t), 5) / n_points}
    print(f"kane   one point (S, S_s, S_t, S_ss, S_st, S_tt): {rows['kane_single'] * 1e6:8.2f} us per call")
    print(f"kane   {n_points} points in one call:               {rows['kane_vector'] * 1e6:8.3f} us per point")
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
    print(f"closest point (Newton, 50 targets 0.05 m off the patch): {rows['closest'] * 1e6:8.1f} us per solve, "
          f"iterations mean {np.mean(iters):.1f} max {max(iters)}, converged {sum(r.converged for r in results[:50])}"
          "/50")
    return rows


if __name__ == "__main__":
    run()
