"""Run every benchmark and print the ratios against the peers measured in the same process.

``python bench/run.py`` runs them all (about half an hour on 2 cores); ``python bench/run.py derive c`` runs the
named sections only. The model-file fuzzer (bench/fuzz_models.py) and the comparison with an earlier revision
(bench/bench_revisions.py) take their own arguments and are run by themselves.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SECTIONS = [
    ("derive", "derivation: kane against sympy.physics.mechanics.KanesMethod (n-link 3D pendulum)",
     "bench_derive", {}),
    ("numpy", "numpy backend", "bench_numpy", {}),
    ("aba", "recursive forward dynamics: ABA against Pinocchio", "bench_aba", {}),
    ("c", "C backend: u' against pin.aba and abaInParallel, compile times", "bench_c", {}),
    ("sim_c", "simulation in C: against pin.aba + solve_ivp and MuJoCo's RK4 mj_step", "bench_sim_c", {}),
    ("memory", "explicit equations against the recursive formulation (spherical chains)", "bench_memory_c",
     {"links": (5, 10)}),
    ("cartesian", "Cartesian coordinates with multipliers against embedded Kane (four-bar)", "bench_cartesian", {}),
    ("switching", "constraint switching: on-line recombination against pre-derived modes (shopping cart)",
     "bench_switching", {}),
    ("contact_events", "event-driven contact on an incline: the compiled path against the Python loop",
     "bench_contact_events", {}),
    ("linearize", "linearization against sympy's linearize; the bicycle's sweep", "bench_linearize", {}),
    ("io", "trajectory files: kane's writer against a plain h5py file", "bench_trajectory_io", {}),
    ("realtime", "real-time loop at 1 kHz: deadlines and compute time", "bench_realtime", {}),
    ("realtime_switching", "real-time loop with a switching caster (cart, 1 kHz)", "bench_realtime_switching", {}),
    ("sweep", "sweeps: in-process against Dask with one and two workers", "bench_sweep", {}),
    ("surfaces", "NURBS evaluation against geomdl", "bench_surfaces", {}),
    ("assembly", "a drag-assembly frame of a 10-body linkage with a surface contact vs scipy", "bench_assembly", {}),
    ("terrain", "rolling on NURBS terrain: embedded Kane against the Cartesian rolling joint", "bench_terrain", {}),
    ("contact", "contact time stepping: 20 boxes falling into a pile against MuJoCo's mj_step (elliptic cones)",
     "bench_contact", {}),
]

if __name__ == "__main__":
    import importlib

    wanted = set(sys.argv[1:])
    unknown = wanted - {key for key, *_ in SECTIONS}
    if unknown:
        sys.exit(f"unknown sections {sorted(unknown)}; known: {', '.join(key for key, *_ in SECTIONS)}")
    for key, title, module, kwargs in SECTIONS:
        if wanted and key not in wanted:
            continue
        print(f"\n== {title}", flush=True)
        importlib.import_module(module).run(**kwargs)
