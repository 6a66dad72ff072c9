"""The CPU's cores as XLA host devices: a command that splits its batch over devices asks for one per core.

XLA makes one CPU device unless ``XLA_FLAGS`` asks for more, and reads that when its backend starts: so a command
asks (:func:`host_devices`) before anything in it touches a jax array.
"""

from __future__ import annotations

import os
import sys


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def host_devices(requested: int | None) -> None:
    """Ask XLA for ``requested`` CPU devices (None: one per usable core), if the backend has not started yet."""
    from jax._src import xla_bridge

    if requested is not None and requested < 1:
        raise ValueError(f"--devices {requested} must be ≥ 1")
    cores = usable_cores()
    n = cores if requested is None else requested
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" in flags:
        if requested is not None:
            print(
                f"note: --devices {requested} ignored (XLA_FLAGS already sets the host device count)", file=sys.stderr
            )
        return
    if n < 2:
        return
    if xla_bridge.backends_are_initialized():
        if requested is not None:
            print(f"note: --devices {requested} ignored (the XLA backend is already running)", file=sys.stderr)
        return
    if n > cores:
        # XLA makes as many host devices as asked; past one per core they only take turns on the cores.
        print(
            f"warning: --devices {n} is more than the {cores} core(s) this process may use: the {n} host "
            f"devices share them and run no faster than {cores}",
            file=sys.stderr,
        )
    os.environ["XLA_FLAGS"] = (flags + f" --xla_force_host_platform_device_count={n}").strip()
