#!/usr/bin/env python3
"""Writes a noodle mold (Yu et al. 2024 Fig. 2; this project's shape, the paper gives none) as
two closed OBJ meshes in metres, each a collider of its own:

- PLATE: a square plate (side 2 HALF, from y = -THICK to 0) with a 3 x 3 grid of round holes of
  radius HOLE, PITCH apart, centred on the y axis. The plate is cut into square cells (PITCH
  wide, holes at the cells' centres; the outer cells have none), every cell's edges sampled
  alike so that neighbours share their vertices; a cell's face runs from its edge points to its
  hole's circle at the same angles.
- TUBE: the wall the dough sits in, an annulus of radii TUBE..TUBE + WALL about the y axis from
  y = -THICK / 2 (inside the plate) to TOP.

Triangles are wound counter-clockwise seen from outside (each checked against the side it
faces), so both meshes are closed and manifold with outward normals.

usage: make_mold.py PLATE.obj TUBE.obj"""
import math
import sys

HALF, THICK, PITCH, HOLE, GRID = 0.0675, 0.01, 0.027, 0.009, 5  # 5 x 5 cells, 3 x 3 holes
TUBE, WALL, TOP, SEGMENTS = 0.05, 0.01, 0.12, 64
SIDE = 4  # points per cell edge (corners included once)


class Mesh:
    def __init__(self):
        self.verts, self.index, self.faces = [], {}, []

    def vertex(self, p):
        key = tuple(round(c, 9) for c in p)
        if key not in self.index:
            self.verts.append(key)
            self.index[key] = len(self.verts)
        return self.index[key]

    def tri(self, a, b, c, facing):
        """Triangle a b c turned so that its normal points along `facing` at its centre."""
        pa, pb, pc = (self.verts[i - 1] for i in (a, b, c))
        e1 = [pb[k] - pa[k] for k in range(3)]
        e2 = [pc[k] - pa[k] for k in range(3)]
        n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
             e1[0] * e2[1] - e1[1] * e2[0]]
        centre = [(pa[k] + pb[k] + pc[k]) / 3 for k in range(3)]
        f = facing(centre)
        self.faces.append((a, b, c) if sum(n[k] * f[k] for k in range(3)) > 0 else (a, c, b))

    def quad(self, a, b, c, d, facing):
        self.tri(a, b, c, facing)
        self.tri(a, c, d, facing)

    def write(self, path, comment):
        with open(path, "w") as f:
            f.write(f"# {comment}\n")
            for v in self.verts:
                f.write(f"v {v[0]:.6f} {v[1]:.6f} {v[2]:.6f}\n")
            for a, b, c in self.faces:
                f.write(f"f {a} {b} {c}\n")


def cell_boundary(x0, z0, w):
    """The cell's edge points, counter-clockwise in (x, z), SIDE a side."""
    pts = []
    for side in range(4):
        for k in range(SIDE):
            t = w * k / SIDE
            pts.append([(x0 + t, z0), (x0 + w, z0 + t), (x0 + w - t, z0 + w), (x0, z0 + w - t)][side])
    return pts


def plate(m):
    up = lambda c: (0, 1, 0)  # noqa: E731
    down = lambda c: (0, -1, 0)  # noqa: E731
    w = 2 * HALF / GRID
    for i in range(GRID):
        for j in range(GRID):
            x0, z0 = -HALF + i * w, -HALF + j * w
            cx, cz = x0 + w / 2, z0 + w / 2
            edge = cell_boundary(x0, z0, w)
            holed = abs(cx) < 1.5 * PITCH and abs(cz) < 1.5 * PITCH
            if holed:
                circle = [(cx + HOLE * math.cos(a), cz + HOLE * math.sin(a))
                          for a in (math.atan2(pz - cz, px - cx) for px, pz in edge)]
            for y, facing in ((0.0, up), (-THICK, down)):
                for k in range(len(edge)):
                    e0, e1 = edge[k], edge[(k + 1) % len(edge)]
                    a, b = m.vertex((e0[0], y, e0[1])), m.vertex((e1[0], y, e1[1]))
                    if holed:
                        c0, c1 = circle[k], circle[(k + 1) % len(edge)]
                        m.quad(a, b, m.vertex((c1[0], y, c1[1])), m.vertex((c0[0], y, c0[1])),
                               facing)
                    else:
                        m.tri(a, b, m.vertex((cx, y, cz)), facing)
            if holed:  # the hole's wall faces its axis
                into = lambda c, cx=cx, cz=cz: (cx - c[0], 0, cz - c[2])  # noqa: E731
                for k in range(len(edge)):
                    c0, c1 = circle[k], circle[(k + 1) % len(edge)]
                    m.quad(m.vertex((c0[0], 0.0, c0[1])), m.vertex((c1[0], 0.0, c1[1])),
                           m.vertex((c1[0], -THICK, c1[1])), m.vertex((c0[0], -THICK, c0[1])), into)
    outward = lambda c: (c[0], 0, c[2])  # noqa: E731 (the plate's sides, a square about the axis)
    rim = cell_boundary(-HALF, -HALF, 2 * HALF)
    step = 2 * HALF / GRID / SIDE
    fine = []
    for k in range(len(rim)):  # the outer square at the cells' edge points
        p, q = rim[k], rim[(k + 1) % len(rim)]
        n = round(max(abs(q[0] - p[0]), abs(q[1] - p[1])) / step)
        fine += [(p[0] + (q[0] - p[0]) * t / n, p[1] + (q[1] - p[1]) * t / n) for t in range(n)]
    for k in range(len(fine)):
        p, q = fine[k], fine[(k + 1) % len(fine)]
        m.quad(m.vertex((p[0], 0.0, p[1])), m.vertex((q[0], 0.0, q[1])),
               m.vertex((q[0], -THICK, q[1])), m.vertex((p[0], -THICK, p[1])), outward)


def tube(m):
    ring = lambda r, y: [m.vertex((r * math.cos(2 * math.pi * j / SEGMENTS), y,  # noqa: E731
                                   r * math.sin(2 * math.pi * j / SEGMENTS))) for j in range(SEGMENTS)]
    y0 = -THICK / 2
    rings = {(r, y): ring(r, y) for r in (TUBE, TUBE + WALL) for y in (y0, TOP)}
    out = lambda c: (c[0], 0, c[2])  # noqa: E731
    inn = lambda c: (-c[0], 0, -c[2])  # noqa: E731
    for j in range(SEGMENTS):
        n = (j + 1) % SEGMENTS
        for r, facing in ((TUBE + WALL, out), (TUBE, inn)):
            lo, hi = rings[r, y0], rings[r, TOP]
            m.quad(lo[j], lo[n], hi[n], hi[j], facing)
        for y, facing in ((TOP, lambda c: (0, 1, 0)), (y0, lambda c: (0, -1, 0))):
            o, i = rings[TUBE + WALL, y], rings[TUBE, y]
            m.quad(o[j], o[n], i[n], i[j], facing)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    p, t = Mesh(), Mesh()
    plate(p)
    tube(t)
    p.write(sys.argv[1], f"noodle mold plate: scripts/make_mold.py (side {2 * HALF} m, {THICK} m "
            f"thick, 3 x 3 holes of radius {HOLE} m, {PITCH} m apart)")
    t.write(sys.argv[2], f"noodle mold tube: scripts/make_mold.py (radius {TUBE} m, wall {WALL} m, "
            f"y {-THICK / 2} to {TOP} m)")


if __name__ == "__main__":
    main()
