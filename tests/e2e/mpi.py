#!/usr/bin/python3
"""Runs over MPI ranks against the one-rank run, end to end on the CPU (issue 8).

Usage: mpi.py GRIDFORGE MODE OUT_BASE   (run from the source tree)
GF_MPI_DEVICE=cuda runs on the GPU instead (tests/gpu/run_on_gpu.sh, part mpi).

Every mode runs a small case without mpirun (one process, MPI never
initialised) and with `mpirun -np N` for the rank layouts listed, and
compares every field of every output step of fields.h5. Modes:
  heat2d, heat3d_periodic, stencil_box27, stencil_radius2, jacobi, sor:
      bit for bit (numpy.array_equal), including periodic axes split over
      ranks (two ranks on a periodic axis: the same neighbour on both sides),
      uneven splits and 2×2 splits (edges and corners of box stencils).
  multigrid: laplace.method multigrid (the fine level split over the ranks,
      the coarse levels on rank 0) bit for bit and at the same iterations
      in log.csv: 3D 65×47×33 (Neumann, Dirichlet and an odd periodic y:
      3 colours) V and F cycles on 2 to 4 ranks split along every axis, 2D
      65² with walls and 33×29 with an odd periodic x, float32; cg with the
      multigrid and the Jacobi preconditioners and implicit heat with the
      multigrid one, within the solver's tolerance (as cg below).
  cg, heat_implicit: within the solver's tolerance (CG's dot products are
      sums over ranks, whose order depends on the rank count).
  files: the one-rank folder's files and the N-rank folder's agree: log.csv
      (same steps, min and max equal, mean within rounding), timing.json
      (ranks, rank_dims, the global grid), the .pvd listing one .pvti per
      step whose pieces tile the whole extent, fields.xdmf as on one rank.
  overlap: the halo exchange overlapped with the interior update
      (GRIDFORGE_HALO_OVERLAP=1, the default on the CPU; tests/gpu/mpi_part.sh
      sets it on the GPU): explicit heat (3D, periodic axes
      split over 2 and 3 ranks, uneven splits, 2×2) and Jacobi (2D, uneven,
      periodic), bit for bit (on the GPU too, GF_MPI_RTOL notwithstanding),
      rank 0's log saying the steps overlapped (on the GPU only where the
      marches run: no x split); then once with GRIDFORGE_HALO_OVERLAP=0, bit
      for bit too and saying so.
  time_block: temporal blocking over ranks (halos time_block stencil radii
      deep, exchanged after each pass): explicit heat (3D, periodic and
      walled axes split, uneven, float32 and float64, a source field) with
      heat.time_block 2 and 3, the star7 stencil with 2 to 4, Jacobi (3D)
      with 2 to 4, and auto; in 2D heat (a periodic x), star5 and Jacobi
      with 2 to 4
      (as deep as the thinnest block allows), each against one rank taking
      one step a pass, bit for bit; timing.json and rank 0's log say the
      depth taken.
  render: in-situ frames (the heat movie; the 2D image and 1D line plot of
      heat2d_frames and heat1d_frames) and a raymarch render over ranks,
      drawn by rank 0 from the gathered field: every frame's PNG and the
      render's image.h5 byte for byte one rank's, the fields bit for bit,
      timing.json saying the ranks; no frames folder written by other ranks.
  pde: the pde workload (two fields, each its own boundary) bit for bit:
      2D (periodic x split over 2 ranks, a Dirichlet face whose value reads
      t, a coefficient under div(k*grad u), ssprk3; float64 and float32),
      3D (rk4, periodic z split, 2×2), 1D (cases/pde_moving_boundary.yaml);
      log.csv's <f>_min/_max/_mean and the .pvti of both fields as one
      rank's.
  restart: a checkpoint written on 2 ranks (one global file, as one rank
      writes it) restarted on 3 ranks, on 2 and on one: N/2 + restart = N bit
      for bit against one rank's uninterrupted run, fields.h5 (every field)
      and the .pvd continued (explicit heat, pde with two fields, jacobi,
      multigrid stopped after 3 of its cycles).
  errors: grid.ranks that does not multiply to the ranks, more ranks than
      points on an axis, blocks narrower than the halo, fft and
      laplace.precision mixed over several ranks, another subcommand under mpirun: exit 2, one message, no output
      folder.
"""
from mpi_util import *  # noqa: F401,F403 (the helpers and the cases)
from mpi_modes_io import *  # noqa: F401,F403 (the modes of outputs and restarts)


def mode_heat2d():
    against_one_rank("cases/heat2d_plate.yaml", [(2, None), (3, None), (3, [3, 1]), (2, [2, 1])],
                     "grid.dims=[33,29]", "heat.t_end=0.01", "output.every=150",
                     "output.formats=[hdf5]")


def mode_wave():
    # the leapfrog's two levels over ranks: the earlier level needs no halo
    against_one_rank("cases/wave2d_membrane.yaml", [(2, None), (3, [1, 3]), (4, [2, 2])],
                     "grid.dims=[33,29]", "wave.t_end=0.3", "output.every=20",
                     "output.formats=[hdf5]")


def mode_heat3d_periodic():
    for prec in ("float64", "float32"):
        case = write_case("heat3d_" + prec, HEAT3D.format(prec=prec))
        against_one_rank(case, [(2, None), (2, [2, 1, 1]), (3, [1, 1, 3]), (3, [3, 1, 1]),
                                (4, [2, 1, 2])])


def mode_stencil_box27():
    case = write_case("box27", BOX27)
    against_one_rank(case, [(2, None), (3, [1, 3, 1]), (2, [1, 1, 2]), (4, [1, 2, 2]),
                            (4, [2, 2, 1])])


def mode_stencil_radius2():
    case = write_case("radius2", RADIUS2)
    against_one_rank(case, [(2, None), (3, [1, 3, 1]), (4, [1, 2, 2]), (4, [2, 2, 1])])
    # a 2D radius-2 preset on a grid periodic on both axes
    against_one_rank("cases/stencil2d_star9.yaml", [(3, None), (4, [2, 2])],
                     "grid.dims=[30,26]", "stencil.steps=20", "output.every=10",
                     "output.formats=[hdf5]")


def mode_jacobi():
    against_one_rank("cases/laplace2d_plate.yaml", [(2, None), (3, None), (3, [3, 1])],
                     *laplace_args("jacobi"), rc=1)
    against_one_rank("cases/laplace2d_plate.yaml", [(2, [2, 1]), (3, [1, 3])],
                     *laplace_args("jacobi"), "boundary.x={type: periodic}", rc=1)


def mode_sor():
    against_one_rank("cases/laplace2d_plate.yaml", [(2, None), (3, None), (3, [3, 1])],
                     *laplace_args("sor"), rc=1)
    against_one_rank("cases/laplace2d_plate.yaml", [(2, [2, 1]), (4, [2, 2])],
                     *laplace_args("sor"), "boundary.x={type: periodic}", rc=1)


def mode_cg():
    against_one_rank("cases/laplace3d_box.yaml", [(2, None), (3, None), (4, [1, 2, 2])],
                     "grid.dims=[17,15,13]", "output.formats=[hdf5]", rtol=1e-6)


def mode_heat_implicit():
    against_one_rank("cases/heat3d_implicit.yaml", [(2, None), (3, [3, 1, 1])],
                     "grid.dims=[15,13,11]", "heat.steps=6", "output.every=3",
                     "output.formats=[hdf5]", rtol=1e-8)


# Multigrid over ranks: 65×47×33 (47 → 24 → 13: not nested; semi-coarsened)
# with a Neumann face, a Dirichlet face and a periodic y of odd length (3
# colours), and 2D on 2^k + 1 points and on a periodic x of odd length.
def mode_multigrid():
    """The fine level split over ranks, the coarse levels on rank 0: the same
    arithmetic as one rank, so bit for bit and the same number of cycles."""
    def cycles(out):  # the iterations of log.csv's rows: one a cycle (check_every 1)
        return [r["iteration"] for r in log_rows(out)]

    def against(case, layouts, *args, rtol=None):
        ref = against_one_rank(case, layouts, *args, rtol=rtol)
        for np_, ranks in layouts:
            if MAXNP and np_ > MAXNP:
                continue
            tag = f"np{np_}" + ("" if ranks is None else "_" + "x".join(map(str, ranks)))
            got = os.path.join(BASE, tag)
            if cycles(got) != cycles(ref):
                fail(f"{case} {tag}: log.csv at iterations {cycles(got)}, one rank's at "
                     f"{cycles(ref)}")
        print(f"mpi {MODE}: {os.path.basename(case)}: {cycles(ref)[-1]} iterations on every "
              "layout, as one rank")

    for cycle in ("v", "f"):
        case = write_case("mg3d_" + cycle, MG3D.replace("{cycle}", cycle))
        # x, y and z split (and two axes at once) for V; one layout for F
        layouts = [(3, [1, 3, 1])]
        if cycle == "v":
            layouts += [(2, None), (3, [3, 1, 1]), (4, [2, 1, 2])]
        against(case, layouts)
    against(write_case("mg2d_walls", MG2D.format(dims="[65, 65]", x="neumann")),
            [(3, None), (4, [2, 2])])
    against(write_case("mg2d_periodic", MG2D.format(dims="[33, 29]", x="periodic")),
            [(2, [2, 1]), (3, [3, 1])])
    # float32 too: the same arithmetic
    against(write_case("mg2d_f32", MG2D.format(dims="[33, 29]", x="periodic")
                       .replace("float64", "float32").replace("1.0e-10", "1.0e-3")),
            [(3, [3, 1])])
    # CG preconditioned by a multigrid V-cycle (and by Jacobi, which runs on
    # the multigrid executor): CG's dot products are sums over ranks
    for pre, layout in (("multigrid", (3, [1, 3, 1])), ("jacobi", (2, None))):
        against("cases/laplace3d_box.yaml", [layout], "grid.dims=[17,15,13]",
                "output.formats=[hdf5]", f"laplace.preconditioner={pre}", rtol=1e-6)
    against_one_rank("cases/heat3d_implicit.yaml", [(3, [3, 1, 1])], "grid.dims=[15,13,11]",
                     "heat.steps=6", "output.every=3", "output.formats=[hdf5]",
                     "heat.solver.preconditioner=multigrid", rtol=1e-8)


# Rows of whole 16-byte vectors in x (16 points), so that on the GPU the
# marches run, and with them the overlap, wherever x is not split.
HEAT3D_OVERLAP = HEAT3D.replace("dims: [12, 10, 9]", "dims: [16, 17, 13]")


def mode_overlap():
    def layouts_run(case, layouts, *args, env=None, expect="overlap the halo exchange", rc=0):
        for np_, ranks in layouts:
            if MAXNP and np_ > MAXNP:
                print(f"mpi {MODE}: {np_} ranks skipped (GF_MPI_MAXNP={MAXNP})")
        layouts = [(np_, ranks) for np_, ranks in layouts if not (MAXNP and np_ > MAXNP)]
        if not layouts:
            return
        ref = os.path.join(BASE, "np1")
        shutil.rmtree(ref, ignore_errors=True)
        run(case, ref, *args, rc=rc)
        for np_, ranks in layouts:
            tag = f"np{np_}_" + "x".join(map(str, ranks))
            out = os.path.join(BASE, tag)
            shutil.rmtree(out, ignore_errors=True)
            p = run(case, out, *args, f"grid.ranks=[{','.join(map(str, ranks))}]", np_=np_,
                    rc=rc, env=env, quiet=False)
            # The GPU splits a step only where its marches run: not on blocks
            # split in x (their rows are not whole vectors).
            want = expect if DEVICE == "cpu" or ranks[0] == 1 or "OVERLAP=0" in expect else None
            lines = [l for l in p.stderr.splitlines() if l.startswith("mpi:")]
            if want and not any(want in l for l in lines):
                fail(f"{tag}: rank 0's log does not say '{want}': {lines}")
            # bit for bit on the GPU too: the split step's kernels compute
            # each point by the same formula as the whole step's
            compare(ref, out, tag + (" (" + want + ")" if want else ""), strict=True)

    # explicit heat, 3D, x and z periodic: z split over 3 (uneven, periodic),
    # y over 3 (uneven, walls), x over 2 (periodic, both neighbours the same
    # rank), 2×2 in y and z (edges), and a 4-rank split of x and z
    for prec in ("float64", "float32"):
        case = write_case("heat3d_overlap_" + prec, HEAT3D_OVERLAP.format(prec=prec))
        layouts_run(case, [(2, [1, 1, 2]), (3, [1, 1, 3]), (3, [1, 3, 1]), (2, [2, 1, 1]),
                           (4, [1, 2, 2]), (4, [2, 1, 2])])
    # Jacobi, 2D: y over 3 (uneven), x over 3; periodic x over 2 and y over 3
    # (one sweep a pass: with auto, 300 sweeps would deepen the halo for the
    # 2D passes, and blocks under 3 halo widths thick exchange after each step)
    args = [a for a in laplace_args("jacobi") if not a.startswith("grid.dims")] + [
        "grid.dims=[32,28]", "laplace.time_block=1"]
    layouts_run("cases/laplace2d_plate.yaml", [(2, [1, 2]), (3, [1, 3]), (3, [3, 1])], *args, rc=1)
    layouts_run("cases/laplace2d_plate.yaml", [(2, [2, 1]), (3, [1, 3])], *args,
                "boundary.x={type: periodic}", rc=1)
    # the exchange after the whole step, for comparison
    env = dict(ENV, GRIDFORGE_HALO_OVERLAP="0")
    case = write_case("heat3d_overlap_float64", HEAT3D_OVERLAP.format(prec="float64"))
    layouts_run(case, [(2, [1, 1, 2]), (3, [1, 1, 3])], env=env,
                expect="after each step (GRIDFORGE_HALO_OVERLAP=0)")
    layouts_run("cases/laplace2d_plate.yaml", [(3, [1, 3])], *args, env=env, rc=1,
                expect="after each step (GRIDFORGE_HALO_OVERLAP=0)")


def mode_time_block():
    def blocked(case, k_args, layouts, steps_key, rc=0):
        ref = os.path.join(BASE, "np1")
        shutil.rmtree(ref, ignore_errors=True)
        run(case, ref, *k_args, f"{steps_key}.time_block=1", rc=rc)
        for np_, ranks, k in layouts:
            if MAXNP and np_ > MAXNP:
                print(f"mpi {MODE}: {np_} ranks skipped (GF_MPI_MAXNP={MAXNP})")
                continue
            tag = f"np{np_}_" + "x".join(map(str, ranks)) + f"_tb{k}"
            out = os.path.join(BASE, tag)
            shutil.rmtree(out, ignore_errors=True)
            p = run(case, out, *k_args, f"{steps_key}.time_block={k}",
                    f"grid.ranks=[{','.join(map(str, ranks))}]", np_=np_, quiet=False, rc=rc)
            took = json.load(open(os.path.join(out, "timing.json"))).get("time_block")
            depth = k
            if took != depth:
                fail(f"{tag}: timing.json time_block {took}, expected {depth}")
            lines = [l for l in p.stderr.splitlines() if l.startswith("mpi:")]
            if depth > 1 and not any(f"(for passes of up to " in l for l in lines):
                fail(f"{tag}: rank 0's log does not give the halo's depth: {lines}")
            compare(ref, out, f"{tag} ({took} steps a pass) against one rank, one step a pass")

    # heat: x and z periodic (x over 2: both neighbours the same rank), y
    # walls (Dirichlet below, Neumann above); y over 3 and z over 3 uneven
    # (blocks of 4, 4, 3 and 4, 3, 3 points), 2×2 splits
    for prec in ("float64", "float32"):
        case = write_case("heat3d_tb_" + prec, HEAT3D.format(prec=prec).replace(
            "dims: [12, 10, 9]", "dims: [12, 11, 10]"))
        blocked(case, ["heat.steps=30", "output.every=15"],
                [(2, [1, 1, 2], 2), (2, [2, 1, 1], 3), (3, [1, 3, 1], 3), (3, [1, 1, 3], 2),
                 (4, [2, 1, 2], 2), (4, [1, 2, 2], 3)],
                "heat")
    # auto: 200 steps, as deep as the thinnest block allows (10 / 3: 3 points)
    case = write_case("heat3d_tb_float64", HEAT3D.format(prec="float64").replace(
        "dims: [12, 10, 9]", "dims: [12, 11, 10]"))
    ref = os.path.join(BASE, "np1")
    shutil.rmtree(ref, ignore_errors=True)
    run(case, ref, "heat.steps=200", "output.every=100", "heat.time_block=1")
    for np_, ranks, deepest in ((3, [1, 1, 3], 3), (2, [1, 2, 1], 4)):
        if MAXNP and np_ > MAXNP:
            continue
        tag = f"np{np_}_" + "x".join(map(str, ranks)) + "_auto"
        out = os.path.join(BASE, tag)
        shutil.rmtree(out, ignore_errors=True)
        p = run(case, out, "heat.steps=200", "output.every=100", "heat.time_block=auto",
                f"grid.ranks=[{','.join(map(str, ranks))}]", np_=np_, quiet=False)
        took = json.load(open(os.path.join(out, "timing.json"))).get("time_block")
        if not isinstance(took, int) or not 1 <= took <= deepest:
            fail(f"{tag}: timing.json time_block {took}, expected 1 to {deepest}")
        if not any(f"halo {deepest} points (for passes of up to {deepest} steps)" in l
                   for l in p.stderr.splitlines()):
            fail(f"{tag}: rank 0's log does not give a halo of {deepest}: {p.stderr}")
        compare(ref, out, f"{tag} (auto took {took} steps a pass) against one rank, one step a pass")
    # the star7 stencil: y periodic over 2 and 3 ranks, z walls (Dirichlet), x Neumann
    blocked("cases/stencil3d_star7.yaml",
            ["grid.dims=[16,15,14]", "stencil.steps=24", "output.every=12",
             "output.formats=[hdf5]"],
            [(2, [1, 2, 1], 2), (3, [1, 3, 1], 4), (3, [1, 1, 3], 4), (4, [2, 1, 2], 3)],
            "stencil")
    # Jacobi (3D, an f field, Dirichlet walls and a periodic x): 70 sweeps in
    # chunks of 30, max_iters reached (exit 1, the last iterate written)
    blocked("cases/laplace3d_jacobi.yaml",
            ["grid.dims=[14,13,12]", "laplace.max_iters=70", "laplace.check_every=30",
             "laplace.tolerance=1e-30", "boundary.x={type: periodic}", "output.formats=[hdf5]"],
            [(2, [2, 1, 1], 3), (3, [1, 3, 1], 2), (3, [1, 1, 3], 4), (4, [1, 2, 2], 3)],
            "laplace", rc=1)
    # 2D: heat (the plate: Dirichlet and Neumann y walls, a periodic x) with y
    # over 3 (uneven) and x over 2; star5 on Neumann walls; Jacobi on the plate
    blocked("cases/heat2d_plate.yaml",
            ["grid.dims=[20,17]", "heat={alpha: 1.0, steps: 30}", "output.every=15", "boundary.x={type: periodic}",
             "output.formats=[hdf5]"],
            [(3, [1, 3], 3), (2, [2, 1], 4), (4, [2, 2], 2)], "heat")
    blocked("cases/stencil2d_star9.yaml",
            ["grid.dims=[21,18]", "stencil={preset: star5, coeff: 5.0e-4, steps: 24}", "output.every=12",
             "boundary.default={type: neumann, gradient: 0.5}", "output.formats=[hdf5]"],
            [(2, [1, 2], 4), (3, [3, 1], 3)], "stencil")
    blocked("cases/laplace2d_plate.yaml", laplace_args("jacobi"),
            [(2, [2, 1], 3), (3, [1, 3], 4)], "laplace", rc=1)


MODES = {name[5:]: fn for name, fn in globals().items() if name.startswith("mode_")}
if MODE not in MODES:
    fail(f"unknown mode; one of {', '.join(MODES)}")
os.makedirs(BASE, exist_ok=True)
MODES[MODE]()
