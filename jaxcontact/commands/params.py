"""``jaxcontact params MODEL``: a model's parameters with their defaults, units and the rules they must obey.

    jaxcontact params bouncing-ball
    jaxcontact params examples/user_model.py:pendulum
    jaxcontact params path/to/mechanism.xml

Every name can be given to ``--set NAME=VALUE`` (simulate, mc, identify), to
``--param 'NAME=DIST(ARGS)'`` (mc) and to ``--fit NAME`` (identify). A rule
printed here is the one the model checks; a Monte Carlo distribution must keep
its whole support inside the range column (``mc`` checks it before running).
"""

from __future__ import annotations

import argparse

NAME = "params"
HELP = "list a model's parameters: default value, unit and rule"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``params`` command's arguments: the model."""
    from jaxcontact.models import REGISTRY

    p.add_argument(
        "model",
        help=f"built-in model ({', '.join(sorted(REGISTRY))}), a user model FILE.py:FUNCTION or an MJCF/URDF file",
    )


def rows(model) -> list[tuple[str, str, str, str, str]]:
    """(name, default, unit, rule, Monte Carlo range) for every parameter of ``model``, from its parameter table."""
    import numpy as np

    table = model.param_table
    out = []
    for name, value in model.params.items():
        v = np.asarray(value)
        default = f"{float(v):.6g}" if v.ndim == 0 else np.array2string(v, precision=6)
        rng = table.bounds(name)
        rule = table.rule_text(name)
        out.append((name, default, table.unit(name), rule, "any" if rng is None else f"[{rng[0]:g}, {rng[1]:g}]"))
    return out


def run(args) -> int:
    """Print the model's parameters: default, unit, rule and study range."""
    import sys

    from jaxcontact.models import get_model

    try:
        m = get_model(args.model)
    except ValueError as e:
        print(f"jaxcontact params: error: {e}", file=sys.stderr)
        return 2
    table = [("name", "default", "unit", "rule", "mc range")] + rows(m)
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    print(f"{m.name}: {m.description}")
    for r in table:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print("Some models also check combinations (e.g. the ball's height ≥ radius) when they are built.")
    return 0
