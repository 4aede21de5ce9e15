#!/usr/bin/env python3
"""Mean nearest-neighbour distance of a run's particles per frame and its spread (Yu et al. 2024
Fig. 13's measure; docs/replicability.md): for every particle the distance to its nearest other
particle (any body), their mean and standard deviation, each also over frame 0's.

usage: nn_distance.py OUT_DIR"""
import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from twist_angle import read_ply  # noqa: E402


def nearest(x):
    best = np.full(len(x), np.inf)
    for i in range(0, len(x), 256):  # blocks of rows: n^2 distances without n^2 memory
        d = np.linalg.norm(x[i : i + 256, None, :] - x[None, :, :], axis=2)
        d[np.arange(d.shape[0]), np.arange(i, i + d.shape[0])] = np.inf
        best[i : i + 256] = d.min(axis=1)
    return best


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    print("frame,mean_nn_m,std_nn_m,mean_over_start,std_over_start")
    start = None
    for path in sorted(glob.glob(os.path.join(out, "frame_*.ply"))):
        x = np.array([[p["x"], p["y"], p["z"]] for p in read_ply(path)])
        d = nearest(x)
        m, s = d.mean(), d.std()
        start = start or (m, s)
        k = int(os.path.basename(path)[6:11])
        print(f"{k},{m:.5f},{s:.5f},{m / start[0]:.3f},{s / start[1]:.3f}")


if __name__ == "__main__":
    main()
