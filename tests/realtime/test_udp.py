"""UdpDevice against a fake device bridge in its own process on 127.0.0.1: 4,600 state packets at 1 kHz with lost,
late, replayed, malformed and oversized packets injected; the counts equal what was injected and the loop goes on."""

import json
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from kane import realtime as rt
from kane.cli import main
from kane.errors import ArgumentError, KaneError
from kane.realtime import FORCE_SIZE, STATE_SIZE, UdpDevice, pack_state, unpack_force

FAKE = Path(__file__).with_name("_fake_udp_device.py")
N = 4600  # state packets the fake device sends (at 1 kHz): each kind of fault its tables inject, 3 to 7 times


def test_packet_layout():
    assert (STATE_SIZE, FORCE_SIZE) == (72, 48)  # 4 + 2 + 2 + 8 + 8 + 6 * 8 and 4 + 2 + 2 + 8 + 8 + 3 * 8
    data = pack_state(7, 1.5, (1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    assert data[:4] == b"KRTS" and int.from_bytes(data[8:16], "little") == 7
    assert np.frombuffer(data[24:], dtype="<f8").tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(ArgumentError, match="expected 48"):
        unpack_force(data)


def test_udp_device_against_a_fake_device_process(wall, tmp_path):
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2e4, 12.0), max_force=1e3)
    dev = UdpDevice(0, max_force=1e3, workspace=rt.Workspace((-1, -1, -1), (1, 1, 1)), connect_timeout=10.0)
    fake = subprocess.Popen([sys.executable, str(FAKE), str(dev.port), str(N)], stdout=subprocess.PIPE, text=True)
    try:
        # real clock at 1 kHz; the loop ends when the device has been silent for device_timeout after its last packet
        options = rt.LoopOptions(rate=1000.0, duration=60.0, device_timeout=1.0, flush_every=2000)
        result = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=options, log=tmp_path / "udp.h5").run()
        out, _ = fake.communicate(timeout=30)
    finally:
        fake.kill()
    sent = json.loads(out)
    c = dev.counts
    assert result.status.startswith("device stopped answering")
    # what the fake's tables inject below N, counted by hand: lost 300, 1000, ..., 4500; late 450, 1750, 3050, 4350;
    # replayed 600, 1500, 2400, 3300, 4200; malformed 1000..4000; oversized 1500, 2500, 3500
    assert (c["lost"], c["late"], c["replayed"], c["malformed"], c["oversized"]) == (7, 4, 5, 4, 3)
    assert c["received"] == sent["sent"]
    assert c["used"] + c["superseded"] + c["late"] + c["replayed"] + c["malformed"] + c["oversized"] == c["received"]
    valid = N - 7
    assert c["used"] + c["superseded"] + c["late"] == valid
    # the replies: well formed, one per period while the device was there, echoing sequence numbers it sent
    assert sent["bad_replies"] == 0 and sent["replies"] > N // 2 and sent["echoed_skipped"] == 0
    assert sent["max_echoed"] == N - 1
    assert result.refused == 0 and result.deadlines.periods >= 9 * N // 10
    with h5py.File(result.log, "r") as f:
        assert json.loads(f.attrs["counts"])["device"] == c
        assert int(f["n_committed"][0]) == result.deadlines.periods


def test_no_device_is_a_clear_error():
    dev = UdpDevice(0, connect_timeout=0.05)
    with pytest.raises(KaneError, match=rf"no valid state packet on udp 127.0.0.1:{dev.port} within 0.05 s"):
        dev.open()
    dev.close()


def test_the_command_says_where_it_waits_for_the_device(tmp_path):
    out = tmp_path / "udp.h5"
    res = CliRunner().invoke(main, ["realtime", "examples/planar_chain.toml", "--device", "udp", "--udp-port", "0",
                                    "-o", str(out)])
    assert res.exit_code == 2
    waiting = re.search(r"waiting up to 5 s for the device bridge's first state packet on udp 127\.0\.0\.1:(\d+)",
                        res.output)
    assert waiting and int(waiting.group(1)) > 0, res.output  # port 0: the one the system gave, to tell the bridge
    assert f"no valid state packet on udp 127.0.0.1:{waiting.group(1)} within 5 s" in res.output
    with h5py.File(out, "r") as f:  # the log is closed at once, empty, saying why
        assert f.attrs["status"].startswith("failed: the device did not open") and f["t"].shape == (0,)


def test_a_pose_device_sends_its_orientation_and_gets_the_torque_back():
    # version 2 packets written here from the module's text: state = header, seq, stamp, position, velocity,
    # quaternion (w, x, y, z), angular velocity; reply = header, seq, t, force, torque
    state, reply = struct.Struct("<4sHHQd3d3d4d3d"), struct.Struct("<4sHHQd3d3d")
    assert (state.size, reply.size) == (128, 72)
    dev = UdpDevice(0, pose=True, workspace=rt.Workspace((-1, -1, -1), (1, 1, 1)), connect_timeout=5.0)
    bridge = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    bridge.settimeout(2.0)
    half = np.sqrt(0.5)  # a quarter turn about z: (cos 45 deg, 0, 0, sin 45 deg)
    try:
        bridge.sendto(pack_state(0, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (0, 0, 0)),
                      ("127.0.0.1", dev.port))
        dev.open()
        bridge.sendto(b"\x00" * 72, ("127.0.0.1", dev.port))  # a version 1 packet's size: malformed here
        bridge.sendto(struct.pack("<4sHHQd3d3d", b"KRTS", 1, 0, 5, 0.0, *[0.0] * 6) + bytes(56),
                      ("127.0.0.1", dev.port))  # the right size, version 1: malformed
        bridge.sendto(state.pack(b"KRTS", 2, 0, 1, 0.1, 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, half, 0.0, 0.0, half,
                                 0.0, 0.0, 2.0), ("127.0.0.1", dev.port))
        bridge.sendto(state.pack(b"KRTS", 2, 0, 2, 0.2, 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.1, 0.0, 0.0, 0.0,
                                 0.0, 0.0, 0.0), ("127.0.0.1", dev.port))  # not a unit quaternion
        time.sleep(0.05)
        sample = dev.read(1.0)
        # the newest packet wins (seq 2); its quaternion of norm 1.1 gives no rotation: check_sample refuses it
        assert dev.counts["malformed"] == 2 and dev.counts["superseded"] == 1
        assert "orientation is not a rotation" in rt.check_sample(sample, dev.workspace, True)
        bridge.sendto(state.pack(b"KRTS", 2, 0, 3, 0.3, 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, half, 0.0, 0.0, half,
                                 0.0, 0.0, 2.0), ("127.0.0.1", dev.port))
        time.sleep(0.05)
        sample = dev.read(1.1)
        np.testing.assert_allclose(sample.orientation, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
        assert sample.angular_velocity == (0.0, 0.0, 2.0) and rt.check_sample(sample, dev.workspace, True) is None
        dev.write_force(1.1, (1.0, 2.0, 3.0))  # kept, sent with the torque
        dev.write_torque(1.1, (0.4, 0.5, 0.6))
        magic, version, flags, seq, t, *wrench = reply.unpack(bridge.recv(1024))
        assert (magic, version, flags, seq, t) == (b"KRTF", 2, 0, 3, 1.1)
        assert wrench == [1.0, 2.0, 3.0, 0.4, 0.5, 0.6]
    finally:
        bridge.close()
        dev.close()
    # a point-only device cannot take a pose coupler's torque
    with pytest.raises(ArgumentError, match="speaks the pose protocol"):
        UdpDevice(0).write_torque(0.0, (0, 0, 0))
