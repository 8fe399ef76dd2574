"""Compiled objects give the serial results from their first call on, from 8 threads at once (issue 26, item 8).

Fresh objects (nothing evaluated yet) are hammered by 8 threads started together, each with its own parameter
vector, and every result must equal, bit for bit, what one thread computes alone.
"""

from __future__ import annotations

import pathlib
import threading

import numpy as np
import pytest

import kane
from kane.codegen import c_backend
from kane.io.model_file import load_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAIN = ROOT / "examples" / "planar_chain.toml"
THREADS, STATES, TRIALS = 8, 64, 20

pytestmark = pytest.mark.skipif(not c_backend.compiler_available()[0], reason="no C compiler on this machine")


@pytest.fixture(scope="module")
def chain():
    """The planar chain's equations, 64 random states and one parameter vector per thread (fixed seed)."""
    eqs = kane.derive(load_model(CHAIN).system)
    rng = np.random.default_rng(26)
    n_q, n_u = eqs.model.n_q, len(eqs.u_independent)
    q, u = rng.uniform(-2, 2, (STATES, n_q)), rng.uniform(-3, 3, (STATES, n_u))
    p0 = eqs.model.parameter_values()
    params = [None] + [p0 * (1 + 0.05 * k) for k in range(1, THREADS)]  # thread 0: the defaults
    return eqs, q, u, params


def _hammer(work):
    """Run work(k) on THREADS threads released together; their results by thread."""
    barrier, results, errors = threading.Barrier(THREADS), [None] * THREADS, []

    def run(k):
        try:
            barrier.wait()
            results[k] = work(k)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return results


def test_fresh_dynamics_from_eight_threads_equal_the_serial_results(chain):
    eqs, q, u, params = chain
    serial = kane.KaneDynamics(eqs, backend="c")
    expected = [np.array([serial.udot(0.0, q[i], u[i], params=p) for i in range(STATES)]) for p in params]
    wrong = 0
    for _ in range(TRIALS):
        dyn = kane.KaneDynamics(eqs, backend="c")  # fresh: its first call happens in the threads
        got = _hammer(lambda k: np.array([dyn.udot(0.0, q[i], u[i], params=params[k]) for i in range(STATES)]))
        wrong += sum(int((~(g == e).all(axis=1)).sum()) for g, e in zip(got, expected))
    assert wrong == 0, f"{wrong} of {TRIALS * THREADS * STATES} results differ from the serial ones"


def test_fresh_compiled_functions_rows_and_steppers_from_eight_threads(chain):
    eqs, q, u, params = chain
    p = [eqs.model.parameter_values() if x is None else x for x in params]
    w = eqs.model.input_values()
    serial_fn = c_backend.CFunction(eqs.program, ["qdot"], linear_solve=("M", "f", "udot"), rk4=True)
    expected = [np.concatenate(serial_fn(0.0, q, u, pk, w), axis=1) for pk in p]
    serial_steps = []
    for pk in p:
        st = serial_fn.stepper(0.0, q[0], u[0], pk, w)
        st.step(20, 1e-3)
        serial_steps.append(np.concatenate([st.q, st.u]))
    for _ in range(4):
        fn = c_backend.CFunction(eqs.program, ["qdot"], linear_solve=("M", "f", "udot"), rk4=True)
        rows = fn.rows(p[0], w)

        def work(k):
            one = np.array([np.concatenate(fn(0.0, q[i], u[i], p[k], w)) for i in range(STATES)])
            batch = np.concatenate(fn(0.0, q, u, p[k], w), axis=1)
            shared = np.array(rows(np.zeros(STATES), q, u))
            st = fn.stepper(0.0, q[0], u[0], p[k], w)
            st.step(20, 1e-3)
            return one, batch, shared, np.concatenate([st.q, st.u])
        for k, (one, batch, shared, stepped) in enumerate(_hammer(work)):
            np.testing.assert_array_equal(one, expected[k])
            np.testing.assert_array_equal(batch, expected[k])
            np.testing.assert_array_equal(shared, expected[0])
            np.testing.assert_array_equal(stepped, serial_steps[k])


def test_fresh_numpy_dynamics_from_eight_threads(chain):
    eqs, q, u, params = chain
    serial = kane.KaneDynamics(eqs, backend="numpy")
    expected = [np.array([serial.udot(0.0, q[i], u[i], params=p) for i in range(16)]) for p in params]
    for _ in range(4):
        dyn = kane.KaneDynamics(eqs, backend="numpy")
        got = _hammer(lambda k: np.array([dyn.udot(0.0, q[i], u[i], params=params[k]) for i in range(16)]))
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
