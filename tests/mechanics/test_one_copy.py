"""One copy of each shared algorithm (issue 28 item 4), read from the source with ``ast``: the composite-inertia sum,
the inward walk that forms the joint-space inertia, the Newton-Euler body force and the traced L^T D L
factorization each stand in one function, which Kane's method and the recursive algorithms import; the vector
helpers of mechanics/, codegen/ and algorithms/ have one meaning per name."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "kane"


def _functions(tree):
    """(qualified name, node) of every function of a module, methods as Class.method."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    return out


def _callee(call):
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)


def _calls(node):
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def is_inward_walk(fn) -> bool:
    """A loop walking from a body towards the root that carries a force to each parent (X^T F)."""
    return any(isinstance(w, ast.While) and any(_callee(c) == "force_to_parent" for c in _calls(w))
               for w in ast.walk(fn))


def is_force_gather(fn) -> bool:
    """A pass over the bodies (a for loop) that carries each body's force to its parent (X^T F): not a walk."""
    in_walks = {id(c) for w in ast.walk(fn) if isinstance(w, ast.While) for c in _calls(w)}
    return any(isinstance(loop, ast.For) and any(_callee(c) == "force_to_parent" and id(c) not in in_walks
                                                 for c in _calls(loop)) for loop in ast.walk(fn))


def is_composite_sum(fn) -> bool:
    """Ic_parent = Ic_parent + X^T Ic_child X: a ``plus`` whose argument carries an inertia to the parent."""
    return any(_callee(c) == "plus" and any(_callee(d) == "to_parent" for a in c.args for d in _calls(a))
               for c in _calls(fn))


def is_newton_euler_force(fn) -> bool:
    """I a + v x* I v: an inertia applied to vectors (``apply``, ``imul``) and the force cross product (``crf``,
    the helper of kane.mechanics.kinematics) of the velocity and the momentum."""
    calls = _calls(fn)
    return (any(isinstance(c.func, ast.Name) and c.func.id == "crf" for c in calls)
            and any(_callee(c) in ("apply", "apply_inertia", "imul") for c in calls))


def _loop_depth(node, depth=0) -> int:
    inner = [_loop_depth(c, depth + isinstance(c, (ast.For, ast.While))) for c in ast.iter_child_nodes(node)]
    return max(inner + [depth])


def is_elimination(fn) -> bool:
    """A factorization: the reciprocal of a pivot, 1 / A[k][k], formed in a loop that holds another loop."""
    return any(isinstance(loop, (ast.For, ast.While)) and _loop_depth(loop) >= 1 and any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and isinstance(n.left, ast.Constant)
        and n.left.value == 1 and isinstance(n.right, ast.Subscript) for n in ast.walk(loop)) for loop in ast.walk(fn))


def _where(predicate) -> set[str]:
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        for name, fn in _functions(ast.parse(path.read_text(), str(path))):
            if predicate(fn):
                found.add(f"{path.relative_to(SRC).as_posix()}:{name}")
    return found


# the second copies this change removed: symbolic/kane.py's _bias_forces and recursive_mass_forcing (its passes)
_OLD_COPY = '''
def _bias_forces(model, kin, inertias, f_applied):
    out = []
    for i in range(model.n_bodies):
        I = inertias[i]
        Ia = I.apply(kin.b, kin.acc[i])
        Iv = I.apply(kin.b, kin.vel[i])
        vIv = crf(kin.vel[i], Iv)
        out.append([kin.b.assign(Ia[k] + vIv[k] - f_applied[i][k]) for k in range(6)])
    return out


def recursive_mass_forcing(model, kin):
    for i in reversed(range(nb)):
        p = model.parent[i]
        if p >= 0:
            Fp = kin.force_to_parent(i, F[i])
            F[p] = [b.assign(x + y) for x, y in zip(F[p], Fp)]
            Ic[p] = Ic[p].plus(b, Ic[i].to_parent(b, kin.R_pc[i], kin.r_pc[i]))
    for i, pj in enumerate(model.joints):
        for k, col in enumerate(cols):
            force = Ic[i].apply(b, list(kin.S[i][:, k]))
            body = i
            while body >= 0:
                parent = model.parent[body]
                if parent >= 0:
                    force = kin.force_to_parent(body, force)
                body = parent
'''

# and algorithms/aba.py's second, left-looking factorization
_OLD_LDL = '''
class LDL:
    def __init__(self, b, D):
        self.b, n = b, len(D)
        self.n = n
        L = [[ZERO] * n for _ in range(n)]
        self.L, self.d_inv = L, [ZERO] * n
        d = [ZERO] * n
        for j in range(n):
            d[j] = b.assign(D[j][j] - dot([L[j][k] ** 2 for k in range(j)], d[:j]))
            self.d_inv[j] = b.assign(1 / d[j])
            for i in range(j + 1, n):
                s = D[i][j] - dot([L[i][k] * L[j][k] for k in range(j)], d[:j])
                L[i][j] = b.assign(s * self.d_inv[j])
'''


def test_the_detectors_find_the_removed_copies():
    funcs = dict(_functions(ast.parse(_OLD_COPY)))
    assert is_inward_walk(funcs["recursive_mass_forcing"]) and is_composite_sum(funcs["recursive_mass_forcing"])
    assert is_force_gather(funcs["recursive_mass_forcing"])
    assert is_newton_euler_force(funcs["_bias_forces"]) and not is_inward_walk(funcs["_bias_forces"])
    assert is_elimination(dict(_functions(ast.parse(_OLD_LDL)))["LDL.__init__"])


def test_one_composite_inertia_sum_and_one_inward_walk():
    assert _where(is_composite_sum) == {"mechanics/composite.py:composite_pass"}
    assert _where(is_inward_walk) == {"mechanics/composite.py:joint_inertia_columns"}


def test_one_subtree_force_pass():
    # ABA carries articulated-body bias forces p^a, formed with the articulated inertias in the same pass
    assert _where(is_force_gather) == {"mechanics/composite.py:composite_pass", "algorithms/aba.py:trace_aba"}


def test_one_newton_euler_body_force():
    assert _where(is_newton_euler_force) == {"mechanics/composite.py:newton_euler_force"}


def test_one_symmetric_factorization():
    # LTDL is the one L^T D L; symbolic/embedding.py eliminates the non-symmetric dependent block in a pivot order
    assert _where(is_elimination) == {"algorithms/crba.py:LTDL.__init__", "symbolic/embedding.py:solve_dependent"}


def _imported(path: Path) -> dict[str, set[str]]:
    out = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.setdefault(node.module.rsplit(".", 1)[-1] if node.level else node.module, set()).update(
                a.name for a in node.names)
    return out


def test_kane_and_the_recursive_algorithms_call_the_shared_passes():
    uses = {"symbolic/kane.py": {"composite_pass", "joint_inertia_columns", "newton_euler_force"},
            "algorithms/crba.py": {"composite_pass", "joint_space_inertia"},
            "algorithms/rnea.py": {"composite_pass"},
            "algorithms/trace.py": {"newton_euler_force"}}
    for rel, names in uses.items():
        tree = ast.parse((SRC / rel).read_text())
        assert names <= _imported(SRC / rel).get("composite", set()), rel
        called = {_callee(c) for c in _calls(tree)}
        assert names <= called, f"{rel} imports but does not call {names - called}"
    for rel in ("algorithms/aba.py", "algorithms/noc.py", "algorithms/kane_matrix.py"):
        assert "LTDL" in _imported(SRC / rel).get("crba", set()), rel


def test_vector_helpers_have_one_meaning_per_name():
    """No two modules of mechanics/, codegen/ and algorithms/ define a public top-level function of one name (two
    ``dot`` of different meaning were the case: a canonical 3-vector product and a traced one of any length)."""
    seen = {}
    for package in ("mechanics", "codegen", "algorithms"):
        for path in sorted((SRC / package).glob("*.py")):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                    seen.setdefault(node.name, []).append(f"{package}/{path.name}")
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}
    assert "dot" not in seen and "sdot" not in seen
