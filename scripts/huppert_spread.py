#!/usr/bin/env python3
"""Axisymmetric viscous gravity current against Huppert 1982: reads the frames of
scenes/xpbi_huppert_spreading.json (binary PLY with x y z first) and prints, per frame, the
front radius (the radius holding all but FRACTION of the particles), the mean thickness
V / (pi r^2), h / r, the Reynolds number U h / nu with U = dr/dt = r / (8 t), and Huppert's
r_N = 0.894 (g V^3 t / (3 nu))^(1/8).

usage: huppert_spread.py OUT_DIR [--nu 0.1] [--volume 5.027e-3] [--fps 25] [--fraction 0.01]
"""
import argparse
import glob
import os
import re

import numpy as np


def read_ply_positions(path):
    with open(path, "rb") as f:
        count, props = 0, []
        while True:
            line = f.readline().decode("ascii").strip()
            if line.startswith("element vertex"):
                count = int(line.split()[2])
            elif line.startswith("property"):
                props.append(line.split()[1])
            elif line == "end_header":
                break
        if any(p != "float" for p in props):
            raise SystemExit(f"{path}: only float properties are read")
        data = np.frombuffer(f.read(4 * len(props) * count), dtype="<f4")
    return data.reshape(count, len(props))[:, :3].astype(float)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--nu", type=float, default=0.1, help="kinematic viscosity (m^2/s)")
    ap.add_argument("--volume", type=float, default=np.pi * 0.1**2 * 0.16, help="m^3")
    ap.add_argument("--fps", type=float, default=25)
    ap.add_argument("--fraction", type=float, default=0.01)
    a = ap.parse_args()
    frames = sorted(glob.glob(os.path.join(a.out, "frame_*.ply")))
    g, v = 9.81, a.volume
    print("t (s)  r_front (m)  r_N Huppert (m)  ratio  mean h (m)  h / r  Re")
    for path in frames:
        k = int(re.search(r"frame_(\d+)", path).group(1))
        t = k / a.fps
        if t <= 0:
            continue
        x = read_ply_positions(path)
        r = np.sort(np.hypot(x[:, 0], x[:, 2]))
        front = r[int((1 - a.fraction) * (len(r) - 1))]
        r_n = 0.894 * (g * v**3 * t / (3 * a.nu)) ** 0.125
        h = v / (np.pi * front**2)
        re_ = front / (8 * t) * h / a.nu
        print(f"{t:5.2f}  {front:.4f}  {r_n:.4f}  {front / r_n:.3f}  {h:.4f}  {h / front:.3f}  {re_:.2e}")


if __name__ == "__main__":
    main()
