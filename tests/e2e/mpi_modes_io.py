"""The modes of mpi.py about outputs and runs over time: render, files, pde,
restart, interrupt and errors (mpi.py's docstring says what each checks)."""
from mpi_util import *  # noqa: F401,F403 (the modes share the helpers and cases)


def mode_render():
    def same_files(ref, got, names, label):
        for n in names:
            a, b = os.path.join(ref, n), os.path.join(got, n)
            if not os.path.isfile(b):
                fail(f"{label}: {n} missing")
            if open(a, "rb").read() != open(b, "rb").read():
                fail(f"{label}: {n} differs from one rank's")
        print(f"mpi {MODE}: {label}: {len(names)} images byte for byte")

    # in-situ frames of a heat run: frames at 0, 20 and 40
    args = ["grid.dims=[26,24,22]", "heat.steps=40", "render.every=20", "output.every=20",
            "output.formats=[hdf5]", "render.camera.width=96", "render.camera.height=72"]
    ref = os.path.join(BASE, "movie_np1")
    shutil.rmtree(ref, ignore_errors=True)
    run("cases/heat3d_movie.yaml", ref, *args)
    frames = sorted("frames/" + n for n in os.listdir(os.path.join(ref, "frames")))
    if len(frames) != 3:
        fail(f"one rank drew {frames}")
    for np_, ranks in ((2, None), (3, [1, 1, 3]), (4, [2, 1, 2])):
        if MAXNP and np_ > MAXNP:
            continue
        tag = f"movie_np{np_}"
        out = os.path.join(BASE, tag)
        shutil.rmtree(out, ignore_errors=True)
        extra = [] if ranks is None else [f"grid.ranks=[{','.join(map(str, ranks))}]"]
        run("cases/heat3d_movie.yaml", out, *args, *extra, np_=np_)
        compare(ref, out, tag)
        same_files(ref, out, frames, tag + " frames")
        if sorted(os.listdir(os.path.join(out, "frames"))) != sorted(f[7:] for f in frames):
            fail(f"{tag}: frames/ holds {os.listdir(os.path.join(out, 'frames'))}")
        t = json.load(open(os.path.join(out, "timing.json")))
        if t.get("ranks") != np_ or t.get("render", {}).get("frames") != 3:
            fail(f"{tag}: timing.json ranks {t.get('ranks')}, render {t.get('render')}")
    # 2D images and 1D line plots, drawn on rank 0 from the gathered field
    short = ["heat.steps=40", "render.every=20", "output.every=20", "output.formats=[hdf5]"]
    for case, splits in (("heat2d_frames", ((2, [2, 1]), (3, [1, 3]))), ("heat1d_frames", ((2, None),))):
        ref = os.path.join(BASE, case + "_np1")
        shutil.rmtree(ref, ignore_errors=True)
        run(f"cases/{case}.yaml", ref, *short)
        frames = sorted("frames/" + n for n in os.listdir(os.path.join(ref, "frames")))
        if len(frames) != 3:
            fail(f"{case}: one rank drew {frames}")
        for np_, ranks in splits:
            if MAXNP and np_ > MAXNP:
                continue
            tag = f"{case}_np{np_}"
            out = os.path.join(BASE, tag)
            shutil.rmtree(out, ignore_errors=True)
            extra = [] if ranks is None else [f"grid.ranks=[{','.join(map(str, ranks))}]"]
            run(f"cases/{case}.yaml", out, *short, *extra, np_=np_)
            compare(ref, out, tag)
            same_files(ref, out, frames, tag + " frames")
    # a raymarch case: rank 0 renders, the others wait
    args = ["grid.dims=[40,36,32]", "raymarch.camera.width=96", "raymarch.camera.height=64"]
    ref = os.path.join(BASE, "cloud_np1")
    shutil.rmtree(ref, ignore_errors=True)
    run("cases/raymarch_cloud.yaml", ref, *args)
    for np_ in (2, 3):
        if MAXNP and np_ > MAXNP:
            continue
        out = os.path.join(BASE, f"cloud_np{np_}")
        shutil.rmtree(out, ignore_errors=True)
        run("cases/raymarch_cloud.yaml", out, *args, np_=np_)
        same_files(ref, out, ["raymarch_cloud.png"], f"raymarch on {np_} ranks")
        with h5py.File(os.path.join(ref, "image.h5"), "r") as f, \
                h5py.File(os.path.join(out, "image.h5"), "r") as g:
            for k in f:
                if not np.array_equal(f[k][...], g[k][...]):
                    fail(f"raymarch on {np_} ranks: image.h5 {k} differs")
        t = json.load(open(os.path.join(out, "timing.json")))
        if t.get("ranks") != np_ or t.get("rendered_on") != "rank 0":
            fail(f"raymarch on {np_} ranks: timing.json ranks {t.get('ranks')}, "
                 f"rendered_on {t.get('rendered_on')}")


def mode_files():
    args = ["grid.dims=[33,29]", "heat.t_end=0.01", "output.every=150"]
    ref = os.path.join(BASE, "np1")
    got = os.path.join(BASE, "np3")
    for d in (ref, got):
        shutil.rmtree(d, ignore_errors=True)
    run("cases/heat2d_plate.yaml", ref, *args)
    run("cases/heat2d_plate.yaml", got, *args, np_=3)
    compare(ref, got, "np3")
    a, b = log_rows(ref), log_rows(got)
    if [r["step"] for r in a] != [r["step"] for r in b]:
        fail("log.csv: the steps differ from one rank's")
    for r, s in zip(a, b):
        if r["min"] != s["min"] or r["max"] != s["max"]:
            fail(f"log.csv step {r['step']}: min/max {s['min']}/{s['max']}, one rank {r['min']}/{r['max']}")
        if abs(float(r["mean"]) - float(s["mean"])) > 1e-12 * max(1.0, abs(float(r["mean"]))):
            fail(f"log.csv step {r['step']}: mean {s['mean']}, one rank {r['mean']}")
    t = json.load(open(os.path.join(got, "timing.json")))
    if t.get("ranks") != 3 or t["grid"] != [33, 29] or len(t.get("rank_dims", [])) != 2:
        fail(f"timing.json: ranks {t.get('ranks')}, grid {t['grid']}, rank_dims {t.get('rank_dims')}")
    if "ranks" in json.load(open(os.path.join(ref, "timing.json"))):
        fail("timing.json of one rank names ranks")
    if json.load(open(os.path.join(got, "run.json")))["status"] != "completed":
        fail("run.json: not completed")
    # The .pvd lists .pvti files; each one's pieces tile the whole extent.
    pvd = ET.parse(os.path.join(got, "heat2d-plate.pvd")).getroot()
    files = [d.get("file") for d in pvd.iter("DataSet")]
    if len(files) != len(steps_of(ref)) or not all(f.endswith(".pvti") for f in files):
        fail(f".pvd lists {files}")
    for rel in files:
        path = os.path.join(got, rel)
        root = ET.parse(path).getroot()
        img = root.find("PImageData")
        whole = list(map(int, img.get("WholeExtent").split()))
        if whole != [0, 32, 0, 28, 0, 0]:
            fail(f"{rel}: WholeExtent {whole}")
        covered = np.zeros((29, 33), dtype=int)
        pieces = img.findall("Piece")
        if len(pieces) != 3:
            fail(f"{rel}: {len(pieces)} pieces for 3 ranks")
        for p in pieces:
            e = list(map(int, p.get("Extent").split()))
            src = os.path.join(os.path.dirname(path), p.get("Source"))
            if not os.path.isfile(src):
                fail(f"{rel}: piece {p.get('Source')} missing")
            head = open(src, "rb").read(600).decode("latin-1")
            if f'WholeExtent="{" ".join(map(str, e))}"' not in head:
                fail(f"{src}: its extent is not the .pvti's {e}")
            covered[e[2]:e[3] + 1, e[0]:e[1] + 1] = 1
        if not covered.all():
            fail(f"{rel}: the pieces leave points uncovered")
    x1 = open(os.path.join(ref, "fields.xdmf")).read()
    x3 = open(os.path.join(got, "fields.xdmf")).read()
    if x1 != x3:
        fail("fields.xdmf differs from one rank's")
    with h5py.File(os.path.join(got, "fields.h5"), "r") as f, \
            h5py.File(os.path.join(ref, "fields.h5"), "r") as g:
        for k in ("dims", "spacing", "origin"):
            if not np.array_equal(f.attrs[k], g.attrs[k]):
                fail(f"fields.h5 attribute {k}: {f.attrs[k]}, one rank {g.attrs[k]}")
    leftovers = [n for n in os.listdir(got) if n.startswith(".")]
    if leftovers:
        fail(f"temporary files left: {leftovers}")
    print(f"mpi {MODE}: log.csv, timing.json, run.json, .pvd/.pvti pieces and fields.xdmf agree")


# Two fields, each with its own boundary: x periodic (split over 2 ranks: the
# same neighbour on both sides), u's y- Dirichlet value reads t (evaluated at
# every stage on the rank that owns that face) and is defined near its face
# only (sqrt(0.01 - y): a rank whose shared y- face were taken for a wall
# would fail), a coefficient read by div(k*grad u) (its halo too), upwind and
# central differences, ssprk3 (three stages a step, each exchanging both
# fields' halos).
def mode_pde():
    """The pde workload (several fields, explicit stages) against one rank,
    bit for bit; log.csv's columns of every field and the .pvti of each
    output step (every field, a piece a rank) as one rank's."""
    # the float32 run's files are read below: 3 ranks, or 2 under GF_MPI_MAXNP=2
    nr = 2 if MAXNP and MAXNP < 3 else 3
    for prec, layouts in (("float64", [(2, [2, 1]), (3, [1, 3]), (4, [2, 2])]),
                          ("float32", [(nr, [nr, 1])])):
        case = write_case(f"pde2d_{prec}", PDE2D.format(prec=prec))
        ref = against_one_rank(case, layouts)
    got = os.path.join(BASE, f"np{nr}_{nr}x1")
    a, b = log_rows(ref), log_rows(got)
    cols = [f"{f}_{s}" for f in "uv" for s in ("min", "max", "mean")]
    if [r["step"] for r in a] != [r["step"] for r in b] or not all(c in b[0] for c in cols):
        fail(f"log.csv: steps or columns differ from one rank's: {list(b[0])}")
    for r, s in zip(a, b):
        for c in cols:
            same = r[c] == s[c] if not c.endswith("mean") else \
                abs(float(r[c]) - float(s[c])) <= 1e-6 * max(1.0, abs(float(r[c])))
            if not same:
                fail(f"log.csv step {r['step']}: {c} {s[c]}, one rank {r[c]}")
    pvd = ET.parse(os.path.join(got, "pde2d.pvd")).getroot()
    files = [d.get("file") for d in pvd.iter("DataSet")]
    if len(files) != len(steps_of(ref)) or not all(f.endswith(".pvti") for f in files):
        fail(f"pde2d.pvd lists {files}")
    for rel in files:
        img = ET.parse(os.path.join(got, rel)).getroot().find("PImageData")
        names = [x.get("Name") for x in img.iter("PDataArray")]
        pieces = img.findall("Piece")
        if names != ["u", "v"] or len(pieces) != nr:
            fail(f"{rel}: arrays {names}, {len(pieces)} pieces for {nr} ranks")
        for p in pieces:
            src = os.path.join(got, os.path.dirname(rel), p.get("Source"))
            head = open(src, "rb").read(2000).decode("latin-1")
            if 'Name="u"' not in head or 'Name="v"' not in head:
                fail(f"{src}: not both fields")
    print(f"mpi {MODE}: log.csv columns of u and v, the .pvd and .pvti of both fields as one rank's")
    against_one_rank(write_case("pde3d", PDE3D), [(2, [1, 1, 2]), (3, [3, 1, 1]), (4, [1, 2, 2])])
    # 1D, a Dirichlet face that moves in time (rk4)
    against_one_rank("cases/pde_moving_boundary.yaml", [(2, None), (3, None)], "grid.dims=[41]",
                     "pde.t_end=1.0", "output.every=10", "output.formats=[hdf5]")


def mode_restart():
    case = write_case("heat3d_float64", HEAT3D.format(prec="float64"))
    both = "output.formats=[vtk,hdf5]"
    plans = [(case, ["output.every=10", both], "heat.steps", 20, 40, 0),
             (write_case("pde2d", PDE2D.format(prec="float64")), ["output.every=10", both],
              "pde.steps", 20, 30, 0),
             ("cases/laplace2d_plate.yaml",
              [a for a in laplace_args("jacobi") if "max_iters" not in a and "formats" not in a]
              + ["output.every=100", both], "laplace.max_iters", 200, 400, 1),
             # multigrid: cycles 3 and 6 of a solve that has not converged by then
             ("cases/poisson3d_multigrid.yaml",
              ["grid.dims=[17,15,13]", "laplace.tolerance=1e-30", "output.every=2", both],
              "laplace.max_iters", 3, 6, 1)]
    for case, args, key, half, full, rc in plans:
        ref = os.path.join(BASE, "full")
        shutil.rmtree(ref, ignore_errors=True)
        run(case, ref, *args, f"{key}={full}", "output.checkpoint_every=100", rc=rc)
        for first, second in ((2, 3), (2, 1), (3, 2)):
            out = os.path.join(BASE, f"np{first}_np{second}")
            shutil.rmtree(out, ignore_errors=True)
            run(case, out, *args, f"{key}={half}", "output.checkpoint_every=100", np_=first, rc=rc)
            ck = os.path.join(out, "checkpoint.h5")
            with h5py.File(ck, "r") as f:
                if int(f.attrs["step"]) != half:
                    fail(f"{ck}: step {f.attrs['step']}, expected {half}")
            run(case, out, *args, f"{key}={full}", "output.checkpoint_every=100",
                "--restart", ck, np_=second, rc=rc)
            compare(ref, out, f"{os.path.basename(case)}: {first} ranks to {half}, "
                              f"{second} from there to {full}")
            pvd = ET.parse(os.path.join(out, [n for n in os.listdir(out) if n.endswith(".pvd")][0]))
            times = [float(d.get("timestep")) for d in pvd.getroot().iter("DataSet")]
            if times != sorted(set(times)) or len(times) != len(steps_of(ref)):
                fail(f"{out}: the .pvd lists times {times}")


def mode_interrupt():
    """Ctrl-C over ranks: every rank agrees to stop after the same step, the
    checkpoint and the state reached are written, each rank exits 130, and no
    rank calls MPI_Abort (issue 23 item 8). Sent to the ranks (as a batch
    system does) the job ends with 130; sent to mpirun (a terminal's Ctrl-C),
    Open MPI's mpirun ends the job with SIGTERM to the ranks and its own
    status."""
    import signal
    import time
    case = write_case("heat3d_float64", HEAT3D.format(prec="float64"))
    for target in ("ranks", "mpirun"):
        out = os.path.join(BASE, f"int_{target}")
        shutil.rmtree(out, ignore_errors=True)
        cmd = mpirun(2) + [GF, "run", case, "--device", DEVICE, "--quiet", "--out", out,
                           "heat.steps=100000000", "output.every=0",
                           "output.checkpoint_every=100000000"]
        p = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        for _ in range(300):
            if os.path.isfile(os.path.join(out, "run.json")):
                break
            time.sleep(0.1)
        time.sleep(1.0)
        if target == "mpirun":
            p.send_signal(signal.SIGINT)
        else:
            subprocess.run(["pkill", "-INT", "-f", f"^{GF} run {case}"], check=False)
        text, _ = p.communicate(timeout=120)
        if "MPI_ABORT" in text or "MPI_Abort" in text:
            fail(f"interrupt to the {target}: a rank aborted:\n{text}")
        if target == "ranks" and p.returncode != 130:
            fail(f"interrupt to the ranks: exit {p.returncode}, expected 130:\n{text}")
        with open(os.path.join(out, "run.json")) as f:
            if '"status": "interrupted' not in f.read():
                fail(f"{out}/run.json does not say interrupted")
        with h5py.File(os.path.join(out, "checkpoint.h5"), "r") as f:
            ck = int(f.attrs["step"])
        last = int(open(os.path.join(out, "log.csv")).read().split()[-1].split(",")[0])
        if ck != last or ck <= 0 or sorted(steps_of(out)) != [f"{ck:06d}"]:
            fail(f"{out}: checkpoint at {ck}, log to {last}, fields.h5 steps {sorted(steps_of(out))}")
        print(f"mpi interrupt to the {target}: exit {p.returncode}, both ranks stopped at step {ck}")


def mode_errors():
    cases = [
        (3, "cases/heat2d_plate.yaml", ["grid.ranks=[2,2]"],
         r"grid.ranks: \[2, 2\] makes 4 ranks, but the run has 3"),
        (4, "cases/heat2d_plate.yaml", ["grid.dims=[40,3]", "grid.ranks=[1,4]"],
         r"grid.ranks: 4 ranks on axis y but grid.dims\[1\] is 3: more ranks than points"),
        (3, "cases/stencil2d_star9.yaml", ["grid.dims=[40,5]", "grid.ranks=[1,3]"],
         r"grid.ranks: 3 ranks on axis y give blocks of 1 points, narrower than the halo of 2"),
        (3, "cases/heat3d_hotspot.yaml", ["grid.dims=[20,20,9]", "grid.ranks=[1,1,3]",
                                          "heat.time_block=4"],
         r"grid.ranks: 3 ranks on axis z give blocks of 3 points, narrower than the halo of 4 "
         r"\(time_block 4 × the stencil radius 1\)"),
        (3, "cases/stencil2d_star9.yaml", ["grid.dims=[5,5]"],
         r"grid.dims: the grid 5\^2 cannot be split over 3 ranks with blocks at least 2 points wide"),
        (2, "cases/poisson3d_periodic.yaml", [], r"laplace.method: fft runs on one rank only"),
        (2, "cases/poisson3d_mixed.yaml", [], r"laplace.precision: mixed runs on one rank only"),
        (2, "cases/heat2d_plate.yaml", ["grid.ranks=[2]"], r"grid.ranks: expected a list of 2 integers"),
    ]
    import re
    for i, (np_, case, args, regex) in enumerate(cases):
        out = os.path.join(BASE, f"err{i}")
        shutil.rmtree(out, ignore_errors=True)
        p = run(case, out, *args, np_=np_, rc=2)
        # gridforge's lines: mpirun adds its own note in boxes of dashes after them.
        lines = [l for l in p.stderr.split("-" * 20)[0].splitlines() if l.strip()]
        if len(lines) != 1 or not re.search(regex, lines[0]):
            fail(f"{case} {args} on {np_} ranks: stderr {p.stderr!r}, expected one line matching {regex}")
        if os.path.exists(out):
            fail(f"{case} {args}: wrote {out}")
    p = subprocess.run(mpirun(2) + [GF, "validate", "cases/heat1d_rod.yaml"], env=ENV,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 2 or "only `gridforge run` runs over several MPI ranks" not in p.stderr:
        fail(f"validate under mpirun: exit {p.returncode}: {p.stderr}")
    out = os.path.join(BASE, "err_overlap")
    shutil.rmtree(out, ignore_errors=True)
    p = run("cases/heat2d_plate.yaml", out, np_=2, rc=2, env=dict(ENV, GRIDFORGE_HALO_OVERLAP="yes"))
    lines = [l for l in p.stderr.split("-" * 20)[0].splitlines() if l.strip()]
    if lines != ["error: GRIDFORGE_HALO_OVERLAP: 'yes' is not 0 or 1"] or os.path.exists(out):
        fail(f"GRIDFORGE_HALO_OVERLAP=yes: stderr {p.stderr!r}")
    print(f"mpi {MODE}: {len(cases) + 2} refusals with their messages")
