#!/usr/bin/env python3
"""The deposit of a collapsing box of sand (bench/scenes/dry_sand_100k.json: a square box released
on a floor, spreading both ways along x and z) in a run's PLY frames: its height and runout per
frame, for comparing runs of one scene (issue 36 item 2, docs/benchmarks.md).

usage: sand_deposit.py OUT_DIR [--half-width 0.125] [--slices 16] [--share 0.01]
       sand_deposit.py REF_DIR OUT_DIR... [--frame K] [--rest 1e-6] [--within 0.1]

With one folder, a CSV row per frame; with several, each run's deposit at frame K (default the
reference's last) beside the first run's (the reference): the ratios of the height and the
runout, whether both are within the band, and when the run came to rest (the first frame whose
kinetic energy is below --rest of the initial potential; nan: never).

Per frame (grains of equal mass, as a box filled on a lattice):
- top_p99: the 99th percentile of the grains' y (m), the pile's top without its few highest
  grains; top_max the highest grain;
- the front, as tests/physics/runout.h's pd_channel_front defines one (issue 37), on each of the
  four sides (+x, -x, +z, -z) from the box's vertical centre line: the grains' mass per unit
  length along that axis (all of the other axis's grains together), in slices L0 / SLICES wide
  from the centre line (L0 the box's half width), and the farthest position where it holds SHARE
  of the box's initial mass per unit length (M / 2 L0). Within a slice the position is linear
  between the centres of the last slice at or above the threshold and the next below it (the
  slice rule alone moves in steps of L0 / SLICES); the slice rule's edge is printed too;
- runout: the front less the same side's front in frame 0 (m, the box's own edge as this rule
  reads it on the lattice), the mean of the four sides, and their spread (max - min); the
  centre line is the frame-0 grains' mean x and z;
- the kinetic energy of the frame (stats.csv) over the box's initial potential energy about its
  lowest grain, M g (mean initial y - min initial y) from frame 0.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from huppert_spread import read_ply_positions  # noqa: E402


def side_front(u, n_total, half_width, slices, share):
    """The front along u >= 0 (distance from the centre line): (interpolated, slice edge)."""
    width = half_width / slices
    bins = int(np.ceil(u.max() / width)) + 2 if len(u) else 2
    mass = np.bincount(np.floor(u[u >= 0] / width).astype(int), minlength=bins).astype(float)
    threshold = share * n_total / (2 * half_width) * width
    held = np.nonzero(mass >= threshold)[0]
    if not len(held):
        return 0.0, 0.0
    k = held[-1]
    edge = (k + 1) * width
    below = mass[k + 1] if k + 1 < len(mass) else 0.0
    # linear between the slices' centres: where the mass per length falls to the threshold
    cross = (k + 0.5) * width + width * (mass[k] - threshold) / (mass[k] - below)
    return cross, edge


def fronts(x, centre, half_width, slices, share):
    """The four sides' fronts (+x, -x, +z, -z): interpolated, and the slice rule's edges."""
    out, edges = [], []
    for axis in (0, 2):
        for sign in (1, -1):
            f, e = side_front(sign * (x[:, axis] - centre[axis]), len(x), half_width, slices, share)
            out.append(f)
            edges.append(e)
    return np.array(out), np.array(edges)


def deposit(x, centre, start, half_width, slices, share):
    front, edge = fronts(x, centre, half_width, slices, share)
    runouts = front - start[0]
    return {
        "top_p99": np.percentile(x[:, 1], 99),
        "top_max": x[:, 1].max(),
        "front": front.mean(),
        "runout": runouts.mean(),
        "runout_spread": runouts.max() - runouts.min(),
        "runout_slices": (edge - start[1]).mean(),
    }


def read_stats(out):
    rows = {}
    with open(os.path.join(out, "stats.csv")) as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            rows[int(row["frame"])] = row
    return rows


def measure(out, a):
    """The rows of every frame of the run in OUT (dicts, the CSV's columns)."""
    frames = sorted(glob.glob(os.path.join(out, "frame_*.ply")))
    stats = read_stats(out)
    spacing = a.spacing
    if spacing is None:
        with open(os.path.join(out, "scene.resolved.json")) as f:
            spacing = json.load(f)["bodies"][0]["spacing"]
    x0 = read_ply_positions(frames[0])
    mass = a.density * spacing**3 * len(x0)
    potential = mass * 9.81 * (x0[:, 1].mean() - x0[:, 1].min())
    centre = x0.mean(axis=0)
    start = fronts(x0, centre, a.half_width, a.slices, a.share)
    rows = []
    for path in frames:
        k = int(re.search(r"frame_(\d+)", path).group(1))
        d = deposit(read_ply_positions(path), centre, start, a.half_width, a.slices, a.share)
        row = stats.get(k, {})
        d["frame"], d["time_s"] = k, float(row.get("time", "nan"))
        d["ke_over_pe0"] = float(row.get("kinetic_energy", "nan") or "nan") / potential
        rows.append(d)
    return rows


COLUMNS = ["frame", "time_s", "ke_over_pe0", "top_p99", "top_max", "front", "runout"]
COLUMNS += ["runout_spread", "runout_slices"]


def print_frames(rows):
    print("frame,time_s,ke_over_pe0,top_p99_m,top_max_m,front_m,runout_m,runout_spread_m,"
          "runout_slices_m")
    for d in rows:
        lengths = ",".join(f"{d[c]:.4f}" for c in COLUMNS[3:])
        print(f"{d['frame']},{d['time_s']:.3f},{d['ke_over_pe0']:.3e},{lengths}")


def rest_time(rows, below):
    """The first frame's time at which the kinetic energy is below `below` of the potential."""
    return next((d["time_s"] for d in rows[1:] if d["ke_over_pe0"] < below), math.nan)


def print_comparison(runs, frame, below, within):
    """Each run's deposit at `frame` (default the reference's last) against the first run's."""
    ref = runs[0][1]
    k = frame if frame is not None else ref[-1]["frame"]
    at = {name: next((d for d in rows if d["frame"] == k), None) for name, rows in runs}
    r = at[runs[0][0]]
    print(f"frame {k} (t = {r['time_s']:.3f} s); rest: kinetic energy below {below:g} of the "
          "initial potential")
    print("run,rest_s,ke_over_pe0,top_p99_m,top_ratio,runout_m,runout_ratio,front_m,front_ratio,"
          "within")
    for name, rows in runs:
        d = at[name]
        if d is None:
            print(f"{name},frame {k} not written")
            continue
        ratios = [d[c] / r[c] for c in ("top_p99", "runout", "front")]
        ok = all(abs(q - 1) <= within for q in ratios[:2])
        print(
            f"{name},{rest_time(rows, below):.3f},{d['ke_over_pe0']:.2e},{d['top_p99']:.4f},"
            f"{ratios[0]:.3f},{d['runout']:.4f},{ratios[1]:.3f},{d['front']:.4f},{ratios[2]:.3f},"
            f"{'yes' if ok else 'no'}"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="+", help="run folders; with several, the first is the reference")
    ap.add_argument("--half-width", type=float, default=0.125, help="L0, the box's half width (m)")
    ap.add_argument("--slices", type=int, default=16, help="slices per L0")
    ap.add_argument("--share", type=float, default=0.01)
    ap.add_argument("--density", type=float, default=1600)
    ap.add_argument("--spacing", type=float, default=None, help="m; default: scene.resolved.json's")
    ap.add_argument("--frame", type=int, default=None, help="compare at this frame")
    ap.add_argument("--rest", type=float, default=1e-6, help="kinetic over initial potential energy")
    ap.add_argument("--within", type=float, default=0.10, help="height and runout ratio band")
    a = ap.parse_args()
    runs = [(out.rstrip("/"), measure(out, a)) for out in a.out]
    if len(runs) == 1:
        print_frames(runs[0][1])
    else:
        print_comparison(runs, a.frame, a.rest, a.within)


if __name__ == "__main__":
    main()
