"""Test configuration: float64 is on for the whole suite (the accuracy default).

Tests that check float32 pass float32 arrays explicitly and state their tolerance.
The command line keeps compiled programs in the user's cache folder; the suite's commands (in this
process or in subprocesses, which inherit the variable) keep theirs in a temporary folder instead.
Subprocesses import the package of this checkout (PYTHONPATH), not whichever one is installed.
"""

import os

import jax
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.fixture(autouse=True, scope="session")
def _subprocess_environment(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("JAXCONTACT_CACHE_DIR", str(tmp_path_factory.mktemp("jax-cache")))
    mp.setenv("PYTHONPATH", os.path.dirname(os.path.dirname(os.path.abspath(__file__))), prepend=os.pathsep)
    yield
    mp.undo()
