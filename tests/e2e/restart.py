#!/usr/bin/python3
"""Checkpoint and restart, end to end on the CPU (issue 6, item 1).

Usage: restart.py GRIDFORGE MODE OUT_BASE   (run from the source tree)
GF_RESTART_DEVICE=cuda runs every mode on the GPU instead (tests/gpu/run_on_gpu.sh).

Modes:
  heat_explicit, heat_cn, stencil, laplace_jacobi, laplace_cg, laplace_multigrid, laplace_pcg:
      a run of N steps (iterations) against a run of N/2, its checkpoint and a
      restart to N: the final fields and every output step are bit for bit
      equal; the restarted folder's log.csv, .pvd and fields.xdmf continue the
      first run's (each step once, in order). heat_explicit also restarts from
      an older checkpoint into a folder that went further, whose later rows
      and outputs must go.
  interrupt: SIGINT writes a checkpoint at the step reached (exit 130); the
      restart from it ends bit for bit equal to an uninterrupted run.
  interrupt_laplace: the same for a jacobi solve (the iterate before finish()).
  diverge: a run that diverges keeps its last periodic checkpoint, which
      is never a diverged state, and a restart from it into a new folder
      runs on (a new series there).
  cpu_to_gpu: a CPU checkpoint restarted on the GPU (needs one) runs on,
      continues the series, and ends close to the all-CPU run (the devices'
      arithmetic differs in the last bits, so not bit for bit).
  mismatch: checkpoints of another case (grid, precision, workload, a key),
      a missing or corrupt file, a step past the end: exit 2, a message
      naming what differs, nothing written.
"""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import h5py
import numpy as np

GF, MODE, BASE = sys.argv[1], sys.argv[2], sys.argv[3]
# The CPU backend's reductions (CG's dot products) combine per-thread partial
# sums: bit for bit run to run with a fixed thread count.
ENV = dict(os.environ, OMP_NUM_THREADS="2")
DEVICE = os.environ.get("GF_RESTART_DEVICE", "cpu")


def fail(msg):
    print(f"restart {MODE}: FAIL: {msg}")
    sys.exit(1)


def run(case, out, *args, rc=0, restart=None, device=None):
    cmd = [GF, "run", case, "--device", device or DEVICE, "--quiet", "--out", out, *args]
    if restart:
        cmd += ["--restart", restart]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    if p.returncode != rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {rc}\n{p.stderr}")
    return p.stderr


def h5_steps(out):
    with h5py.File(os.path.join(out, "fields.h5"), "r") as f:
        # every field of the step (u alone but for pde), one array
        return {k: (float(f["steps"][k].attrs["time"]),
                    np.concatenate([f["steps"][k][n][...].ravel() for n in sorted(f["steps"][k])]))
                for k in f["steps"]}


def same_fields(a, b):
    """Every output step of b is in a with the same time and identical values, and no other."""
    fa, fb = h5_steps(a), h5_steps(b)
    if sorted(fa) != sorted(fb):
        fail(f"output steps {sorted(fa)} in {a}, {sorted(fb)} in {b}")
    for k in fb:
        if fa[k][0] != fb[k][0]:
            fail(f"step {k}: time {fa[k][0]!r} vs {fb[k][0]!r}")
        if fa[k][1].dtype != fb[k][1].dtype or not np.array_equal(fa[k][1], fb[k][1]):
            diff = np.max(np.abs(fa[k][1].astype(float) - fb[k][1].astype(float)))
            fail(f"step {k}: fields differ (max |diff| {diff:.3g})")
    last = max(fb)
    return int(last), fa[last][1]


def series_consistent(out, name):
    """The .pvd, fields.xdmf and fields.h5 list the same steps, each once, in order."""
    steps = sorted(int(k) for k in h5_steps(out))
    pvd = ET.parse(os.path.join(out, name + ".pvd")).getroot()
    files = [d.get("file") for d in pvd.findall("./Collection/DataSet")]
    pvd_steps = [int(f.rsplit("_", 1)[1].split(".")[0]) for f in files]
    if pvd_steps != steps:
        fail(f"{name}.pvd lists steps {pvd_steps}, fields.h5 {steps}")
    for f in files:
        if not os.path.isfile(os.path.join(out, f)):
            fail(f"the .pvd lists {f}, which is missing")
    on_disk = sorted(os.listdir(os.path.join(out, "vtk")))
    if on_disk != sorted(os.path.basename(f) for f in files):
        fail(f"vtk/ holds {on_disk}, the .pvd lists {files}")
    xdmf = ET.parse(os.path.join(out, "fields.xdmf")).getroot()
    grids = xdmf.findall(".//Grid[@GridType='Uniform']")
    x_steps = [int(g.get("Name").split("_")[1]) for g in grids]
    if x_steps != steps:
        fail(f"fields.xdmf lists steps {x_steps}, fields.h5 {steps}")
    with h5py.File(os.path.join(out, "fields.h5"), "r") as f:
        for g in grids:  # the xdmf's HDF references open in fields.h5
            ref = g.find(".//Attribute/DataItem").text.strip()
            path = ref.split(":", 1)[1]
            if path not in f:
                fail(f"fields.xdmf points at {ref}, not in fields.h5")
    leftovers = [n for n in os.listdir(out) if n.startswith(".") or n.endswith(".tmp")]
    if leftovers:
        fail(f"temporary files left: {leftovers}")
    return steps


def log_rows(out):
    rows = list(csv.reader(open(os.path.join(out, "log.csv"))))
    return rows[0], [float(r[0]) for r in rows[1:]]


def log_continues(out, first_run_rows, ck_step, inclusive):
    header, firsts = log_rows(out)
    if firsts != sorted(set(firsts)):
        fail(f"log.csv has duplicate or unordered rows: {firsts}")
    kept = [s for s in first_run_rows if s < ck_step or (inclusive and s == ck_step)]
    if firsts[:len(kept)] != kept:
        fail(f"log.csv does not start with the first run's rows up to {ck_step}")
    return firsts


def checkpoint_step(path):
    with h5py.File(path, "r") as f:
        return int(f.attrs["step"])


def restart_equal(case, name, n, args, laplace=False, first_rc=0, final_rc=0):
    """N in one run against N/2 + restart to N; args set the case up (tiny grid)."""
    key = ("laplace.max_iters" if laplace else "stencil.steps" if "stencil" in case
           else "wave.steps" if "wave" in case else "pde.steps" if "pde_" in case
           else "heat.steps")
    ref, part = os.path.join(BASE, "whole"), os.path.join(BASE, "restarted")
    for d in (ref, part):
        shutil.rmtree(d, ignore_errors=True)
    run(case, ref, *args, f"{key}={n}", rc=final_rc)
    run(case, part, *args, f"{key}={n // 2}", rc=first_rc)
    ck = os.path.join(part, "checkpoint.h5")
    s = checkpoint_step(ck)
    if s != n // 2:
        fail(f"the first run's checkpoint is at {s}, expected {n // 2}")
    _, first_rows = log_rows(part)
    run(case, part, *args, f"{key}={n}", rc=final_rc, restart=ck)
    last, _ = same_fields(part, ref)
    steps = series_consistent(part, name)
    log_continues(part, first_rows, s, laplace)
    info = json.load(open(os.path.join(part, "run.json")))
    if info.get("restart", {}).get("step") != s:
        fail(f"run.json does not note the restart from step {s}: {info.get('restart')}")
    if checkpoint_step(ck) != last:
        fail(f"the checkpoint after the restart is at {checkpoint_step(ck)}, expected {last}")
    print(f"restart {MODE}: ok: {n // 2} + restart = {last} bit for bit, outputs {steps}")
    return ref, part


def older_checkpoint(case, name, n, args):
    """Restart from an older checkpoint into a folder that went further."""
    ref, part = os.path.join(BASE, "whole"), os.path.join(BASE, "restarted")
    shutil.rmtree(part, ignore_errors=True)
    run(case, part, *args, f"heat.steps={n // 2}")
    old = os.path.join(BASE, "older_checkpoint.h5")
    shutil.copy(os.path.join(part, "checkpoint.h5"), old)
    run(case, part, *args, f"heat.steps={3 * n // 4}", restart=old)  # goes past n/2
    _, rows = log_rows(part)
    if max(rows) != 3 * n // 4:
        fail("the second run did not reach 3N/4")
    run(case, part, *args, f"heat.steps={n}", restart=old)
    same_fields(part, ref)
    series_consistent(part, name)
    log_continues(part, rows, n // 2, False)
    print(f"restart {MODE}: ok: from an older checkpoint ({n // 2}), the later rows and outputs "
          f"of the folder replaced")


def interrupted_run(case, part, args, sig, long_run="heat.steps=100000000"):
    """Runs case into part, sends sig once a first checkpoint is there; returns its step."""
    shutil.rmtree(part, ignore_errors=True)
    p = subprocess.Popen([GF, "run", case, "--device", DEVICE, "--quiet", "--out", part, *args,
                          long_run], env=ENV, stderr=subprocess.DEVNULL)
    for _ in range(300):
        if os.path.isfile(os.path.join(part, "checkpoint.h5")):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    p.send_signal(sig)
    if p.wait() != 130:
        fail(f"the run stopped by signal {sig} exited {p.returncode}, expected 130")
    info = json.load(open(os.path.join(part, "run.json")))
    if not info["status"].startswith("interrupted"):
        fail(f"run.json status {info['status']}")
    s = checkpoint_step(os.path.join(part, "checkpoint.h5"))
    _, rows = log_rows(part)
    if max(rows) != s:
        fail(f"the checkpoint is at step {s}, the interrupted run's log ends at {max(rows)}")
    if sorted(int(k) for k in h5_steps(part)) != [s]:
        fail("the interrupted run's final output is not at the checkpoint's step")
    return s, rows


def interrupt():
    case = "cases/heat3d_hotspot.yaml"
    args = ["grid.dims=[10,10,10]", "output.every=0", "output.checkpoint_every=1000",
            "output.check_every=1000"]
    part, ref = os.path.join(BASE, "interrupted"), os.path.join(BASE, "whole")
    shutil.rmtree(ref, ignore_errors=True)
    s, _ = interrupted_run(case, part, args, signal.SIGTERM)
    print(f"restart {MODE}: ok: SIGTERM at step {s}: checkpoint written, exit 130")
    s, first_rows = interrupted_run(case, part, args, signal.SIGINT)
    ck = os.path.join(part, "checkpoint.h5")
    n = s + 37  # heat.steps may differ on restart: continue a little past the interrupt
    run(case, part, *args, f"heat.steps={n}", restart=ck)
    run(case, ref, *args, f"heat.steps={n}")
    last, _ = same_fields(part, ref)
    series_consistent(part, "heat3d-hotspot")
    log_continues(part, first_rows, s, False)
    print(f"restart {MODE}: ok: interrupted at step {s} (checkpoint written, exit 130), "
          f"restarted to {last}: bit for bit equal to an uninterrupted run")


def interrupt_laplace():
    """Jacobi stopped by SIGINT between chunks: its checkpoint (the iterate
    before finish()) and a restart to S + 130 iterations against an
    uninterrupted run of S + 130 (neither converges: exit 1, last iterate)."""
    case = "cases/laplace2d_plate.yaml"
    # 129²: far from converging (to the last bit) in the second or so before the signal
    args = ["grid.dims=[129,129]", "laplace.check_every=20", "output.every=0",
            "output.checkpoint_every=500", "laplace.tolerance=1e-300"]
    part, ref = os.path.join(BASE, "interrupted"), os.path.join(BASE, "whole")
    shutil.rmtree(ref, ignore_errors=True)
    s, first_rows = interrupted_run(case, part, args, signal.SIGINT,
                                    long_run="laplace.max_iters=1000000000")
    n = s + 130
    run(case, part, *args, f"laplace.max_iters={n}", rc=1,
        restart=os.path.join(part, "checkpoint.h5"))
    run(case, ref, *args, f"laplace.max_iters={n}", rc=1)
    last, _ = same_fields(part, ref)
    series_consistent(part, "laplace2d-plate")
    log_continues(part, first_rows, s, True)
    print(f"restart {MODE}: ok: jacobi interrupted at iteration {s}, restarted to {last}: "
          f"bit for bit equal to an uninterrupted run")


def expect_refusal(case, out, args, restart, pattern):
    before = {n: os.path.getmtime(os.path.join(out, n)) for n in os.listdir(out)} \
        if os.path.isdir(out) else None
    err = run(case, out, *args, rc=2, restart=restart)
    if pattern not in err:
        fail(f"expected '{pattern}' in the message, got: {err}")
    if "\n" in err.strip():
        fail(f"the message is not one line: {err}")
    after = {n: os.path.getmtime(os.path.join(out, n)) for n in os.listdir(out)} \
        if os.path.isdir(out) else None
    if before != after:
        fail(f"a refused restart changed {out}")
    print(f"restart {MODE}: ok: refused: {err.strip()}")


def mismatch():
    case = "cases/heat3d_hotspot.yaml"
    args = ["grid.dims=[8,8,8]", "heat.steps=20", "output.checkpoint_every=10"]
    src = os.path.join(BASE, "source")
    shutil.rmtree(BASE, ignore_errors=True)
    run(case, src, *args)
    ck = os.path.join(src, "checkpoint.h5")
    fresh = os.path.join(BASE, "never_written")
    a = [x for x in args if not x.startswith("grid.dims")]
    expect_refusal(case, fresh, a + ["grid.dims=[8,8,9]"], ck,
                   f"--restart: {ck}: grid.dims [8, 8, 8] in the checkpoint, [8, 8, 9] in the case")
    expect_refusal(case, fresh, args + ["precision=float64"], ck,
                   "precision float32 in the checkpoint, float64 in the case")
    expect_refusal("cases/stencil3d_box27.yaml", fresh, ["grid.dims=[8,8,8]"], ck,
                   "workload heat in the checkpoint, stencil in the case")
    expect_refusal(case, fresh, args + ["grid.extent=[2,1,1]"], ck,
                   "grid spacing [0.14285714285714285, 0.14285714285714285, 0.125] in the "
                   "checkpoint, [0.2857142857142857, 0.14285714285714285, 0.125] in the case")
    expect_refusal(case, fresh, args + ["heat.alpha=0.02"], ck,
                   "heat.alpha 0.01 in the checkpoint, 0.02 in the case")
    expect_refusal(case, fresh, args + ["heat.dt=0.01"], ck, "heat.dt ")
    expect_refusal(case, fresh, [x for x in args if "steps" not in x] + ["heat.steps=15"], ck,
                   "the checkpoint is at step 20, past the case's last step 15")
    # the folder it came from is left alone as well
    expect_refusal(case, src, args + ["grid.dims=[9,8,8]"], ck, "grid.dims [8, 8, 8]")
    expect_refusal(case, fresh, args, os.path.join(BASE, "no_such.h5"),
                   "no such file")
    bad = os.path.join(BASE, "corrupt.h5")
    with open(bad, "wb") as f:
        f.write(b"not a checkpoint\n" * 10)
    expect_refusal(case, fresh, args, bad, "not an HDF5 file")
    expect_refusal(case, fresh, args, os.path.join(src, "fields.h5"),
                   "not a gridforge checkpoint")
    # a run that ended on a step shortened to land on t_end cannot be continued
    plate = ["grid.dims=[9,9]", "output.checkpoint_every=1"]
    short = os.path.join(BASE, "short")
    run("cases/heat2d_plate.yaml", short, *plate, "heat.t_end=0.01")
    expect_refusal("cases/heat2d_plate.yaml", fresh, plate + ["heat.t_end=0.02"],
                   os.path.join(short, "checkpoint.h5"),
                   "the checkpoint is the end of a run whose last step was shortened to land on "
                   "its t_end (t = 0.01): steps of dt cannot continue it")
    if os.path.exists(fresh):
        fail(f"a refused restart created {fresh}")


def diverge():
    case = "tests/data/cases/diverge.yaml"  # Inf from step 1024 (each step doubles u)
    out, fresh, ref = (os.path.join(BASE, d) for d in ("diverged", "fresh", "whole"))
    shutil.rmtree(BASE, ignore_errors=True)
    err = run(case, out, "output.checkpoint_every=256", rc=1)
    if "at step 1024" not in err:
        fail(f"expected the divergence caught at checkpoint step 1024: {err}")
    ck = os.path.join(out, "checkpoint.h5")
    with h5py.File(ck, "r") as f:
        if int(f.attrs["step"]) != 768 or not np.isfinite(f["fields/u"][...]).all():
            fail(f"the checkpoint kept is at step {f.attrs['step']}, expected 768, finite")
    run(case, fresh, "output.checkpoint_every=256", "stencil.steps=1000", restart=ck)
    run(case, ref, "output.checkpoint_every=256", "stencil.steps=1000")
    if sorted(h5_steps(fresh)) != ["001000"]:
        fail(f"a restart into a new folder wrote steps {sorted(h5_steps(fresh))}")
    if not np.array_equal(h5_steps(fresh)["001000"][1], h5_steps(ref)["001000"][1]):
        fail("the restart from step 768 differs from the uninterrupted run")
    print(f"restart {MODE}: ok: diverged at 1024, checkpoint 768 kept; restarted into a new folder")


def cpu_to_gpu():
    case, name, n, args = CASES["heat_cn"]
    args = args + ["precision=float64"]
    cpu, part = os.path.join(BASE, "cpu"), os.path.join(BASE, "cpu_then_gpu")
    shutil.rmtree(BASE, ignore_errors=True)
    run(case, cpu, *args, f"heat.steps={n}", device="cpu")
    run(case, part, *args, f"heat.steps={n // 2}", device="cpu")
    run(case, part, *args, f"heat.steps={n}", device="cuda",
        restart=os.path.join(part, "checkpoint.h5"))
    info = json.load(open(os.path.join(part, "run.json")))
    if info["device"] == "cpu" or "restart" not in info:
        fail(f"the restart did not run on the GPU: {info['device']}")
    a, b = h5_steps(part), h5_steps(cpu)
    if sorted(a) != sorted(b):
        fail(f"output steps {sorted(a)}, the CPU run's {sorted(b)}")
    last = max(b)
    err = np.linalg.norm(a[last][1] - b[last][1]) / np.linalg.norm(b[last][1])
    if not err < 1e-9:
        fail(f"the GPU restart ends {err:.3g} (relative L2) from the CPU run")
    series_consistent(part, name)
    print(f"restart {MODE}: ok: CPU checkpoint at {n // 2}, GPU restart to {last}: "
          f"relative L2 {err:.3g} from the all-CPU run")


CASES = {
    # tiny grids; checkpoint_every divides N/2
    "heat_explicit": ("cases/heat3d_hotspot.yaml", "heat3d-hotspot", 200,
                      ["grid.dims=[10,10,10]", "output.every=50", "output.checkpoint_every=25"]),
    "heat_cn": ("cases/heat3d_implicit.yaml", "heat3d-implicit", 40,
                ["grid.dims=[9,9,9]", "output.every=10", "output.checkpoint_every=5"]),
    "stencil": ("cases/stencil2d_star9.yaml", "stencil2d-star9", 200,
                ["grid.dims=[24,24]", "output.every=50", "output.checkpoint_every=20"]),
    # two levels in the checkpoint (u, u_prev); an absorbing face and a source
    "wave": ("cases/wave2d_membrane.yaml", "wave2d-membrane", 200,
             ["grid.dims=[24,21]", "wave={c: 1.0, source: 'x*y'}", "output.every=50",
              "output.checkpoint_every=20"]),
    # two fields (u, v), every one in the checkpoint and the outputs
    "pde": ("cases/pde_grayscott2d.yaml", "pde-grayscott2d", 200,
            ["grid.dims=[24,24]", "output.every=50", "output.checkpoint_every=20"]),
}

os.makedirs(BASE, exist_ok=True)
if MODE in CASES:
    case, name, n, args = CASES[MODE]
    restart_equal(case, name, n, args)
    if MODE == "heat_explicit":
        older_checkpoint(case, name, n, args)
elif MODE == "laplace_jacobi":
    # 17² Jacobi converges at 950 sweeps: N/2 = 600 stops short (exit 1, not
    # converged, its iterate checkpointed), the restart converges.
    restart_equal("cases/laplace2d_plate.yaml", "laplace2d-plate", 1200,
                  ["grid.dims=[17,17]", "laplace.check_every=50", "output.every=100",
                   "output.checkpoint_every=100", "laplace.tolerance=1e-9"],
                  laplace=True, first_rc=1)
elif MODE == "laplace_cg":
    # 33² CG converges at 87 iterations; N/2 = 60. The restart continues the
    # recurrence (u, r, p, r·r): the same iterates as the uninterrupted run.
    restart_equal("cases/laplace2d_plate.yaml", "laplace2d-plate", 120,
                  ["grid.dims=[33,33]", "laplace.method=cg", "laplace.check_every=5",
                   "output.every=20", "output.checkpoint_every=10"],
                  laplace=True, first_rc=1)
elif MODE == "laplace_multigrid":
    # 17³ multigrid converges to 1e-12 in 10 V-cycles; N/2 = 6 stops short.
    # The state is u alone: the restarted cycles are the same cycles.
    restart_equal("cases/poisson3d_multigrid.yaml", "poisson3d-multigrid", 12,
                  ["grid.dims=[17,17,17]", "laplace.tolerance=1e-12", "laplace.check_every=1",
                   "output.every=2", "output.checkpoint_every=2", "output.formats=[hdf5,vtk]"],
                  laplace=True, first_rc=1)
elif MODE == "laplace_pcg":
    # cg preconditioned by a V-cycle: u, r, p, r·r and r·z restored continue the
    # same recurrence (33²: 8 iterations to 1e-11; N/2 = 7 stops short).
    restart_equal("cases/laplace2d_plate.yaml", "laplace2d-plate", 14,
                  ["grid.dims=[33,33]", "laplace.method=cg", "laplace.preconditioner=multigrid",
                   "laplace.tolerance=1e-11", "laplace.check_every=1", "output.every=2",
                   "output.checkpoint_every=1"],
                  laplace=True, first_rc=1)
elif MODE == "interrupt":
    interrupt()
elif MODE == "interrupt_laplace":
    interrupt_laplace()
elif MODE == "diverge":
    diverge()
elif MODE == "cpu_to_gpu":
    cpu_to_gpu()
elif MODE == "mismatch":
    mismatch()
else:
    fail("unknown mode")
