"""Reads a run's VTU frames with meshio (Debian's python3-meshio) and checks them against the
run's PLY frames (vtu_reference.py): frames.pvd lists every frame written, at stats.csv's times,
each file's TimeValue is its time, its cells are one vertex a particle, and every attribute is a
point-data array of its name, components and values (bit for bit).
Usage: python3 vtu_meshio.py OUT_DIR; exit 0 when all hold."""
import os
import sys

import meshio
import numpy as np

import vtu_reference as ref


def check_frame(checks, mesh, ply, time, label):
    n = len(ply["x"])
    points = np.stack([ply["x"], ply["y"], ply["z"]], axis=1)
    checks.same_array(mesh.points, points, label + " points")
    blocks = [(block.type, len(block.data)) for block in mesh.cells]
    checks.check(blocks == [("vertex", n)], "%s: cells %s, PLY %d rows" % (label, blocks, n))
    if blocks == [("vertex", n)]:
        checks.same_array(mesh.cells[0].data.ravel(), np.arange(n), label + " connectivity")
    checks.check(sorted(mesh.point_data) == sorted(ref.ARRAYS), "%s: arrays %s" % (label, list(mesh.point_data)))
    for name, want in ref.expected_columns(ply).items():
        got = mesh.point_data.get(name)
        if got is None:
            checks.check(False, "%s: no array %s" % (label, name))
            continue
        checks.check(got.dtype == want.dtype, "%s: %s is %s" % (label, name, got.dtype))
        checks.same_array(got.reshape(n, -1), want, "%s %s" % (label, name))
    stamp = mesh.field_data.get("TimeValue")
    got = float(stamp[0]) if stamp is not None else None
    checks.check(got is not None and abs(got - time) <= 1e-9 * max(1.0, abs(time)),
                 "%s: TimeValue %s, stats.csv %r" % (label, got, time))


def main(out_dir):
    checks = ref.Checks()
    frames = ref.ply_frames(out_dir)
    times = ref.stats_times(out_dir)
    entries = ref.pvd_entries(out_dir)
    want = [(times[f], "frame_%05d.vtu" % f) for f in frames]
    checks.check(entries == want, "frames.pvd %s, the PLY frames at stats.csv's times %s" % (entries, want))
    for frame in frames:
        label = "frame %d" % frame
        mesh = meshio.read(os.path.join(out_dir, "frame_%05d.vtu" % frame))
        ply = ref.read_ply(os.path.join(out_dir, "frame_%05d.ply" % frame))
        check_frame(checks, mesh, ply, times[frame], label)
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
