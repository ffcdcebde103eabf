#!/usr/bin/python3
"""An error that one MPI rank finds alone stops every rank (core/rank_errors.hpp).

Usage: mpi_rank_errors.py GRIDFORGE OUT_BASE   (run from the source tree)

Under `mpirun -np 2` (oversubscribed, as root), on the CPU, each within a
timeout (before, the ranks that did not fail waited for ever):
  - a Dirichlet face whose value is not finite, held by rank 0 (the command
    line override of the issue) and by rank 1 (a case file's y+ face), an
    initial expression not finite in rank 1's block only, a raymarch volume
    not finite (rank 0 renders it alone): every rank exits 2, the failing
    rank prints its message once (file:line:col for a case file), rank 0,
    when it is another, one line naming that rank, and nothing says
    MPI_Abort;
  - a Neumann gradient too large for float32 on a face only rank 1 holds:
    found alike on every rank, one message from rank 0;
  - an initial file that rank 1 reads with a NaN (each rank its own command
    line, as a node seeing another copy of the file): the same;
  - the output folder is left as the one-rank error path leaves it: a new
    folder is not made, and a replacing run (--overwrite) leaves the old run
    whole, no hidden file left;
  - during the run: a Dirichlet value reading t that stops being finite on
    rank 1's face: exit 2 on every rank, its message once;
  - every rank fills together where one holds nothing to fill (before, the
    others waited in the halo refresh): a face reading t held by rank 0
    alone, an initial file with a middle rank that holds no Dirichlet face
    (3 ranks); both bit for bit against one rank.
"""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys

import h5py
import numpy as np

GF, BASE = sys.argv[1], sys.argv[2]
MPIRUN = os.environ.get("GF_MPIRUN", "mpirun").split()  # may carry options (-x VAR)
ENV = dict(os.environ, OMP_NUM_THREADS="1")  # ranks share the machine's cores (CI has 2)
if "ASAN_OPTIONS" in ENV:  # Open MPI keeps allocations to its exit
    ENV["ASAN_OPTIONS"] += ":detect_leaks=0"
# Open MPI's mpirun ends the other ranks once one exits non-zero, and exits
# with that code: with each=True each rank is left to exit on its own (mpirun
# then exits 0) and says with what (RANK_EXIT).
EACH = dict(ENV, OMPI_MCA_orte_abort_on_non_zero_status="0")
RANK_EXIT = ['sh', '-c', 'rc=0; "$@" || rc=$?; echo "rank $OMPI_COMM_WORLD_RANK exit $rc" >&2; '
             'exit $rc', 'sh']
# a small plate: a good run takes well under a second
SMALL = ["grid.dims=[33,33]", "heat.t_end=0.01", "grid.ranks=[1,2]"]


def fail(msg):
    print(f"mpi rank errors: FAIL: {msg}")
    sys.exit(1)


def run(case, out, *args, np_=2, rc=2, each=True):
    return launch(["-np", str(np_), *(RANK_EXIT if each else []), *gridforge(case, out, *args)],
                  np_, rc, each)


def gridforge(case, out, *args):
    return [GF, "run", case, "--device", "cpu", "--quiet", "--out", out, *args]


def launch(apps, np_, rc, each):
    """mpirun with apps (-np N, the command, and ':' between several)."""
    cmd = MPIRUN + ["--allow-run-as-root", "--oversubscribe", *apps]
    # its own process group, so that a hung job goes whole, ranks included
    with subprocess.Popen(cmd, env=EACH if each else ENV, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as p:
        try:
            _, err = p.communicate(timeout=60)
            got = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            fail(f"{' '.join(cmd)}: still running after 60 s (a rank waits for the one that "
                 "failed)")
    if got != (0 if each else rc):
        fail(f"{' '.join(cmd)}: exit {got}, expected {0 if each else rc}\n{err}")
    if "MPI_ABORT" in err or "MPI_Abort" in err:
        fail(f"{' '.join(cmd)}: a rank aborted:\n{err}")
    exits = sorted(re.findall(r"^rank (\d+) exit (\d+)$", err, re.M))
    if each and exits != [(str(r), str(rc)) for r in range(np_)]:
        fail(f"{' '.join(cmd)}: the ranks' exits {exits}, expected {rc} on each\n{err}")
    # gridforge's lines: mpirun adds its own note in boxes of dashes after them
    return [l for l in err.split("-" * 20)[0].splitlines()
            if l.strip() and not re.match(r"rank \d+ exit \d+$", l)]


def expect(lines, regex, failing_rank, label):
    """The failing rank's message once, and rank 0's line when it is another."""
    want = 1 + (failing_rank != 0)
    hits = [l for l in lines if re.search(regex, l)]
    if len(hits) != 1 or len(lines) != want:
        fail(f"{label}: stderr {lines!r}, expected one line matching {regex!r}"
             f"{' and rank 0 naming rank %d' % failing_rank if failing_rank else ''}")
    if failing_rank and f"error: rank {failing_rank} stopped the run (exit 2)" not in lines:
        fail(f"{label}: rank 0 does not name rank {failing_rank}: {lines!r}")
    print(f"mpi rank errors: {label}: exit 2; {hits[0]}")


def state(d):
    """Every file under d (hidden ones too) and its content's digest."""
    out = {}
    for root, _, files in os.walk(d):
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = hashlib.md5(f.read()).hexdigest()
    return out


def write_case(name, text):
    path = os.path.join(BASE, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


shutil.rmtree(BASE, ignore_errors=True)
os.makedirs(BASE)
PLATE = "cases/heat2d_plate.yaml"

# The command: the y- face, held by rank 0 (ranks [1, 2] split y);
# as mpirun runs it (the job's exit), then each rank's.
new = os.path.join(BASE, "new")
for each in (False, True):
    lines = run(PLATE, new, 'boundary.y-={type: dirichlet, value: "sqrt(-1-x)"}',
                "grid.ranks=[1,2]", "--overwrite", each=each)
    expect(lines, r"^command line: boundary\.y-\.value: the value at \(x, y\) = \(0, 0\)",
           0, "y- not finite (rank 0)" + (", each rank" if each else ", the job"))
    if os.path.exists(new):
        fail(f"{new}: made by a run that failed while setting up")

# The y+ face, held by rank 1, written in a case file: its file:line:col.
text = open(PLATE).read().replace("y+: {type: neumann, gradient: 0}",
                                  'y+: {type: dirichlet, value: "sqrt(-1-x)"}')
top = write_case("plate_top", text)
line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith("  y+:"))
old = os.path.join(BASE, "old")
run(PLATE, old, *SMALL, rc=0)
before = state(old)
lines = run(top, old, *SMALL, "--overwrite")
expect(lines, rf"^{re.escape(top)}:{line}:\d+: boundary\.y\+\.value: the value at \(x, y\) = "
              r"\(0, 1\)", 1, "y+ not finite (rank 1), replacing a run")
if state(old) != before:
    fail(f"{old}: the run replaced changed: {sorted(before)} -> {sorted(state(old))}")

# An initial expression not finite in rank 1's block only (y > 0.7).
lines = run(PLATE, old, *SMALL, "--overwrite", "initial={expr: sqrt(0.7-y)}")
expect(lines, r"^command line: initial\.expr: value is not finite at \(x, y, z\) = "
              r"\(0, 0\.71875, 0\)", 1, "initial not finite in rank 1's block")
if state(old) != before:
    fail(f"{old}: changed by a failing initial expression")

# A Neumann gradient whose ghost value overflows float32, on the face rank 1
# holds: every rank finds it (one message, rank 0's).
lines = run(PLATE, old, *SMALL, "--overwrite", "precision=float32",
            "boundary.y+={type: neumann, gradient: 1e40}")
expect(lines, rf"^{PLATE}: boundary\.y\+\.gradient: the gradient 1e\+40 times twice the spacing: "
              r"6\.25e\+38 does not fit in float32", 0,
       "Neumann ghost out of float32 (found alike)")
if state(old) != before:
    fail(f"{old}: changed by a failing Neumann face")

# Raymarch: rank 0 renders the whole volume alone, the others wait for it.
cloud = os.path.join(BASE, "cloud")
lines = run("cases/raymarch_cloud.yaml", cloud, "grid.dims=[16,16,16]",
            "raymarch.camera.width=32", "raymarch.camera.height=24",
            "raymarch.volume={expr: sqrt(x-0.5)}")
expect(lines, r"^command line: raymarch\.volume\.expr: value is not finite", 0,
       "raymarch volume not finite (rank 0 renders)")
if os.path.exists(cloud):
    fail(f"{cloud}: made by a run that failed while setting up")

# An initial file that one rank reads wrong (as a node that sees another
# copy of it would): rank 1's holds a NaN. Each rank its own command line.
init = os.path.join(BASE, "init.h5")
nan = os.path.join(BASE, "init_nan.h5")
u = np.random.default_rng(1).random((33, 33))
for path, values in ((init, u), (nan, np.where(np.arange(33)[:, None] == 30, np.nan, u))):
    with h5py.File(path, "w") as f:
        f["u"] = values
with_file = ["boundary.x={type: periodic}", "grid.dims=[33,33]", "heat.t_end=0.01"]
rank_args = [[*RANK_EXIT, *gridforge(PLATE, old, *with_file, "grid.ranks=[1,2]", "--overwrite",
                                     f"initial={{file: {{path: {p}, dataset: u}}}}")]
             for p in (init, nan)]
lines = launch(["-np", "1", *rank_args[0], ":", "-np", "1", *rank_args[1]], 2, 2, True)
expect(lines, rf"^command line: initial\.file: dataset 'u' in '{re.escape(nan)}': the value at "
              r"point \(0, 30\): nan is not a finite number", 1, "an initial file rank 1 reads wrong")
if state(old) != before:
    fail(f"{old}: changed by a failing initial file")

# During the run: a Dirichlet value that reads t, on the face rank 1 holds,
# not finite from t = 0.005 on (checked at every step, every rank agreeing).
lines = run(PLATE, old, *SMALL, "--overwrite",
            'boundary.y+={type: dirichlet, value: "sqrt(0.005-t)"}')
expect(lines, r"^command line: boundary\.y\+\.value: value is not finite at \(x, y\) = "
              r"\(0, 1\), t = 0\.005", 1, "a face not finite at t > 0.005 (rank 1)")


def one_rank(out, *args):
    p = subprocess.run([GF, "run", PLATE, "--device", "cpu", "--quiet", "--out", out,
                        "--overwrite", *args], env=ENV, capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        fail(f"one rank {args}: exit {p.returncode}\n{p.stderr}")


def same_fields(a, b, label):
    with h5py.File(os.path.join(a, "fields.h5"), "r") as fa, \
         h5py.File(os.path.join(b, "fields.h5"), "r") as fb:
        steps = sorted(fa["steps"])
        if steps != sorted(fb["steps"]) or not all(
                np.array_equal(fa["steps"][s]["u"][...], fb["steps"][s]["u"][...]) for s in steps):
            fail(f"{label}: {b} differs from one rank's {a}")
    print(f"mpi rank errors: {label}: {len(steps)} steps bit for bit")


# What a rank holds none of still has every rank fill together (the fill
# refreshes the halos): a face reading t held by rank 0 alone, and an
# initial file with a middle rank that holds no Dirichlet face.
face = ['boundary.y-={type: dirichlet, value: "sin(100*t)"}', "grid.dims=[33,33]",
        "heat.t_end=0.01"]
one_rank(os.path.join(BASE, "t1"), *face)
run(PLATE, os.path.join(BASE, "t2"), *face, "grid.ranks=[1,2]", "--overwrite", rc=0)
same_fields(os.path.join(BASE, "t1"), os.path.join(BASE, "t2"), "a face reading t on rank 0")
with_file.append(f"initial={{file: {{path: {init}, dataset: u}}}}")
one_rank(os.path.join(BASE, "f1"), *with_file)
run(PLATE, os.path.join(BASE, "f3"), *with_file, "grid.ranks=[1,3]", "--overwrite", np_=3, rc=0)
same_fields(os.path.join(BASE, "f1"), os.path.join(BASE, "f3"), "an initial file, 3 ranks")
print("mpi rank errors: every rank stopped alike, the folders as before")
