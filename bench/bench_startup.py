"""Start-up benchmark (issue 28 item 8): ``import kane``, ``kane --version`` and ``kane --help`` against
``import numpy, scipy``, each in a fresh subprocess, interleaved (one of each per round, so load on the shared
machine falls on all alike), best of N rounds. Targets: ``kane --version`` and ``kane --help`` under 0.3 s;
``import kane`` at most 3 x ``import numpy, scipy``. Also prints the heavy packages each one loads.

    python bench/bench_startup.py [--rounds 7] [--src OTHER_CHECKOUT/src]

``--src`` measures another checkout's kane (e.g. ``git archive`` of an older commit) for a before/after pair. The
last case, the first use of ``kane.derive`` (which imports the builder, sympy and the derivation), is information:
what the lazy exports defer, not a target.

The ``kane`` command is run as ``python -c`` of the console script's own entry (``kane.cli:main`` with sys.argv
set), by this Python, so the checkout on PYTHONPATH is the one measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("numba", "sympy", "scipy", "dask", "distributed", "viser", "matplotlib", "h5py", "mpmath", "rich")
_REPORT = (f"\nimport json, sys\nprint('LOADED ' + json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & "
           f"set({HEAVY!r}))), file=sys.stderr)")
_KANE = "import sys\nsys.argv = {argv!r}\nfrom kane.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
CASES = {
    "import numpy, scipy": "import numpy, scipy",
    "import kane": "import kane",
    "kane --version": _KANE.format(argv=["kane", "--version"]),
    "kane --help": _KANE.format(argv=["kane", "--help"]),
    "kane.derive (first use)": "import kane\nkane.derive",
}


def _once(code: str, env) -> float:
    """Wall time [s] of a fresh interpreter running ``code``, from start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    return elapsed


def _loaded(code: str, env) -> list[str]:
    """The heavy packages a fresh interpreter running ``code`` has loaded (a run of its own, not timed)."""
    done = subprocess.run([sys.executable, "-c", code + _REPORT], check=True, env=env, capture_output=True,
                          text=True)
    line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED "))
    return json.loads(line[len("LOADED "):])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds; the best of each is reported")
    ap.add_argument("--src", default=SRC, help="the src directory whose kane is measured [default: this checkout's]")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": args.src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    times = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, code in CASES.items():
            times[name].append(_once(code, env))
    best = {name: min(ts) for name, ts in times.items()}
    base = best["import numpy, scipy"]
    print(f"best of {args.rounds} interleaved rounds, fresh processes, {sys.executable}, kane from {args.src}")
    for name, code in CASES.items():
        ts = sorted(times[name])
        print(f"  {name:<24} best {best[name]:.3f} s  median {ts[len(ts) // 2]:.3f} s  "
              f"({best[name] / base:.2f} x numpy+scipy)  loads: {', '.join(_loaded(code, env)) or 'none of them'}")
    print(f"import kane / import numpy, scipy = {best['import kane'] / base:.2f} (target <= 3); kane --version "
          f"{best['kane --version']:.3f} s, kane --help {best['kane --help']:.3f} s (target < 0.3 s)")


if __name__ == "__main__":
    main()
