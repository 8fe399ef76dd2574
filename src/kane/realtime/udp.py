"""A haptic device behind a UDP bridge (issue 14): a little binary protocol, little-endian, one datagram each way.

Device -> kane, a *state packet* of :data:`STATE_SIZE` = 72 bytes (``struct`` format :data:`STATE_FORMAT`)::

    magic    4 bytes  b"KRTS"
    version  uint16   1
    flags    uint16   0 (reserved)
    seq      uint64   sequence number, +1 per packet sent
    stamp    float64  the device's own clock [s] (not synchronised with kane's; logged only)
    position 3 float64  handle position [m], ground axes
    velocity 3 float64  handle velocity [m/s], ground axes

kane -> device, a *force packet* of :data:`FORCE_SIZE` = 48 bytes (:data:`FORCE_FORMAT`), sent to the paired device
(see below), once per loop period::

    magic    4 bytes  b"KRTF"
    version  uint16   1
    flags    uint16   0
    seq      uint64   the sequence number of the state this force answers (echoed)
    t        float64  the loop's time [s]
    force    3 float64  the force the device displays [N], ground axes

A device that measures its handle's pose (``UdpDevice(..., pose=True)``, a full pose coupled) speaks version 2: its
state packet (:data:`POSE_STATE_FORMAT`, 128 bytes) carries after the velocity::

    orientation 4 float64  the handle's orientation, a unit quaternion (w, x, y, z), its axes to ground axes
    angular_velocity 3 float64  [rad/s], ground axes

and the reply (:data:`WRENCH_FORMAT`, 72 bytes) carries after the force ``torque 3 float64`` [N m], ground axes
(sent when the loop writes the torque, after the force). A quaternion whose norm is not 1 (to 1e-6) gives no
rotation: the loop refuses that sample and counts it.

The bridge listens on loopback (127.0.0.1) unless given another ``host`` explicitly, and pairs with one device: the
configured ``peer`` (a host, or a host and port), else the first sender of a valid state packet. Datagrams from any
other sender are *foreign*: counted and ignored (never answered, never used, never counted as received), so a
second local sender can neither steal the loop nor stop it.

Each period :meth:`UdpDevice.read` drains the socket without blocking (at most 512 datagrams a period, so a flood
cannot hold the loop). A datagram longer than a state packet is *oversized*, a shorter one or one with the wrong
magic or version *malformed*; a sequence number already received is *replayed*; one behind the newest but never
received arrived *late* (out of order); all these are refused and counted, the loop goes on. Sequence numbers are
compared modulo 2**64 (a device's counter may wrap): one less than 2**63 ahead of the newest is ahead, any other
behind. A forward gap counts its packets *lost*; a late packet that fills a gap counted since pairing moves one
from lost to late, any other late packet (behind the first one paired, or 4096 or more behind) only
counts late, so lost never goes below zero. Of several fresh packets in one period only the newest is used (the
others counted *superseded*). With no fresh packet, the newest sample is used again while it is younger than
``hold`` [s]; after that the device has stopped answering (read returns None and the loop stops after its
``device_timeout``).
"""

from __future__ import annotations

import collections
import math
import socket
import struct
import time

from ..errors import ArgumentError, KaneError
from .devices import DeviceSample, Workspace

__all__ = ["STATE_FORMAT", "STATE_SIZE", "FORCE_FORMAT", "FORCE_SIZE", "STATE_MAGIC", "FORCE_MAGIC",
           "PROTOCOL_VERSION", "POSE_VERSION", "POSE_STATE_FORMAT", "WRENCH_FORMAT", "pack_state", "unpack_force",
           "unpack_wrench", "quaternion_matrix", "parse_peer", "UdpDevice"]

STATE_MAGIC, FORCE_MAGIC, PROTOCOL_VERSION = b"KRTS", b"KRTF", 1
STATE_FORMAT = "<4sHHQd3d3d"
FORCE_FORMAT = "<4sHHQd3d"
STATE_SIZE, FORCE_SIZE = struct.calcsize(STATE_FORMAT), struct.calcsize(FORCE_FORMAT)
_STATE, _FORCE = struct.Struct(STATE_FORMAT), struct.Struct(FORCE_FORMAT)
POSE_VERSION = 2
POSE_STATE_FORMAT = "<4sHHQd3d3d4d3d"
WRENCH_FORMAT = "<4sHHQd3d3d"
_POSE_STATE, _WRENCH = struct.Struct(POSE_STATE_FORMAT), struct.Struct(WRENCH_FORMAT)
_SEEN = 4096  # sequence numbers remembered to tell a replayed packet from a late one
_DRAIN = 512  # datagrams read per period at most
_WRAP, _HALF = 1 << 64, 1 << 63  # the sequence number's width, and half of it
_LOOPBACK = "127.0.0.1"


def pack_state(seq: int, stamp: float, position, velocity, orientation=None, angular_velocity=None) -> bytes:
    """A state packet (what a device bridge sends): ``seq``, ``stamp`` [s], position [m] and velocity [m/s] (3);
    with ``orientation`` (a quaternion w, x, y, z) and ``angular_velocity`` [rad/s] (3), a version 2 packet."""
    if orientation is None:
        return _STATE.pack(STATE_MAGIC, PROTOCOL_VERSION, 0, seq, stamp, *position, *velocity)
    return _POSE_STATE.pack(STATE_MAGIC, POSE_VERSION, 0, seq, stamp, *position, *velocity, *orientation,
                            *angular_velocity)


def unpack_wrench(data: bytes) -> tuple:
    """(seq, t [s], (fx, fy, fz) [N], (tx, ty, tz) [N m]) of a version 2 reply; ArgumentError when it is not one."""
    if len(data) != _WRENCH.size:
        raise ArgumentError(f"wrench packet: {len(data)} bytes, expected {_WRENCH.size}")
    magic, version, _, seq, t, *wrench = _WRENCH.unpack(data)
    if magic != FORCE_MAGIC or version != POSE_VERSION:
        raise ArgumentError(f"wrench packet: magic {magic!r} version {version}, expected {FORCE_MAGIC!r} "
                            f"version {POSE_VERSION}")
    return seq, t, tuple(wrench[:3]), tuple(wrench[3:])


def quaternion_matrix(w: float, x: float, y: float, z: float) -> tuple:
    """The rotation matrix (rows of three floats) of the unit quaternion (w, x, y, z), in the homogeneous form that
    is |q|^2 times a rotation for any q: a quaternion whose norm is not 1 gives a matrix that is not a rotation
    (refused by :func:`kane.realtime.check_sample`; :func:`kane.spatial.quaternion_to_rotation` normalizes, which
    would repair a device's bad quaternion rather than refuse it)."""
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    return ((ww + xx - yy - zz, 2 * (x * y - w * z), 2 * (x * z + w * y)),
            (2 * (x * y + w * z), ww - xx + yy - zz, 2 * (y * z - w * x)),
            (2 * (x * z - w * y), 2 * (y * z + w * x), ww - xx - yy + zz))


def unpack_force(data: bytes) -> tuple:
    """(seq, t [s], (fx, fy, fz) [N]) of a force packet; ArgumentError when it is not one."""
    if len(data) != FORCE_SIZE:
        raise ArgumentError(f"force packet: {len(data)} bytes, expected {FORCE_SIZE}")
    magic, version, _, seq, t, fx, fy, fz = _FORCE.unpack(data)
    if magic != FORCE_MAGIC or version != PROTOCOL_VERSION:
        raise ArgumentError(f"force packet: magic {magic!r} version {version}, expected {FORCE_MAGIC!r} "
                            f"version {PROTOCOL_VERSION}")
    return seq, t, (fx, fy, fz)


def parse_peer(text: str) -> tuple:
    """(host, port) of a device address written ``HOST`` (any port, 0) or ``HOST:PORT``; ArgumentError naming
    the text otherwise."""
    host, sep, port = text.rpartition(":") if ":" in text else (text, "", "0")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ArgumentError(f"udp peer {text!r}: expected HOST or HOST:PORT (port 0..65535)")
    return host, int(port)


def _peer_address(peer) -> tuple:
    """(ip, port) of a configured peer: a host name or address, or (host, port) with port 0: any port."""
    host, port = None, None
    if isinstance(peer, str):
        host, port = peer, 0
    elif isinstance(peer, (tuple, list)) and len(peer) == 2:
        host, port = peer
    if not (isinstance(host, str) and isinstance(port, int) and 0 <= port <= 65535):
        raise ArgumentError(f"UdpDevice: peer must be a host or (host, port 0..65535), got {peer!r}")
    try:
        return socket.gethostbyname(host), port
    except OSError as exc:
        raise ArgumentError(f"UdpDevice: peer host {host!r} is not an IPv4 address or known name: {exc}") from exc


class UdpDevice:
    """A device bridge sending state packets to ``host``:``port`` (UDP; port 0: any free port, see ``port`` after
    :meth:`open`). ``max_force`` [N], ``workspace``; ``hold`` [s]: how long the newest sample stands in for missing
    packets; ``connect_timeout`` [s]: how long :meth:`open` waits for the first packet. ``host``: the address
    listened on, loopback unless given (another one, "0.0.0.0" for every interface, is explicit). ``peer``: the
    device's address, a host or (host, port) (port 0: any port of that host); None: the first sender of a valid
    state packet after :meth:`open`. ``paired`` is the (host, port) paired with, None before. ``counts`` (dict):
    received, used, lost, late, replayed, malformed, oversized, superseded, replies (force packets sent), foreign
    (datagrams from other senders, ignored). ``pose``: the device sends version 2 packets with its handle's
    orientation and displays a torque (a full pose coupled); a packet of the other version is malformed."""

    def __init__(self, port: int, *, host: str = _LOOPBACK, max_force: float = 20.0,
                 workspace: Workspace = Workspace(), hold: float = 0.005, connect_timeout: float = 5.0,
                 pose: bool = False, peer: str | tuple | None = None):
        if not (isinstance(port, int) and 0 <= port <= 65535):
            raise ArgumentError(f"UdpDevice: port must be an integer 0..65535, got {port!r}")
        self._peer_filter = None if peer is None else _peer_address(peer)
        for name, value in (("max_force", max_force), ("hold", hold), ("connect_timeout", connect_timeout)):
            if not (math.isfinite(value) and value > 0):
                raise ArgumentError(f"UdpDevice: {name} must be a finite number > 0, got {value!r}")
        self.host, self.port, self.max_force, self.workspace = host, port, float(max_force), workspace
        self.hold, self.connect_timeout = float(hold), float(connect_timeout)
        self.pose = bool(pose)
        self._state, self._version = (_POSE_STATE, POSE_VERSION) if self.pose else (_STATE, PROTOCOL_VERSION)
        self._force = (0.0, 0.0, 0.0)  # with a pose: sent with the torque
        self.sock: socket.socket | None = None
        self._reset()
        self._bind()

    def _reset(self) -> None:
        self.counts = dict.fromkeys(("received", "used", "lost", "late", "replayed", "malformed", "oversized",
                                     "superseded", "replies", "foreign"), 0)
        self.last_seq = -1  # the newest sequence number used, -1 before the first
        self._first_seq = -1
        self.stamp = math.nan
        self._seen: collections.deque = collections.deque(maxlen=_SEEN)
        self._seen_set: set = set()
        self._sample: DeviceSample | None = None
        self._fresh_at = -math.inf
        self._peer = None
        self._buf = bytearray(self._state.size + 1)

    def _bind(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise ArgumentError(f"UdpDevice: cannot listen on udp {self.host}:{self.port}: {exc}") from exc
        sock.setblocking(False)
        self.sock = sock
        self.port = sock.getsockname()[1]

    def open(self) -> None:
        """Start counting afresh and wait (up to ``connect_timeout``) for the device's first valid packet;
        KaneError when none came."""
        if self.sock is None:
            self._bind()
        self._reset()
        end = time.perf_counter() + self.connect_timeout
        while self.read(0.0) is None:
            if time.perf_counter() > end:
                raise KaneError(f"UdpDevice: no valid state packet on udp {self.host}:{self.port} within "
                                      f"{self.connect_timeout:g} s (is the device bridge running?)")
            time.sleep(2e-4)

    def _remember(self, seq: int) -> None:
        if len(self._seen) == self._seen.maxlen:
            self._seen_set.discard(self._seen[0])
        self._seen.append(seq)
        self._seen_set.add(seq)

    def _admits(self, addr) -> bool:
        """Whether a datagram from ``addr`` is the device's: the paired address, or before pairing, any sender
        the configured peer (if any) matches."""
        if self._peer is not None:
            return addr == self._peer
        f = self._peer_filter
        return f is None or (addr[0] == f[0] and f[1] in (0, addr[1]))

    def _sequence(self, seq: int) -> bool:
        """Count ``seq`` (modulo 2**64 against the newest); True when it is ahead of the newest (fresh)."""
        c = self.counts
        if seq in self._seen_set:
            c["replayed"] += 1
            return False
        if self.last_seq < 0:  # the first packet paired
            self._first_seq = seq
        else:
            ahead = (seq - self.last_seq) % _WRAP
            if ahead >= _HALF:  # behind the newest, never received: out of order
                behind = _WRAP - ahead
                c["late"] += 1
                if behind < _SEEN and behind < (self.last_seq - self._first_seq) % _WRAP and c["lost"] > 0:
                    c["lost"] -= 1  # it fills a gap counted lost since pairing
                self._remember(seq)
                return False
            c["lost"] += ahead - 1
        self._remember(seq)
        self.last_seq = seq
        return True

    def _drain(self):
        """Read the waiting datagrams (at most _DRAIN); the newest valid state of the paired device as (seq, stamp,
        position, velocity, turn), or None."""
        c, newest, buf = self.counts, None, self._buf
        for _ in range(_DRAIN):
            try:
                n, addr = self.sock.recvfrom_into(buf)
            except (BlockingIOError, InterruptedError):
                return newest
            except OSError:  # an ICMP error of an earlier reply (the bridge went away): nothing to read
                continue
            if not self._admits(addr):
                c["foreign"] += 1
                continue
            c["received"] += 1
            size = self._state.size
            if n > size:
                c["oversized"] += 1
                continue
            if n < size:
                c["malformed"] += 1
                continue
            magic, version, _, seq, stamp, x, y, z, vx, vy, vz, *turn = self._state.unpack_from(buf)
            if magic != STATE_MAGIC or version != self._version:
                c["malformed"] += 1
                continue
            if not self._sequence(seq):
                continue
            self._peer = addr  # paired from the first valid packet on
            if newest is not None:
                c["superseded"] += 1
            newest = (seq, stamp, (x, y, z), (vx, vy, vz), turn)
        return newest

    @property
    def paired(self):
        """The device's (host, port), None before its first valid packet."""
        return self._peer

    def read(self, t: float) -> DeviceSample | None:
        """The newest valid state (stamped with the loop's time ``t`` [s]), the previous one while younger than
        ``hold``, else None."""
        fresh = self._drain()
        now = time.perf_counter()
        if fresh is not None:
            self.counts["used"] += 1
            _, self.stamp, x, v, turn = fresh
            sample = (DeviceSample(t, x, v, quaternion_matrix(*turn[:4]), tuple(turn[4:])) if self.pose else
                      DeviceSample(t, x, v))
            self._sample, self._fresh_at = sample, now
            return sample
        if self._sample is not None and now - self._fresh_at <= self.hold:
            s = self._sample
            return DeviceSample(t, s.position, s.velocity, s.orientation, s.angular_velocity)
        return None

    def write_force(self, t: float, force) -> None:
        """Send ``force`` (three floats [N]) to the device, echoing the newest sequence number (with a pose: kept,
        and sent with the torque by :meth:`write_torque`)."""
        if self.pose:
            self._force = tuple(float(f) for f in force)
            return
        if self._peer is None or self.sock is None:
            return
        fx, fy, fz = force
        try:
            self.sock.sendto(_FORCE.pack(FORCE_MAGIC, PROTOCOL_VERSION, 0, max(self.last_seq, 0), t, fx, fy, fz),
                             self._peer)
            self.counts["replies"] += 1
        except OSError:  # a full send buffer or a bridge gone: the next period sends again
            pass

    def write_torque(self, t: float, torque) -> None:
        """With a pose: send the force last written and ``torque`` (three floats [N m]) in one version 2 reply."""
        if not self.pose:
            raise ArgumentError("UdpDevice: write_torque needs a device that speaks the pose protocol (pose=True)")
        if self._peer is None or self.sock is None:
            return
        try:
            self.sock.sendto(_WRENCH.pack(FORCE_MAGIC, POSE_VERSION, 0, max(self.last_seq, 0), t, *self._force,
                                          *(float(a) for a in torque)), self._peer)
            self.counts["replies"] += 1
        except OSError:
            pass

    def close(self) -> None:
        """Close the socket (the loop has written zero force before)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
