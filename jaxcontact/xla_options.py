"""XLA options the library's programs are measured to compile or run faster with, set before JAX starts its backend.

* YNNPACK's fusions off. XLA's CPU compiler hands some reductions and small matrix products to YNNPACK ("ynn"
  fusions). The contact solves' products over lanes (:mod:`jaxcontact.cones.lanes`) are short sums over a
  leading axis of arrays whose last axis is the batch; XLA's own loop fusions run them faster than YNNPACK's
  kernels, and nothing here has the large products YNNPACK is made for.
* XLA's newer (MLIR) fusion emitters off: its classic emitters turn the same fused kernels into machine code
  faster, and the programs here (hundreds of small elementwise kernels: the contact sweeps, their local solves,
  the steps' assembly) run as fast. Rounding may differ between the two in the last bit, which a chaotic
  trajectory (a tumbling box) can grow.

bench/RESULTS.md has the measurements. Importing jaxcontact appends the options to ``XLA_FLAGS``:

* only before JAX's backend has started (XLA reads ``XLA_FLAGS`` once), which importing jaxcontact does not do;
* each only for the jaxlib series on which it is known to exist (XLA aborts on an option it does not know, and
  an experimental option may be renamed or dropped by a newer XLA): elsewhere it is not set and the programs
  run with XLA's defaults;
* never over a user's own choice: an ``XLA_FLAGS`` that already names an option is left as it is for that
  option, and ``JAXCONTACT_XLA_OPTIONS=0`` leaves ``XLA_FLAGS`` alone altogether.

The options concern the CPU compiler only; on a GPU they change nothing.
"""

from __future__ import annotations

import os

# (option, value, the jaxlib series [first, end) whose XLA has it): the CPU options applied, as ``--option=value``.
CPU_OPTIONS = (
    ("xla_cpu_experimental_ynn_fusion_type", "", (0, 10), (0, 12)),
    ("xla_cpu_use_fusion_emitters", "false", (0, 10), (0, 11)),
)
# Set to "0" to leave XLA_FLAGS as the user wrote it.
OPT_OUT = "JAXCONTACT_XLA_OPTIONS"


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def applicable(jaxlib_version: str, flags: str, env: dict) -> list[str]:
    """The ``--option=value`` entries to append to ``flags`` for this jaxlib (an option outside its known
    series, or that ``flags`` already names, is left out; none where the user opted out)."""
    if env.get(OPT_OUT, "1") == "0":
        return []
    version = _version(jaxlib_version)
    return [
        f"--{name}={value}" for name, value, first, end in CPU_OPTIONS if first <= version < end and name not in flags
    ]


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
