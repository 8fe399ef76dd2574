"""The layout of DESIGN.md: packages import only packages below them, and no module imports itself in a circle.

The import graph is read from the source with ``ast`` (every import statement, also those inside functions), so a
circle hidden behind a function-local import is found too.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "kane"

# DESIGN.md's layout, top to bottom; a package may import only the packages after it (and itself). ``command_group``
# (the kane command's click group) and ``model_reference`` (the model-file reference) sit beside cli; ``studies``
# (seed 001's experiments, run by ``kane study``) sits just below the command line; ``options`` and ``joints``
# (a re-export of model.joints) sit beside model, spatial and errors; ``lazy`` (the packages' lazy exports) at the
# bottom; a tuple is one layer.
LAYERS = [
    ("cli", "command_group", "run_command", "model_reference"),
    ("studies",),
    ("viz",),
    ("sweep",),
    ("realtime",),
    ("switching",),
    ("simulate",),
    ("analysis",),
    ("io",),
    ("symbolic",),
    ("algorithms",),
    ("surfaces",),
    ("mechanics",),
    ("codegen",),
    ("model", "joints"),
    ("spatial", "errors", "options", "lazy", "protocol", "jit"),
]
RANK = {name: depth for depth, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    parts = ["kane", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py")}


def _imports(module: str, path: Path, known) -> set[str]:
    """The kane modules that ``module`` imports (a ``from pkg import name`` of a submodule counts as that module)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("kane"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("kane"):
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & known
            out.update(subs or {target})
            if subs != {f"{target}.{a.name}" for a in node.names}:
                out.add(target)
    return {m for m in out if m != module}


def _graph():
    modules = _modules()
    return {m: _imports(m, p, set(modules)) for m, p in modules.items()}


def _layer(module: str):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_the_layout_has_the_packages_of_design_md():
    for name in ("mechanics", "switching", "simulate", "io", "symbolic", "algorithms", "codegen", "model", "viz"):
        assert (SRC / name / "__init__.py").is_file(), name
    assert (SRC / "io" / "trajectory.py").is_file() and not (SRC / "simulate" / "trajectory.py").exists()
    assert not (SRC / "simulate" / "switching.py").exists() and (SRC / "switching" / "online.py").is_file()


def test_packages_import_only_packages_below_them():
    graph = _graph()
    unknown = sorted({_layer(m) for m in graph if _layer(m) and _layer(m) not in RANK})
    assert not unknown, f"packages not placed in the layout: {unknown}"
    upward = []
    for module, targets in graph.items():
        src = _layer(module)
        if src is None:  # kane/__init__.py exports the public API
            continue
        for target in targets:
            dst = _layer(target)
            if dst is None or dst == src:
                continue
            if RANK[dst] < RANK[src]:
                upward.append(f"{module} -> {target}")
    assert not upward, "imports that point up in DESIGN.md's layout:\n" + "\n".join(sorted(upward))


def test_no_import_cycles_among_modules():
    graph = _graph()
    # Tarjan's strongly connected components; any component of more than one module is a circle
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_every_module_is_short_and_declares_its_exports(path):
    text = path.read_text()
    assert len(text.splitlines()) <= 520, f"{path.name}: {len(text.splitlines())} lines"
    if path.name != "__main__.py":
        assert "__all__" in text, f"{path.relative_to(SRC)} has no __all__"


def test_the_checker_sees_an_upward_import(tmp_path):
    """The graph reader finds relative and absolute imports, including those inside functions."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ..switching import online\nimport kane.io.trajectory\n")
    got = _imports("kane.simulate.m", module, {"kane.switching.online", "kane.io.trajectory"})
    assert got == {"kane.switching.online", "kane.io.trajectory"}
