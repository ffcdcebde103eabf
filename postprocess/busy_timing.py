#!/usr/bin/env python3
"""Time cases on the CPU idle and beside busy processes (docs/performance.md, "The CPU path
on a shared machine"). For each case, REPS rounds of: every variant idle, then every variant
beside BUSY `yes > /dev/null` processes, so that idle and busy runs of a case share the
machine's background. Prints the median compute (timing.json) of each and their ratio.

usage: busy_timing.py [--reps 3] [--busy 2] [--out DIR] [--cases a,b] VARIANT...
  VARIANT: LABEL=GRIDFORGE[:extra args]   e.g. new=build/gridforge  old=/tmp/gf-old
"""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--busy", type=int, default=2)
ap.add_argument("--out", default="out/busy_timing")
ap.add_argument("--cases", default="")
ap.add_argument("variants", nargs="+")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cases = sorted(os.path.basename(c)[:-5] for c in glob.glob(os.path.join(root, "cases", "*.yaml")))
if a.cases:
    cases = [c for c in cases if c in a.cases.split(",")]
variants = []
for v in a.variants:
    label, spec = v.split("=", 1)
    binary, _, extra = spec.partition(":")
    variants.append((label, binary, extra.split()))


def run(binary, extra, case, out):
    shutil.rmtree(out, ignore_errors=True)  # a new run per round (a run owns its folder)
    subprocess.run([binary, "run", os.path.join(root, "cases", case + ".yaml"), "--device", "cpu",
                    "--out", out, "--quiet", *extra], check=True, capture_output=True)
    with open(os.path.join(out, "timing.json")) as f:
        return json.load(f)


res = {}
for case in cases:
    for _ in range(a.reps):
        for busy in (0, a.busy):
            hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(busy)]
            try:
                time.sleep(0.2 if busy else 0)
                for label, binary, extra in variants:
                    t = run(binary, extra, case, os.path.join(a.out, label, case))
                    res.setdefault((case, label, busy), []).append(t)
            finally:
                for h in hogs:
                    h.kill()
                    h.wait()
    for label, _, _ in variants:
        med = lambda b: statistics.median(t["phases_s"]["compute"] for t in res[(case, label, b)])
        idle, busy = med(0), med(a.busy)
        print(f"| {case} | {label} | {res[(case, label, 0)][0].get('threads', '-')} | {idle:.3f} | "
              f"{busy:.3f} | {busy / idle:.1f}x |", flush=True)
