"""The UDP device bridge admits only its device (issue 27 item 5): it listens on loopback, pairs with one sender (the
configured peer or the first valid one), counts and ignores every other sender, and its sequence arithmetic (modulo
2**64) never makes the lost count underflow."""

import json
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import pytest
from click.testing import CliRunner

import kane
from kane import joints as J
from kane import realtime as rt
from kane.cli import main
from kane.errors import ArgumentError
from kane.realtime import UdpDevice

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realtime"))
from _fake_udp_device import (FORCE_SIZE, MALFORMED, OVERSIZED, REPLAYED, SKIPPED, SWAPPED,  # noqa: E402
                              pack_state, unpack_force)

FAKE = Path(__file__).resolve().parents[1] / "realtime" / "_fake_udp_device.py"
WRAP = 1 << 64
SPACE = rt.Workspace((-1, -1, -1), (1, 1, 1))


@pytest.fixture(scope="module")
def wall():
    """(dynamics, port) of a 0.1 kg particle on a spring of 1e5 N/m along x, the coupler on it."""
    s = kane.System("wall")
    s.add_particle("P", 0.1)
    s.add_joint("ground", "P", J.Prismatic("x"), name="slide", coordinates=["x"], speeds=["v"])
    s.add_joint_spring("slide", 1e5)
    port = rt.add_coupler(s, "P")
    return kane.derive(s).compile(), port


def _socket():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    return sock


def _state(seq):
    return pack_state(seq, 0.0, (0.001 * (seq % 7), 0.0, 0.0), (0.0, 0.0, 0.0))


def _settle(dev, received, foreign=None):
    """Read dev until it has counted ``received`` datagrams of its device (and ``foreign`` of others)."""
    end = time.perf_counter() + 5.0
    while dev.counts["received"] < received or (foreign is not None and dev.counts["foreign"] < foreign):
        dev.read(0.0)
        assert time.perf_counter() < end, dev.counts
        time.sleep(1e-3)


def _replies(sock):
    """The sequence numbers of the force packets waiting on ``sock``."""
    seqs = []
    sock.settimeout(0.05)
    while True:
        try:
            data = sock.recv(2048)
        except (socket.timeout, BlockingIOError):
            return seqs
        seqs.append(unpack_force(data)[0])


def test_it_listens_on_loopback_unless_told_otherwise():
    dev = UdpDevice(0)
    try:
        assert dev.sock.getsockname()[0] == "127.0.0.1"
    finally:
        dev.close()
    with pytest.raises(ArgumentError, match=r"peer must be a host or \(host, port 0..65535\), got 42"):
        UdpDevice(0, peer=42)
    with pytest.raises(ArgumentError, match=r"peer must be .* got \('127.0.0.1', 70000\)"):
        UdpDevice(0, peer=("127.0.0.1", 70000))


def test_a_second_sender_neither_steals_nor_stops_the_loop(wall, tmp_path):
    dyn, port = wall
    cp = rt.VirtualCoupler(dyn, port, rt.CouplerGains(2e4, 12.0), max_force=1e3)
    hostile, stop, sent_hostile = _socket(), threading.Event(), [0]

    def attack():  # once the device is paired, until the loop ends: far-ahead, wrapped, backwards and copied
        # sequence numbers, as fast as a thread beside the loop can
        while dev.paired is None and not stop.is_set():
            time.sleep(1e-3)
        seqs = [WRAP - 1, 0, 1 << 63, 5, 123456789]
        while not stop.is_set():
            hostile.sendto(_state(seqs[sent_hostile[0] % len(seqs)]), ("127.0.0.1", dev.port))
            sent_hostile[0] += 1
            time.sleep(5e-4)

    class Attacked(UdpDevice):
        def close(self):  # the loop's end: stop the attacker, then count what it sent before closing
            stop.set()
            attacker.join(5)
            seen = -1
            while seen != self.counts["foreign"]:
                seen = self.counts["foreign"]
                self.read(0.0)
            super().close()

    dev = Attacked(0, max_force=1e3, workspace=SPACE, connect_timeout=10.0)
    fake = subprocess.Popen([sys.executable, str(FAKE), str(dev.port), "2000"], stdout=subprocess.PIPE, text=True)
    attacker = threading.Thread(target=attack, daemon=True)
    attacker.start()
    try:
        options = rt.LoopOptions(rate=1000.0, duration=30.0, device_timeout=0.5, flush_every=2000)
        result = rt.RealtimeLoop(cp, dev, [0.0], [0.0], options=options, log=tmp_path / "udp.h5").run()
        out, _ = fake.communicate(timeout=30)
    finally:
        stop.set()
        attacker.join(5)
        fake.kill()
    sent = json.loads(out)
    c = dev.counts
    stolen, hostile_address = _replies(hostile), hostile.getsockname()
    hostile.close()
    # the loop ran to the device's end, not stopped by the hostile packets: it answered the device's last packet
    # (seq 1,999) and stopped only when the device fell silent
    assert result.status.startswith("device stopped answering at t = ") and sent["max_echoed"] == 1999
    assert c["foreign"] == sent_hostile[0] > 200  # each hostile packet counted, none taken
    with h5py.File(result.log, "r") as f:  # and the log says so
        assert json.loads(f.attrs["counts"])["device"] == c
    assert stolen == [] and dev.paired != hostile_address  # every reply went to the device
    # the device's own counts are exactly what it injected (2,000 packets: 3 skipped, 2 swapped, 2 replayed, ...)
    injected = tuple(sum(k < 2000 for k in kind) for kind in (SKIPPED, SWAPPED, REPLAYED, MALFORMED, OVERSIZED))
    assert (c["lost"], c["late"], c["replayed"], c["malformed"], c["oversized"]) == injected == (3, 2, 2, 1, 1)
    assert c["received"] == sent["sent"] and c["used"] + c["superseded"] + c["late"] == 2000 - 3
    assert sent["bad_replies"] == 0 and sent["replies"] > 1000
    assert sent["echoed_skipped"] == 0


def test_the_configured_peer_is_the_only_one_heard():
    device, hostile = _socket(), _socket()
    dev = UdpDevice(0, peer=device.getsockname(), workspace=SPACE)
    addr = ("127.0.0.1", dev.port)
    try:
        hostile.sendto(_state(100), addr)  # first, valid: not the configured peer
        device.sendto(_state(7), addr)
        dev.open()
        _settle(dev, 1, foreign=1)
        assert dev.paired == device.getsockname() and dev.counts["foreign"] == 1
        dev.write_force(0.1, (1.0, 2.0, 3.0))
        seq, t, force = unpack_force(device.recv(FORCE_SIZE))
        assert (seq, t, force) == (7, 0.1, [1.0, 2.0, 3.0]) and _replies(hostile) == []
    finally:
        for s in (device, hostile):
            s.close()
        dev.close()


def test_the_first_valid_sender_pairs_and_a_malformed_one_does_not():
    first, second = _socket(), _socket()
    dev = UdpDevice(0, workspace=SPACE)
    addr = ("127.0.0.1", dev.port)
    try:
        second.sendto(b"KRTS" + bytes(68), addr)  # the right size, version 0: malformed, pairs nothing
        first.sendto(_state(3), addr)
        second.sendto(_state(4), addr)
        dev.open()
        _settle(dev, 2, foreign=1)
        assert dev.paired == first.getsockname()
        assert {k: dev.counts[k] for k in ("received", "malformed", "used", "foreign")} == \
            {"received": 2, "malformed": 1, "used": 1, "foreign": 1}
        assert dev.last_seq == 3  # the foreign seq 4 was not taken
    finally:
        for s in (first, second):
            s.close()
        dev.close()


def _feed(dev, sock, seqs):
    before = dev.counts["received"]
    for seq in seqs:
        sock.sendto(_state(seq), ("127.0.0.1", dev.port))
    _settle(dev, before + len(seqs))
    c = dev.counts
    return {"lost": c["lost"], "late": c["late"], "replayed": c["replayed"], "fresh": c["used"] + c["superseded"]}


def test_wrapped_and_backwards_sequences_count_exactly():
    device = _socket()
    dev = UdpDevice(0, workspace=SPACE)
    try:
        device.sendto(_state(WRAP - 3), ("127.0.0.1", dev.port))
        dev.open()  # paired at seq 2**64 - 3
        # across the wrap, 2**64 - 1 skipped: one lost, not 2**64 - 2
        assert _feed(dev, device, [WRAP - 2, 0, 1]) == {"lost": 1, "late": 0, "replayed": 0, "fresh": 4}
        # ... and arrives late: back to none lost
        assert _feed(dev, device, [WRAP - 1]) == {"lost": 0, "late": 1, "replayed": 0, "fresh": 4}
        # 1 -> 5: 2, 3, 4 lost; 3 arrives late, 3 again is a replay, 5 again too
        assert _feed(dev, device, [5, 3, 3, 5]) == {"lost": 2, "late": 2, "replayed": 2, "fresh": 5}
        # behind the pairing's first packet, or half the width or more behind: late, nothing
        # taken from lost (the old arithmetic took one per late packet: 2 - 3 wrapped to 2**64 - 1)
        assert _feed(dev, device, [WRAP - 100, (1 << 63) + 5, (1 << 63) + 6]) == \
            {"lost": 2, "late": 5, "replayed": 2, "fresh": 5}
        # the device goes on: 6 is fresh, 2 and 4 fill the gap, one per packet, never below zero
        assert _feed(dev, device, [6, 2, 4, 4, 2]) == {"lost": 0, "late": 7, "replayed": 4, "fresh": 6}
        assert dev.last_seq == 6
    finally:
        device.close()
        dev.close()


def test_the_command_listens_beyond_loopback_only_when_told_and_names_a_bad_peer(tmp_path):
    out = tmp_path / "udp.h5"
    args = ["realtime", "examples/planar_chain.toml", "--device", "udp", "--udp-port", "0", "-o", str(out)]
    res = CliRunner().invoke(main, [*args, "--udp-peer", "127.0.0.1:http"])
    assert res.exit_code == 2 and "udp peer '127.0.0.1:http': expected HOST or HOST:PORT (port 0..65535)" in \
        res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, [*args, "--udp-host", "0.0.0.0", "--udp-peer", "127.0.0.1:9"])
    assert res.exit_code == 2
    assert re.search(r"warning: listening beyond loopback on udp 0\.0\.0\.0:\d+", res.output), res.output
    assert re.search(r"first state packet on udp 0\.0\.0\.0:\d+ from 127\.0\.0\.1:9\n", res.output), res.output
    model = tmp_path / "m.toml"
    model.write_text(Path("examples/planar_chain.toml").read_text().replace(
        "[realtime]\n", '[realtime]\nudp_peer = "host:99999"\n'))
    res = CliRunner().invoke(main, ["realtime", str(model), "--device", "udp", "-o", str(out)])
    assert res.exit_code == 2 and "udp_peer" in res.output and "port 0..65535" in res.output, res.output
