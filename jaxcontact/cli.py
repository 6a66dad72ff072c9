"""The ``jaxcontact`` command line: one sub-command per module in ``jaxcontact.commands``.

Each command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; listing it in ``COMMANDS`` is all it takes to appear here.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ("contact_problem", "identify", "lcp_demo", "mc", "simulate")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jaxcontact", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for mod_name in COMMANDS:
        mod = importlib.import_module(f"jaxcontact.commands.{mod_name}")
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        modules[mod.NAME] = mod
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
