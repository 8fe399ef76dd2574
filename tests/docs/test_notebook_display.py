"""The viewer in a Jupyter notebook: ``kane.viz.notebook.show_run`` run in an IPython shell displays one HTML
output whose embedded recording holds the run file's samples (the caster of the shopping cart posed at every sample,
at the sample's time over the playback speed, turned by the heading plus the caster angle)."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import kane
from kane.cli import main

CART = Path(__file__).resolve().parents[2] / "examples" / "shopping_cart.toml"
IPython = pytest.importorskip("IPython")


def _recording(cell_html: str) -> dict:
    """The payload viser embeds in the displayed iframe's srcdoc (base64 of an 8-byte size and zstd of an 8-byte
    msgpack length, the msgpack and binary buffers): durationSeconds and the (time, message) list."""
    import msgspec
    import zstandard

    page = html.unescape(re.search(r'<iframe srcdoc="([^"]*)"', cell_html).group(1))
    raw = base64.b64decode(re.search(r'__VISER_EMBED_DATA__="([^"]+)"', page).group(1))
    inner = zstandard.ZstdDecompressor().decompress(raw[8:], max_output_size=int.from_bytes(raw[:8], "little"))
    n = int.from_bytes(inner[:8], "little")
    return msgspec.msgpack.decode(inner[8:8 + n])


def test_show_run_in_an_ipython_shell_displays_the_recorded_run(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["simulate", str(CART), "-o", "cart.h5", "--t-end", "0.5", "--output-dt", "0.05"])
    assert res.exit_code == 0, res.output
    traj = kane.load_trajectory("cart.h5")
    assert len(traj.t) == 11

    shell = InteractiveShell.instance()
    try:
        with capture_output() as captured:
            cell = shell.run_cell("from kane.viz.notebook import show_run\nshow_run('cart.h5', speed=0.5, height=300)")
        assert cell.success, cell.error_in_exec
    finally:
        InteractiveShell.clear_instance()
    assert len(captured.outputs) == 1
    shown = captured.outputs[0].data["text/html"]
    assert 'height="300"' in shown
    payload = _recording(shown)
    assert payload["durationSeconds"] == pytest.approx(0.5 / 0.5)
    turns = [(t, m["wxyz"]) for t, m in payload["messages"]
             if m.get("type") == "SetOrientationMessage" and m.get("name") == "/bodies/C"]
    assert len(turns) == len(traj.t)  # every sample of the run file is posed
    heading_plus_caster = traj.q[:, traj.q_names.index("q3")] + traj.q[:, traj.q_names.index("q4")]
    for k, (t, wxyz) in enumerate(turns):
        assert t == pytest.approx((traj.t[k] - traj.t[0]) / 0.5)
        half = heading_plus_caster[k] / 2  # a turn about the vertical z: (cos a/2, 0, 0, sin a/2), up to sign
        np.testing.assert_allclose(np.abs(np.dot(wxyz, [np.cos(half), 0, 0, np.sin(half)])), 1.0, atol=1e-9)
