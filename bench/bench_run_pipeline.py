"""The command line against the API on one run (issue 28): ``kane simulate`` of examples/planar_chain.toml for
100 s at rtol = atol = 1e-10, output_dt 0.01, against ``kane.simulate()`` of the same model and settings.

Interleaved: each round runs ``kane simulate`` in a subprocess (its stepping time: the file's stats wall time, C
stretches and the monitors at the samples included) and then ``kane.simulate()`` in this process (the wall time of
the call and its stats wall time). Printed: the best of each, their ratio, the loop each took and the samples.
Target: the command line's stepping time at most 1.5x the API's (before issue 28: 15.3 s against 0.16 s, 94x).
Run: ``python bench/bench_run_pipeline.py [--rounds 3] [--t-end 100]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["run"]

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples" / "planar_chain.toml"


def _cli(t_end: float, path: Path) -> tuple[float, object]:
    cmd = [sys.executable, "-m", "kane.cli", "simulate", str(MODEL), "-o", str(path), "--t-end", str(t_end),
           "--rtol", "1e-10", "--atol", "1e-10", "--output-dt", "0.01"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"kane simulate failed:\n{done.stdout}\n{done.stderr}")
    from kane.io.trajectory import load_trajectory
    traj = load_trajectory(path)
    return traj.stats.wall_time_s, traj


def _api(t_end: float, dyn, lm) -> tuple[float, object]:
    import kane
    q0, u0 = lm.initial_state(dyn)
    s = lm.simulation
    start = time.perf_counter()
    traj = kane.simulate.simulate(dyn, (s.t_start, t_end), q0, u0, method=s.method, rtol=1e-10, atol=1e-10, output_dt=0.01,
                         max_step=s.max_step, params=dict(lm.parameters), inputs=lm.input_function(dyn))
    return time.perf_counter() - start, traj


def run(rounds: int = 3, t_end: float = 100.0) -> dict:
    from kane.io.model_file import load_model
    lm = load_model(MODEL)
    dyn = lm.derive().compile()
    _api(1.0, dyn, lm)  # compile the C functions once (the command line finds them in the cache)
    cli_s, api_s, api_stats_s = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(rounds):
            wall, cli = _cli(t_end, Path(tmp) / f"chain{k}.h5")
            cli_s.append(wall)
            wall, api = _api(t_end, dyn, lm)
            api_s.append(wall)
            api_stats_s.append(api.stats.wall_time_s)
    same = float(np.max(np.abs(cli.x - api.x))) if cli.x.shape == api.x.shape else float("nan")
    out = {"cli_stepping_s": min(cli_s), "api_call_s": min(api_s), "api_stepping_s": min(api_stats_s),
           "ratio": min(cli_s) / min(api_s), "cli_loop": cli.stats.loop_text, "api_loop": api.stats.loop_text,
           "samples": cli.n_samples, "max_state_difference": same}
    print(f"planar_chain, t_end {t_end:g} s, rtol = atol = 1e-10, output_dt 0.01, best of {rounds} interleaved:")
    print(f"  kane simulate stepping  {out['cli_stepping_s']:.3f} s  ({out['cli_loop']})   all: "
          + ", ".join(f"{v:.3f}" for v in cli_s))
    print(f"  kane.simulate() call    {out['api_call_s']:.3f} s  ({out['api_loop']}; stepping "
          f"{out['api_stepping_s']:.3f} s)   all: " + ", ".join(f"{v:.3f}" for v in api_s))
    print(f"  ratio {out['ratio']:.2f}x (target <= 1.5x); {out['samples']} samples, max |x_cli - x_api| = {same:.1e}")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--t-end", type=float, default=100.0)
    args = parser.parse_args()
    run(args.rounds, args.t_end)
