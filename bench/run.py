"""Run every benchmark and print the ratios against the peers measured in the same process."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_aba  # noqa: E402
import bench_derive  # noqa: E402
import bench_numpy  # noqa: E402
import bench_switching  # noqa: E402

if __name__ == "__main__":
    print("== derivation: kane against sympy.physics.mechanics.KanesMethod (n-link 3D pendulum)")
    bench_derive.run()
    print("\n== numpy backend")
    bench_numpy.run()
    print("\n== recursive forward dynamics: ABA against Pinocchio")
    bench_aba.run()
    print("\n== constraint switching: on-line recombination against pre-derived modes (shopping cart)")
    bench_switching.run()
