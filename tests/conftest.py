"""Test configuration: float64 is on for the whole suite (the accuracy default).

Tests that check float32 pass float32 arrays explicitly and state their tolerance.
The command line keeps compiled programs in the user's cache folder; the suite's commands (in this
process or in subprocesses, which inherit the variable) keep theirs in a temporary folder instead, and a
command run in this process turns the cache off again when its test ends, so that the tests after it in the
same worker compile as they would alone. Each test module's compiled programs are dropped when it ends: a
worker that kept every program of the suite grew past 7 GB, and XLA aborted compiling in it.
Subprocesses import the package of this checkout (PYTHONPATH), not whichever one is installed.
A command run in this process may add a host device count to XLA_FLAGS (mc, identify and predict ask for one
device per core); the variable is put back when its test ends, so that a later command in the same worker does
not take it for the user's own setting.
"""

import gc
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


@pytest.fixture(autouse=True)
def _xla_flags_stay_in_their_test():
    before = os.environ.get("XLA_FLAGS")
    yield
    if before is None:
        os.environ.pop("XLA_FLAGS", None)
    else:
        os.environ["XLA_FLAGS"] = before


@pytest.fixture(autouse=True)
def _compile_cache_stays_in_its_test():
    before = jax.config.jax_compilation_cache_dir
    yield
    if jax.config.jax_compilation_cache_dir != before:
        from jax.experimental.compilation_cache import compilation_cache

        jax.config.update("jax_compilation_cache_dir", before)
        compilation_cache.reset_cache()


@pytest.fixture(autouse=True, scope="module")
def _compiled_programs_stay_in_their_module():
    yield
    jax.clear_caches()
    gc.collect()
