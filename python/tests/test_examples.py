"""The Python examples reach their pass marks: digits.py's MLP accuracy and chargpt.py's loss."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples", "python")
sys.path.insert(0, EXAMPLES)


def test_digits_mlp_reaches_95_percent():
    path = os.path.join(ROOT, "data", "digits.csv")
    if not os.path.exists(path):
        pytest.skip("data/digits.csv is missing: scripts/fetch-digits.sh extracts it (make test-release runs it)")
    import digits
    mlp_accuracy, cnn_accuracy = digits.run(path, log=lambda line: None)
    assert mlp_accuracy >= 0.95
    assert cnn_accuracy >= 0.95


def test_chargpt_learns_beyond_character_frequencies():
    import chargpt
    smoothed, unigram, tokens_per_second = chargpt.train(steps=120, log=lambda line: None)
    assert smoothed < unigram - 0.5
    assert tokens_per_second > 0


def test_the_tour_runs():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "lazy_and_compile.py")], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "programs run by the sync: 1" in out.stdout
    assert "replayed" in out.stdout
