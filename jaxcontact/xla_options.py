"""XLA options the library's programs are measured to run faster with, set before JAX starts its backend.

XLA's CPU compiler hands some reductions and small matrix products to YNNPACK ("ynn" fusions). The
contact solves' products over lanes (:mod:`jaxcontact.cones.lanes`) are short sums over a leading axis of
arrays whose last axis is the batch; XLA's own loop fusions run them faster than YNNPACK's kernels, and
nothing here has the large products YNNPACK is made for (bench/RESULTS.md has the measurements). So
importing jaxcontact turns YNNPACK's fusions off through ``XLA_FLAGS``:

* only before JAX's backend has started (XLA reads ``XLA_FLAGS`` once), which importing jaxcontact does not do;
* only for the jaxlib series on which the option is known to exist (XLA aborts on an option it does not
  know, and an experimental option may be renamed or dropped by a newer XLA): elsewhere nothing is set and the
  programs run with XLA's defaults;
* never over a user's own choice: an ``XLA_FLAGS`` that already names the option is left as it is, and
  ``JAXCONTACT_XLA_OPTIONS=0`` leaves ``XLA_FLAGS`` alone altogether.

The option concerns the CPU compiler only; on a GPU it changes nothing.
"""

from __future__ import annotations

import os

# (option, value): the CPU options applied, as ``--option=value``.
CPU_OPTIONS = (("xla_cpu_experimental_ynn_fusion_type", ""),)
# The jaxlib series [MIN_JAXLIB, MAX_JAXLIB) whose XLA has these options (measured on the oldest).
MIN_JAXLIB = (0, 10)
MAX_JAXLIB = (0, 12)
# Set to "0" to leave XLA_FLAGS as the user wrote it.
OPT_OUT = "JAXCONTACT_XLA_OPTIONS"


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def applicable(jaxlib_version: str, flags: str, env: dict) -> list[str]:
    """The ``--option=value`` entries to append to ``flags`` for this jaxlib (none outside the known series,
    where the user opted out, or for options ``flags`` already names)."""
    if env.get(OPT_OUT, "1") == "0" or not MIN_JAXLIB <= _version(jaxlib_version) < MAX_JAXLIB:
        return []
    return [f"--{name}={value}" for name, value in CPU_OPTIONS if name not in flags]


def apply() -> list[str]:
    """Append :data:`CPU_OPTIONS` to ``XLA_FLAGS`` if JAX's backend has not started; the entries appended."""
    try:
        import jaxlib
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - jax is a dependency
        return []
    if xla_bridge.backends_are_initialized():
        return []
    flags = os.environ.get("XLA_FLAGS", "")
    extra = applicable(getattr(jaxlib, "__version__", "0"), flags, os.environ)
    if extra:
        os.environ["XLA_FLAGS"] = " ".join([flags, *extra]).strip()
    return extra
