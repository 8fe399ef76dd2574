"""The UDP device read and answered by the C period (kane.realtime.c_period_text, protocols v1 and v2): against the
fake device process its counts are what the process injected, as the Python UdpDevice's are; on the same burst of
datagrams (foreign, malformed, oversized, replayed, late, superseded, a bad quaternion) the C period and the Python
period count the same, log the same rows and send the same reply bytes."""

import importlib.util
import json
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np

from kane import realtime as rt
from kane.realtime import UdpDevice, pack_state

FAKE = Path(__file__).with_name("_fake_udp_device.py")
N = 4600  # state packets the fake device sends (at 1 kHz)


def _fake_module():
    spec = importlib.util.spec_from_file_location("_fake_udp_device", FAKE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_c_period_counts_what_the_fake_device_injected(wall, tmp_path):
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2e4, 12.0), max_force=1e3)
    dev = UdpDevice(0, max_force=1e3, workspace=rt.Workspace((-1, -1, -1), (1, 1, 1)), connect_timeout=10.0)
    options = rt.LoopOptions(rate=1000.0, duration=60.0, device_timeout=1.0, flush_every=2000,
                             loop_path=rt.LoopPath.C)
    loop = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=options, log=tmp_path / "udp.h5")  # C built before
    fake = subprocess.Popen([sys.executable, str(FAKE), str(dev.port), str(N)], stdout=subprocess.PIPE, text=True)
    try:
        result = loop.run()
        out, _ = fake.communicate(timeout=30)
    finally:
        fake.kill()
    sent = json.loads(out)
    m = _fake_module()
    # what the fake injected below N, counted from its own tables (its JSON counts its tables to 10,000)
    lost = len([k for k in m.SKIPPED if k < N])
    late = len([k for k in m.SWAPPED if k + 1 < N])
    replayed = len([k for k in m.REPLAYED if k < N])
    malformed, oversized = len([k for k in m.MALFORMED if k < N]), len([k for k in m.OVERSIZED if k < N])
    c = dev.counts
    assert result.loop_path == "c" and result.status.startswith("device stopped answering")
    assert (c["lost"], c["late"], c["replayed"], c["malformed"], c["oversized"]) == \
        (lost, late, replayed, malformed, oversized) == (7, 4, 5, 4, 3)
    assert c["received"] == sent["sent"] and c["foreign"] == 0
    assert c["used"] + c["superseded"] + c["late"] == N - lost
    assert sent["bad_replies"] == 0 and sent["replies"] > 2000 and sent["echoed_skipped"] == 0
    assert sent["max_echoed"] == N - 1 and c["replies"] >= sent["replies"]
    with h5py.File(result.log, "r") as f:
        assert json.loads(f.attrs["counts"])["device"] == c and json.loads(f.attrs["counts"])["loop_path"] == "c"
        assert int(f["n_committed"][0]) == result.deadlines.periods >= N - 100


def _burst(port: int, pose: bool, foreign: socket.socket, bridge: socket.socket) -> None:
    """A scripted burst to 127.0.0.1:port, sent before the loop's first period."""
    dest = ("127.0.0.1", port)
    q = (1.0, 0.0, 0.0, 0.0)
    half = np.sqrt(0.5)

    def state(seq, x, v=(0.1, 0.0, 0.0), quat=q, w=(0.0, 0.0, 0.5)):
        return pack_state(seq, 0.0, x, v, quat, w) if pose else pack_state(seq, 0.0, x, v)

    size = 128 if pose else 72
    packets = [state(3, (0.01, 0.0, 0.0)), state(1, (0.5, 0.0, 0.0)),  # 2 lost, then 1 fills a gap: late
               state(3, (0.02, 0.0, 0.0)),  # replayed
               bytes(size + 1), b"KRTS" + bytes(size - 4), b"\x00" * 10,  # oversized, malformed (version 0), short
               state(8, (0.03, 0.01, 0.0), quat=(half, 0.0, 0.0, half))]
    if pose:
        packets.append(state(9, (0.03, 0.01, 0.0), quat=(1.1, 0.0, 0.0, 0.0)))  # not a rotation: refused
    for data in packets:
        bridge.sendto(data, dest)
    foreign.sendto(state(50, (0.9, 0.0, 0.0)), dest)  # another sender: ignored


def _run(path, pose, tmp_path, wall, ball):
    dyn, port = ball if pose else wall
    gains = rt.CouplerGains(100.0, 2.0, rotational_stiffness=1.0, rotational_damping=0.05) if pose else \
        rt.CouplerGains(100.0, 2.0)
    cp = rt.VirtualCoupler(dyn, port, gains, max_force=50.0)
    dev = UdpDevice(0, max_force=50.0, workspace=rt.Workspace((-1, -1, -1), (1, 1, 1)), hold=60.0, pose=pose)
    bridge, foreign = (socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2))
    bridge.settimeout(2.0)
    q0 = np.array(dyn.model.q0) if pose else np.zeros(1)
    try:
        first = pack_state(0, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) \
            if pose else pack_state(0, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        bridge.sendto(first, ("127.0.0.1", dev.port))  # the packet open() pairs with
        dev.open()
        _burst(dev.port, pose, foreign, bridge)
        time.sleep(0.05)  # on loopback: all in the socket before the first period, which drains them all
        dev.open = lambda: None  # opened above: the loop's open() must not drain the burst
        options = rt.LoopOptions(rate=1000.0, duration=0.005, clock=rt.ClockMode.VIRTUAL, loop_path=path)
        result = rt.RealtimeLoop(cp, dev, q0, np.zeros(dyn.n_u), options=options,
                                 log=tmp_path / f"{path.value}{pose}.h5").run()
        replies = []
        bridge.settimeout(0.5)
        while len(replies) < 6:
            replies.append(bridge.recv(1024))
    finally:
        bridge.close()
        foreign.close()
    return result, dict(dev.counts), replies


def test_the_c_period_and_the_python_period_take_a_burst_alike(wall, tmp_path):
    import kane
    from kane import joints as J

    s = kane.System("ball")
    s.add_body("b", 1.0, inertia=(0.01, 0.02, 0.03))
    s.add_joint("ground", "b", J.Spherical(), name="ball")
    port = rt.add_coupler(s, "b", rotational=True)
    ball = (kane.derive(s).compile(), port)
    for pose in (False, True):
        a, ca, ra = _run(rt.LoopPath.PYTHON, pose, tmp_path, wall, ball)
        b, cb, rb = _run(rt.LoopPath.C, pose, tmp_path, wall, ball)
        assert (a.loop_path, b.loop_path) == ("python", "c")
        assert ca == cb
        expected = {"lost": 5, "late": 1, "replayed": 1, "malformed": 2, "oversized": 1, "foreign": 1,
                    "superseded": 2 if pose else 1, "received": 9 if pose else 8, "replies": 6}
        assert {k: cb[k] for k in expected} == expected
        assert b.refused == a.refused == (5 if pose else 0)  # the held bad quaternion: every period
        assert ra == rb  # the reply packets, byte for byte (sequence echoed, t, force, torque)
        seq, t = struct.unpack_from("<Qd", rb[1], 8)
        assert seq == (9 if pose else 8) and t == 0.001
        with h5py.File(a.log, "r") as fa, h5py.File(b.log, "r") as fb:
            for name in ("force", "hand_position", "q", "u", "sample_status", "power", "port_energy"):
                np.testing.assert_allclose(fb[name][()], fa[name][()], rtol=0, atol=1e-12, err_msg=name)
            assert np.abs(fa["force"][()]).max() > 1.0 or pose
