import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import dyn  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: a file that takes over a minute (corpus, model zoo, OpInfo sweeps); "
        "pytest -m \"not slow\" test/python leaves it out (docs/contributing.md)")


@pytest.fixture(autouse=True)
def _reset():
    dyn.reset()
    yield
    dyn.reset()


def has_compiler():
    """False only when dyn._C was built without the compiler core. A missing extension counts as
    'should be there' so that the dyn tests fail instead of being skipped."""
    return dyn._C is None or getattr(dyn._C, "HAS_COMPILER", False)


# Tests parametrized over backends run "dyn" only when the extension has the compiler core; CI builds it.
BACKENDS = ["eager"] + (["dyn"] if has_compiler() else [])
