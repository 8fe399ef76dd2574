"""The README as a new user reads it: its shell blocks run top to bottom in a fresh directory (a copy of
examples/), its Python example prints what its comments say (and the pendulum's u' is the hand-derived one), its
links lead to files of the repository, and it explains the seed papers it cites.

Short forms of the lines that would not end or need a person (the mapping, applied by :func:`_short_form`):

* ``pip install ...``: skipped; the test runs in the environment it makes.
* ``make run``, ``make test``: skipped; they install (into .venv) what this test runs in, and ``make test`` is this
  suite; ``make run``'s own lines are a ``kane simulate`` and a ``kane plot``, as the block's.
* ``kane view RUN.h5`` (serves the browser viewer until interrupted) and ``kane view MODEL --live``: skipped; the
  browser tests (tests/viz/test_viewer_browser.py, test_live_browser.py) drive them in Chromium.
* ``kane realtime ...``: run with ``--duration 0.2`` (0.2 s of the loop instead of the file's duration).
"""

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
KANE = Path(sys.executable).parent / "kane"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README, flags=re.S | re.M)


def _short_form(line: str) -> str | None:
    """The line the test runs for a README line (None: skipped), as the module docstring lists."""
    command = line.split("#", 1)[0].strip()
    if not command or command.startswith(("pip install", "make ")):
        return None
    if command.startswith("kane view") and ("--live" in command or not re.search(r"--(mp4|gif)\b", command)):
        return None
    if command.startswith("kane realtime"):
        return command + " --duration 0.2"
    return command


def test_the_shell_blocks_run_top_to_bottom_in_a_fresh_directory(tmp_path):
    lines = [ln for block in _blocks("sh") for ln in block.splitlines()]
    script = [s for s in map(_short_form, lines) if s is not None]
    assert len(script) >= 8 and all(s.startswith("kane ") for s in script), script
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    text = "set -euo pipefail\n" + "\n".join(s.replace("kane ", f"{KANE} ") for s in script) + "\n"
    done = subprocess.run(["bash", "-c", text], cwd=tmp_path, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in ("chain.h5", "chain.png", "disk_sweep.h5", "disk_sweep.png", "disk_c/model.c", "disk_c/Makefile"):
        assert (tmp_path / name).is_file() and (tmp_path / name).stat().st_size > 0, name
    assert "missed deadlines" in done.stdout  # the realtime line ran its loop and reported it


def test_the_python_example_prints_what_it_claims(tmp_path):
    (code,) = _blocks("python")
    claims = re.findall(r"#\s*prints (.+?):", code)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.strip().splitlines()
    assert printed == claims
    # the pendulum's u' at theta = 0.3 rad at rest, by hand: -m g l sin(theta) / (I_yy + m l^2)
    m, g, l, i_yy = 1.0, 9.81, 0.5, 0.02
    expected = -m * g * l * math.sin(0.3) / (i_yy + m * l**2)
    assert math.isclose(float(printed[0].strip("[]")), expected, rel_tol=1e-8)
    assert (tmp_path / "pendulum.h5").is_file() and (tmp_path / "pendulum.png").is_file()


def test_the_links_lead_to_files_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    local = [x for x in links if not re.match(r"[a-z]+://", x)]
    assert local, "the README links into the docs"
    assert "docs/reference/model-file.md" in local
    for target in local:
        assert (ROOT / target).exists(), target
    assert "../shared" not in README and "DESIGN.md" not in README


def test_the_seed_papers_are_named():
    for seed, author in (("000", "Gillespie"), ("001", "Cloutier"), ("002", "Saha"), ("003", "Nelson"),
                         ("004", "Stoneking")):
        assert re.search(rf"\*\*seed {seed}\*\*: [^\n]*{author}", README), seed
    assert "pip install -e ." in README and 'pip install -e ".[test]"' in README
    assert re.search(r"^make run", README, re.M) and re.search(r"^make test", README, re.M)
