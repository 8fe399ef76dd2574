"""``kane.derive``: equations of motion by Kane's method with the permanent constraints embedded.

The result, :class:`Equations`, holds two straight-line programs over the same named intermediates:

* ``program`` (inputs t, q, independent u, parameters, inputs): the minimal ODE M(q) u_ind' = f(q, u_ind, t),
  q' = W u + X (dependent speeds computed from u_dep = D u_ind + E), energies and constraint residuals;
* ``full_program`` (inputs t, q, all u, ...): the unconstrained M and f (Fr + Fr* before embedding), the rows
  A, b of every declared constraint and their velocity-product derivative A' u + b', kept so that constraints
  can be embedded during a run by recombination (seed 000 Eqs. 44-46).
"""

from __future__ import annotations

import enum
import json
import warnings
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..codegen.numpy_backend import compile_program
from ..codegen.program import Program, ProgramBuilder
from ..errors import DerivationError, KaneError, ModelError
from ..options import parse_enum
from ..model.model import KaneSymbol, Model
from ..model.system import System
from ..mechanics.constraints import EmbeddingChoice, constraint_bias, constraint_rows, select_dependent
from ..mechanics.kinematics import TreeKinematics, sum_products
from ..mechanics.loads import energy_expressions, nonconservative_power
from .dynamics import KaneDynamics
from .embedding import solve_dependent
from .kane import explicit_generalized_forces, recursive_mass_forcing

__all__ = ["Embedding", "Equations", "Immobile", "InconsistentInitialStateWarning", "Redundant",
           "RedundantConstraintWarning", "RowBlock", "derive", "reference_configuration"]


class Embedding(enum.Enum):
    """How permanent constraints are embedded (both give the same equations)."""

    RECOMBINATION = "recombination"  # F~r = Fr + sum_s D_sr Fs on the unconstrained equations (Eqs. 44-45)
    SUBSTITUTION = "substitution"  # constrained partial velocities, then Kane's sums body by body (Eqs. 41-42)


def _option(cls, value, name: str):
    """``value`` as a member of the option enum ``cls`` of :func:`derive`; a ModelError names ``name`` otherwise."""
    found = parse_enum(cls, value)
    if found is None:
        raise ModelError(f"derive: {name} must be one of {[r.value for r in cls]}, got {value!r}")
    return found


class Redundant(enum.Enum):
    """What ``derive`` does with permanent constraint rows that depend linearly on the others (a row that is a
    multiple of another, or zero at every configuration): refuse them (``ERROR``, the default: a
    :class:`kane.DerivationError` names them) or drop them with a :class:`RedundantConstraintWarning` (``DROP``).
    A dropped row's multiplier is undefined: ``Dynamics.constraint_forces`` reports it as NaN."""

    ERROR = "error"
    DROP = "drop"

    @classmethod
    def parse(cls, value) -> Redundant:
        return _option(cls, value, "redundant")


class Immobile(enum.Enum):
    """What ``derive`` does where the permanent constraints leave no independent speed (nothing can move): refuse
    (``ERROR``, the default: a :class:`kane.DerivationError` names the constraints) or derive equations without
    independent speeds (``ALLOW``: a mode of a switched system that holds everything, such as a brake on a rolling
    disk; q' follows from the constraints alone)."""

    ERROR = "error"
    ALLOW = "allow"

    @classmethod
    def parse(cls, value) -> Immobile:
        return _option(cls, value, "immobile")


class RedundantConstraintWarning(UserWarning):
    """Permanent constraint rows were dropped as redundant (``derive(..., redundant="drop")``)."""


class InconsistentInitialStateWarning(UserWarning):
    """The initial configuration a system declares (its joints' q0) violates a permanent holonomic constraint (a
    loop closure, a contact height): named at derivation with each constraint's residual."""


@dataclass(frozen=True)
class RowBlock:
    """Where one declared constraint sits: ``rows`` in the stacked A, b, A_bias of ``full_program``;
    ``holonomic`` its rows in the stacked C and A_C (None for a nonholonomic constraint); ``transient``;
    ``holonomic_rows`` the row of the block (0 = its first) that each of its C rows is the rate of; ``dropped``
    the rows of the block dropped as redundant (``derive(..., redundant="drop")``): every use of the embedded
    constraints (dependent speeds and coordinates, constraint forces, assembly, projection) leaves them out."""

    rows: slice
    holonomic: slice | None
    transient: bool
    holonomic_rows: tuple = ()
    dropped: tuple = ()


@dataclass(frozen=True)
class Equations:
    """Equations of motion of a model, as named intermediates and outputs (see module docstring)."""

    model: Model
    program: Program
    full_program: Program
    u_independent: tuple
    u_dependent: tuple
    embedding: EmbeddingChoice | None
    constraint_names: tuple
    transient_names: tuple
    has_potential: bool
    constraint_layout: dict


    @property
    def kept_holonomic(self) -> tuple:
        """Indices into C (and the rows of A_C) of the holonomic rows that are not dropped as redundant: the
        configuration constraints that assembly and projection solve (all of them when none was dropped)."""
        return tuple(b.holonomic.start + k for b in self.constraint_layout.values() if b.holonomic is not None
                     for k, row in enumerate(b.holonomic_rows) if row not in b.dropped)

    @property
    def mass_matrix(self) -> sp.ImmutableMatrix:
        """M (p x p) of the embedded equations M u_ind' = f, in terms of the intermediates."""
        return self.program.outputs["M"]

    @property
    def forcing(self) -> sp.ImmutableMatrix:
        """f (p,) of the embedded equations, in terms of the intermediates."""
        return self.program.outputs["f"]

    @property
    def qdot(self) -> sp.ImmutableMatrix:
        """q' (n_q,) = W u + X, in terms of the intermediates (dependent speeds among them)."""
        return self.program.outputs["qdot"]

    @property
    def intermediates(self) -> tuple:
        """The named intermediate quantities (symbol, expression) that M, f and q' use, in order."""
        return self.program.select(["M", "f", "qdot"]).assignments

    def explicit(self, name: str, full: bool = False) -> sp.Matrix:
        """An output with every intermediate substituted back (readable; small systems only)."""
        return (self.full_program if full else self.program).expression(name)

    def count_ops(self) -> dict:
        """Operation counts (seed 000 Table 3 categories) per evaluation of M, f, q' and of M and f together,
        and under "constants" the one-time work on parameters that M and f need."""
        p = self.program
        return {"M": p.count_ops(["M"]), "f": p.count_ops(["f"]), "qdot": p.count_ops(["qdot"]),
                "M+f": p.count_ops(["M", "f"]), "constants": p.count_ops(["M", "f"], constants=True)}

    def compile(self, backend: str | None = None):
        """A numeric :class:`kane.Dynamics` for these equations. ``backend``: "c" (compiled by the system C
        compiler, cached on disk), "numba" or "numpy"; the default is C when a compiler is found, else numba, else
        numpy, with one line (a :class:`kane.codegen.c_backend.BackendNotice` warning) saying which and why."""
        return KaneDynamics(self, backend)

    def to_sympy(self, substitute: bool = False):
        """M, f, q' and the constraint rows as sympy expressions: :func:`kane.to_sympy` (a SympyEquations)."""
        from .to_sympy import to_sympy
        return to_sympy(self, substitute)

    def linearize(self, *args, **kwargs):
        """Removed in kane 0.2 (CHANGELOG.md): linearize with the function ``kane.linearize(equations, q, u, ...)``
        (:func:`kane.analysis.linearize`); kane.symbolic sits below kane.analysis and may not call it."""
        raise KaneError("Equations.linearize(...) was removed in kane 0.2: call kane.linearize(equations, q, u, ...) "
                        "(kane.analysis.linearize) with the same arguments")

    # ---- readable forms ------------------------------------------------------------------------------------
    def _readable(self) -> Program:
        """M, f and q' for reading; where a user's name equals an intermediate's (a parameter called z3), the
        intermediates print as _z0, _z1, ... (user names cannot start with '_'), so the text is unambiguous."""
        prog = self.program.select(["M", "f", "qdot"])
        m = self.model
        users = {str(s) for s in (*m.q, *m.u, *m.parameters, *m.inputs)}
        own = [s for s, _ in prog.assignments if isinstance(s, KaneSymbol)]  # not the dependent speeds
        if not users & {str(s) for s in own}:
            return prog
        ren = {s: KaneSymbol(f"_{s}") for s in own}
        return Program(prog.inputs, tuple((ren.get(s, s), e.xreplace(ren)) for s, e in prog.assignments),
                       {k: v.xreplace(ren) for k, v in prog.outputs.items()}, prog.vectors)

    def to_text(self) -> str:
        prog = self._readable()
        lines = [f"# {self.model.name}: {len(self.u_independent)} degrees of freedom",
                 f"# q = {', '.join(map(str, self.model.q))}",
                 f"# u (independent) = {', '.join(map(str, self.u_independent))}"]
        if self.u_dependent:
            lines.append(f"# u (dependent) = {', '.join(map(str, self.u_dependent))}")
        lines.append(prog.assignment_text())
        for name in ("qdot", "M", "f"):
            m = prog.outputs[name]
            for idx, e in enumerate(m):
                r, c = divmod(idx, m.shape[1])
                label = f"{name}[{r}]" if m.shape[1] == 1 else f"{name}[{r},{c}]"
                if e != 0:
                    lines.append(f"{label} = {e}")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        prog = self._readable()
        rows = [f"{sp.latex(s)} &= {sp.latex(e)}" for s, e in prog.assignments]
        for name, tex in (("qdot", r"\dot{q}"), ("M", "M"), ("f", "f")):
            rows.append(f"{tex} &= {sp.latex(sp.Matrix(prog.outputs[name]))}")
        return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}\n"

    def to_json(self) -> str:
        prog = self._readable()
        counts = {k: vars(v) for k, v in self.count_ops().items()}
        return json.dumps({
            "model": self.model.name,
            "q": [str(s) for s in self.model.q],
            "u_independent": [str(s) for s in self.u_independent],
            "u_dependent": [str(s) for s in self.u_dependent],
            "parameters": {str(s): v for s, v in zip(self.model.parameters, self.model.parameter_defaults)},
            "assignments": [[str(s), str(e)] for s, e in prog.assignments],
            "outputs": {k: [[str(x) for x in row] for row in sp.Matrix(m).tolist()] for k, m in prog.outputs.items()},
            "operation_counts": counts,
        }, indent=1)


def reference_configuration(model: Model, seed: int = 7, spread: float = 0.6) -> np.ndarray:
    """A generic configuration near q0 (seeded), with unit quaternions: used to decide ranks and pivots."""
    rng = np.random.default_rng(seed)
    q = np.array(model.q0, dtype=float) + rng.normal(0.0, spread, model.n_q)
    return model.normalize_quaternions(q)


def derive(system: System | Model, *, dependent=None, embedding: Embedding = Embedding.RECOMBINATION,
           reference_q=None, redundant: Redundant | str = Redundant.ERROR,
           immobile: Immobile | str = Immobile.ERROR) -> Equations:
    """Derive the equations of motion of ``system`` by Kane's method, permanent constraints embedded.

    dependent: names of the dependent speeds (default: chosen automatically at the reference configuration,
    the model's q0, falling back to a generic configuration where q0 is singular). embedding: see
    :class:`Embedding`. redundant: see :class:`Redundant` (permanent constraint rows that depend on the others
    at a generic configuration near q0 are refused, or dropped with a warning naming them). immobile: see
    :class:`Immobile` (permanent constraints that leave no independent speed). A q0 declared by the system's joints
    that violates a permanent holonomic constraint is named in an :class:`InconsistentInitialStateWarning`. Raises
    :class:`kane.ModelError` for a bad description or dependent-speed choice.
    """
    model = system.compile() if isinstance(system, System) else system
    if not isinstance(model, Model):
        raise ModelError(f"derive: expected a kane.System or kane.Model, got {type(system).__name__}")
    if not isinstance(embedding, Embedding):
        raise ModelError(f"derive: embedding must be a kane.Embedding, got {embedding!r}")
    immobile = Immobile.parse(immobile)
    groups = {"t": (model.t,), "q": model.q, "u": model.u, "params": model.parameters, "inputs": model.inputs}
    if model.n_u == 0:
        raise ModelError(_ZERO_DOF.format(model.name))
    b = ProgramBuilder(groups)
    original, model = model, model.name_constants(b.assign)  # an expression of parameters: one symbol
    kin = TreeKinematics(model, b)
    M_full, f_full = recursive_mass_forcing(model, kin)
    u_all = sp.Matrix(model.u)

    rows = [constraint_rows(model, kin, c) for c in model.constraints]
    permanent = [r for r, c in zip(rows, model.constraints) if not c.transient]
    n = model.n_u
    A_all = sp.Matrix.vstack(*[r.A for r in rows]) if rows else sp.zeros(0, n)
    b_all = sp.Matrix.vstack(*[r.b for r in rows]) if rows else sp.zeros(0, 1)
    biases = [constraint_bias(model, kin, c, r) for r, c in zip(rows, model.constraints)]
    bias_all = sp.Matrix([e for rb in biases for e in rb])
    holo = [r.C for r in rows if r.C is not None]
    C_all = sp.Matrix.vstack(*holo) if holo else sp.zeros(0, 1)
    offsets = np.cumsum([0] + [r.A.shape[0] for r in rows])
    c_offsets = np.cumsum([0] + [len(r.C_rows) for r in rows])
    C_row_index = [int(offsets[k]) + j for k, r in enumerate(rows) if r.C is not None for j in r.C_rows]
    A_C = A_all.extract(C_row_index, list(range(n))) if C_row_index else sp.zeros(0, n)

    choice = None
    u_dep_defs, dep_pivots = {}, []
    C_map, c_acc = sp.eye(n), sp.zeros(n, 1)
    indep = tuple(range(n))
    if permanent:
        A_p = sp.Matrix.vstack(*[r.A for r in permanent])
        b_p = sp.Matrix.vstack(*[r.b for r in permanent])
        choice = _choose(model, b, A_p, dependent, reference_q)
        labels = [(c.name, j) for r, c in zip(rows, model.constraints) if not c.transient for j in range(r.A.shape[0])]
        if immobile is Immobile.ERROR:
            _check_movable(model, choice, labels)
        _check_redundant(choice, [f"{name!r} row {j}" for name, j in labels], Redundant.parse(redundant))
        if choice.dependent:
            indep, dep, sel = choice.independent, choice.dependent, list(choice.rows)
            A_d = A_p.extract(sel, list(dep))
            rhs = sp.Matrix.hstack(-A_p.extract(sel, list(indep)), -b_p.extract(sel, [0]))
            bias_rows = [e for rb, c in zip(biases, model.constraints) if not c.transient for e in rb]
            bias_p = sp.Matrix([bias_rows[k] for k in sel])
            X, dep_pivots = solve_dependent(b, A_d, sp.Matrix.hstack(rhs, -bias_p), choice.pivots)
            p = len(indep)
            C_map = sp.zeros(n, p)
            for k, col in enumerate(indep):
                C_map[col, k] = 1
            for r, col in enumerate(dep):
                C_map[col, :] = X[r, :p]
                c_acc[col] = X[r, p + 1]
                u_dep_defs[model.u[col]] = b.assign(sum_products([(X[r, k], model.u[indep[k]]) for k in range(p)])
                                                    + X[r, p])
    dropped = {} if choice is None else _dropped_rows(choice, labels)
    layout = {c.name: RowBlock(slice(int(offsets[k]), int(offsets[k + 1])),
                               slice(int(c_offsets[k]), int(c_offsets[k + 1])) if rows[k].C is not None else None,
                               c.transient, tuple(rows[k].C_rows) if rows[k].C is not None else (),
                               dropped.get(c.name, ())) for k, c in enumerate(model.constraints)}
    if isinstance(system, System) and any(e.q0 is not None for e in system._joints):
        _check_start(model, b, C_all, layout)
    if not u_dep_defs:
        M, f = M_full, f_full
    elif embedding is Embedding.RECOMBINATION:
        M, f = _recombine(b, M_full, f_full, C_map, c_acc)
    else:
        M, f = explicit_generalized_forces(model, kin, C_map, c_acc)
    zero_rows = [str(model.u[indep[k]]) for k in range(M.shape[0]) if M[k, k] == 0]
    if zero_rows:
        raise ModelError(f"speeds {', '.join(zero_rows)} move no mass (the mass matrix has a zero diagonal "
                         "entry): give the bodies they move mass and inertia, or remove the degree of freedom "
                         "(e.g. a particle needs no rotational joint)")
    kinetic, potential = energy_expressions(model, kin)
    qdot = sp.Matrix(kin.qdot)
    u_ind = tuple(model.u[k] for k in indep)
    energy_out = {"kinetic": [kinetic]}
    if potential is not None:
        energy_out["potential"] = [potential]
        energy_out["power"] = [nonconservative_power(model, kin)]
    vec = list
    embedded_outputs = {"M": M, "f": vec(f), "qdot": vec(qdot), "u_full": vec(u_all), "C": vec(C_all),
                        "constraint_residual": [b.assign(sum_products([(A_all[r, c], u_all[c]) for c in range(n)])
                                                         + b_all[r]) for r in range(A_all.shape[0])],
                        "dependent_pivots": dep_pivots, **energy_out}
    full_outputs = {"M": M_full, "f": vec(f_full), "qdot": vec(qdot), "A": A_all, "b": vec(b_all),
                    "A_bias": vec(bias_all), "C": vec(C_all), "A_C": A_C, "W": kin.W_full, **energy_out}
    program = b.build(embedded_outputs, inputs={"u": u_ind}, definitions=u_dep_defs)
    full_program = b.build(full_outputs)
    return Equations(original, program, full_program, u_ind, tuple(u_dep_defs), choice,
                     tuple(c.name for c in model.constraints),
                     tuple(c.name for c in model.constraints if c.transient), potential is not None, layout)


_ZERO_DOF = ("model {!r} has zero degrees of freedom (every joint a weld, or every speed fixed): it has no "
             "equations of motion to derive; give a joint a degree of freedom")


def _dropped_rows(choice: EmbeddingChoice, labels: list) -> dict:
    """name -> rows of that constraint (0 = its first) left out of the embedding as redundant."""
    dropped = {}
    for k, (name, j) in enumerate(labels):
        if k not in choice.rows:
            dropped[name] = dropped.get(name, ()) + (j,)
    return dropped


def _check_movable(model: Model, choice: EmbeddingChoice, labels: list) -> None:
    """Refuse permanent constraints that leave no independent speed: nothing could move (checked before the
    redundant rows, which dropping would not make movable; they are named too)."""
    if choice.independent:
        return
    names = list(dict.fromkeys(labels[k][0] for k in choice.rows))
    extra = [f"{labels[k][0]!r} row {labels[k][1]}" for k in range(len(labels)) if k not in choice.rows]
    besides = f"; besides, constraint rows {', '.join(extra)} are redundant" if extra else ""
    raise DerivationError(
        f"model {model.name!r}: the permanent constraints {', '.join(map(repr, names))} leave no independent speed "
        f"({len(choice.rows)} independent constraint row(s) on the {model.n_u} speed(s) "
        f"{', '.join(map(str, model.u))}): nothing can move{besides}; remove a constraint or give the bodies the "
        "freedom to satisfy it (a disk needs a degree of freedom to roll along its plane), or derive a mode that "
        "holds everything with immobile='allow'")


def _check_start(model: Model, builder, C_all, layout: dict, tol: float = 1e-9) -> None:
    """Warn, naming each permanent holonomic constraint and its residual, where the declared q0 violates it."""
    blocks = {name: blk.holonomic for name, blk in layout.items() if blk.holonomic is not None and not blk.transient}
    if not blocks:
        return
    fn = compile_program(builder.build({"C": C_all}), ["C"])
    try:
        with np.errstate(all="ignore"):
            C = fn(0.0, np.array(model.q0, dtype=float), np.array(model.u0, dtype=float), model.parameter_values(),
                   model.input_values())[0]
    except ArithmeticError:  # a q0 where a residual cannot be evaluated (named where the run starts)
        return
    off = {name: float(np.max(np.abs(C[rows]))) for name, rows in blocks.items()}
    off = {name: r for name, r in off.items() if not r <= tol}
    if off:
        warnings.warn(f"model {model.name!r}: the declared initial configuration q0 violates the holonomic "
                      f"constraint(s) {', '.join(f'{n!r} (max |C(q0)| = {r:.3g})' for n, r in off.items())}; "
                      "kane.assemble(dyn, t, q0) gives the nearest consistent q0", InconsistentInitialStateWarning,
                      stacklevel=3)


def _check_redundant(choice: EmbeddingChoice, labels: list, redundant: Redundant) -> None:
    """Refuse (or drop with a warning) the permanent rows that the rank decision left out."""
    dropped = [labels[k] for k in range(len(labels)) if k not in choice.rows]
    if not dropped:
        return
    what = (f"constraint rows {', '.join(dropped)} are redundant: they depend linearly on the other "
            f"{len(choice.rows)} row(s) of the permanent constraints at a generic configuration near q0 (a multiple "
            "of another row, or zero at every configuration)")
    if redundant is Redundant.ERROR:
        raise DerivationError(f"{what}; remove them, or derive with redundant='drop' to drop them with a warning")
    warnings.warn(f"{what}; dropped (their multipliers are reported as NaN)", RedundantConstraintWarning,
                  stacklevel=3)


def _recombine(b, M, f, C, c_acc):
    """F~ = C^T (f - M c_acc) and M~ = C^T M C: the recombination of seed 000 Eqs. (44)-(45)."""
    n, p = C.shape
    MC = sp.Matrix(n, p, [b.assign(sum_products([(M[r, k], C[k, s]) for k in range(n)]))
                          for r in range(n) for s in range(p)])
    Mt = sp.zeros(p, p)
    for r in range(p):
        for s in range(r, p):
            Mt[r, s] = Mt[s, r] = b.assign(sum_products([(C[k, r], MC[k, s]) for k in range(n)]))
    rest = [b.assign(f[r] - b.assign(sum_products([(M[r, k], c_acc[k]) for k in range(n)]))) for r in range(n)]
    ft = sp.Matrix([b.assign(sum_products([(C[k, r], rest[k]) for k in range(n)])) for r in range(p)])
    return Mt, ft


def _choose(model, builder, A_p, dependent, reference_q) -> EmbeddingChoice:
    """Numeric constraint matrices at q0 and at a generic configuration, then the dependent-speed choice."""
    prog = builder.build({"A": A_p})
    fn = compile_program(prog, ["A"])
    params = model.parameter_values()
    inputs = model.input_values()
    u0 = np.array(model.u0, dtype=float)
    q_ref = np.array(model.q0 if reference_q is None else reference_q, dtype=float)
    A_gen = fn(0.0, reference_configuration(model), u0, params, inputs)[0]
    try:
        with np.errstate(all="raise"):
            A_ref = fn(0.0, q_ref, u0, params, inputs)[0]
    except (ArithmeticError, ValueError):  # a singular q0 (SingularStateError, floating-point errors)
        A_ref = A_gen
    if not np.all(np.isfinite(A_ref)):
        A_ref = A_gen
    names = [str(u) for u in model.u]
    try:
        return select_dependent(A_ref, names, dependent, A_gen, keep_first=True)
    except KaneError:
        if dependent is not None:
            raise
        return select_dependent(A_gen, names, None, A_gen, keep_first=True)
