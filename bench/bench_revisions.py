"""Nothing may get slower: the working tree against an earlier revision, measured in the same run.

For each revision, alternating, in fresh subprocesses (so that neither profits from the other's caches): the
derivation of the 10-link 3D pendulum (bench/models.py) and one ``Dynamics.udot`` call on the 7-link chain
(median of many calls). Prints the medians over the repetitions and the ratio working tree / revision.

    python bench/bench_revisions.py --rev HEAD~3 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["run"]

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, sys, time, timeit
sys.path.insert(0, sys.argv[1])
import numpy as np
import kane
from models import pendulum_chain_kane
kane.derive(pendulum_chain_kane(2))  # load what a lazy `import kane` defers (sympy, the builder, the modules the
# derivation imports on first use: 0.6 s), outside the timing, as an eager `import kane` did in earlier revisions
t0 = time.perf_counter()
eqs = kane.derive(pendulum_chain_kane(10))
derive_s = time.perf_counter() - t0
eqs7 = kane.derive(pendulum_chain_kane(7))
try:  # the numpy backend in both (later revisions compile to C by default)
    dyn = eqs7.compile(backend="numpy")
except TypeError:
    dyn = eqs7.compile()
q = np.linspace(0.1, 0.7, dyn.n_q); u = np.linspace(-0.3, 0.3, dyn.n_u)
dyn.udot(0.0, q, u)
timer = timeit.Timer(lambda: dyn.udot(0.0, q, u))
n, _ = timer.autorange()
udot_us = min(timer.repeat(7, n)) / n * 1e6
print(json.dumps({"kane": kane.__file__, "derive_s": derive_s, "udot_us": udot_us}))
"""


def _probe(src: Path) -> dict:
    env = {"PYTHONPATH": str(src), "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "bench")], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(rev: str = "HEAD~1", repeat: int = 3) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), rev], check=True,
                       capture_output=True)
        try:
            rows = {"working tree": [], rev: []}
            for _ in range(repeat):
                rows["working tree"].append(_probe(ROOT / "src"))
                rows[rev].append(_probe(old / "src"))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=True)
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("derive_s", "udot_us")} for k, v in rows.items()}
    print(f"{'':>14} {'derive 10-link [s]':>19} {'udot 7-link [us]':>17}")
    for k, v in med.items():
        print(f"{k:>14} {v['derive_s']:>19.3f} {v['udot_us']:>17.2f}")
    new, base = med["working tree"], med[rev]
    print(f"{'ratio':>14} {new['derive_s'] / base['derive_s']:>19.3f} {new['udot_us'] / base['udot_us']:>17.3f}")
    return med


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="HEAD~1", help="the revision to compare with (git rev)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run(args.rev, args.repeat)
