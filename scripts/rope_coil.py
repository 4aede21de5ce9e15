#!/usr/bin/env python3
"""How far a falling viscous rope moves off its axis in a run's PLY frames (Fang 2019 Fig. 14;
the measure of He 2017 Fig. 8's row in docs/replicability.md).

usage: rope_coil.py OUT_DIR [--slab 0.01] [--below H]

For every frame and every body (the `body` attribute; one body without it): the largest
horizontal offset, from the vertical through the body's foot (the centroid of its lowest slab
in frame 0, where it lands; a tilted rope's top starts off it), of the centroid of any
horizontal slab `slab` m thick below the height H (m; all without it: the pile's slabs, away
from a tilted rope's falling top) (a coil puts slabs off the axis by about its radius; a rope that
piles up axially keeps them on it), the farthest particle from the axis, and the top (m).
Output: CSV, one row per frame and body."""
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from twist_angle import read_ply  # noqa: E402


def by_body(particles):
    bodies = {}
    for p in particles:
        bodies.setdefault(int(p.get("body", 0)), []).append(p)
    return bodies


def offsets(ps, axis, slab, below):
    slabs = {}
    for p in ps:
        if p["y"] >= below:
            continue
        s = slabs.setdefault(int(math.floor(p["y"] / slab)), [0, 0.0, 0.0])
        s[0] += 1
        s[1] += p["x"]
        s[2] += p["z"]
    worst = max((math.hypot(sx / n - axis[0], sz / n - axis[1]) for n, sx, sz in slabs.values()),
                default=0.0)
    far = max(math.hypot(p["x"] - axis[0], p["z"] - axis[1]) for p in ps)
    return worst, far, max(p["y"] for p in ps)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    slab = float(args[args.index("--slab") + 1]) if "--slab" in args else 0.01
    below = float(args[args.index("--below") + 1]) if "--below" in args else math.inf
    frames = sorted(glob.glob(os.path.join(out, "frame_*.ply")))
    times = {}
    with open(os.path.join(out, "stats.csv")) as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            times[int(row["frame"])] = float(row["time"])
    axes = {}
    for b, ps in by_body(read_ply(frames[0])).items():
        bottom = min(p["y"] for p in ps)
        foot = [p for p in ps if p["y"] < bottom + slab]
        axes[b] = (sum(p["x"] for p in foot) / len(foot), sum(p["z"] for p in foot) / len(foot))
    print("frame,time,body,slab_offset_m,farthest_m,top_m")  # from the foot's vertical
    for path in frames:
        k = int(os.path.basename(path)[6:11])
        for b, ps in sorted(by_body(read_ply(path)).items()):
            worst, far, top = offsets(ps, axes[b], slab, below)
            print(f"{k},{times.get(k, math.nan):.4g},{b},{worst:.4f},{far:.4f},{top:.4f}")


if __name__ == "__main__":
    main()
