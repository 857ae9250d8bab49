"""What the test layers share: helpers, corpora, scripted servers and the checkout's paths."""

from pathlib import Path

#: The tests folder, and the checkout it belongs to.
TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
