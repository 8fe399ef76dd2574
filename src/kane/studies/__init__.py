"""Numerical studies that reproduce the seed papers' experiments with kane's own formulations.

* :mod:`kane.studies.conditioning` - seed 001 (Cloutier 1995, §5.2, Figs. 5.3-5.6): the condition number of the
  joint-space inertia of a 2-link planar chain with a growing distal link, the accuracy of the composite-rigid-body
  method (CRBM) against the articulated-body method (ABM), and the function evaluations an adaptive integrator
  needs with each. Run from the shell with ``kane study conditioning --out DIR``.
"""

from kane.lazy import lazy_exports

_EXPORTS = {  # each name imports its module on first use (kane.lazy)
    **dict.fromkeys(("ConditioningResult", "ConfigurationSweep", "IntegrationRun", "configuration_sweep",
                     "integration_study", "planar_chain", "reference_accelerations", "run_study", "write_results"),
                    ".conditioning"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ConditioningResult", "ConfigurationSweep", "IntegrationRun", "configuration_sweep", "integration_study",
           "planar_chain", "reference_accelerations", "run_study", "write_results"]
