"""Assembly with the user in the loop (issue 16, seed 003): one frame of a dragged 10-body mechanism with one
surface contact, kane's DragSolver against the same frame written with scipy.optimize.least_squares in the same
process.

The mechanism: a planar chain of 10 links (0.5 m each, revolute about z) whose tip is closed on the ground point
(3, 0, 0) by a loop closure (an 11-bar linkage), and a sphere of 5 cm radius at the tip of link 8 kept touching a
wavy bicubic NURBS surface fixed in the ground (kane.simulate.surface_contact.SphereOnSurface: one row, the
closest point by Newton, warm-started): 7 degrees of freedom. The tip of link 5 is dragged around a circle of
5 cm radius in 100 frames, each frame warm-started from the previous one. (The contact is the drag solver's
sphere-on-surface row, not issue 16's surface-surface rolling joint of kane.algorithms.cartesian_contact, which
is a CartesianDynamics constraint and not a constraint of a kane.System.)

scipy's frame minimizes |[w C(q); w C_contact(q); e(q)]|^2 (w = 1e4: the constraints as a stiff penalty, since
least_squares has no equality constraints) from the same start, with the same exact Jacobians (dC/dq = A_C,
W = I for revolute joints) and the same closest-point evaluation, method 'trf'. Printed: time per frame of each
(median), the ratio, the constraint residual and the distance to the target each ends at, iterations or function
evaluations; and kane's frame without the contact row. Target: under 5 ms per frame (200 Hz).

A second row (:func:`run_nurbs_contact`): the same drag with the sphere replaced by a NURBS sphere on link 8 rolling
on the NURBS terrain (kane.simulate.surface_pair.SurfaceOnSurface: 5 position and tangency rows, the contact
parameters (u1, v1, u2, v2) extra unknowns), against least_squares over (q, z) with the same rows; and one
evaluation of the contact's rows and Jacobian alone.

Run: ``python bench/bench_assembly.py [--quick]`` or ``python bench/run.py assembly``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import kane
from kane import joints as J
from kane.simulate import project_positions
from kane.simulate.drag import DragSolver, Target
from kane.simulate.surface_contact import SphereOnSurface
from kane.simulate.surface_pair import SurfaceOnSurface
from kane.surfaces import NurbsSurface, nurbs_sphere

__all__ = ["closed_chain", "terrain", "run", "run_nurbs_contact"]

N_LINKS, LENGTH, ANCHOR = 10, 0.5, 3.0


def closed_chain():
    """(dynamics, assembled q): the 11-bar linkage above, assembled from an arch of equal bends."""
    s = kane.System("closed_chain")
    parent, point = "ground", (0, 0, 0)
    for i in range(N_LINKS):
        s.add_body(f"l{i}", mass=1.0, com=(LENGTH / 2, 0, 0), inertia=(1e-3, LENGTH**2 / 12, LENGTH**2 / 12))
        s.add_joint(parent, f"l{i}", J.Revolute("z"), parent_point=point, coordinates=[f"q{i}"], speeds=[f"u{i}"])
        parent, point = f"l{i}", (LENGTH, 0, 0)
    s.add_loop_closure("anchor", f"l{N_LINKS - 1}", (LENGTH, 0, 0), "ground", (ANCHOR, 0, 0),
                       directions=[(1, 0, 0), (0, 1, 0)])
    dyn = kane.derive(s, dependent=[f"u{N_LINKS - 2}", f"u{N_LINKS - 1}"]).compile()
    q = np.full(N_LINKS, -2 * 1.2 / (N_LINKS - 1))
    q[0] = 1.2
    return dyn, project_positions(dyn, 0.0, q, max_iter=50).q


def terrain(x0: float, y0: float) -> NurbsSurface:
    """A wavy bicubic NURBS surface y = y0 + 0.03 sin(6 (x - x0)) (roughly), extruded along z, through (x0, y0):
    s along z (linear), t along x (cubic, 8 control points), so that its normal points along +y."""
    xs = x0 + np.linspace(-1.0, 1.0, 8)
    P = np.array([[[x, y0 + 0.03 * np.sin(6 * (x - x0)), z] for x in xs] for z in (-1.0, 1.0)])
    knots = [0, 0, 0, 0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1, 1]
    return NurbsSurface(P, np.ones((2, 8)), [0, 0, 1, 1], knots, 1, 3, name="terrain")


def _scipy_frame(dyn, solver, q0, w=1e4):
    from scipy.optimize import least_squares

    def fun(q):
        e, _, e_hard, _, _ = solver.errors(0.0, q)
        return np.concatenate([w * np.ravel(dyn.holonomic_rows(0.0, q)[0]), w * e_hard, e])

    def jac(q):
        _, J, _, J_hard, _ = solver.errors(0.0, q)
        return np.vstack([w * dyn.holonomic_rows(0.0, q)[1], w * J_hard, J])

    return least_squares(fun, q0, jac=jac, method="trf", xtol=1e-12, ftol=1e-12, gtol=1e-12)


def _frame_row(name: str, what: str, times, residual, distance, evals) -> dict:
    """The figures of one solver over the frames (median ms a frame, worst residual [m] and distance to the
    target [m], mean iterations or evaluations a frame), printed on one line."""
    row = {"ms_per_frame": 1e3 * float(np.median(times)), "residual": float(max(residual)),
           "distance": float(max(distance)), "iterations": float(np.mean(evals))}
    print(f"{name:6s} one frame ({what}): median {row['ms_per_frame']:7.3f} ms; max constraint residual "
          f"{row['residual']:.2e} m; max distance to the target {row['distance']:.2e} m; "
          f"{'iterations' if name == 'kane' else 'evaluations'} per frame {row['iterations']:.1f}")
    return row


def run(frames: int = 100, quick: bool = False) -> dict:
    frames = 20 if quick else frames
    dyn, q0 = closed_chain()
    probe = DragSolver(dyn, [Target("l4", (LENGTH, 0, 0)), Target("l7", (LENGTH, 0, 0))])
    start, foot = probe.positions(0.0, q0)
    contact = SphereOnSurface("l7", (LENGTH, 0, 0), 0.05, terrain(foot[0], foot[1] - 0.05), s=0.5, t=0.5)
    solver = DragSolver(dyn, [Target("l4", (LENGTH, 0, 0))], contacts=[contact])
    q0 = solver.solve(q0).q  # onto the surface
    angles = np.linspace(0.0, 2 * np.pi, frames + 1)[1:]
    path = start + 0.05 * np.stack([np.sin(angles), 1 - np.cos(angles), 0 * angles], axis=1)
    rows = {}
    for name in ("kane", "scipy"):
        contact.s, contact.t = 0.5, 0.5
        q, times, residual, distance, evals = q0.copy(), [], [], [], []
        for target in path:
            solver.move(0, position=target)
            t0 = time.perf_counter()
            res = solver.solve(q) if name == "kane" else _scipy_frame(dyn, solver, q)
            times.append(time.perf_counter() - t0)
            q = res.q if name == "kane" else res.x
            evals.append(res.iterations if name == "kane" else res.nfev)
            C_contact = solver.errors(0.0, q)[2]
            residual.append(max(np.abs(dyn.holonomic_rows(0.0, q)[0]).max(), np.abs(C_contact).max()))
            distance.append(np.linalg.norm(solver.errors(0.0, q)[0]))
        rows[name] = _frame_row(name, "10 bodies, 2 loop rows, 1 contact row, 3 target rows", times, residual,
                                distance, evals)
    ratio = rows["scipy"]["ms_per_frame"] / rows["kane"]["ms_per_frame"]
    rows["ratio"] = ratio
    print(f"scipy.optimize.least_squares / kane DragSolver: {ratio:.1f}x; target < 5 ms per frame: "
          f"{'met' if rows['kane']['ms_per_frame'] < 5 else 'NOT met'}")
    free, q, times = DragSolver(dyn, [Target("l4", (LENGTH, 0, 0))]), q0.copy(), []
    for target in path:  # the same drag without the contact row: the cost of the surface's evaluations
        free.move(0, position=target)
        t0 = time.perf_counter()
        q = free.solve(q).q
        times.append(time.perf_counter() - t0)
    rows["kane_no_contact_ms"] = 1e3 * float(np.median(times))
    print(f"kane   the same frames without the contact row: median {rows['kane_no_contact_ms']:7.3f} ms")
    rows["nurbs_nurbs"] = run_nurbs_contact(frames, quick)
    return rows


def _scipy_frame_z(dyn, solver, x0, w=1e4):
    """least_squares over x = (q, z): the loop rows and the contact's 5 rows as a stiff penalty, then the target;
    z kept in the surfaces' patches by bounds (periodic parameters free)."""
    from scipy.optimize import least_squares

    nq, nz = dyn.model.n_q, x0.size - dyn.model.n_q
    (contact,) = solver.contacts
    patches = [(-np.inf, np.inf) if periodic else bounds for surface in (contact.surface1, contact.surface2)
               for bounds, periodic in zip(surface.bounds, surface.periodic)]
    lower = np.concatenate([np.full(nq, -np.inf), [lo for lo, _ in patches]])
    upper = np.concatenate([np.full(nq, np.inf), [hi for _, hi in patches]])

    def fun(x):
        e, _, e_hard, _, _ = solver.errors(0.0, x)
        return np.concatenate([w * np.ravel(dyn.holonomic_rows(0.0, x[:nq])[0]), w * e_hard, e])

    def jac(x):  # W = I for revolute joints, so the rows in (u, dz) are the derivatives in (q, z)
        _, J, _, J_hard, _ = solver.errors(0.0, x)
        A_C = dyn.holonomic_rows(0.0, x[:nq])[1]
        return np.vstack([w * np.hstack([A_C, np.zeros((A_C.shape[0], nz))]), w * J_hard, J])

    return least_squares(fun, np.clip(x0, lower, upper), jac=jac, bounds=(lower, upper), method="trf",
                         xtol=1e-12, ftol=1e-12, gtol=1e-12)


def run_nurbs_contact(frames: int = 100, quick: bool = False) -> dict:
    """The 10-body frame with a NURBS-NURBS surface contact (a biquadratic NURBS sphere of 5 cm on link 8's tip
    rolling on the bicubic terrain), kane against least_squares over (q, z); and one evaluation of the contact's
    5 rows and their Jacobian [us]."""
    frames = 20 if quick else frames
    dyn, q0 = closed_chain()
    probe = DragSolver(dyn, [Target("l4", (LENGTH, 0, 0)), Target("l7", (LENGTH, 0, 0))])
    start, foot = probe.positions(0.0, q0)
    heading = float(np.sum(q0[:8]))  # link 8's angle in the plane: the ground's -y is at -pi/2 - heading in it
    s_ball = np.mod(-np.pi / 2 - heading, 2 * np.pi) / (2 * np.pi)
    ball = nurbs_sphere(0.05, (LENGTH, 0, 0), name="nurbs ball")
    contact = SurfaceOnSurface("foot", "ground", terrain(foot[0], foot[1] - 0.05), "l7", ball,
                               np.array([0.5, 0.5, s_ball, 0.5]))
    solver = DragSolver(dyn, [Target("l4", (LENGTH, 0, 0))], contacts=[contact])
    q0 = solver.solve(q0).q
    z0 = contact.params.copy()
    angles = np.linspace(0.0, 2 * np.pi, frames + 1)[1:]
    path = start + 0.05 * np.stack([np.sin(angles), 1 - np.cos(angles), 0 * angles], axis=1)
    rows = {}
    for name in ("kane", "scipy"):
        contact.params = z0.copy()
        x, times, residual, distance, evals = np.concatenate([q0, z0]), [], [], [], []
        for target in path:
            solver.move(0, position=target)
            t0 = time.perf_counter()
            if name == "kane":
                res = solver.solve(x[:dyn.model.n_q])
                x = np.concatenate([res.q, contact.params])
            else:
                res = _scipy_frame_z(dyn, solver, x)
                x = res.x
            times.append(time.perf_counter() - t0)
            evals.append(res.iterations if name == "kane" else res.nfev)
            _, _, C_contact, _, _ = solver.errors(0.0, x)
            residual.append(max(np.abs(dyn.holonomic_rows(0.0, x[:dyn.model.n_q])[0]).max(), np.abs(C_contact).max()))
            distance.append(np.linalg.norm(solver.errors(0.0, x)[0]))
        rows[name] = _frame_row(name, "10 bodies, 2 loop rows, NURBS-NURBS contact: 5 rows, 4 parameters", times,
                                residual, distance, evals)
    rows["ratio"] = rows["scipy"]["ms_per_frame"] / rows["kane"]["ms_per_frame"]
    print(f"scipy.optimize.least_squares / kane DragSolver (NURBS-NURBS contact): {rows['ratio']:.1f}x; target < 5 "
          f"ms per frame: {'met' if rows['kane']['ms_per_frame'] < 5 else 'NOT met'}")
    vals = solver._fn(0.0, x[:dyn.model.n_q], np.zeros(dyn.model.n_u), solver._p, solver._w)
    poses, z, reps = solver._poses(vals, solver._slots[0]), contact.params.copy(), 200 if quick else 2000
    t0 = time.perf_counter()
    for _ in range(reps):
        contact.rows(poses, z, dyn.model.n_u)
    rows["rows_us"] = 1e6 * (time.perf_counter() - t0) / reps
    print(f"kane   one evaluation of the NURBS-NURBS contact's 5 rows and Jacobian: {rows['rows_us']:.1f} us "
          f"(issue 16 target: under 50 us)")
    return rows


if __name__ == "__main__":
    run(quick="--quick" in sys.argv[1:])
