"""Command-line arguments shared by ``simulate``, ``mc`` and ``identify``: the model and the scheme.

The model is a built-in name or a user file, ``path/to/file.py:function`` (a function
returning a :class:`jaxcontact.models.Model`), given as the positional argument or as
``--model``. The scheme is ``--scheme moreau-jean|moreau-jean-siconos|penalty|event-driven``
with its options; an option of another scheme than the chosen one is refused by name.
``moreau-jean-siconos`` is Moreau–Jean with ``force_rule="siconos"`` (Siconos'
MoreauJeanOSI step), named on the command line so a Siconos user finds it.
"""

from __future__ import annotations

import argparse

from jaxcontact.commands import checks

# The schemes of jaxcontact.stepping.SCHEMES (listed here so that --help does not import jax).
SCHEMES = ("moreau-jean", "moreau-jean-siconos", "penalty", "event-driven")
# command-line name -> (registered scheme, fixed options)
VARIANTS = {"moreau-jean-siconos": ("moreau-jean", {"force_rule": "siconos"})}
PENALTY_METHODS = ("rk4", "tsit5", "dopri5", "kvaerno5")

# option dest -> (registered scheme it belongs to, the scheme's field)
_SCHEME_OPTIONS = {
    "theta": ("moreau-jean", "theta"),
    "solver": ("moreau-jean", "solver"),
    "iterations": ("moreau-jean", "iterations"),
    "impact_location": ("moreau-jean", "impact_location"),
    "integrator": ("penalty", "method"),
}


def add_model_argument(p: argparse.ArgumentParser, what: str = "model") -> None:
    """The model, positional or ``--model``: a built-in name or FILE.py:FUNCTION."""
    from jaxcontact.models import REGISTRY

    p.add_argument(
        "model",
        nargs="?",
        default=None,
        help=f"{what}: a built-in name ({', '.join(sorted(REGISTRY))}) or a user file FILE.py:FUNCTION "
        "(a function returning a jaxcontact.models.Model)",
    )
    p.add_argument(
        "--model",
        dest="model_spec",
        default=None,
        metavar="NAME|FILE.py:FUNCTION",
        help="the model, instead of the positional argument",
    )


def model_name(args) -> str:
    """The model named on the command line (positional or ``--model``, exactly one)."""
    if args.model is not None and args.model_spec is not None and args.model != args.model_spec:
        raise ValueError(f"two models given ({args.model!r} and --model {args.model_spec!r}): give one")
    name = args.model_spec or args.model
    if name is None:
        raise ValueError("no model given: name a built-in model or --model FILE.py:FUNCTION")
    return name


def default_out(command: str, name: str) -> str:
    """Default output folder: ``<command>-<model>`` (a user file's function name)."""
    return f"{command}-{name.rpartition(':')[2]}"


def add_scheme_arguments(p: argparse.ArgumentParser, default: str = "moreau-jean") -> None:
    """``--scheme`` and each scheme's options (an option of another scheme is refused later, by name)."""
    p.add_argument(
        "--scheme",
        choices=SCHEMES,
        default=None,
        help="time stepping: moreau-jean (rigid contacts, impulses), moreau-jean-siconos (Siconos' "
        "MoreauJeanOSI step: K and C implicit, Siconos' contact prediction and Newton law), penalty "
        "(compliant contacts, an ODE) or event-driven (rigid and compliant contacts, stick–slip inside the step); "
        f"default {default}",
    )
    p.add_argument("--theta", type=checks.unit_float, default=None, help="moreau-jean: θ of the θ-method (default 0.5)")
    p.add_argument(
        "--solver",
        choices=("auto", "nsgs", "pgs", "lemke", "newton"),
        default=None,
        help="moreau-jean: contact solver (default auto: NSGS with friction, PGS without; newton: the "
        "semismooth Newton on Coulomb cones, spatial friction only)",
    )
    p.add_argument(
        "--iterations",
        type=checks.positive_int,
        default=None,
        help="moreau-jean: sweeps of the iterative contact solver (default 50)",
    )
    p.add_argument(
        "--impact-location",
        choices=("step", "interpolated"),
        default=None,
        help="moreau-jean: impacts on the step grid (step, the default of simulate and mc) or at the gap "
        "crossing inside the step (interpolated: motion continuous in restitution and friction; "
        "the default of identify)",
    )
    p.add_argument(
        "--integrator",
        choices=PENALTY_METHODS,
        default=None,
        help="penalty: fixed-step rk4 (default) or an adaptive diffrax solver inside each step",
    )


def scheme_from_args(args, default: str = "moreau-jean", study_options: dict | None = None):
    """The scheme of ``--scheme`` (``default`` when not given) with the options given for it; another
    scheme's option is an error. ``study_options``: registered scheme name -> options a study sets for
    that scheme (the options given on the command line take precedence)."""
    from jaxcontact.stepping import SCHEMES as REGISTERED

    name = args.scheme or default
    registered, options = VARIANTS.get(name, (name, {}))
    options = {**(study_options or {}).get(registered, {}), **options}
    for dest, (owner, field) in _SCHEME_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if owner != registered:
            raise ValueError(f"--{dest.replace('_', '-')} is an option of the {owner} scheme, not of the {name} scheme")
        options[field] = value
    return REGISTERED[registered](**options)
