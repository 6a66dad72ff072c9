"""A/B check of the four-bar study's per-sample cost between two source trees, robust to a loaded machine.

    for tree in /work/main /work/wt/scheme; do PYTHONPATH=$tree python bench/ab/ab_four_bar.py; done

Builds the default four-bar study's per-sample function (``default_study`` + ``prepare_study``,
the function ``jaxcontact mc four-bar`` runs), compiles it for one chunk of 512 samples on one
XLA device and times three calls. Prints one JSON line: the source tree, trace and compile
seconds, the best wall and *process CPU* time per sample, the mean impact count (the two trees
must agree) and the 1-minute load. On a shared machine the wall time follows the other jobs'
load; the process CPU time per sample does much less, so alternate the trees (A B A B …) and
compare CPU times.
"""

import json
import os
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxcontact  # noqa: E402
from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.studies.montecarlo import default_study, prepare_study  # noqa: E402

N = 512


def main():
    spec = default_study(get_model("four-bar"), n=N, sensitivity=False)
    prep = prepare_study(spec)
    values = {k: jnp.asarray(v[:N]) for k, v in prep.values.items() if k in spec.space.names}
    t0 = time.perf_counter()
    lowered = jax.jit(jax.vmap(prep.evaluate)).lower(values)
    t1 = time.perf_counter()
    compiled = lowered.compile()
    t2 = time.perf_counter()
    out = jax.block_until_ready(compiled(values))
    runs = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(values))
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    print(
        json.dumps(
            {
                "src": os.path.dirname(jaxcontact.__file__),
                "trace_s": t1 - t0,
                "compile_s": t2 - t1,
                "wall_per_sample_ms": min(r[0] for r in runs) / N * 1e3,
                "cpu_per_sample_ms": min(r[1] for r in runs) / N * 1e3,
                "impacts_mean": float(np.mean(out["impacts"])),
                "load": os.getloadavg()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
