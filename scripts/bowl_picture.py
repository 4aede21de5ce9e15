#!/usr/bin/env python3
"""Picture of scenes/ball_in_mesh_bowl.json with its bowl: `peridot render` draws particles
only, so this writes a frame holding the ball's particles of one frame plus points on the far
half of the bowl's surface (a cut-away; the camera of `peridot render` looks from azimuth
35 deg, elevation 25 deg), with a `part` property (0 bowl, 1 ball) to colour by.

Usage: scripts/bowl_picture.py out/ball_in_mesh_bowl 90 /tmp/bowl_view
       build/peridot render /tmp/bowl_view -o docs/images/ball_in_mesh_bowl.png --attribute part
The bowl is the scene's: unit hemisphere scaled 0.3, translated by (0, 0.3, 0)."""
import math
import os
import struct
import sys

R, CY, STEP = 0.3, 0.3, 0.012  # bowl radius and centre height (m), point spacing on it (m)


def read_frame(path):
    data = open(path, "rb").read()
    head, body = data.split(b"end_header\n", 1)
    n = int(head.split(b"element vertex ")[1].split(b"\n")[0])
    props = [l.split()[-1].decode() for l in head.split(b"\n") if l.startswith(b"property")]
    vals = struct.unpack("<%df" % (len(props) * n), body[: 4 * len(props) * n])
    k = len(props)
    return [vals[i * k : i * k + 3] for i in range(n)]


def bowl_points():
    az = math.radians(35)
    view = (math.sin(az), math.cos(az))  # horizontal direction towards the camera
    pts = []
    rings = int(R * math.pi / 2 / STEP)
    for i in range(rings + 1):
        th = (math.pi / 2) * i / rings  # polar angle from the bottom
        r = R * math.sin(th)
        segs = max(1, int(2 * math.pi * r / STEP))
        for j in range(segs):
            ph = 2 * math.pi * j / segs
            x, z = r * math.cos(ph), r * math.sin(ph)
            if x * view[0] + z * view[1] <= 0.02:  # far half only
                pts.append((x, CY - R * math.cos(th), z))
    return pts


def main():
    src, frame, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ball = read_frame(os.path.join(src, "frame_%05d.ply" % frame))
    bowl = bowl_points()
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "frame_00000.ply"), "wb") as f:
        f.write(b"ply\nformat binary_little_endian 1.0\nelement vertex %d\n" % (len(ball) + len(bowl)))
        f.write(b"property float x\nproperty float y\nproperty float z\nproperty float part\nend_header\n")
        for p in bowl:
            f.write(struct.pack("<4f", p[0], p[1], p[2], 0.0))
        for p in ball:
            f.write(struct.pack("<4f", p[0], p[1], p[2], 1.0))


if __name__ == "__main__":
    main()
