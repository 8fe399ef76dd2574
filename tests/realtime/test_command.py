"""``kane realtime``: the closing summary and the log, on the virtual clock (no result depends on timing)."""

import h5py
import pytest
from click.testing import CliRunner

from kane.cli import main
from kane.errors import ArgumentError
from kane.realtime.command import parse_couple

CHAIN = "examples/planar_chain.toml"


def test_the_command_prints_the_summary_and_writes_the_log(tmp_path):
    out = tmp_path / "rt.h5"
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--couple", "link7:1,0,0", "--rate", "500", "--duration",
                                    "0.4", "--virtual-clock", "-o", str(out)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "status: completed" in lines[0]
    assert lines[1].startswith("missed deadlines: ") and lines[1].endswith(" of 200 periods")
    assert lines[2].startswith("compute time per period: p50 ")
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == "completed" and int(f["n_committed"][0]) == 200
        # the chain starts horizontal along x: the tip of link7 (1 m along its x) is 7 m out
        assert f["point_position"][0].tolist() == pytest.approx([7.0, 0.0, 0.0], abs=1e-12)


def test_a_body_that_does_not_exist_is_named_with_the_bodies(tmp_path):
    res = CliRunner().invoke(main, ["realtime", CHAIN, "--couple", "handle", "--virtual-clock", "-o",
                                    str(tmp_path / "x.h5")])
    assert res.exit_code == 2
    assert "no body named 'handle'; bodies: link1, link2" in res.output


def test_parse_couple():
    assert parse_couple("link7:1,0,0.5") == ("link7", (1.0, 0.0, 0.5))
    assert parse_couple("link7") == ("link7", (0.0, 0.0, 0.0))
    with pytest.raises(ArgumentError, match="three finite numbers"):
        parse_couple("link7:1,0")
