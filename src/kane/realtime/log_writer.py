"""Writes blocks of a real-time log's ring buffer to its HDF5 file: in the loop's own process (virtual clock), or as
a separate process on the real clock, so that no HDF5 call ever holds the loop's GIL (h5py keeps it while it
works: a file open or close takes a few hundred microseconds, longer than a 10 kHz period).

The process is started by :class:`kane.realtime.log.RealtimeLog` as ``python -P log_writer.py RING PARTIAL
LAYOUT``: it imports numpy and h5py only (not kane), maps the ring (a float64 file (rows, columns)), prints
``ready``, then for each line ``n0 n1`` on its stdin appends rows n0..n1-1 (ring rows taken modulo its length) and
prints ``n1`` once they are committed. It ends at the end of its input (a killed loop ends it too, after the block
in hand). LAYOUT (JSON): ``shape`` of the ring, ``columns`` {dataset: [first, end, is_vector]}, ``libver``.
"""

from __future__ import annotations

import json
import os
import sys

import h5py
import numpy as np

__all__ = ["write_block", "main"]


def write_block(partial: str, layout: dict, ring: np.ndarray, n0: int, n1: int) -> None:
    """Append rows ``n0``..``n1 - 1`` of ``ring`` to the log file ``partial``; ``n_committed`` is written last,
    after a flush. The datasets grow ahead of the rows (by a quarter and four chunks at least, as
    :mod:`kane.io.trajectory` does), so most blocks change data alone, no HDF5 structure. Each column goes through
    h5py's low-level dataset calls (the values cast to the dataset's type by numpy, as ``d[n0:n1] = values`` casts
    them): half the CPU of the high-level path, whose per-call checks cost more than the rows."""
    block = ring[np.arange(n0, n1) % ring.shape[0]]
    with h5py.File(partial, "a", libver=tuple(layout["libver"])) as f:
        for name, (a, b, vector) in layout["columns"].items():
            d = h5py.h5d.open(f.id, name.encode())
            values = np.ascontiguousarray(block[:, a:b] if vector else block[:, a], dtype=d.dtype)
            dims = d.shape
            if n1 > dims[0]:
                size, chunk = dims[0], d.get_create_plist().get_chunk()[0]
                d.set_extent((max(n1, size + max(size // 4, 4 * chunk)), *dims[1:]))
            space = d.get_space()
            space.select_hyperslab((n0,) + (0,) * (len(dims) - 1), values.shape)
            d.write(h5py.h5s.create_simple(values.shape), space, values)
        f.flush()
        f["n_committed"][0] = n1


def main(argv: list) -> int:
    os.nice(10)  # the loop's thread first where they want the same core
    ring_path, partial, layout = argv[1], argv[2], json.loads(argv[3])
    ring = np.memmap(ring_path, dtype=np.float64, mode="r", shape=tuple(layout["shape"]))
    print("ready", flush=True)
    for line in sys.stdin:
        n0, n1 = (int(x) for x in line.split())
        write_block(partial, layout, ring, n0, n1)
        print(n1, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
