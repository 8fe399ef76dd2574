"""The model-file declarations (kane.io.model_schema) against the readers and the reference: every declared key is
read by its reader (or refused for its value, by name), an undeclared key is refused naming the table and the key,
a required key is required, every key of the examples is declared, and the reference lists every table and key
and is the page committed in docs/reference/model-file.md."""

import tomllib
from pathlib import Path

import pytest
import trimesh

from kane.io.model_file import ModelFileError, load_model
from kane.io.model_surfaces import contacts_of, surfaces_of
from kane.io.model_tables import TOP_TABLES
from kane.model_reference import render_reference, table_specs
from kane.realtime.command import _DEFAULTS as REALTIME_DEFAULTS
from kane.realtime.model_table import realtime_settings
from kane.switching.model_table import switching_rules
from kane.viz.visuals import model_visuals

ROOT = Path(__file__).resolve().parents[2]
SPECS = table_specs()
READERS = {"realtime": realtime_settings, "visuals": model_visuals, "surfaces": surfaces_of, "contacts": contacts_of,
           "switching": switching_rules}


def _base(table: str) -> str:
    """A small model (bodies B, C; joints hinge (ground-B) and slide (B-C, coordinate s, speed v); a transient
    lock c1 on slide) with what the items of ``table`` refer to (a joint for body D, surfaces for contacts); the item
    under test is appended."""
    parts = [] if table == "model" else ['[model]\nname = "probe"\ngravity = [0, 0, "-g"]']
    parts += ["[parameters]\ng = 9.81\ntau0 = 1.0", "[inputs]\nF = 0.0"]
    parts += [f'[[bodies]]\nname = "{b}"\nmass = 1.0\ninertia = [0.1, 0.1, 0.1]' for b in "BC"]
    parts.append('[[joints]]\nname = "hinge"\nparent = "ground"\nchild = "B"\ntype = "revolute"\naxis = "y"')
    if table != "joints":
        parts.append('[[joints]]\nname = "slide"\nparent = "B"\nchild = "C"\ntype = "prismatic"\n'
                     'coordinates = ["s"]\nspeed_names = ["v"]')
        parts.append('[[constraints]]\nname = "c1"\ntype = "joint_lock"\njoint = "slide"\ntransient = true')
    if table == "bodies":  # the body under test, D, on a joint
        parts.append('[[joints]]\nname = "pin"\nparent = "B"\nchild = "D"\ntype = "revolute"')
    if table == "simulation":  # a permanent constraint, so that a speed may be dependent
        parts.append('[[constraints]]\nname = "c0"\ntype = "motion"\nrows = ["v - u_hinge"]')
    if table == "contacts":
        parts.append('[[surfaces]]\nname = "ball"\nbody = "C"\nprimitive = "sphere"\nradius = 0.5')
        parts.append('[[surfaces]]\nname = "floor"\nbody = "ground"\nprimitive = "plane"')
    return "\n\n".join(parts)


def _item(spec, kind, extra=(), drop=()) -> str:
    """The text of one ``spec`` table of ``kind`` with its required keys' examples, the keys ``extra`` and without
    the keys ``drop``."""
    lines = [] if kind is None else [f'{spec.kind_key} = "{kind}"']
    keys = [k for k in spec.keys_for(kind) if k.required and k.name != spec.kind_key] + list(extra)
    seen = set()
    for k in keys:
        if k.name not in seen and k.name not in drop and k.name != spec.kind_key:
            lines.append(f"{k.name} = {k.example}")
            seen.add(k.name)
    return "\n".join(lines)


def _load(tmp_path, spec, item: str):
    trimesh.creation.box().export(tmp_path / "part.stl")
    path = tmp_path / "probe.toml"
    path.write_text(_base(spec.name) + f"\n\n{spec.title}\n" + item + "\n", encoding="utf-8")
    loaded = load_model(path)
    if spec.name in READERS:
        READERS[spec.name](loaded)
    return loaded


def _cases():
    """(table, kind, key) for every declared key (kind None for a table without kinds)."""
    for spec in SPECS.values():
        if spec.any_key is not None:
            continue
        for kind in spec.kind_names() or (None,):
            for key in spec.keys_for(kind):
                yield spec.name, kind, key.name


CASES = list(_cases())
# keys whose example cannot be right for every kind: a single coordinate's names and values on a joint of more
# than one coordinate are refused for their value (by the key), as they should be
VALUE_REFUSED = {("joints", k, key) for k in ("cylindrical", "universal", "planar", "gimbal", "spherical", "free")
                 for key in ("coordinates", "speed_names", "q0", "u0", "speeds")}


def test_the_declarations_cover_the_tables_the_loader_admits():
    assert list(SPECS) == list(TOP_TABLES)
    assert {n: s.array for n, s in SPECS.items()} == {n: kind is list for n, kind in TOP_TABLES.items()}
    assert len(CASES) > 150  # every kind's keys


@pytest.mark.parametrize("table", [n for n, s in SPECS.items() if s.any_key is None])
def test_each_kind_with_its_required_keys_alone_loads(tmp_path, table):
    spec = SPECS[table]
    for kind in spec.kind_names() or (None,):
        _load(tmp_path, spec, _item(spec, kind))


@pytest.mark.parametrize("table, kind, key", CASES, ids=[f"{t}-{k}-{n}" for t, k, n in CASES])
def test_every_declared_key_is_read(tmp_path, table, kind, key):
    spec = SPECS[table]
    try:
        _load(tmp_path, spec, _item(spec, kind, [spec.key(key, kind)]))
    except ModelFileError as exc:
        assert (table, kind, key) in VALUE_REFUSED, str(exc)
        assert exc.key == key and "unknown key" not in exc.reason, str(exc)
    else:
        assert (table, kind, key) not in VALUE_REFUSED


@pytest.mark.parametrize("table", ["parameters", "inputs"])
def test_the_free_named_tables_take_their_example(tmp_path, table):
    path = tmp_path / "m.toml"
    path.write_text(_base(table).replace(f"[{table}]\n", f"[{table}]\nextra = {SPECS[table].any_key.example}\n"))
    loaded = load_model(path)
    assert "extra" in (loaded.parameters if table == "parameters" else loaded.inputs)


@pytest.mark.parametrize("table", [n for n, s in SPECS.items() if s.any_key is None])
def test_an_undeclared_key_is_refused_naming_the_table_and_the_key(tmp_path, table):
    spec = SPECS[table]
    for kind in spec.kind_names() or (None,):
        with pytest.raises(ModelFileError) as info:
            _load(tmp_path, spec, _item(spec, kind) + '\nbogus_key = 1')
        assert info.value.key == "bogus_key" and "unknown key" in info.value.reason
        assert spec.name in info.value.table and spec.title[0] == info.value.table[0]
        allowed = info.value.reason.split("allowed keys: ")[1].split(", ")
        assert sorted(allowed) == sorted(k.name for k in spec.keys_for(kind))


@pytest.mark.parametrize("table", [n for n, s in SPECS.items() if s.any_key is None])
def test_a_required_key_left_out_is_named(tmp_path, table):
    spec = SPECS[table]
    for kind in spec.kind_names() or (None,):
        for key in (k for k in spec.keys_for(kind) if k.required and k.name != spec.kind_key):
            with pytest.raises(ModelFileError) as info:
                _load(tmp_path, spec, _item(spec, kind, drop=(key.name,)))
            assert info.value.key == key.name and "missing" in info.value.reason, str(info.value)


def _kind(spec, item: dict):
    if not spec.kinds:
        return None
    if spec.name == "surfaces" and "primitive" not in item:
        return "nurbs"
    return item[spec.kind_key]


def test_every_key_of_the_examples_is_declared():
    used = 0
    for path in sorted((ROOT / "examples").glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        for table, value in doc.items():
            spec = SPECS[table]
            if spec.any_key is not None:
                continue
            for item in value if spec.array else [value]:
                declared = {k.name: k for k in spec.keys_for(_kind(spec, item))}
                for key, v in item.items():
                    assert key in declared, f"{path.name}: {spec.title} key {key!r} is not declared"
                    if isinstance(v, dict):
                        assert set(v) <= {f.name for f in declared[key].fields}, f"{path.name}: {key} = {v}"
                    used += 1
    assert used > 200


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## `{title}`\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_reference_lists_every_table_kind_and_key():
    text = render_reference()
    for spec in SPECS.values():
        section = _section(text, spec.title)
        for kind in spec.kinds:
            assert f'### `{spec.title}` {spec.kind_key} = "{kind.name}"' in section
        for kind in spec.kind_names() or (None,):
            for key in spec.keys_for(kind):
                row = f"| `{key.name}` | `{key.type}` | {key.unit} |"
                assert row in section, (spec.title, row)
                assert key.default is None or key.default in section
                for field in key.fields:
                    assert f"| `{field.name}` | `{field.type}` |" in section
        if spec.any_key is not None:
            assert spec.any_key.example in section


def test_the_committed_page_is_the_renderers_output():
    page = ROOT / "docs" / "reference" / "model-file.md"
    assert page.read_text(encoding="utf-8") == render_reference(), (
        "docs/reference/model-file.md is stale: run python -m kane.model_reference docs/reference/model-file.md")


def test_the_realtime_defaults_in_the_reference_are_those_the_command_uses():
    declared = {k.name: tomllib.loads(f"x = {k.default}")["x"] for k in SPECS["realtime"].keys
                if k.name in REALTIME_DEFAULTS}
    assert declared == {k: list(v) if isinstance(v, tuple) else v for k, v in REALTIME_DEFAULTS.items()}


def test_the_simulation_defaults_in_the_reference_are_the_settings_defaults():
    from kane.io.model_context import SimulationSettings

    settings = SimulationSettings()
    for key in SPECS["simulation"].keys:
        if key.default is not None and key.name != "dependent":
            value = tomllib.loads(f"x = {key.default}")["x"]
            assert value == getattr(settings, key.name) or (value == "dopri5" == settings.method), key.name


def test_keys_are_checked_only_through_the_declarations():
    """No reader checks keys against a set of its own (Ctx.check_keys called outside kane.io.model_schema), so a
    key a reader accepts is a declared key, and so in the reference."""
    src = ROOT / "src" / "kane"
    callers = sorted(str(p.relative_to(src)) for p in src.rglob("*.py")
                     if ".check_keys(" in p.read_text(encoding="utf-8"))
    assert callers == ["io/model_schema.py"]
