"""Where the tests find the repository's files, from any depth of tests/ (unit/, integration/)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
INJECT = TESTS / "inject"
