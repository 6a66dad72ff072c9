"""``jaxcontact params MODEL``: a model's parameters with their defaults, units and the rules they must obey.

    jaxcontact params bouncing-ball

Every name can be given to ``--set NAME=VALUE`` (simulate, mc, identify), to
``--param 'NAME=DIST(ARGS)'`` (mc) and to ``--fit NAME`` (identify). A rule
printed here is the one the model checks; a Monte Carlo distribution must keep
its whole support inside the range column (``mc`` checks it before running).
"""

from __future__ import annotations

import argparse
import importlib

NAME = "params"
HELP = "list a model's parameters: default value, unit and rule"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``params`` command's arguments: the model."""
    from jaxcontact.models import REGISTRY

    p.add_argument("model", help=f"built-in model: {', '.join(sorted(REGISTRY))}")


def rows(model_name: str) -> list[tuple[str, str, str, str, str]]:
    """(name, default, unit, rule, Monte Carlo range) for every parameter of a built-in model."""
    import numpy as np

    from jaxcontact.models import REGISTRY, get_model
    from jaxcontact.models.units import param_unit
    from jaxcontact.studies.distributions import bounds_for

    module = importlib.import_module(f"jaxcontact.models.{REGISTRY[model_name]}")
    rules = getattr(module, "RULES", {})
    m = get_model(model_name)
    out = []
    for name, value in m.params.items():
        v = np.asarray(value)
        default = f"{float(v):.6g}" if v.ndim == 0 else np.array2string(v, precision=6)
        unit = param_unit(name, model_name)
        rule = f"{name} {rules[name][1]}" if name in rules else "finite"
        rng = bounds_for(name)
        out.append((name, default, unit, rule, "any" if rng is None else f"[{rng[0]:g}, {rng[1]:g}]"))
    return out


def run(args) -> int:
    """Print the model's parameters: default, unit, rule and study range."""
    import sys

    from jaxcontact.models import REGISTRY, get_model

    if args.model not in REGISTRY:
        print(
            f"jaxcontact params: error: unknown model {args.model!r}; built-in models: {sorted(REGISTRY)}",
            file=sys.stderr,
        )
        return 2
    m = get_model(args.model)
    table = [("name", "default", "unit", "rule", "mc range")] + rows(args.model)
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    print(f"{m.name}: {m.description}")
    for r in table:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print("Some models also check combinations (e.g. the ball's height ≥ radius) when they are built.")
    return 0
