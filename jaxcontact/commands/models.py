"""``jaxcontact models``: list the built-in models with their coordinates, default time grid and default study.

jaxcontact models
jaxcontact params four-bar      # one model's parameters, defaults, units and rules
"""

from __future__ import annotations

import argparse
import importlib

NAME = "models"
HELP = "list the built-in models (coordinates, default time step and duration, default Monte Carlo study)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``models`` command takes no arguments."""
    pass


def first_line(module_name: str) -> str:
    """The first line of a model module's docstring (what the model is), without loading jax arrays; of a
    registry entry ``module:function``, that function's first line."""
    module, _, function = module_name.partition(":")
    owner = importlib.import_module(f"jaxcontact.models.{module}")
    doc = (getattr(owner, function) if function else owner).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def run(args) -> int:
    """Print the built-in models, each with whether it has a default study."""
    from jaxcontact.models import REGISTRY, get_model

    for name, module in REGISTRY.items():
        m = get_model(name)
        coords = ", ".join(m.system.names) if m.system.names else f"{m.system.n_dof} coordinates"
        study = "yes" if m.study is not None else "no (give --param)"
        print(
            f"{name}\n  {first_line(module)}\n  coordinates: {coords}\n"
            f"  default dt {m.dt:g} s, t_final {m.t_final:g} s; default `mc` study: {study}"
        )
    print("\n`jaxcontact params MODEL` lists a model's parameters, defaults, units and rules.")
    return 0
