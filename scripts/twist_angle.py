#!/usr/bin/env python3
"""The twist of a bar's end in a run's PLY frames (Fang 2019 Fig. 7, docs/replicability.md).

usage: twist_angle.py OUT_DIR [--axis x] [--end-from 0.22] [--max-plastic]

For every frame: the angle (degrees) by which the particles whose rest position (frame 0) lies
at axis coordinate >= end-from have turned about the bar's axis, the least-squares rotation of
their cross-section coordinates about their centroid (atan2(sum r0 x r, sum r0 . r)), unwrapped
from frame to frame so that whole turns count. Needs the `id` attribute in the frames."""
import glob
import math
import os
import struct
import sys

TYPES = {"float": "f", "float32": "f", "double": "d", "float64": "d", "int": "i", "int32": "i",
         "uint": "I", "uint32": "I", "uchar": "B", "uint8": "B", "char": "b", "short": "h",
         "ushort": "H"}


def read_ply(path):
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    names, fmt, count = [], "<", 0
    for line in data[:end].decode("ascii").splitlines():
        w = line.split()
        if w[:2] == ["element", "vertex"]:
            count = int(w[2])
        elif w and w[0] == "property":
            fmt += TYPES[w[1]]
            names.append(w[2])
    size = struct.calcsize(fmt)
    rows = struct.iter_unpack(fmt, data[end:end + size * count])
    return [dict(zip(names, r)) for r in rows]


def main():
    args = sys.argv[1:]
    out = args[0]
    axis = args[args.index("--axis") + 1] if "--axis" in args else "x"
    end_from = float(args[args.index("--end-from") + 1]) if "--end-from" in args else 0.22
    a, b = [c for c in "xyz" if c != axis]
    frames = sorted(glob.glob(os.path.join(out, "frame_*.ply")))
    rest = {p["id"]: p for p in read_ply(frames[0])}
    end_ids = [i for i, p in rest.items() if p[axis] >= end_from]
    ca = sum(rest[i][a] for i in end_ids) / len(end_ids)
    cb = sum(rest[i][b] for i in end_ids) / len(end_ids)
    stats = {}
    with open(os.path.join(out, "stats.csv")) as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            stats[int(row["frame"])] = float(row["time"])
    last, turns = 0.0, 0.0
    print("frame,time,twist_deg,max_plastic_strain")
    for k, path in enumerate(frames):
        now = {p["id"]: p for p in read_ply(path)}
        na = sum(now[i][a] for i in end_ids) / len(end_ids)
        nb = sum(now[i][b] for i in end_ids) / len(end_ids)
        cross = dot = 0.0
        for i in end_ids:
            ra, rb = rest[i][a] - ca, rest[i][b] - cb
            sa, sb = now[i][a] - na, now[i][b] - nb
            cross += ra * sb - rb * sa
            dot += ra * sa + rb * sb
        angle = math.degrees(math.atan2(cross, dot))
        while angle + turns - last > 180:
            turns -= 360
        while angle + turns - last < -180:
            turns += 360
        last = angle + turns
        plastic = max((p.get("plastic_strain", 0.0) for p in now.values()), default=0.0)
        print(f"{k},{stats.get(k, float('nan')):.4f},{last:.2f},{plastic:.4f}")


if __name__ == "__main__":
    main()
