"""A run made from an MJCF or URDF model file opens for viewing without --model: those files are data (read by
their importers), unlike Python scripts, which kane never runs on a data file's word."""

import numpy as np
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.viz.viewer import open_run

PENDULUM_XML = """<mujoco model="pendulum">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="arm" pos="0 0 0">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.5" mass="2" diaginertia="0.01 0.01 0.01"/>
    </body>
  </worldbody>
</mujoco>
"""

PENDULUM_URDF = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/></joint>
</robot>
"""


@pytest.mark.parametrize("name, text", [("pendulum.xml", PENDULUM_XML), ("pendulum.urdf", PENDULUM_URDF)])
def test_a_run_of_an_imported_model_opens_without_model_and_keeps_its_energy(tmp_path, name, text):
    model = tmp_path / name
    model.write_text(text)
    run = tmp_path / "run.h5"
    done = CliRunner().invoke(main, ["simulate", str(model), "-o", str(run), "--t-end", "0.5", "--rtol", "1e-10",
                                     "--atol", "1e-10"])
    assert done.exit_code == 0, done.output
    opened = open_run(run)  # no --model and no script consent: the run names a data file
    traj = opened.trajectory
    assert traj.n_samples > 2 and traj.q.shape[1] == 1 and opened.equations.mass_matrix.shape == (1, 1)
    # hand reference: the pendulum (m = 2 kg, centre of mass 0.5 m below the hinge, I_yy = 0.01 kg m^2 about it)
    # keeps E = 1/2 (I + m l^2) w^2 - m g l cos(th) constant; the energy the run recorded equals it
    m, l, g, I = 2.0, 0.5, 9.81, 0.01
    th, w = traj.q[:, 0], traj.u[:, 0]
    E = 0.5 * (I + m * l * l) * w ** 2 - m * g * l * np.cos(th)
    np.testing.assert_allclose(E - E[0], 0.0, atol=1e-8)
