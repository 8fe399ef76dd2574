"""kane.jit: numba kernels cached on disk under one stamp of the package's sources, so that a kernel calling a
kernel of another file never loads stale machine code (numba's own stamp is its file's only: numba issue #9483)."""

import os
import subprocess
import sys

import pytest

from kane import jit

pytestmark = pytest.mark.skipif(not jit.HAVE_NUMBA, reason="numba is not installed")

CALLER = """
from kane.jit import kernel
from callee import step


@kernel
def twice(x):
    return 2.0 * step(x)
"""

CALLEE = """
from kane.jit import kernel


@kernel
def step(x):
    return x + {increment}
"""

RUN = """
import sys
from pathlib import Path
import kane.jit as jit
jit._PACKAGE = Path(sys.argv[1])  # the package whose sources stamp the kernels: here the two files below
sys.path.insert(0, sys.argv[1])
from caller import twice
index = twice._cache._cache_file
print(twice(1.0), index._source_stamp[1] == jit.source_stamp(), flush=True)
"""


def _run(folder):
    env = dict(os.environ, NUMBA_DEBUG_CACHE="1")
    done = subprocess.run([sys.executable, "-c", RUN, str(folder)], capture_output=True, text=True, env=env,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    value, stamped = done.stdout.strip().splitlines()[-1].split()
    return float(value), stamped == "True", done.stdout


def test_a_changed_callee_in_another_file_is_compiled_again_not_loaded_stale(tmp_path):
    (tmp_path / "caller.py").write_text(CALLER)
    callee = tmp_path / "callee.py"
    callee.write_text(CALLEE.format(increment=1.0))
    value, stamped, log = _run(tmp_path)
    assert value == 4.0 and stamped and "data saved" in log  # 2 (1 + 1), compiled and cached
    value, _, log = _run(tmp_path)
    assert value == 4.0 and "data loaded" in log and "data saved" not in log  # the second process loads it
    callee.write_text(CALLEE.format(increment=2.5))  # caller.py unchanged: numba's own stamp would load 4.0
    st = callee.stat()
    os.utime(callee, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    value, _, log = _run(tmp_path)
    assert value == 7.0 and "data saved" in log


def test_the_stamp_follows_every_source_file_and_nothing_else(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not a source")
    monkeypatch.setattr(jit, "_PACKAGE", tmp_path)

    def stamp():
        jit._STAMP.clear()
        return jit.source_stamp()

    monkeypatch.setattr(jit, "_STAMP", {})
    first = stamp()
    assert stamp() == first
    (tmp_path / "notes.txt").write_text("still not a source")
    assert stamp() == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")  # same size, a later mtime
    st = (tmp_path / "sub" / "b.py").stat()
    os.utime(tmp_path / "sub" / "b.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert stamp() != first


def test_a_kernel_of_the_package_carries_the_stamp_and_computes_as_python():
    def add(a, b):
        return a + 2.0 * b

    compiled = jit.kernel(add)
    assert compiled._cache._cache_file._source_stamp == ("kane", jit.source_stamp())
    assert compiled(1.0, 3.0) == add(1.0, 3.0) == 7.0


def _scale(x):
    return 2.0 * x


def _apply(x):
    return _scale(x) + 1.0


def test_with_globals_binds_a_copys_callees_and_leaves_the_function_alone():
    tripled = jit.with_globals(_apply, _scale=lambda x: 3.0 * x)
    assert tripled(2.0) == 7.0 and _apply(2.0) == 5.0
    assert tripled.__name__ == "_apply" and tripled.__code__ is _apply.__code__


CALLEE_INLINED = """
from kane.jit import kernel


def _step(x):
    return x + {increment}


step = kernel(_step, inline=True)
"""


def test_an_inlined_callee_is_compiled_into_its_caller_cached_and_rebuilt_when_it_changes(tmp_path):
    """``kernel(f, inline=True)`` (numba's inline="always", as the cone solver's tangential update): the caller's
    cached machine code holds the callee, so only the package stamp can tell that the callee changed."""
    (tmp_path / "caller.py").write_text(CALLER)
    callee = tmp_path / "callee.py"
    callee.write_text(CALLEE_INLINED.format(increment=1.0))
    value, stamped, log = _run(tmp_path)
    assert value == 4.0 and stamped and "data saved" in log
    value, _, log = _run(tmp_path)
    assert value == 4.0 and "data loaded" in log and "data saved" not in log
    callee.write_text(CALLEE_INLINED.format(increment=2.5))
    st = callee.stat()
    os.utime(callee, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    value, _, log = _run(tmp_path)
    assert value == 7.0 and "data saved" in log
