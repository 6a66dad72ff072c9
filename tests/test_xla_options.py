"""The XLA options importing jaxcontact sets: which, when, and never over the user's own."""

import os
import subprocess
import sys

from jaxcontact import xla_options

YNN = "--xla_cpu_experimental_ynn_fusion_type="
EMITTERS = "--xla_cpu_use_fusion_emitters=false"


def test_the_options_for_a_measured_jaxlib():
    assert xla_options.applicable("0.10.2", "", {}) == [YNN, EMITTERS]
    # The fusion emitters' option is set only on the series it was measured on.
    assert xla_options.applicable("0.11.0", "--xla_force_host_platform_device_count=2", {}) == [YNN]


def test_none_outside_the_jaxlib_series_whose_xla_knows_them():
    assert xla_options.applicable("0.4.30", "", {}) == []
    assert xla_options.applicable("0.9.9", "", {}) == []
    assert xla_options.applicable("0.12.0", "", {}) == []


def test_the_users_choice_is_kept():
    # An XLA_FLAGS that names the option (here: YNNPACK's dots kept on) is left as it is.
    assert xla_options.applicable("0.10.2", "--xla_cpu_experimental_ynn_fusion_type=individual_dot", {}) == [EMITTERS]
    assert xla_options.applicable("0.10.2", "--xla_cpu_use_fusion_emitters=true", {}) == [YNN]
    assert xla_options.applicable("0.10.2", "", {xla_options.OPT_OUT: "0"}) == []


def _flags_after_import(env_flags):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", xla_options.OPT_OUT)}
    env.update(env_flags)
    code = "import os, jaxcontact, jax.numpy as jnp; float(jnp.ones(2).sum()); print(os.environ.get('XLA_FLAGS', ''))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_import_appends_to_xla_flags_and_jax_runs_with_them():
    import jaxlib

    expected = xla_options.applicable(jaxlib.__version__, "", {})
    flags = _flags_after_import({"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert flags.split() == ["--xla_force_host_platform_device_count=2", *expected]
    assert _flags_after_import({xla_options.OPT_OUT: "0"}) == ""
