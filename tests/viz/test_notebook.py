"""The notebook view: the embedded recording (viser's serialized scene, decoded here) poses the pendulum's rod
at every sample of the run at the sample's time divided by the playback speed."""

import base64
import re

import msgspec
import numpy as np
import pytest
import zstandard

import kane
from kane.errors import ArgumentError
from kane.viz.notebook import record_scene
from kane.viz.scene import build_scene

from .test_scene import pendulum


def _messages(html: str):
    """(durationSeconds, [(time [s], message dict)]) of the recording embedded in ``html`` (viser's layout: an
    8-byte size, zstd of [8-byte msgpack length, msgpack, binary buffers])."""
    raw = base64.b64decode(re.search(r'__VISER_EMBED_DATA__="([^"]+)"', html).group(1))
    inner = zstandard.ZstdDecompressor().decompress(raw[8:], max_output_size=int.from_bytes(raw[:8], "little"))
    n = int.from_bytes(inner[:8], "little")
    payload = msgspec.msgpack.decode(inner[8:8 + n])
    return payload["durationSeconds"], payload["messages"]


def test_the_recording_poses_the_bodies_at_the_run_samples(tmp_path):
    eqs = kane.derive(pendulum())
    kane.simulate.simulate(eqs.compile(), (0.0, 0.5), [0.4], [0.0], output_dt=0.05, path=tmp_path / "run.h5")
    scene = build_scene(eqs, kane.load_trajectory(tmp_path / "run.h5"))
    rec = record_scene(scene, speed=0.5)
    duration, messages = _messages(rec.html)
    assert rec.samples == len(scene.t) == 11 and duration == pytest.approx(1.0) == rec.duration
    turns = [(t, m["wxyz"]) for t, m in messages if m.get("type") == "SetOrientationMessage"
             and m.get("name") == "/bodies/rod"]
    assert len(turns) == len(scene.t)
    for k, (t, wxyz) in enumerate(turns):
        assert t == pytest.approx((scene.t[k] - scene.t[0]) / 0.5)
        np.testing.assert_allclose(wxyz, scene.wxyz[k, 0], atol=1e-12)
    with pytest.raises(ArgumentError, match="speed must be > 0"):
        record_scene(scene, speed=0.0)
