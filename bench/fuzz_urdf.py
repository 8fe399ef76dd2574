"""Fuzzer of the URDF loader: hostile mutations of small URDFs (encodings, huge and non-finite numbers, missing
attributes, cycles, duplicate names, deep nesting, entity tricks, mesh paths), each written to a file and read by
:func:`kane.io.urdf.load_urdf`, :func:`kane.viz.visuals.urdf_visuals` and ``System.compile`` in a worker process
under a per-file time limit.

Every file must end as "ok" or as a :class:`kane.KaneError` whose message names the file; anything else is
counted: a raw exception (another exception type), a hang (the time limit passed: the worker is killed), a crash
(the worker died), an escape (a mesh read from outside the model's folder: the files planted outside are valid
meshes, so one drawn is one read) or a KaneError that does not name the file.

    python bench/fuzz_urdf.py --files 5000 --seed 1 --workers 2 --limit 10

prints the counts, the rate [files/s] and the first examples of each failure.
"""

from __future__ import annotations

import argparse
import codecs
import os
import random
import re
import sysconfig
import tempfile
from pathlib import Path

from _fuzz import FuzzResult, Limit, Task, common_arguments, outcome_of, print_summary, run_pool

__all__ = ["BASES", "FuzzResult", "mutate", "check_file", "fuzz", "main"]

FAILURES = ("raw", "hang", "crash", "escape", "unnamed")
_ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
SAMPLE = """<?xml version="1.0" encoding="UTF-8"?>
<robot name="sample">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base"><inertial><origin xyz="0 0 0.1"/><mass value="5"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial>
    <visual><geometry><mesh filename="meshes/in.stl" scale="1 1 1"/></geometry><material name="blue"/></visual>
  </link>
  <link name="arm"><inertial><origin xyz="0.1 0.2 -0.3" rpy="0.3 -0.2 0.5"/><mass value="2.0"/>
    <inertia ixx="0.05" ixy="0.001" ixz="-0.002" iyy="0.06" iyz="0.003" izz="0.04"/></inertial>
    <visual><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.03" length="0.5"/></geometry></visual>
    <collision><geometry><sphere radius="0.04"/></geometry></collision></link>
  <link name="slider"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial></link>
  <link name="tool"><inertial><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0 1.57 0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="3"/>
    <dynamics damping="0.7" friction="0.1"/></joint>
  <joint name="rail" type="prismatic"><parent link="arm"/><child link="slider"/><axis xyz="1 1 0"/></joint>
  <joint name="spin" type="continuous"><parent link="slider"/><child link="tool"/><axis xyz="0 0 1"/>
    <mimic joint="shoulder" multiplier="2" offset="0.1"/></joint>
</robot>
"""
BASES = [("sample.urdf", SAMPLE)] + [
    (p.name, p.read_text(encoding="utf-8")) for p in (
        _ROBOTS / "double_pendulum_description/urdf/double_pendulum.urdf",
        _ROBOTS / "asr_twodof_description/urdf/TwoDofs.urdf",
        _ROBOTS / "ur_description/urdf/ur5_robot.urdf") if p.is_file()]
_NUMBERS = ["1e308", "1e309", "-1e400", "1e-400", "nan", "NaN", "inf", "-inf", "", " ", "1 2", "1,2,3",
            "0x10", "1_0", "9" * 400, "1e99999", "--1", "\u22121", "\u0661", "1e308 1e308 1e308", "0 0 0",
            "-1", "0", "1e-320 0 0", "nan nan nan", "1 1 1 1", "3.4028235e38"]
_NAMES = ["", "ground", "a b", "x" * 100_000, "\u00e9l\u00e8ve", "\uff4d", "\U0001d42c", "root_joint", "q_x",
          "1abc", "__class__", "&amp;", "a\tb", "&#x0B;", "base", "shoulder"]
_ENTITIES = [
    '<!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">' for k in range(9)) + "]>",
    '<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE robot [<!ENTITY % p SYSTEM "http://example.invalid/x.dtd"> %p;]>',
    '<!DOCTYPE robot [<!ENTITY n "base">]>', '<!DOCTYPE robot SYSTEM "file:///dev/zero">', "<!DOCTYPE robot>",
    '<?xml-stylesheet href="file:///etc/passwd"?>', "<!-- " + "-" * 10 + " -->",
]
_MESHES = ["{outside}/secret.stl", "../outside/secret.stl", "meshes/../../outside/secret.stl",
           "file://{outside}/secret.stl", "file:///etc/passwd", "/dev/zero", "/dev/urandom", "meshes/pipe.stl",
           "meshes/huge.stl", "meshes/link.stl", "package://outside/secret.stl", "package://model/meshes/in.stl",
           "package://../outside/secret.stl", "https://example.invalid/m.stl", "file://host/x.stl", "",
           "meshes/in.stl", "meshes/" + "x" * 5000 + ".stl", "meshes/in.stl\x00.png", "C:\\\\Windows\\\\x.stl",
           "meshes/in.stl?x=1", "{outside}", "meshes", "/proc/self/mem"]
_ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "ascii"]


def _encode(text: str, rng: random.Random) -> bytes:
    """The text in a random encoding, declared truly, falsely or not at all; sometimes damaged."""
    codec = rng.choice(_ENCODINGS)
    declared = rng.choice([codec, rng.choice(_ENCODINGS), "rot13", "unicode_escape", "bogus", "ISO-8859-1", None])
    body = re.sub(r"^<\?xml[^>]*\?>\s*", "", text)
    if declared is not None:
        body = f'<?xml version="1.0" encoding="{declared}"?>\n' + body
    data = body.encode(codec, errors="replace")
    damage = rng.random()
    if damage < 0.2 and data:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    elif damage < 0.3:
        data = data[:rng.randrange(len(data) + 1)]
    elif damage < 0.4:
        data = codecs.BOM_UTF16_LE + data if rng.random() < 0.5 else codecs.BOM_UTF8 + data
    return data


def mutate(text: str, rng: random.Random) -> bytes:
    """One hostile mutation of a URDF's text, as the bytes of a file."""
    kind = rng.random()
    attrs = list(re.finditer(r'(\w+)="([^"]*)"', text))
    if kind < 0.15:
        return _encode(text if rng.random() < 0.5 else text.replace('name="base"', 'name="b\u00e4se\u20ac"'), rng)
    if kind < 0.30 and attrs:  # a number (or any attribute) replaced by a hostile one
        m = rng.choice([a for a in attrs if a.group(1) not in ("name", "link", "type")] or attrs)
        text = text[:m.start(2)] + rng.choice(_NUMBERS) + text[m.end(2):]
    elif kind < 0.40 and attrs:  # an attribute missing
        m = rng.choice(attrs)
        text = text[:m.start()] + text[m.end():]
    elif kind < 0.50:  # a cycle or a second parent: a joint's child is another link
        links = re.findall(r'<link name="([^"]*)"', text)
        children = list(re.finditer(r'<child link="([^"]*)"', text))
        if links and children:
            m = rng.choice(children)
            text = text[:m.start(1)] + rng.choice(links) + text[m.end(1):]
    elif kind < 0.58:  # a duplicate element, or a hostile name
        elems = list(re.finditer(r"<(link|joint)\b.*?</\1>|<link [^>]*/>", text, re.S))
        if elems and rng.random() < 0.5:
            m = rng.choice(elems)
            text = text[:m.end()] + m.group(0) + text[m.end():]
        else:
            names = [a for a in attrs if a.group(1) in ("name", "link", "joint")] or attrs
            if names:
                m = rng.choice(names)
                new = rng.choice(_NAMES).replace("&", "&amp;") if rng.random() < 0.5 else rng.choice(_NAMES)
                text = text[:m.start(2)] + new + text[m.end(2):]
    elif kind < 0.64:  # deep nesting, inside the robot or inside a link
        depth = rng.choice([100, 1000, 100_000])
        at = text.find("<link")
        text = text[:at] + "<n>" * depth + "</n>" * depth + text[at:]
    elif kind < 0.74:  # entity and document type tricks
        trick = rng.choice(_ENTITIES)
        text = re.sub(r"^(<\?xml[^>]*\?>)?", lambda m: (m.group(0) or "") + trick, text, count=1)
        text = text.replace('name="base"', rng.choice(['name="&n;"', 'name="&x;"', 'name="&j;"', 'name="base"']), 1)
    elif kind < 0.90:  # a hostile mesh path on a link
        mesh = rng.choice(_MESHES).replace('"', "&quot;")
        visual = f'<visual><geometry><mesh filename="{mesh}"/></geometry></visual>'
        links = list(re.finditer(r"<link name=\"[^\"]*\"\s*(/?)>", text))
        if links:
            m = rng.choice(links)
            tag = m.group(0)
            element = tag[:-2] + ">" + visual + "</link>" if m.group(1) else tag + visual
            text = text[:m.start()] + element + text[m.end():]
    else:  # structure: an element dropped, a tag renamed, the text cut
        edit = rng.randrange(3)
        tags = list(re.finditer(r"<(\w+)", text))
        if edit == 0 and tags:
            m = rng.choice(tags)
            text = text[:m.start(1)] + rng.choice(["robot", "joint", "link", "mimic", "inertia", "x"]) + \
                text[m.end(1):]
        elif edit == 1:
            text = text[:rng.randrange(len(text) + 1)]
        else:
            text = text.replace('type="revolute"', f'type="{rng.choice(["ball", "", "fixed", "planar", "floating"])}"')
    return text.encode("utf-8", errors="surrogatepass") if rng.random() < 0.8 else _encode(text, rng)


def _site(root: Path) -> Path:
    """The model folder (a mesh inside), a folder outside (a valid mesh: drawing it means it was read), a FIFO,
    a sparse 600 MiB file and a symbolic link out of the folder."""
    import trimesh

    model = root / "model"
    (model / "meshes").mkdir(parents=True, exist_ok=True)
    (root / "outside").mkdir(exist_ok=True)
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(model / "meshes" / "in.stl")
    trimesh.creation.box(extents=(0.7, 0.7, 0.7)).export(root / "outside" / "secret.stl")
    if not (model / "meshes" / "pipe.stl").exists():
        os.mkfifo(model / "meshes" / "pipe.stl")
        with open(model / "meshes" / "huge.stl", "wb") as fh:
            fh.truncate(600 * 2**20)
        os.symlink(root / "outside" / "secret.stl", model / "meshes" / "link.stl")
    return model


def check_file(path: Path, mimic: str) -> tuple[str, str]:
    """Load one URDF file, draw its visuals, compile its system: ("ok", "") or (outcome, detail)."""
    import warnings

    from kane.io.urdf import load_urdf
    from kane.viz.visuals import urdf_visuals

    stage = "load"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = load_urdf(path, mimic=mimic, massless="weld")
            stage = "visuals"
            shapes = urdf_visuals(path, robot.renamed)
            outside = path.parent.parent / "outside"
            read = [s.file for s in shapes if s.file and Path(os.path.realpath(s.file)).is_relative_to(outside)]
            if read:
                return "escape", f"mesh {read[0]} read"
            stage = "compile"
            robot.system.compile()
        return "ok", ""
    except BaseException as exc:  # noqa: BLE001 - the point is to count every exception
        return outcome_of(exc, stage, None if stage == "compile" else path.name)  # compile: the System API


def _tasks(n: int, seed: int):
    rng = random.Random(seed)
    for i in range(n):
        name, text = BASES[i % len(BASES)]
        yield f"fuzz_{i:05d}_{name}", mutate(text, rng), rng.choice(["error", "independent", "constraint"])


def fuzz(n: int, seed: int = 1, workers: int = 2, limit_s: float = 10.0) -> FuzzResult:
    """Run ``n`` mutated files (``seed`` fixes them) on ``workers`` processes, each within ``limit_s`` [s]; a
    worker past the limit is killed and counted as a hang."""
    import trimesh  # noqa: F401 - imported once here: the forked workers start with them loaded

    import kane.io.urdf  # noqa: F401
    import kane.viz.visuals  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp:
        def checker(slot):
            model = _site(Path(tmp) / f"w{slot}")

            def check(name, data, mimic):
                path = model / name
                path.write_bytes(data)
                try:
                    return check_file(path, mimic)
                finally:
                    path.unlink()
            return check

        tasks = (Task(name, (name, data, mimic), text=data) for name, data, mimic in _tasks(n, seed))
        return run_pool(tasks, checker, workers, Limit(limit_s), None, FAILURES)


def main(argv=None) -> FuzzResult:
    ap = common_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), limit_s=10.0, keep=False)
    args = ap.parse_args(argv)
    r = fuzz(args.files, args.seed, args.workers, args.limit)
    print_summary(r, args.workers)
    return r


if __name__ == "__main__":
    main()
