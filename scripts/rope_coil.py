#!/usr/bin/env python3
"""How far a falling viscous rope moves off its axis in a run's PLY frames (Fang 2019 Fig. 14;
the measure of He 2017 Fig. 8's row in docs/replicability.md), or how far a poured stream
coils (--coil).

usage: rope_coil.py OUT_DIR [--slab 0.01] [--below H]
       rope_coil.py OUT_DIR --coil [--below 0.1] [--last 0.4] [--near 0.004]

--coil (a scene with `emitters`, each of its own material or its own body, frames with the
`id` and the `material` or `body` attribute): issue 37's measure of a coil. For every frame
and emitter: the stream's layers in the order they left the nozzle (its emitted ids in blocks
of one layer's particles), the centroid
of each; of the layers emitted in the last `last` s (default 0.4), those below H (default
0.1 m) and at least `near` (default 0.004 m) from the vertical through the nozzle (the falling
stream is on it): the angle their centre line turns about that vertical, summed from layer to
layer (each step the signed angle between successive centroids). A stream that coils turns a
full turn or more (|turns| >= 1); one that piles up or folds to and fro turns back and forth,
near 0.
"""
import glob
import json
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


def disc_count(radius, spacing):
    """Particles of one layer: the lattice points in the disc (src/world/emitters.c)."""
    r, reach = radius / spacing, int(math.floor(radius / spacing))
    return sum(1 for a in range(-reach, reach + 1) for b in range(-reach, reach + 1)
               if a * a + b * b <= r * r * (1 + 1e-12))


def coil_turns(ps, first_id, layer, count, center, below, last_layers, near):
    """Turns of the last part of one emitter's stream: ps by id, the stream's ids
    first_id .. first_id + count - 1 in layers of `layer`; the layers of the last `last_layers`
    below `below` and at least `near` from the vertical through the nozzle, in emission order."""
    cents = []
    for k in range(count // layer):
        sel = [ps[i] for i in range(first_id + k * layer, first_id + (k + 1) * layer) if i in ps]
        if sel:
            cents.append((k, sum(p["x"] for p in sel) / len(sel), sum(p["y"] for p in sel) / len(sel),
                          sum(p["z"] for p in sel) / len(sel)))
    if not cents:
        return 0.0, 0
    newest = cents[-1][0]
    part = [c for c in cents if c[0] > newest - last_layers and c[2] < below and
            math.hypot(c[1] - center[0], c[3] - center[2]) >= near]
    turn, prev = 0.0, None
    for _, x, _, z in part:
        a = math.atan2(z - center[2], x - center[0])
        if prev is not None:
            turn += (a - prev + math.pi) % (2 * math.pi) - math.pi
        prev = a
    return turn / (2 * math.pi), len(part)


def coil_main(out, args):
    below = float(args[args.index("--below") + 1]) if "--below" in args else 0.1
    last = float(args[args.index("--last") + 1]) if "--last" in args else 0.4
    near = float(args[args.index("--near") + 1]) if "--near" in args else 0.004
    with open(os.path.join(out, "scene.resolved.json")) as f:
        scene = json.load(f)
    names = [b["name"] for b in scene["bodies"]]
    materials = list(scene["materials"])
    # the streams apart: by material when every emitter has its own, else by body
    by_material = len({e["material"] for e in scene["emitters"]}) == len(scene["emitters"])
    frames = sorted(glob.glob(os.path.join(out, "frame_*.ply")))
    first = len(read_ply(frames[0])) - sum(
        disc_count(e["radius"], e["spacing"]) for e in scene["emitters"]
        if e["start"] <= 0)  # the bodies' particles: ids below are sampled, not emitted
    print("frame,time,emitter,layers_counted,turns")
    for path in frames:
        k = int(os.path.basename(path)[6:11])
        rows = read_ply(path)
        for j, e in enumerate(scene["emitters"]):  # its ids in order
            key, b = ("material", materials.index(e["material"])) if by_material else \
                ("body", names.index(e["body"]))
            n = disc_count(e["radius"], e["spacing"])
            mine = sorted(int(p["id"]) for p in rows if int(p[key]) == b and p["id"] >= first)
            ps = {int(p["id"]): p for p in rows}
            sub = {q: ps[i] for q, i in enumerate(mine)}
            turns, layers = coil_turns(sub, 0, n, len(mine), e["center"], below,
                                       last * e["speed"] / e["spacing"], near)
            print(f"{k},{k / scene['time']['fps']:.4g},{j},{layers},{turns:.3f}")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    if "--coil" in args:
        return coil_main(out, args)
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
