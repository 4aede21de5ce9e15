#!/usr/bin/env python3
"""Fragments and compaction of a run's particles per frame (Yu et al. 2024 Fig. 11 and 12's
measures; docs/replicability.md).

Fragments: particles closer than LINK (default 1.5 times the spacing, in the spacing's units,
--link) are joined; a fragment is a connected set of at least --min particles (default 10;
smaller sets are counted as loose particles). Printed per frame: the fragment count, the
largest's share of the particles counted (all of one mass here), the loose particles.

Strands (--below Y): only the particles below y = Y count (what came out under a plate);
printed besides, every fragment's length along y (its highest particle's y minus its lowest's,
metres), longest first.

Compaction (--density): every particle's nearest-neighbour distance d against the mean d_0 of
frame 0, as a density (d_0 / d)^3 (a free surface or a wall leaves it unchanged, where a kernel
sum would halve); printed: its mean over the particles that started within --zone metres of the
body's leading face along --toward (+x, -x, +y, ... : the direction it was thrown in, the face
that hits a wall ahead) and over the others, and the share of all particles above 1.25. Frames
list the particles in one order, so a particle is its row.

usage: fragments.py OUT_DIR --spacing S [--link 1.5] [--min 10] [--below Y] [--density]
       [--toward +x] [--zone 0.015] [--frames 0,10,20]"""
import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from twist_angle import read_ply  # noqa: E402


def pairs_within(x, radius):
    """Index pairs i < j closer than radius, and their distances (blocks of rows)."""
    ii, jj, dd = [np.zeros(0, int)], [np.zeros(0, int)], [np.zeros(0)]
    for i in range(0, len(x), 256):
        d = np.linalg.norm(x[i:i + 256, None, :] - x[None, :, :], axis=2)
        a, b = np.nonzero(d < radius)
        a = a + i
        keep = a < b
        ii.append(a[keep])
        jj.append(b[keep])
        dd.append(d[a[keep] - i, b[keep]])
    return np.concatenate(ii), np.concatenate(jj), np.concatenate(dd)


def components(n, i, j):
    """Connected components' labels (the least index of each) by label propagation."""
    label = np.arange(n)
    while True:
        old = label.copy()
        m = np.minimum(label[i], label[j])
        np.minimum.at(label, i, m)
        np.minimum.at(label, j, m)
        label = label[label]  # pointer jumping
        if np.array_equal(label, old):
            return label


def nearest(x, s):
    """Every particle's nearest-neighbour distance (the pairs within 3 s; inf when none)."""
    i, j, d = pairs_within(x, 3 * s)
    best = np.full(len(x), np.inf)
    np.minimum.at(best, i, d)
    np.minimum.at(best, j, d)
    return best


def option(args, name, default):
    return type(default)(args[args.index(name) + 1]) if name in args else default


def main():
    args = sys.argv[1:]
    if not args or "--spacing" not in args:
        sys.exit(__doc__)
    out, s = args[0], option(args, "--spacing", 0.0)
    link, least = option(args, "--link", 1.5) * s, option(args, "--min", 10)
    zone, toward = option(args, "--zone", 0.015), option(args, "--toward", "+x")
    axis, sign = "xyz".index(toward[1]), (1.0 if toward[0] == "+" else -1.0)
    frames = sorted(glob.glob(os.path.join(out, "frame_*.ply")))
    if "--frames" in args:
        want = {int(f) for f in option(args, "--frames", "").split(",")}
        frames = [f for f in frames if int(os.path.basename(f)[6:11]) in want or f == frames[0]]
    below = option(args, "--below", 0.0) if "--below" in args else None
    if below is not None and "--density" in args:
        sys.exit("--density follows every particle by its row: not with --below")
    head = "frame,fragments,largest_share,loose"
    if below is not None:
        head += ",particles_below,lengths_m"
    if "--density" in args:
        head += ",density_front,density_rest,share_above_1.25"
    print(head)
    d0 = front = None
    for path in frames:
        x = np.array([[p["x"], p["y"], p["z"]] for p in read_ply(path)])
        if below is not None:
            x = x[x[:, 1] < below]
        i, j, _ = pairs_within(x, link)
        label = components(len(x), i, j)
        names, sizes = np.unique(label, return_counts=True)
        big = sizes[sizes >= least]
        row = f"{int(os.path.basename(path)[6:11])},{len(big)}," \
              f"{big.max() / len(x) if len(big) else 0:.3f},{len(x) - big.sum()}"
        if below is not None:
            lengths = sorted((np.ptp(x[label == n, 1]) for n in names[sizes >= least]),
                             reverse=True)
            row += f",{len(x)}," + ";".join(f"{v:.3f}" for v in lengths)
        if "--density" in args:
            d = nearest(x, s)
            if d0 is None:
                ahead = sign * x[:, axis]
                d0, front = d.mean(), ahead > ahead.max() - zone
            rho = np.where(np.isfinite(d), (d0 / d)**3, 0.0)
            row += f",{rho[front].mean():.3f},{rho[~front].mean():.3f},{(rho > 1.25).mean():.3f}"
        print(row)


if __name__ == "__main__":
    main()
