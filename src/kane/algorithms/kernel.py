"""ABA, CRBA and RNEA of Featherstone's RBDA (2008, ch. 5-7; seed 001 §2.5, §3) as one generic compiled kernel
that loops over a model's arrays, ready at once for any tree (no per-model C build).

:class:`KernelDynamics` packs a model into flat arrays (parents, joint kinds and their axes or Euler digits,
placements, inertias, gravity: :class:`KernelArrays`, one set per parameter vector, so named parameters stay
arguments) and calls the C kernel of :mod:`kane.codegen.c_kernel`, compiled once for every model and cached
under the hash of its source. It has the interface of :class:`RecursiveDynamics` (``qdot``, ``udot``, ``rhs``,
``mass_matrix``, ``forcing``, ``inverse_dynamics``, the energies, ``constraints``).

Why the joint routines are written by hand in C rather than traced from :mod:`kane.model.joints`: the kernel must
serve every joint *instance* from one compiled library, so a joint's parameters (its axis, its Euler digits) are
data of the arrays; traced with symbolic axes, ``rotation_about`` would take its general Rodrigues branch with a
symbolic normalization (a square root per call) and lose the coordinate-axis shortcut that makes the common
URDF joint cheap. The C ``joint_calc`` / ``joint_qdot`` are the joint contract (R_F_M, p_F_M, S_M, the twist and
its rate S_M' u, q' = W u) written once per kind; the passes never branch on the kind. They cannot drift
silently: tests/algorithms/test_kernel.py compares every kind, both speed choices, with the traced algorithms
that evaluate the Python joints themselves.

What the kernel does not model (applied forces, torques, springs, joint loads, transient constraints, user
SpeedMaps, joint classes of its own, quantities that depend on t) is named by :func:`kernel_support`; such a
model is refused here with a :class:`kane.ModelError` and ``kane.dynamics`` keeps the traced path for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..codegen.c_kernel import kernel_library
from ..codegen.c_kernel_text import ENTRIES, KINDS, KK_ND, KK_NI, KK_NW, OFFSETS
from ..errors import ArgumentError, ModelError
from ..mechanics.arguments import state_arrays
from ..model import joints as J
from ..model.model import Model, float_value
from ..options import Formulation, parse_enum
from ..protocol import Capabilities
from ..spatial import motion_transform, skew, spatial_inertia, transform_inertia, unskew
from .recursive import RecursiveDynamics, TreeMembers
from .trace import tree_model

__all__ = ["KernelArrays", "KernelDynamics", "kernel_support", "kernel_arrays"]

_F64 = np.dtype(np.float64)
_D = "double[]"


def _kind(joint) -> str | None:
    """The kernel's kind of ``joint``, or None when the kernel has no routine for it."""
    t, speeds = type(joint), joint.speeds
    if t is J.Weld:
        return "weld"
    if t in (J.Revolute, J.Prismatic, J.Cylindrical) and speeds in (J.Speeds.RATES, J.Speeds.BODY):
        return t.kind
    if t is J.Gimbal and (speeds is J.Speeds.RATES or (speeds is J.Speeds.BODY and joint.n_free == 3)):
        return "gimbal_" + speeds.value
    if t is J.Planar and speeds in (J.Speeds.RATES, J.Speeds.BODY):
        return "planar_" + speeds.value
    if t in (J.Spherical, J.Free) and speeds is J.Speeds.BODY:
        return t.kind
    return None


def kernel_support(model: Model) -> str | None:
    """Why the generic kernel cannot evaluate ``model`` (one sentence naming what), or None when it can."""
    loads = [f"{len(x)} {what}" for x, what in ((model.forces, "force(s)"), (model.torques, "torque(s)"),
                                                (model.springs, "spring(s)"), (model.joint_loads, "joint load(s)"))
             if x]
    if loads:
        return f"applied loads ({', '.join(loads)}) are not in the generic kernel"
    if model.constraints:
        return f"constraints ({', '.join(c.name for c in model.constraints)}) are not in the generic kernel"
    for pj in model.joints:
        if _kind(pj.joint) is None:
            return (f"joint {pj.name!r} ({type(pj.joint).__name__}, speeds {pj.joint.speeds!r}) has no routine in "
                    "the generic kernel")
    allowed = set(model.parameters)
    for pj, body in zip(model.joints, model.bodies):
        axis = getattr(pj.joint, "axis", ())
        exprs = [body.mass, body.com, body.inertia, pj.R_parent_F, pj.r_parent_F, pj.R_child_M, pj.r_child_M,
                 *(axis if isinstance(axis, (tuple, list)) else [axis])]
        extra = set().union(*(getattr(e, "free_symbols", set()) for e in exprs)) - allowed
        if extra:
            return (f"joint {pj.name!r} / body {body.name!r} depend on {', '.join(sorted(map(str, extra)))}, not "
                    "only on parameters")
    extra = set(model.gravity.free_symbols) - allowed
    if extra:
        return f"gravity depends on {', '.join(sorted(map(str, extra)))}, not only on parameters"
    return None


@dataclass(frozen=True)
class KernelArrays:
    """A model as the kernel's arrays for one parameter vector: ``ib`` (n_bodies, 8) int32 records, ``db``
    (n_bodies, 48) float64 records (layout: :mod:`kane.codegen.c_kernel_text`), ``g`` (3,) gravity [m/s^2],
    ``lam`` (n_u,) int32 the parent of each speed in the expanded tree, ``sizes`` (n_bodies, n_q, n_u)."""

    ib: np.ndarray
    db: np.ndarray
    g: np.ndarray
    lam: np.ndarray
    sizes: np.ndarray


def kernel_arrays(model: Model, params: np.ndarray) -> KernelArrays:
    """The kernel's arrays of ``model`` (checked by :func:`kernel_support`) with parameter values ``params``."""
    values = dict(zip(model.parameters, (float(x) for x in params)))

    def ev(e):
        return float_value(e, values) if isinstance(e, sp.Basic) else float(e)

    def evs(matrix):  # a sympy matrix's entries, row-major, in floats
        return [ev(x) for x in (matrix.flat() if isinstance(matrix, sp.MatrixBase) else matrix)]

    nb, n = model.n_bodies, model.n_u
    ib = np.zeros((nb, KK_NI), dtype=np.int32)
    db = np.zeros((nb, KK_ND))
    lam = np.full(n, -1, dtype=np.int32)
    last_speed = [-1] * nb  # the last speed of each body's path to the ground
    o = OFFSETS
    for i, pj in enumerate(model.joints):
        joint, kind = pj.joint, _kind(pj.joint)
        u0 = range(n)[pj.u_slice].start if joint.nu else 0
        ib[i, :6] = (pj.parent, KINDS.index(kind), range(model.n_q)[pj.q_slice].start if joint.nq else 0, u0,
                     joint.nu, 0)
        rec = db[i]
        rec[o["R_pF"]:o["R_pF"] + 9] = evs(pj.R_parent_F)
        rec[o["r_pF"]:o["r_pF"] + 3] = evs(pj.r_parent_F)
        rec[o["R_cM"]:o["R_cM"] + 9] = evs(pj.R_child_M)
        rec[o["r_cM"]:o["r_cM"] + 3] = evs(pj.r_child_M)
        body = model.bodies[i]  # its spatial inertia about its origin, in floats (kane.spatial)
        _put_inertia(rec, spatial_inertia(ev(body.mass), evs(body.com), np.reshape(evs(body.inertia), (3, 3))))
        if hasattr(joint, "axis"):
            a = J._axis_vector(joint.axis).flat()
            rec[o["axis"]:o["axis"] + 3] = evs(a)
            for k in range(3):  # a coordinate axis, exactly: the sparse matrices of joints.rotation_about
                if all(x == 0 for j, x in enumerate(a) if j != k) and a[k] in (1, -1):
                    rec[o["axis_code"]] = (k + 1) * (1 if a[k] == 1 else -1)
        if isinstance(joint, J.Gimbal):
            rec[o["seq"]:o["seq"] + 3] = [int(c) - 1 for c in joint.sequence]
            rec[o["n_free"]] = joint.n_free
        up = last_speed[pj.parent] if pj.parent >= 0 else -1
        for k in range(joint.nu):
            lam[u0 + k] = up
            up = u0 + k
        if joint.nu and lam[u0] >= u0:
            raise ModelError(f"model {model.name!r}: joint {pj.name!r} has speeds numbered before its parent's; "
                             "the generic kernel expects parent-before-child speeds")
        last_speed[i] = up
    ib, db = _fold_welds(ib, db)
    eye = np.eye(3).ravel()
    for i in range(len(ib)):
        rec = db[i]
        if np.array_equal(rec[o["R_cM"]:o["R_cM"] + 9], eye) and not rec[o["r_cM"]:o["r_cM"] + 3].any():
            ib[i, 5] |= 1
        if np.array_equal(rec[o["R_pF"]:o["R_pF"] + 9], eye):
            ib[i, 5] |= 2
    g = np.array(evs(model.gravity), dtype=float)
    for arr in (db, g):
        arr.flags.writeable = False
    return KernelArrays(ib, db, g, lam, np.array([len(ib), model.n_q, n], dtype=np.int64))


def _inertia(rec) -> np.ndarray:
    """The spatial inertia (6, 6) about the body origin held in a kernel record (m, h = m c, Ibar)."""
    o, I = OFFSETS, np.zeros((6, 6))
    I[:3, :3] = rec[o["Ibar"]:o["Ibar"] + 9].reshape(3, 3)
    I[:3, 3:] = skew(rec[o["h"]:o["h"] + 3])
    I[3:, :3] = I[:3, 3:].T
    I[3:, 3:] = rec[o["m"]] * np.eye(3)
    return I


def _put_inertia(rec, I) -> None:
    """Store a spatial inertia (6, 6) about the body origin in a kernel record as m, h = m c and Ibar."""
    o = OFFSETS
    rec[o["m"]] = I[3, 3]
    rec[o["h"]:o["h"] + 3] = unskew(I[:3, 3:])
    rec[o["Ibar"]:o["Ibar"] + 9] = I[:3, :3].ravel()


def _fold_welds(ib: np.ndarray, db: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records with every body welded to a moving body merged into it, as Pinocchio merges fixed joints: its
    inertia carried into that body's axes (:meth:`kane.mechanics.inertia.SpatialInertia.to_parent`, in floats),
    its children's joint frames F re-expressed there. Speeds, coordinates and outputs are unchanged; bodies
    welded to the ground stay (they move nothing and keep their constant potential energy)."""
    o, weld = OFFSETS, KINDS.index("weld")
    nb = len(ib)
    keep = [not (ib[i, 1] == weld and ib[i, 0] >= 0) for i in range(nb)]
    if all(keep):
        return ib, db
    db = db.copy()
    host, R_host, r_host = list(range(nb)), [np.eye(3)] * nb, [np.zeros(3)] * nb  # body axes -> host axes

    def frame(i, R_key, r_key):
        return db[i, o[R_key]:o[R_key] + 9].reshape(3, 3), db[i, o[r_key]:o[r_key] + 3]

    for i in range(nb):
        p = ib[i, 0]
        R_pF, r_pF = frame(i, "R_pF", "r_pF")
        if p >= 0 and not keep[p]:  # F was given in a merged body's axes: give it in its host's
            db[i, o["R_pF"]:o["R_pF"] + 9] = (R_host[p] @ R_pF).ravel()
            db[i, o["r_pF"]:o["r_pF"] + 3] = r_host[p] + R_host[p] @ r_pF
            ib[i, 0] = host[p]
        if keep[i]:
            continue
        R_cM, r_cM = frame(i, "R_cM", "r_cM")  # R_pF, r_pF (views) are now in the host's axes
        R = R_pF @ R_cM.T
        r = r_pF - R @ r_cM
        host[i], R_host[i], r_host[i] = ib[i, 0], R, r
        t = host[i]  # the host's inertia plus this body's, carried into the host's axes (X^T I X)
        _put_inertia(db[t], _inertia(db[t]) + transform_inertia(motion_transform(R, r), _inertia(db[i])))
    index = np.cumsum(keep) - 1
    ib = ib[keep].copy()
    ib[:, 0] = np.where(ib[:, 0] >= 0, index[ib[:, 0]], -1)
    return ib, db[keep].copy()


class KernelDynamics(TreeMembers):
    """Numeric dynamics of an unconstrained tree by the generic compiled kernel, with the interface of
    :class:`RecursiveDynamics`: ``qdot``, ``udot``, ``rhs``, ``mass_matrix``, ``forcing``, ``inverse_dynamics``,
    ``kinetic_energy``, ``potential_energy``, ``energy``, ``constraints``; ``joint_forces`` and
    ``joint_force_monitors`` come from the traced algorithms (:meth:`traced`).

    method: :class:`kane.Formulation` ABA or CRBA (or "aba" / "crba") for ``udot``. State q (n_q,), u (n_u,) or batches
    (B, n_q), (B, n_u); ``params`` a dict or a full vector (the arrays are rebuilt when it changes); ``inputs`` are
    checked and have no effect (the kernel takes no loads); ``tau`` (n_u,) generalized forces along the speeds.
    Any number of threads may call one object from its first call on: each thread has its own scratch.
    Raises :class:`kane.ModelError` for a model the kernel cannot evaluate (:func:`kernel_support` says why).
    """

    backend = "kernel"

    def __init__(self, model, method: Formulation | str = Formulation.ABA):
        method = parse_enum(Formulation, method)
        if method not in (Formulation.ABA, Formulation.CRBA):
            raise ModelError(f"KernelDynamics: method {method!r}; expected kane.Formulation.ABA or .CRBA "
                             "(or 'aba' / 'crba')")
        self.method = method
        self.model = m = tree_model(model)
        why = kernel_support(m)
        if why is not None:
            raise ModelError(f"model {m.name!r}: {why}; use RecursiveDynamics (the traced algorithms) for it")
        self._name_layout(m)
        self._p0 = m.parameter_values()
        self._p0.flags.writeable = False
        kl = kernel_library()
        self.library_built = kl.built
        self._ffi, self._eval, self._fb = kl.ffi, kl.lib.kk_eval, kl.ffi.from_buffer
        self._lock = threading.Lock()
        self._local = threading.local()
        self._udot_what = ENTRIES["udot_" + method.value]
        self._last = self._traced = None
        self._nbytes = (8 * self.n_q, 8 * self.n_u)
        self._state0 = self._arrays_for(self._p0)

    # ---- arrays and scratch ------------------------------------------------------------------------------------
    def _arrays_for(self, p):
        """(key, arrays, their pointers...) of a parameter vector, built once and never changed: the defaults' in
        ``_state0``, the last other one in ``_last`` (replaced whole by one assignment; threads read it unlocked)."""
        key = p.tobytes()
        for st in (getattr(self, "_state0", None), self._last):
            if st is not None and st[0] == key:
                return st
        with self._lock:
            arrays = kernel_arrays(self.model, p)
            fb = self._ffi.from_buffer
            st = (key, arrays, fb("long[]", arrays.sizes), fb("int[]", arrays.ib), fb("double[]", arrays.db),
                  fb("double[]", arrays.g), fb("int[]", arrays.lam))
            if hasattr(self, "_state0"):
                self._last = st
        return st

    def _work(self):
        """This thread's scratch: (array, its pointer), made on the thread's first call."""
        loc = self._local
        w = getattr(loc, "work", None)
        if w is None:
            n = self.n_u
            arr = np.empty(self.model.n_bodies * KK_NW + n * n + 4 * n + 1)
            w = loc.work = (arr, self._ffi.from_buffer("double[]", arr))
        return w

    def _call(self, what, q, u, x, nout, params=None):
        """kk_eval for one state or a batch; x (n_u,) or (B, n_u) or None."""
        fb = self._fb
        st = self._state0 if params is None else self._arrays_for(self.model.parameter_values(params))
        if (type(q) is np.ndarray and q.dtype is _F64 and q.ndim == 1 and q.shape[0] == self.n_q
                and type(u) is np.ndarray and u.dtype is _F64 and u.ndim == 1 and u.shape[0] == self.n_u
                and q.flags.c_contiguous and u.flags.c_contiguous):
            B, batch = 1, False
        else:
            q, u, batch = state_arrays(q, u, self.n_q, self.n_u)
            q, u = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(u, dtype=float)
            B = q.shape[0] if batch else 1
        if x is not None:
            x = np.asarray(x, dtype=float)
            if x.shape[-1:] != (self.n_u,) or x.ndim > 2 or (x.ndim == 2 and (not batch or x.shape[0] != B)):
                raise ArgumentError(f"expected tau / udot of shape ({self.n_u},)" + (f" or ({B}, {self.n_u})"
                                    if batch else "") + f", got {x.shape}")
            if batch and x.ndim == 1:
                x = np.broadcast_to(x, (B, self.n_u))
            x = fb(_D, np.ascontiguousarray(x))
        else:
            x = self._ffi.NULL
        out = np.empty((B, nout) if batch else nout)
        self._eval(what, B, st[2], st[3], st[4], st[5], st[6], fb(_D, q), fb(_D, u), x, fb(_D, out), self._work()[1])
        return out

    # ---- the Dynamics interface ----------------------------------------------------------------------------
    def qdot(self, t, q, u, params=None, inputs=None):
        """q' (n_q,) = W(q) u."""
        return self._call(ENTRIES["qdot"], q, u, None, self.n_q, params)

    def udot(self, t, q, u, params=None, inputs=None, tau=None):
        """u' (n_u,) by the chosen algorithm (ABA, or CRBA and L^T D L), with extra generalized forces ``tau``."""
        if params is None and inputs is None:  # the simulators' path: one state of float64 arrays, straight to C
            try:
                nbq, nbu = self._nbytes
                if (q.dtype is _F64 and u.dtype is _F64 and q.nbytes == nbq and u.nbytes == nbu and q.ndim == 1
                        and u.ndim == 1 and (tau is None or (tau.dtype is _F64 and tau.nbytes == nbu
                                                             and tau.ndim == 1))):
                    fb, st = self._fb, self._state0
                    work = getattr(self._local, "work", None) or self._work()
                    out = np.empty(self.n_u)
                    self._eval(self._udot_what, 1, st[2], st[3], st[4], st[5], st[6], fb(_D, q), fb(_D, u),
                               self._ffi.NULL if tau is None else fb(_D, tau), fb(_D, out), work[1])
                    return out
            except (AttributeError, ValueError, TypeError):  # not arrays, or not contiguous: the checked path
                pass
        self._check_inputs(inputs)
        return self._call(self._udot_what, q, u, tau, self.n_u, params)

    def rhs(self, t, q, u, params=None, inputs=None, tau=None):
        """(q', u')."""
        return self.qdot(t, q, u, params), self.udot(t, q, u, params, inputs, tau)

    def mass_matrix(self, t, q, params=None):
        """The joint-space inertia H (n_u, n_u) by CRBA."""
        out = self._call(ENTRIES["M"], q, None, None, self.n_u * self.n_u, params)
        return out.reshape(out.shape[:-1] + (self.n_u, self.n_u))

    def forcing(self, t, q, u, params=None, inputs=None, tau=None):
        """f (n_u,) of H u' = f: tau minus inverse dynamics at u' = 0."""
        self._check_inputs(inputs)
        return self._call(ENTRIES["f"], q, u, tau, self.n_u, params)

    def inverse_dynamics(self, t, q, u, udot, params=None, inputs=None):
        """RNEA: the generalized forces tau (n_u,) that produce u' = ``udot``."""
        self._check_inputs(inputs)
        return self._call(ENTRIES["tau"], q, u, udot, self.n_u, params)

    def _energies(self, q, u, params):
        return self._call(ENTRIES["energy"], q, u, None, 2, params)

    def kinetic_energy(self, t, q, u, params=None):
        """Kinetic energy [J] from the bodies' spatial velocities."""
        return self._energies(q, u, params)[..., 0]

    def potential_energy(self, t, q, params=None):
        """Potential energy [J] of gravity."""
        return self._energies(q, None, params)[..., 1]

    def energy(self, t, q, u, params=None):
        """Total mechanical energy [J]."""
        e = self._energies(q, u, params)
        return e[..., 0] + e[..., 1]

    def constraints(self, t, q, params=None):
        """(A, b) with 0 rows: a model with constraints is not taken by the kernel."""
        q = np.asarray(q, dtype=float)
        return np.zeros(q.shape[:-1] + (0, self.n_u)), np.zeros(q.shape[:-1] + (0,))

    # ---- the rest of the kane.protocol.Dynamics interface (with TreeMembers) -----------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """M, f and the energy (the kernel takes gravity only, which has a potential); no constraints, projection
        or compiled loop (the C loop runs Kane's equations)."""
        return Capabilities(energy=True, mass_matrix=True, forcing=True, motion_constraints=True,
                            compiled_loop_reason=f"the C loop runs Kane's equations only, not {type(self).__name__}")

    # ---- what the kernel does not compute: from the traced algorithms of the same model ---------------------------
    def traced(self) -> RecursiveDynamics:
        """The traced :class:`RecursiveDynamics` of the same model and method (numpy backend), made on first use:
        joint reaction forces and named program outputs come from it."""
        with self._lock:
            if self._traced is None:
                self._traced = RecursiveDynamics(self.model, self.method, backend="numpy")
            return self._traced

    def joint_forces(self, t, q, u, udot, params=None, inputs=None) -> dict:
        """Joint name -> the spatial force (6,) the joint transmits, by the traced RNEA
        (:meth:`RecursiveDynamics.joint_forces`)."""
        return self.traced().joint_forces(t, q, u, udot, params, inputs)

    def joint_force_monitors(self, joints=None, params=None, inputs=None) -> dict:
        """Monitors of the joint reaction forces (:meth:`RecursiveDynamics.joint_force_monitors`), traced."""
        return self.traced().joint_force_monitors(joints, params, inputs)

    def _check_inputs(self, inputs):
        if inputs is not None and not callable(inputs):
            self.model.input_values(inputs)

