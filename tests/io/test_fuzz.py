"""Fuzz test of the model-file loader (issue 10): 300 hostile mutations of the example files, fixed seed.

Every file is loaded (every tenth also derived, compiled with the numpy backend and evaluated at its initial
state) in a worker process under a per-file time limit. The outcome must be "ok" or a kane.KaneError naming the
file: no other exception, no hang (the worker is killed past the limit), no crash, no code run from the file
(injected code would create a marker file). Large runs: ``python bench/fuzz_models.py --files 5000``.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import fuzz_models  # noqa: E402


@pytest.fixture(scope="module")
def result():
    return fuzz_models.fuzz(300, seed=20261125, workers=2, limit_s=15.0, backend="numpy", full_every=10)


def test_every_hostile_file_ends_ok_or_in_a_kane_error_naming_the_file(result):
    failures = ("raw", "hang", "crash", "injection", "unnamed")  # load times are the benchmark's, not a test's
    assert result.files == 300
    assert {k: result.counts[k] for k in failures} == dict.fromkeys(failures, 0), result.examples
    assert result.counts["ok"] + result.counts["KaneError"] + result.counts["slow_load"] == 300


def test_the_mutations_reach_past_the_loader(result):
    """The mutations are not all refused at once: some files load (and derive) and many are refused."""
    assert result.counts["ok"] >= 30
    assert result.counts["KaneError"] >= 150


def test_an_injection_would_be_seen(tmp_path):
    """The injection check is live: the marker file the mutations aim at is what the fuzzer looks for."""
    marker = tmp_path / "INJECTED"
    texts = [text for _, text, _ in fuzz_models._texts(400, 3, str(marker))]
    assert any(f"touch {marker}" in text for text in texts)
    assert any(f"open('{marker}'" in text or f"open(\\u0027{marker}" in text or str(marker) in text for text in texts)
    assert not marker.exists()
