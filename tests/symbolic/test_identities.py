"""Physics identities on seeded random trees that use every joint kind.

Each tree has one body per joint variant (Revolute about a skew axis, Prismatic, Cylindrical, Universal, Planar
with rate and body speeds, Gimbal with rate and body speeds, Spherical, Free, Weld): ten moving bodies and one
welded one, attached to random parents with random offsets, rotated placements and physical inertia tensors.
Checked against quantities computed independently of the mass matrix and forcing:

* 0.5 u^T M u equals the kinetic energy summed from the bodies' velocities, for every u (so, by polarization,
  M is the Hessian of the kinetic energy); M is symmetric positive definite;
* with gravity only, f(q, u = 0) is minus the gradient of the potential energy along the speeds' directions
  (central differences of V at q + h W e_r), and total energy is conserved along a trajectory;
* the batch call (leading axis B) equals the loop of single calls;
* parameters passed as a dict change every output exactly as re-deriving with new defaults does.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import kane
from kane import joints as J

SEEDS = [3, 17]
KINDS = ("revolute", "prismatic", "cylindrical", "universal", "planar_rates", "planar_body", "gimbal_rates",
         "gimbal_body", "spherical", "free", "weld")
TAIT_BRYAN = ("123", "132", "213", "231", "312", "321")  # regular at zero angles


def random_rotation(rng) -> np.ndarray:
    Q, Rr = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(Rr)))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def random_inertia(rng) -> tuple:
    """A physical central inertia: principal moments (b+c, a+c, a+b), a, b, c > 0, in rotated axes."""
    a, b, c = rng.uniform(0.03, 0.25, 3)
    Q = random_rotation(rng)
    In = Q @ np.diag([b + c, a + c, a + b]) @ Q.T
    In = 0.5 * (In + In.T)
    return (In[0, 0], In[1, 1], In[2, 2], In[0, 1], In[1, 2], In[2, 0])


def make_joint(kind: str, rng):
    axis = tuple(rng.normal(size=3))  # skew and unnormalized on purpose
    if kind == "revolute":
        return J.Revolute(axis)
    if kind == "prismatic":
        return J.Prismatic(axis)
    if kind == "cylindrical":
        return J.Cylindrical(axis)
    if kind == "universal":
        return J.Universal(str(rng.choice(["12", "13", "21", "23", "31", "32"])))
    if kind == "planar_rates":
        return J.Planar(speeds=J.Speeds.RATES)
    if kind == "planar_body":
        return J.Planar(speeds=J.Speeds.BODY)
    if kind == "gimbal_rates":
        return J.Gimbal(str(rng.choice(TAIT_BRYAN)), n_free=3, speeds=J.Speeds.RATES)
    if kind == "gimbal_body":
        return J.Gimbal(str(rng.choice(TAIT_BRYAN)), n_free=3, speeds=J.Speeds.BODY)
    if kind == "spherical":
        return J.Spherical()
    if kind == "free":
        return J.Free()
    if kind == "weld":
        return J.Weld()
    raise AssertionError(kind)


def random_tree(seed: int, *, defaults=None) -> kane.System:
    """A random tree with one body per joint variant. Masses, g and one length are parameters (``defaults``
    overrides their default values); everything else is a random number drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    defaults = defaults or {}
    s = kane.System(f"random{seed}")
    g = s.parameter("g", defaults.get("g", 9.81))
    ell = s.parameter("ell", defaults.get("ell", 0.35))
    gdir = rng.normal(size=3)
    gdir = gdir / np.linalg.norm(gdir) * 0.3 + np.array([0.0, 0.0, -1.0])
    s.gravity = tuple(g * float(x) for x in gdir / np.linalg.norm(gdir))
    kinds = list(KINDS)
    rng.shuffle(kinds)
    names = []
    for k, kind in enumerate(kinds):
        name = f"b{k}"
        m = s.parameter(f"m{k}", defaults.get(f"m{k}", float(rng.uniform(0.5, 2.0))))
        s.add_body(name, mass=m, com=tuple(rng.uniform(-0.2, 0.2, 3)), inertia=random_inertia(rng))
        parent = "ground" if k == 0 else str(rng.choice(["ground"] + names))
        pp = rng.uniform(-0.3, 0.3, 3)
        if k % 3 == 0:  # some placements depend on the length parameter
            parent_point = (float(pp[0]), float(pp[1]), float(pp[2]) - ell)
        else:
            parent_point = tuple(pp)
        s.add_joint(parent, name, make_joint(kind, rng), name=f"j{k}_{kind}", parent_point=parent_point,
                    parent_rotation=random_rotation(rng), child_point=tuple(rng.uniform(-0.2, 0.2, 3)),
                    child_rotation=random_rotation(rng))
        names.append(name)
    return s


_TREES = {}


def _tree(seed):
    """(seed, Equations, Dynamics), derived once per module run; compiled outputs are cached by Dynamics."""
    if seed not in _TREES:
        eqs = kane.derive(random_tree(seed))
        _TREES[seed] = (seed, eqs, eqs.compile())
    return _TREES[seed]


@pytest.fixture(params=SEEDS, ids=[f"seed{s}" for s in SEEDS])
def tree(request):
    return _tree(request.param)


@pytest.fixture
def one_tree():
    """The first seed only, for checks of plumbing that do not depend on the tree (each output compiles)."""
    return _tree(SEEDS[0])


def quaternion_slices(model):
    out = []
    for pj in model.joints:
        if isinstance(pj.joint, (J.Spherical, J.Free)):
            idx = list(range(model.n_q)[pj.q_slice])
            out.append(idx[-4:])
    return out


def random_state(model, rng, q_spread=0.5, u_spread=1.0):
    """Generic q near the neutral configuration (unit quaternions) and random speeds."""
    q = np.array(model.q0, dtype=float) + rng.normal(0.0, q_spread, model.n_q)
    for idx in quaternion_slices(model):
        q[idx] /= np.linalg.norm(q[idx])
    return q, rng.normal(0.0, u_spread, model.n_u)


def test_tree_uses_every_joint_kind(tree):
    seed, eqs, dyn = tree
    kinds = []
    for pj in eqs.model.joints:
        j = pj.joint
        label = j.kind
        if isinstance(j, (J.Planar, J.Gimbal)) and j.nq == 3:
            label += "_" + ("rates" if j.speeds is J.Speeds.RATES else "body")
        if isinstance(j, J.Gimbal) and j.nq == 2:
            label = "universal"
        kinds.append(label)
    assert sorted(kinds) == sorted(KINDS)
    assert dyn.n_u == 1 + 1 + 2 + 2 + 3 + 3 + 3 + 3 + 3 + 6 + 0
    assert dyn.n_q == dyn.n_u + 1 + 1  # two quaternions
    assert max(_depth(eqs.model, i) for i in range(eqs.model.n_bodies)) >= 3  # a real tree, not a star


def _depth(model, i):
    d = 0
    while i >= 0:
        i, d = model.parent[i], d + 1
    return d


def test_kinetic_energy_and_mass_matrix(tree):
    seed, eqs, dyn = tree
    rng = np.random.default_rng(seed + 1000)
    n = dyn.n_u
    for _ in range(3):
        q, u = random_state(eqs.model, rng)
        t = float(rng.uniform(0, 1))
        M = dyn.mass_matrix(t, q)
        assert M.shape == (n, n)
        assert np.max(np.abs(M - M.T)) <= 1e-12 * np.max(np.abs(M))
        ev = np.linalg.eigvalsh(0.5 * (M + M.T))
        assert ev[0] > 1e-6 * ev[-1], f"M not positive definite: eigenvalues {ev[0]:.3e} .. {ev[-1]:.3e}"
        ke = dyn.kinetic_energy(t, q, u)
        assert abs(0.5 * u @ M @ u - ke) <= 1e-12 * abs(ke)
        # polarization: M[r, s] = T(e_r + e_s) - T(e_r) - T(e_s) with T the kinetic energy of the bodies
        E = np.eye(n)
        T1 = np.array([dyn.kinetic_energy(t, q, E[r]) for r in range(n)])
        M_pol = np.empty((n, n))
        for r in range(n):
            for c in range(n):
                M_pol[r, c] = 2 * T1[r] if r == c else dyn.kinetic_energy(t, q, E[r] + E[c]) - T1[r] - T1[c]
        np.testing.assert_allclose(M, M_pol, rtol=0, atol=1e-11 * np.max(np.abs(M)))


def test_generalized_gravity_is_minus_gradient_of_potential(tree):
    """At u = 0 only gravity acts: f_r = -dV/du_r = -(d/dh) V(q + h W e_r) at h = 0 (central differences)."""
    seed, eqs, dyn = tree
    rng = np.random.default_rng(seed + 2000)
    for _ in range(2):
        q, _ = random_state(eqs.model, rng)
        zero = np.zeros(dyn.n_u)
        f = dyn.forcing(0.0, q, zero)
        h = 1e-5
        grad = np.empty(dyn.n_u)
        for r in range(dyn.n_u):
            e = np.zeros(dyn.n_u)
            e[r] = 1.0
            w = dyn.qdot(0.0, q, e)  # direction in q of a unit speed u_r
            grad[r] = (dyn.potential_energy(0.0, q + h * w) - dyn.potential_energy(0.0, q - h * w)) / (2 * h)
        scale = max(1.0, np.max(np.abs(f)))
        print(f"seed {seed}: |f + grad V| = {np.max(np.abs(f + grad)):.2e}, scale {scale:.2e}")
        np.testing.assert_allclose(f, -grad, rtol=0, atol=1e-7 * scale)
        assert np.max(np.abs(f)) > 1.0  # gravity really acts


def test_energy_conserved_along_trajectory(tree):
    """Gravity only: E = T + V is constant. g is lowered (a parameter) so that free fall does not dwarf the
    rotational energy: a 0.1 % error in one gyroscopic term then drifts E by ~1e-4 relative."""
    seed, eqs, dyn = tree
    rng = np.random.default_rng(seed + 3000)
    q0, u0 = random_state(eqs.model, rng, q_spread=0.3, u_spread=1.0)
    nq = dyn.n_q
    p = {"g": 1.0}

    def rhs(t, x):
        q, u = x[:nq], x[nq:]
        return np.concatenate([dyn.qdot(t, q, u, params=p), dyn.udot(t, q, u, params=p)])

    t_end = 2.0
    sol = solve_ivp(rhs, (0.0, t_end), np.concatenate([q0, u0]), method="DOP853", rtol=1e-10, atol=1e-10,
                    t_eval=np.linspace(0.0, t_end, 21))
    assert sol.success, sol.message
    E = np.array([dyn.energy(t, x[:nq], x[nq:], params=p) for t, x in zip(sol.t, sol.y.T)])
    KE = np.array([dyn.kinetic_energy(t, x[:nq], x[nq:], params=p) for t, x in zip(sol.t, sol.y.T)])
    scale = max(abs(E[0]), np.max(KE))
    assert np.ptp(KE) > 0.2 * scale, "a trivial trajectory: the kinetic energy hardly changes"
    drift = np.max(np.abs(E - E[0]))
    print(f"seed {seed}: energy drift {drift:.2e}, scale {scale:.2e}, KE range {np.ptp(KE):.2e}")
    assert drift <= 1e-7 * scale, f"energy drift {drift:.3e} (scale {scale:.3e})"


def test_batch_equals_loop(one_tree):
    """udot (the unrolled LDL^T solve), qdot and an energy, batched over B states, equal single calls."""
    seed, eqs, dyn = one_tree
    rng = np.random.default_rng(seed + 4000)
    B = 4
    states = [random_state(eqs.model, rng) for _ in range(B)]
    Q = np.array([s[0] for s in states])
    U = np.array([s[1] for s in states])
    t = 0.4
    checks = {
        "udot": (dyn.udot(t, Q, U), [dyn.udot(t, q, u) for q, u in states]),
        "qdot": (dyn.qdot(t, Q, U), [dyn.qdot(t, q, u) for q, u in states]),
        "potential": (dyn.potential_energy(t, Q), [dyn.potential_energy(t, q) for q, _ in states]),
    }
    for name, (batch, loop) in checks.items():
        loop = np.array(loop)
        assert batch.shape == loop.shape, f"{name}: batch shape {batch.shape}, loop shape {loop.shape}"
        np.testing.assert_allclose(batch, loop, rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(loop))),
                                   err_msg=name)


def test_parameter_dict_equals_rederiving(one_tree):
    seed, eqs, dyn = one_tree
    rng = np.random.default_rng(seed + 5000)
    new = {"g": 3.7, "ell": 0.61, "m0": 2.9, "m4": 0.31, "m7": 1.7}
    dyn_new = kane.derive(random_tree(seed, defaults=new)).compile()
    assert dyn_new.parameter_names == dyn.parameter_names
    for _ in range(2):
        q, u = random_state(eqs.model, rng)
        t = 0.25
        pairs = {
            "udot": (dyn.udot(t, q, u, params=new), dyn_new.udot(t, q, u)),
            "energy": (dyn.energy(t, q, u, params=new), dyn_new.energy(t, q, u)),
        }
        for name, (a, b) in pairs.items():
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(b))), err_msg=name)
        # and the parameters matter: the defaults give something else
        assert np.max(np.abs(dyn.udot(t, q, u) - pairs["udot"][1])) > 1e-3
        # the defaults are restored after a call with a dict (no state leaks between calls)
        np.testing.assert_array_equal(dyn.udot(t, q, u), dyn.udot(t, q, u, params=None))
