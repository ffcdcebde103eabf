#!/usr/bin/env python3
"""Issue 25, item 9: the CPU path on a shared machine, one mode a test.

  threads   --threads N on run, validate, bench and info: honoured (run.json,
            timing.json, bench.json, info --json say how many), OMP_NUM_THREADS
            still used without it, bad values refused (exit 2, one line); a
            201-point rod runs on one thread whatever the most is
  tuning    time_block auto on the CPU: nothing timed on the shipped heat,
            stencil and laplace cases that have it (their fields fit in the
            cache), one step a pass, tuning_s 0 in timing.json
  busy      beside two busy processes the rod still takes one thread, and its
            compute stays within a generous bound of an idle run's (a check
            that the run does not wait on barriers, not a benchmark)

Usage: shared_machine.py GRIDFORGE SOURCE_DIR OUT MODE
"""
import shutil
import json
import os
import subprocess
import sys
import time

gf, src, out, mode = sys.argv[1:5]
os.chdir(src)
shutil.rmtree(out, ignore_errors=True)  # a second ctest: a run owns its folder
os.makedirs(out, exist_ok=True)
# the environment a user has who set nothing: gridforge's own defaults
ENV = {k: v for k, v in os.environ.items()
       if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                    "GRIDFORGE_WAIT_POLICY_SET")}
ROD = "cases/heat1d_rod.yaml"


def fail(msg):
    print(f"shared_machine {mode}: FAIL: {msg}")
    sys.exit(1)


def gridforge(*args, env=None, expect=0):
    p = subprocess.run([gf, *args], capture_output=True, text=True, env=env or ENV)
    if p.returncode != expect:
        fail(f"gridforge {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stderr}")
    return p


def load(path):
    with open(path) as f:
        return json.load(f)


def run_case(case, name, *extra, env=None):
    d = os.path.join(out, name)
    gridforge("run", case, "--device", "cpu", "--out", d, "--quiet", *extra, env=env)
    return load(os.path.join(d, "run.json")), load(os.path.join(d, "timing.json"))


def check(cond, msg):
    if not cond:
        fail(msg)


if mode == "threads":
    run, t = run_case(ROD, "rod_t2", "--threads", "2")
    check(run["threads"]["max"] == 2 and run["threads"]["from"] == "--threads",
          f"run.json threads: {run['threads']}")
    check("passive" in run["threads"]["wait_policy"],
          f"no OMP_WAIT_POLICY set: threads should wait passively, got {run['threads']}")
    check(t["threads_max"] == 2, f"timing.json threads_max {t['threads_max']}, expected 2")
    check(t["threads"] == 1, f"a 201-point rod took {t['threads']} threads, expected 1")
    run, t = run_case(ROD, "rod_t1", "--threads", "1")
    check(t["threads_max"] == 1 and t["threads"] == 1, f"--threads 1: timing.json {t}")
    # without --threads, OMP_NUM_THREADS as before; the user's wait policy kept
    env = dict(ENV, OMP_NUM_THREADS="3", OMP_WAIT_POLICY="active")
    run, t = run_case(ROD, "rod_env", env=env)
    check(run["threads"] == {"max": 3, "from": "OMP_NUM_THREADS", "wait_policy": "active"},
          f"OMP_NUM_THREADS=3: run.json threads {run['threads']}")
    check(t["threads_max"] == 3, f"OMP_NUM_THREADS=3: timing.json threads_max {t['threads_max']}")
    # --threads wins over OMP_NUM_THREADS
    run, t = run_case(ROD, "rod_both", "--threads", "2", env=env)
    check(t["threads_max"] == 2, f"--threads 2 with OMP_NUM_THREADS=3: {t['threads_max']}")
    # a grid that feeds two threads takes them (64³: 262144 points)
    run, t = run_case("cases/heat3d_hotspot.yaml", "hotspot", "--threads", "2", "heat.steps=4",
                      "output.every=0", "output.checkpoint_every=0")
    check(t["threads"] == 2, f"64^3 took {t['threads']} threads of 2")
    # info and bench
    j = json.loads(gridforge("info", "--json", "--threads", "3").stdout)
    check(j["cpu_threads"] == 3 and j["cpu_threads_from"] == "--threads", f"info --json: {j}")
    b = json.loads(gridforge("bench", "--threads", "1", "--dims", "2", "--sizes", "16",
                             "--device", "cpu", "--repeat", "1", "--steps", "1", "--json",
                             "--out", os.path.join(out, "bench")).stdout)
    check(b["host"]["cpu_threads"] == 1 and b["host"]["cpu_threads_from"] == "--threads",
          f"bench.json host: {b['host']}")
    check(all(r["threads"] == 1 for r in b["rows"]), f"bench rows: {b['rows']}")
    # bad values: exit 2, one line, nothing written
    for cmd in (["run", ROD, "--device", "cpu"], ["validate", ROD], ["bench", "--device", "cpu"],
                ["info"]):
        for bad in ("0", "x", "-2", "1.5", "100000"):
            d = os.path.join(out, "bad")
            extra = ["--out", d] if cmd[0] != "info" else []
            p = gridforge(*cmd, *extra, "--threads", bad, expect=2)
            want = (f"error: command line: --threads: '{bad}' is not a whole number of threads "
                    "from 1 to 4096\n")
            check(p.stderr == want, f"{cmd[0]} --threads {bad}: stderr {p.stderr!r}")
            check(not os.path.exists(d), f"{cmd[0]} --threads {bad} left {d}")

elif mode == "tuning":
    for case in ("laplace2d_plate", "laplace3d_jacobi", "heat3d_hotspot", "stencil2d_star5",
                 "stencil3d_star7", "heat2d_plate"):
        run, t = run_case(f"cases/{case}.yaml", case, "output.every=0")
        auto = t.get("time_block_auto")
        check(auto is not None, f"{case}: no time_block_auto in timing.json: {t}")
        check(auto == {"measured": False, "tuning_s": 0.0},
              f"{case}: time_block auto timed its depths on the CPU: {auto}")
        check(t["time_block"] == 1, f"{case}: time_block {t['time_block']}, expected 1")
    # a depth the case asks for is taken as asked, and reported without auto
    run, t = run_case("cases/laplace2d_plate.yaml", "plate_tb2", "laplace.time_block=2")
    check(t["time_block"] == 2 and "time_block_auto" not in t, f"time_block=2: {t}")

elif mode == "busy":
    idle = []
    for r in range(3):
        run, t = run_case(ROD, f"idle{r}", "--threads", "2")
        idle.append(t["phases_s"]["compute"])
    hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)]
    try:
        time.sleep(0.2)
        busy = []
        for r in range(3):
            run, t = run_case(ROD, f"busy{r}", "--threads", "2")
            check(t["threads"] == 1, f"beside two busy processes the rod took {t['threads']} threads")
            busy.append(t["phases_s"]["compute"])
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    # generous: the issue saw 15-100 times; a run on one thread has no barrier to wait at
    lo_idle, med_busy = min(idle), sorted(busy)[1]
    check(med_busy <= 10 * lo_idle + 0.5,
          f"beside two busy processes the rod computed in {med_busy:.3f} s, idle {lo_idle:.3f} s")
    print(f"rod compute: idle {lo_idle:.4f} s, beside two busy processes {med_busy:.4f} s")

else:
    fail(f"unknown mode {mode}")
print(f"shared_machine {mode}: ok")
