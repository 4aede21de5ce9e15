#!/usr/bin/env python3
"""The runout of an axisymmetric granular column in a run's PLY frames (Fang 2019 Fig. 16,
docs/replicability.md; Lube et al. 2004's dR/R0).

usage: axisym_runout.py OUT_DIR SPACING R0 [--axis-x 0] [--axis-z 0]

For every frame: dR/R0, R the far edge of the last ring one spacing wide (about the vertical
axis through (axis-x, axis-z)) whose deposit is two grains thick (its highest grain above its
lowest by a spacing or more), less R0; the front at 1 % (issue 37's, in rings: the far edge of
the farthest ring R0 / 10 wide whose mass per unit area is at least 1 % of the column's, a
deposit 1 % of the column's height thick), less R0, over R0; the outermost grain's radius over
R0; the highest grain (m). The same rules as tests/physics/runout.h's pd_channel_runout and
pd_channel_front, in rings."""
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from twist_angle import read_ply  # noqa: E402


def runout(particles, spacing, r0, cx, cz):
    lo, hi = {}, {}
    far = 0.0
    for p in particles:
        r = math.hypot(p["x"] - cx, p["z"] - cz)
        far = max(far, r)
        ring = int(r / spacing)
        lo[ring] = min(lo.get(ring, math.inf), p["y"])
        hi[ring] = max(hi.get(ring, -math.inf), p["y"])
    last = max((c for c in hi if hi[c] - lo[c] >= spacing - 1e-9), default=0)
    return ((last + 1) * spacing - r0) / r0, far / r0, max(p["y"] for p in particles)


def front(particles, r0, cx, cz, share=0.01, rings_per_r0=10):
    """The front at `share` of the column's mass per unit area (grains of equal mass)."""
    width, count = r0 / rings_per_r0, {}
    for p in particles:
        ring = int(math.hypot(p["x"] - cx, p["z"] - cz) / width)
        count[ring] = count.get(ring, 0) + 1
    held = [c for c, n in count.items() if n >= share * len(particles) * (2 * c + 1) / rings_per_r0**2]
    return ((max(held, default=-1) + 1) * width - r0) / r0


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    out, spacing, r0 = args[0], float(args[1]), float(args[2])
    cx = float(args[args.index("--axis-x") + 1]) if "--axis-x" in args else 0.0
    cz = float(args[args.index("--axis-z") + 1]) if "--axis-z" in args else 0.0
    times = {}
    with open(os.path.join(out, "stats.csv")) as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            times[int(row["frame"])] = float(row["time"])
    print("frame,time,dR_over_R0,front_1pc_over_R0,outermost_over_R0,top_m")
    for path in sorted(glob.glob(os.path.join(out, "frame_*.ply"))):
        k = int(os.path.basename(path)[6:11])
        particles = read_ply(path)
        dr, far, top = runout(particles, spacing, r0, cx, cz)
        at = front(particles, r0, cx, cz)
        print(f"{k},{times.get(k, math.nan):.4g},{dr:.3f},{at:.3f},{far:.3f},{top:.4f}")


if __name__ == "__main__":
    main()
