"""``kane.dynamics``: one entry to a numeric dynamics object, Kane's explicit equations or a recursive algorithm.

Kane's explicit equations (:func:`kane.derive`, seed 000) give the cheapest u' for small systems: a few
microseconds for a handful of bodies. Their mass matrix is dense and its LDL^T solve costs n^3 / 6, so for long
chains the recursive articulated-body algorithm (seed 001 §3.3.1, O(n), traced into the same Program IR and
compiled by the same backend) is cheaper to build and to evaluate. Measured through the C backend on the n-link
spherical-joint chain in one run (bench/bench_memory_c.py, issue 12), u' in us, Kane / ABA: 3.2 / 4.3 at 5 links
(15 DOF), 4.6 / 5.0 at 7, 5.6 / 5.3 at 8, 8.1 / 6.2 at 10, 41 / 10 at 20; from 8 links on the ABA is also the
cheaper to build. ``formulation="auto"`` therefore takes the ABA from :data:`AUTO_RECURSIVE_FROM_DOF` degrees of
freedom on, and Kane's equations below that and whenever permanent constraints must be embedded (the recursive
algorithms take unconstrained trees). The object says which it is (``.formulation``) and why
(``.formulation_choice``).

A recursive formulation is evaluated by the generic compiled kernel (:mod:`kane.algorithms.kernel`: one C library
for every model, so ready at once; the traced C ABA of a 30-link chain took 6.6 s to its first u', of a 100-link
chain 27 s) when the kernel models the whole tree, and by the traced program when asked for by backend or when
the kernel does not model a load or constraint of the tree (see ``_recursive`` for why a cached traced library
does not change the choice).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

from ..algorithms.kane_matrix import KaneMatrixDynamics
from ..algorithms.kernel import KernelDynamics, kernel_support
from ..algorithms.noc import NOCDynamics
from ..algorithms.recursive import RecursiveDynamics
from ..codegen.c_backend import BackendNotice, select_backend
from ..codegen.c_cache import CCompileError
from ..options import Formulation
from ..errors import ArgumentError, ModelError
from ..model.model import Model
from ..model.system import System
from .derive import Equations, derive

__all__ = ["Formulation", "FormulationChoice", "AUTO_RECURSIVE_FROM_DOF", "choose_formulation", "dynamics"]

#: ``formulation="auto"`` takes the recursive ABA for unconstrained trees with at least this many degrees of
#: freedom (8 spherical links: the crossover measured through the C backend, issue 12)
AUTO_RECURSIVE_FROM_DOF = 24


@dataclass(frozen=True)
class FormulationChoice:
    """The formulation taken for a model: ``formulation`` (KANE, ABA or CRBA), the one ``requested`` (AUTO
    included), the model's size (``n_bodies``, ``n_u`` degrees of freedom, ``n_permanent`` permanent
    constraints) and ``reason``, one sentence."""

    formulation: Formulation
    requested: Formulation
    n_bodies: int
    n_u: int
    n_permanent: int
    reason: str


def choose_formulation(model: Model | System, formulation: Formulation | str = Formulation.AUTO) -> FormulationChoice:
    """The formulation for ``model``: the one asked for, or for AUTO Kane's explicit equations where permanent
    constraints must be embedded or the model has fewer than :data:`AUTO_RECURSIVE_FROM_DOF` degrees of freedom,
    else the ABA. Counts only (bodies, speeds, constraints): nothing is derived or timed. Raises
    :class:`kane.ModelError` for a recursive formulation of a model with permanent constraints."""
    model = _model(model)
    requested = Formulation.parse(formulation)
    permanent = [c.name for c in model.constraints if not c.transient]
    size = dict(n_bodies=model.n_bodies, n_u=model.n_u, n_permanent=len(permanent))
    if requested is not Formulation.AUTO:
        if permanent and requested is not Formulation.KANE:
            raise ModelError(f"model {model.name!r}: formulation {requested.value!r} takes unconstrained trees, but "
                             f"the model declares permanent constraint(s) {', '.join(map(repr, permanent))}; use "
                             "formulation='kane' (or 'auto') to embed them, or declare them transient=True")
        return FormulationChoice(requested, requested, **size, reason="asked for")
    if permanent:
        return FormulationChoice(Formulation.KANE, requested, **size, reason=(
            f"permanent constraints ({', '.join(permanent)}) are embedded by Kane's method only"))
    if model.n_u < AUTO_RECURSIVE_FROM_DOF:
        return FormulationChoice(Formulation.KANE, requested, **size, reason=(
            f"{model.n_u} degrees of freedom (< {AUTO_RECURSIVE_FROM_DOF}): Kane's explicit equations give the "
            "cheaper u'"))
    return FormulationChoice(Formulation.ABA, requested, **size, reason=(
        f"{model.n_u} degrees of freedom (>= {AUTO_RECURSIVE_FROM_DOF}): the O(n) ABA is cheaper to build and to "
        "evaluate than the dense explicit mass matrix"))


def dynamics(system: Model | System | Equations, formulation: Formulation | str = Formulation.AUTO, *,
             backend: str | None = None, **derive_options):
    """A numeric dynamics object of ``system`` with the interface of :class:`kane.Dynamics` (``qdot``, ``udot``,
    ``rhs``, ``mass_matrix`` (n_u, n_u), ``forcing`` (n_u,), ``kinetic_energy``, ``potential_energy``,
    ``energy`` [J], ``constraints``; q (n_q,), u (n_u,), or batches with a leading axis).

    ``system``: a :class:`kane.System`, a :class:`kane.Model`, or :class:`kane.Equations` already derived (then
    the formulation is Kane's, "kane" or "auto", and the equations are compiled with ``backend``).

    formulation: :class:`kane.Formulation` (or its value): "kane" (:func:`kane.derive` then
    :meth:`Equations.compile`), "aba" or "crba" (:class:`kane.algorithms.RecursiveDynamics`; for backend None or "kernel" the generic
    compiled kernel :class:`kane.algorithms.kernel.KernelDynamics`, no per-model C build, where it models the whole
    tree), "noc"
    (:class:`kane.algorithms.NOCDynamics`), "kane_matrix" (:class:`kane.algorithms.KaneMatrixDynamics`), "auto"
    (see :func:`choose_formulation`). backend: "c", "numba", "numpy" or None (C when a compiler is found, else
    numba, else numpy, with one :class:`BackendNotice` line). ``derive_options`` (dependent, embedding,
    reference_q, redundant) go to :func:`kane.derive` and are refused by the recursive formulations and for
    derived equations. The returned object has ``formulation`` (the :class:`Formulation` taken) and
    ``formulation_choice`` (a :class:`FormulationChoice`).
    """
    if isinstance(system, Equations):
        return _compiled_equations(system, formulation, backend, derive_options)
    model = _model(system)
    choice = choose_formulation(model, formulation)
    if choice.formulation is Formulation.KANE:
        dyn = derive(model, **derive_options).compile(backend)
    else:
        if derive_options:
            raise ArgumentError(f"dynamics: {', '.join(sorted(derive_options))} are options of kane.derive; the "
                                f"{choice.formulation.value!r} formulation takes none")
        if choice.formulation in (Formulation.ABA, Formulation.CRBA):
            dyn, how = _recursive(model, choice.formulation, backend)
            choice = replace(choice, reason=f"{choice.reason}; {how}")
        else:
            chosen, notice = select_backend(backend)
            if notice:
                warnings.warn(notice, BackendNotice, stacklevel=2)
            cls = NOCDynamics if choice.formulation is Formulation.NOC else KaneMatrixDynamics
            dyn = cls(model, backend=chosen)
    dyn.formulation, dyn.formulation_choice = choice.formulation, choice
    return dyn


def _compiled_equations(eqs: Equations, formulation, backend, derive_options):
    """:func:`dynamics` of equations already derived: Kane's, compiled with ``backend``."""
    requested = Formulation.parse(formulation)
    if requested not in (Formulation.KANE, Formulation.AUTO):
        raise ArgumentError(f"dynamics: formulation {requested.value!r} of the derived equations of "
                            f"{eqs.model.name!r}: derived equations are Kane's; pass formulation='kane' or 'auto', "
                            f"or pass the kane.System / kane.Model for the {requested.value!r} formulation")
    if derive_options:
        raise ArgumentError(f"dynamics: {', '.join(sorted(derive_options))} are options of kane.derive; the "
                            f"equations of {eqs.model.name!r} are derived already")
    model = eqs.model
    permanent = [c.name for c in model.constraints if not c.transient]
    choice = FormulationChoice(Formulation.KANE, requested, n_bodies=model.n_bodies, n_u=model.n_u,
                               n_permanent=len(permanent), reason="derived equations given: Kane's, compiled")
    dyn = eqs.compile(backend)
    dyn.formulation, dyn.formulation_choice = choice.formulation, choice
    return dyn


def _recursive(model: Model, method: Formulation, backend: str | None):
    """(dynamics, why this path) for a recursive formulation: the generic compiled kernel for backend None or
    "kernel" when it models the whole tree, else the traced program (backend "c", "numba", "numpy", or what the
    kernel does not model, named). Build time decides: a traced program takes seconds to trace even when its C
    library is cached (30 / 100-link chains: 2.6 / 4.0 s here), for a u' no faster than the kernel's (20.9 / 32.7
    us against 14.5 / 35.5 us, same run), so the kernel is taken whether or not that library is cached."""
    why = kernel_support(model) if backend in (None, "auto", "kernel") else None
    if backend in (None, "auto", "kernel") and why is None:
        try:
            return KernelDynamics(model, method), "generic compiled kernel: ready at once, no per-model C build"
        except CCompileError as exc:
            why = f"the kernel needs a C compiler ({exc})"
    chosen, notice = select_backend(None if backend in ("auto", "kernel") else backend)
    if notice:
        warnings.warn(notice, BackendNotice, stacklevel=3)
    return RecursiveDynamics(model, method, backend=chosen), f"traced {chosen} program" + (f": {why}" if why else "")


def _model(system) -> Model:
    model = system.compile() if isinstance(system, System) else system
    if not isinstance(model, Model):
        raise ModelError(f"dynamics: expected a kane.System, kane.Model or kane.Equations, got "
                         f"{type(system).__name__}")
    return model
