"""jaxcontact: batched, differentiable nonsmooth multibody dynamics in JAX.

Layers (each imports only those below it): ``lcp`` and ``cones`` (contact problems) → ``system`` (the
interface a scheme consumes), built by ``planar`` or ``spatial`` → ``stepping`` (schemes) → ``simulate``
(scan over steps, vmap over a batch) → ``studies`` (Monte Carlo, sensitivity, identification) →
``models`` (built-in examples) → ``commands`` and ``cli`` (the command line).

Package map, one line per module:

    system.py                  LagrangianSystem: M, forces, joints Φ and contacts, the interface every scheme consumes
    linear.py                  linear time-invariant systems with linear contact relations (Siconos' LTI shortcut)
    contact_laws.py            continuous contact laws: compliant normal force, regularized Coulomb friction
    params.py                  parameters with their units, rules and bounds (Param, ParamTable)
    initial.py                 the state a run starts from: checked outside jit, or projected onto the constraints
    simulate.py                run a system over a time grid: lax.scan over steps, vmap over a batch
    plotting.py                PNG plots of one trajectory: coordinates, contact impulses, diagnostics
    cli.py                     the ``jaxcontact`` command line: one sub-command per module of ``commands``
    xla_options.py             XLA options set at import, before JAX starts its backend (YNNPACK fusions off on the CPU)

    lcp/                       linear complementarity: find z ≥ 0 with w = M z + q ≥ 0, zᵀw = 0
      solution.py              the result type shared by every LCP solver, its residuals, input checks
      lemke.py                 Lemke's complementary pivoting, jit- and vmap-compatible
      pgs.py                   projected Gauss–Seidel with relaxation
      jacobi.py                projected Jacobi: every row updated at once
      newton.py                semismooth Newton on the Fischer–Burmeister reformulation
      enumeration.py           exhaustive enumeration of complementary bases (small LCPs), the basis solve
      robust.py                a robust driver: Lemke, then Newton–Fischer–Burmeister, then enumeration
      rows.py                  a linear system or LCP restricted to some rows, at a fixed shape
      implicit.py              gradients of an LCP solution: unrolled sweeps or the implicit function theorem
      friction2d.py            planar frictional contact: block NSGS, and Moreau–Jean's friction LCP for Lemke
      siconos_io.py            reader of Siconos numerics' LCP text files
      fc2d_io.py               reader of Siconos numerics' planar frictional-contact files

    cones/                     frictional contact on Coulomb cones (3D, planar as its 2D case)
      problem.py               the 3D problem, readers of Siconos' and FCLIB's files
      solution.py              the cone solvers' result type and shared argument checks
      laws.py                  Coulomb's law: projections, Siconos' error, the Alart–Curnier function
      delassus.py              W dense or by d × d blocks, and the products the solvers need
      local.py                 exact solve of one contact's problem
      sweeps.py                nonsmooth Gauss–Seidel (NSGS) and Jacobi sweeps
      lanes.py                 NSGS on a batch laid out batch-last ("lanes")
      branch.py                a branch that stays a branch under vmap
      newton.py                global semismooth Newton (Alart–Curnier, Fischer–Burmeister)
      implicit.py              gradients of a solution by the implicit function theorem

    planar/                    planar rigid multibody builder → a LagrangianSystem and its parameters
      mechanism.py             the builder: bodies, joints, loads, contacts
      bodies.py                rigid bodies in absolute coordinates, body-fixed points, velocity fields
      joints.py                bilateral constraints Φ(q, t, p) = 0
      contacts.py              unilateral contact geometry: gaps, normals, tangents, slip
      forces.py                gravity, point forces, torques, spring–dampers, user forces
      values.py                parameter values: names, small expressions, callables, literals

    spatial/                   spatial (3D) rigid multibody systems
      assembly.py              the builder: bodies, joints and contacts → a LagrangianSystem
      bodies.py                quaternion bodies: coordinates, velocities, body-fixed points
      rotations.py             unit quaternions [w, x, y, z]
      joints.py                holonomic constraints Φ(q) = 0 in world-frame vectors
      contacts.py              rigid contacts: gaps, contact points, slip on two tangents
      geometry.py              world-frame contact geometry of shapes (pure functions)
      forces.py                point forces and torques, spring–dampers between body points
      pictures.py              3D snapshots of a spatial trajectory (matplotlib, headless)

    stepping/                  time-stepping schemes behind one interface
      base.py                  the Scheme interface: what every scheme provides and declares
      moreau_jean.py           Moreau–Jean with bilateral constraints by Schur complement
      contact_solve.py         Moreau–Jean's per-step contact problem, handed to a solver of ``lcp``
      cone_contacts.py         Moreau–Jean's per-step contact problem on Coulomb cones (spatial friction)
      structured.py            the Schur complement of a diagonal mass and a sparse Φ_q, entry by entry
      kernels.py               kernels shared by the schemes (one copy each)
      siconos_rule.py          Siconos' MoreauJeanOSI force treatment (``force_rule="siconos"``)
      impact_location.py       impacts located inside the step (the step split at the gap crossing)
      impact_projection.py     the 2015 four-bar paper's scheme: impact LCP, then projection
      projection.py            projection of a drifted state onto the constraint manifold
      manifold_projection.py   projection through a velocity map: joints and resting contacts
      baumgarte.py             Baumgarte stabilisation of bilateral constraints
      event_driven.py          event-driven, acceleration-level scheme with the stick–slip LCP
      penalty.py               penalty/ODE scheme: compliant contacts, regularized friction

    smoothing/                 model smoothing of stiff and flexible parts (the 2018 paper)
      linear.py                smoothing of linear elastic parts and its exact modal solution
      beam.py                  planar large-deformation (ANCF) beams with smoothed strain and curvature
      stiff_ball.py            a ball on a stiff compliant ground: smoothing of a contact spring
      integrate.py             ODE integration of smooth systems: explicit RK and a stiff reference

    studies/                   batched studies over model parameters
      distributions.py         parameter distributions over named leaves of a parameter dict
      sampling.py              unit-cube designs: random, Latin hypercube, Sobol
      outcomes.py              outcomes of a trajectory: scalar reductions and kept series, streamed in the scan
      runner.py                a per-sample function over N samples: chunked, sharded, resumable
      montecarlo.py            the Monte Carlo study: sample, simulate in chunks, reduce, summarise, plot
      statistics.py            statistics of Monte Carlo outputs, failed samples counted apart
      sensitivity.py           first-order and total Sobol indices from a Saltelli design
      pce.py                   polynomial chaos: sparse regression, gradient rows, moments, Sobol indices
      pce_study.py             the polynomial chaos engine of ``jaxcontact mc --method pce``
      bounds.py                outcome bounds over a box: a Chebyshev surrogate, its extrema re-simulated
      identify.py              gradient-based parameter identification through contact
      profile.py               intervals checked against the loss: Laplace model or loss profile
      posterior.py             a posterior by vmapped random-walk Metropolis chains
      plots.py                 PNG figures of a study
      identify_plots.py        PNG figures of a fit: convergence, fit against data

    models/                    built-in models, looked up by name (``jaxcontact models`` lists them)
      units.py                 SI units of the built-in models' parameters and coordinates
      bouncing_ball.py, box_toss.py, four_bar.py, newton_cradle.py, pushed_block.py, rocking_block.py,
      slider_bar.py, slider_crank.py, sliding_block.py, spatial_slider_crank.py, sphere_on_plane.py,
      tippe_top.py             one model each (its docstring says what it is and where it comes from)

    commands/                  the sub-commands of ``jaxcontact`` (see ``cli.py``)
      simulate.py              ``simulate``: one run, trajectory.npz, plots, a summary
      mc.py                    ``mc``: a Monte Carlo (or polynomial chaos) study of a model
      identify.py              ``identify``: fit parameters to a measured trajectory
      models.py                ``models``: the built-in models, their coordinates, time grid and study
      params.py                ``params``: a model's parameters, defaults, units and rules
      contact_problem.py       ``contact-problem``: solve frictional contact problem files
      lcp_demo.py              ``lcp-demo``: Siconos' LCP test collection with every solver
      scheme_options.py        arguments shared by simulate, mc and identify: the model and the scheme
      checks.py                checks every command runs before any compute
"""

from jaxcontact import xla_options as _xla_options

__version__ = "0.1.0"

_xla_options.apply()
