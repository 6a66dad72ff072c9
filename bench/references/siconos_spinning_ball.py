"""Reference trajectory for the "porting a Siconos model" tutorial, computed by Siconos 4.4.

    /usr/bin/python3 bench/references/siconos_spinning_ball.py     # writes tests/data/siconos/spinning_ball.npz

A disk of mass m and radius R (q = (y, x, θ): height of the centre, horizontal
position, rotation; M = diag(m, m, ½ m R²)) dropped from y = 1 m with a
horizontal speed and a backspin, under gravity, onto the ground y = R: one
LagrangianLinearTIDS, one LagrangianLinearTIR with H = [[1, 0, 0], [0, 1, R]]
(gap y − R; slip velocity of the contact point ẋ + R θ̇) and
NewtonImpactFrictionNSL(ε_N, ε_T = 0, μ, 2), MoreauJeanOSI(θ = ½), a 2D
FrictionContact one-step problem, TimeStepping at h = 5 ms for 3 s. The
tutorial (docs/tutorials/siconos-port.md) ports it line by line to
``jaxcontact.linear.linear_system`` and compares with the stored arrays; CI
has no Siconos, the test reads the file.
"""

import os

import numpy as np
import siconos.kernel as sk

# The model's values (also stored in the file, so the tutorial reads them from there).
VALUES = dict(m=1.0, R=0.1, g=9.81, restitution=0.9, friction=0.3, y0=1.0, vx0=1.0, omega0=-5.0, h=0.005, T=3.0)


def run(m, R, g, restitution, friction, y0, vx0, omega0, h, T):
    """Siconos' Moreau–Jean run; rows (t, q (3), v (3)) after every step."""
    ball = sk.LagrangianLinearTIDS([y0, 0.0, 0.0], [0.0, vx0, omega0], np.diag([m, m, 0.5 * m * R * R]))
    ball.setFExtPtr(np.array([-m * g, 0.0, 0.0]))
    relation = sk.LagrangianLinearTIR(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, R]]), np.array([-R, 0.0]))
    contact = sk.Interaction(sk.NewtonImpactFrictionNSL(restitution, 0.0, friction, 2), relation)
    nsds = sk.NonSmoothDynamicalSystem(0.0, T)
    nsds.insertDynamicalSystem(ball)
    nsds.link(contact, ball)
    sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, h), sk.MoreauJeanOSI(0.5), sk.FrictionContact(2))
    rows = [[0.0, y0, 0.0, 0.0, 0.0, vx0, omega0]]
    while sim.hasNextEvent():
        sim.computeOneStep()
        rows.append([sim.nextTime(), *ball.q(), *ball.velocity()])
        sim.nextStep()
    return np.array(rows)


def main():
    rows = run(**VALUES)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = os.path.join(root, "tests", "data", "siconos", "spinning_ball.npz")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    np.savez_compressed(
        out,
        t=rows[:, 0],
        q=rows[:, 1:4],
        v=rows[:, 4:7],
        siconos_version=sk.__version__ if hasattr(sk, "__version__") else "4.4",
        **{k: np.float64(v) for k, v in VALUES.items()},
    )
    print(f"wrote {out}: {len(rows)} rows, final q = {rows[-1, 1:4]}")


if __name__ == "__main__":
    main()
