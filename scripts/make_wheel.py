#!/usr/bin/env python3
"""Writes a spoked wheel as an OBJ (Yu et al. 2024 Fig. 11's stiff wheel; this project's shape,
the paper gives none), in metres, its axle along z through the origin: a rim (an annulus of
radii RIM_IN..RIM_OUT), a hub (a cylinder of radius HUB) and SPOKES straight spokes (boxes
SPOKE_W wide in the wheel's plane, SPOKE_T thick along z) from inside the hub to inside the rim.
Every piece is a closed surface wound counter-clockwise seen from outside; they overlap where
they join, so a body's sampling (winding number >= 1/2) fills their union; not a collider.

usage: make_wheel.py [SEGMENTS=64] > scenes/meshes/wheel.obj"""
import math
import sys

RIM_OUT, RIM_IN, WIDTH = 0.1, 0.08, 0.04
HUB, SPOKES, SPOKE_W, SPOKE_T = 0.022, 5, 0.014, 0.024

verts, faces = [], []


def vertex(x, y, z):
    verts.append((x, y, z))
    return len(verts)  # OBJ indices start at 1


def ring(r, z, n):
    return [vertex(r * math.cos(2 * math.pi * j / n), r * math.sin(2 * math.pi * j / n), z)
            for j in range(n)]


def band(lo, hi, outward):
    """The wall between two rings (lo at the lower z): outward (away from the axis) or inward."""
    n = len(lo)
    for j in range(n):
        a, b, c, d = lo[j], lo[(j + 1) % n], hi[(j + 1) % n], hi[j]
        faces.extend([(a, b, c), (a, c, d)] if outward else [(a, c, b), (a, d, c)])


def annulus(outer, inner, up):
    """The face between two rings at one z, facing +z (up) or -z."""
    n = len(outer)
    for j in range(n):
        a, b, c, d = outer[j], outer[(j + 1) % n], inner[(j + 1) % n], inner[j]
        faces.extend([(a, b, c), (a, c, d)] if up else [(a, c, b), (a, d, c)])


def disc(rim, z, up):
    c = vertex(0, 0, z)
    n = len(rim)
    for j in range(n):
        faces.append((c, rim[j], rim[(j + 1) % n]) if up else (c, rim[(j + 1) % n], rim[j]))


def spoke(angle):
    """A box from radius HUB / 2 to (RIM_IN + RIM_OUT) / 2 along the angle."""
    ca, sa = math.cos(angle), math.sin(angle)
    r0, r1 = HUB / 2, (RIM_IN + RIM_OUT) / 2
    v = {}
    for i, u in enumerate((r0, r1)):
        for k, w in enumerate((-SPOKE_W / 2, SPOKE_W / 2)):
            for m, z in enumerate((-SPOKE_T / 2, SPOKE_T / 2)):
                v[i, k, m] = vertex(u * ca - w * sa, u * sa + w * ca, z)
    quads = [((0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0)), ((1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)),
             ((0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)), ((0, 1, 0), (0, 1, 1), (1, 1, 1), (1, 1, 0)),
             ((0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)), ((0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1))]
    for q in quads:
        a, b, c, d = (v[p] for p in q)
        faces.extend([(a, b, c), (a, c, d)])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    h = WIDTH / 2
    out_lo, out_hi = ring(RIM_OUT, -h, n), ring(RIM_OUT, h, n)
    in_lo, in_hi = ring(RIM_IN, -h, n), ring(RIM_IN, h, n)
    band(out_lo, out_hi, True)
    band(in_lo, in_hi, False)
    annulus(out_hi, in_hi, True)
    annulus(out_lo, in_lo, False)
    hub_lo, hub_hi = ring(HUB, -h, n // 2), ring(HUB, h, n // 2)
    band(hub_lo, hub_hi, True)
    disc(hub_hi, h, True)
    disc(hub_lo, -h, False)
    for s in range(SPOKES):
        spoke(math.pi / 2 + 2 * math.pi * s / SPOKES)
    print(f"# spoked wheel: scripts/make_wheel.py {n} (rim {RIM_IN}-{RIM_OUT} m, width {WIDTH} m, "
          f"hub {HUB} m, {SPOKES} spokes {SPOKE_W} x {SPOKE_T} m)")
    for x, y, z in verts:
        print(f"v {x:.6f} {y:.6f} {z:.6f}")
    for a, b, c in faces:
        print(f"f {a} {b} {c}")


if __name__ == "__main__":
    main()
