"""kane.simulate.monitors: the standard monitors evaluated in one batch equal them evaluated sample by sample (the
compiled loop's batch and the Python loop's calls), and a run of the compiled loop records the same values."""

from pathlib import Path

import numpy as np
import pytest

import kane
from kane.io.model_file import load_model
from kane.simulate.monitors import BatchMonitor, standard_monitors

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def disk():
    """The rolling disk: dependent speeds, motion and configuration constraints, a quaternion."""
    lm = load_model(EXAMPLES / "rolling_disk.toml")
    dyn = lm.derive().compile("c")
    return lm, dyn


def test_batch_equals_one_sample_at_a_time(disk):
    lm, dyn = disk
    params, inputs = dict(lm.parameters), lm.input_function(dyn)
    monitors = standard_monitors(dyn, params, inputs)
    assert set(monitors) == {"dependent_block_condition", "power", "constraint", "configuration", "quaternion_norm"}
    q0, u0 = lm.initial_state(dyn)
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 1.0, 25)
    q = q0 + 0.05 * rng.standard_normal((25, dyn.n_q))
    u = u0 + 0.5 * rng.standard_normal((25, dyn.n_u))
    for name, f in monitors.items():
        assert isinstance(f, BatchMonitor), name
        one = np.array([f(t[i], q[i], u[i]) for i in range(25)])
        np.testing.assert_allclose(f.batch(t, q, u), one, rtol=1e-13, atol=1e-15, err_msg=name)
    # an independent reference for two of them: |e| - 1 of the disk's quaternion, and the condition >= 1
    quat = [idx for _, idx in dyn.model.quaternion_indices()][0]
    np.testing.assert_allclose(monitors["quaternion_norm"].batch(t, q, u),
                               np.abs(np.linalg.norm(q[:, quat], axis=1) - 1.0), rtol=0, atol=1e-15)
    assert (monitors["dependent_block_condition"].batch(t, q, u) >= 1.0 - 1e-12).all()


def test_compiled_run_records_the_monitors_of_the_python_loop(disk):
    lm, dyn = disk
    q0, u0 = lm.initial_state(dyn)
    opts = dict(t_end=1.0, rtol=1e-9, atol=1e-9, output_dt=0.02, standard_monitors=True)
    kw = dict(params=dict(lm.parameters), inputs=lm.input_function(dyn))
    fast = kane.run(dyn, kane.State(q0, u0), kane.RunOptions(**opts), **kw)
    slow = kane.run(dyn, kane.State(q0, u0), kane.RunOptions(**opts, loop="python"), **kw)
    assert fast.stats.loop == "compiled" and slow.stats.loop == "python"
    for name in slow.residuals:
        np.testing.assert_allclose(fast.residuals[name], slow.residuals[name], rtol=1e-6, atol=1e-9, err_msg=name)
