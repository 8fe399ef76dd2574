"""A fake haptic device bridge for tests/realtime/test_udp.py, run as its own process:
``python _fake_udp_device.py PORT N``. It sends N state packets at 1 kHz to 127.0.0.1:PORT (sequence numbers 0..N-1,
a few skipped, a few sent out of order) with malformed, replayed and oversized packets injected, reads the force
packets that come back, and prints one JSON line: what it injected and what it received."""

import json
import socket
import struct
import sys
import time

# the packets as kane.realtime.udp's docstring documents them, written here from that text (not imported from kane:
# an independent encoding, and a process that starts in milliseconds)
_STATE = struct.Struct("<4sHHQd3d3d")  # b"KRTS", version 1, flags, seq, stamp, position (3), velocity (3)
_FORCE = struct.Struct("<4sHHQd3d")  # b"KRTF", version 1, flags, echoed seq, t, force (3)
FORCE_SIZE = _FORCE.size


def pack_state(seq, stamp, position, velocity):
    return _STATE.pack(b"KRTS", 1, 0, seq, stamp, *position, *velocity)


def unpack_force(data):
    if len(data) != FORCE_SIZE:
        raise ValueError(f"force packet of {len(data)} bytes")
    magic, version, flags, seq, t, *force = _FORCE.unpack(data)
    if (magic, version, flags) != (b"KRTF", 1, 0):
        raise ValueError(f"force packet header {magic!r} {version} {flags}")
    return seq, t, force


SKIPPED = set(range(300, 10000, 700))  # never sent: lost
SWAPPED = set(range(450, 10000, 1300))  # k + 1 sent before k: k arrives late
REPLAYED = set(range(600, 10000, 900))  # after k, the packet k - 5 again
MALFORMED = {1000: b"\x00" * 10, 2000: b"XXXX" + bytes(68), 3000: struct.pack("<4sHHQd3d3d", b"KRTS", 9, 0, 0, 0,
                                                                                 *[0.0] * 6), 4000: b""}
OVERSIZED = {1500: bytes(73), 2500: bytes(1000), 3500: bytes(60000)}


def main(port: int, n: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    dest = ("127.0.0.1", port)
    sent, replies, echoed, bad_replies = 0, 0, set(), 0

    def state(k):
        x = 0.01 * (k % 100) / 100
        return pack_state(k, time.monotonic(), (x, 0.0, 0.0), (0.01, 0.0, 0.0))

    def send(data):
        nonlocal sent
        sock.sendto(data, dest)
        sent += 1

    def receive():
        nonlocal replies, bad_replies
        while True:
            try:
                data = sock.recv(2048)
            except (BlockingIOError, ConnectionRefusedError):
                return
            try:
                seq, _, _ = unpack_force(data)
                replies += 1
                echoed.add(seq)
            except Exception:
                bad_replies += 1

    t0 = time.perf_counter()
    for k in range(n):
        wait = t0 + k * 1e-3 - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        if k in SKIPPED or k - 1 in SWAPPED:
            pass
        elif k in SWAPPED:
            send(state(k + 1))
            send(state(k))
        else:
            send(state(k))
        if k in REPLAYED:
            send(state(k - 5))
        if k in MALFORMED:
            send(MALFORMED[k])
        if k in OVERSIZED:
            send(OVERSIZED[k])
        receive()
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:
        receive()
        time.sleep(1e-3)
    print(json.dumps({"sent": sent, "lost": len(SKIPPED), "late": len(SWAPPED), "replayed": len(REPLAYED),
                      "malformed": len(MALFORMED), "oversized": len(OVERSIZED), "replies": replies,
                      "bad_replies": bad_replies, "max_echoed": max(echoed, default=-1),
                      "echoed_skipped": len(echoed & SKIPPED), "force_size": FORCE_SIZE}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
