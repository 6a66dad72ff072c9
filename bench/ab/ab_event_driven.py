"""A/B check of the event-driven scheme's per-step cost between two source trees (process CPU time).

    for tree in /work/main /work/wt/scheme2; do PYTHONPATH=$tree python bench/ab/ab_event_driven.py; done

Simulates a batch of 64 user-model pendulums (bar lengths 0.35–0.45; the tip strikes the floor
once and bounces) for 400 steps of 1 ms with ``EventDriven()``, compiled once, and times three
calls. Prints one JSON line: the source tree, compile seconds, the best wall and process CPU time
per sample-step, and the 1-minute load. Alternate the trees on a shared machine.
"""

import json
import os
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

import jaxcontact  # noqa: E402
from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import EventDriven  # noqa: E402

B, STEPS = 64, 400
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "user_model.py")


def main():
    model = get_model(f"{EXAMPLE}:pendulum")

    def final_angle(l):
        p = dict(model.params, l=l)
        q0, u0 = model.initial_state(p)
        return simulate(model.system, p, q0, u0, dt=1e-3, n_steps=STEPS, scheme=EventDriven(diagnostics=False)).q[-1, 2]

    lengths = jnp.linspace(0.35, 0.45, B)
    t0 = time.perf_counter()
    compiled = jax.jit(jax.vmap(final_angle)).lower(lengths).compile()
    t1 = time.perf_counter()
    jax.block_until_ready(compiled(lengths))
    runs = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(lengths))
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    print(
        json.dumps(
            {
                "src": os.path.dirname(jaxcontact.__file__),
                "compile_s": t1 - t0,
                "wall_per_step_us": min(r[0] for r in runs) / (B * STEPS) * 1e6,
                "cpu_per_step_us": min(r[1] for r in runs) / (B * STEPS) * 1e6,
                "load": os.getloadavg()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
