"""What tests/cli/vtu_paraview.py and vtu_meshio.py compare the VTU frames with: the run's PLY
frames, read here by a parser of their own (binary little-endian, float and int properties, as
docs/scene-format.md states them), and the times stats.csv gives each frame. The array each
attribute becomes, with its PLY columns: the VTU must carry exactly these."""
import csv
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

# attribute array -> its PLY properties, in component order
ARRAYS = {
    "velocity": ["vx", "vy", "vz"],
    "material": ["material"],
    "body": ["body"],
    "plastic_strain": ["plastic_strain"],
    "id": ["id"],
}
INTEGER_ARRAYS = {"material", "body", "id"}


def read_ply(path):
    """{property: numpy column} of a frame's vertex element (float32 or int32)."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    names, types, count = [], [], None
    for line in data[:end].decode("ascii").splitlines():
        words = line.split()
        if words[:2] == ["format", "binary_little_endian"]:
            continue
        if words[:1] == ["element"]:
            assert words[1] == "vertex", line
            count = int(words[2])
        elif words[:1] == ["property"]:
            types.append({"float": "<f4", "int": "<i4"}[words[1]])
            names.append(words[2])
    rows = np.frombuffer(data, dtype=np.dtype(list(zip(names, types))), count=count, offset=end)
    return {name: np.array(rows[name]) for name in names}


def stats_times(out_dir):
    """{frame: time} from stats.csv."""
    with open(os.path.join(out_dir, "stats.csv"), newline="") as f:
        return {int(row["frame"]): float(row["time"]) for row in csv.DictReader(f)}


def ply_frames(out_dir):
    """The frame numbers of the frame_<N>.ply files, ascending."""
    found = (re.fullmatch(r"frame_(\d+)\.ply", name) for name in os.listdir(out_dir))
    return sorted(int(m.group(1)) for m in found if m)


def pvd_entries(out_dir):
    """[(time, file)] of frames.pvd, in its order."""
    root = ET.parse(os.path.join(out_dir, "frames.pvd")).getroot()
    assert root.get("type") == "Collection", root.attrib
    return [(float(d.get("timestep")), d.get("file")) for d in root.iter("DataSet")]


def expected_columns(ply):
    """{array: (n, components) numpy array} the VTU must hold for a PLY frame."""
    out = {}
    for array, props in ARRAYS.items():
        dtype = np.int32 if array in INTEGER_ARRAYS else np.float32
        out[array] = np.stack([ply[p].astype(dtype) for p in props], axis=1)
    return out


class Checks:
    """Counts failed checks and prints every measured value."""

    def __init__(self):
        self.failed = self.count = 0

    def check(self, ok, what):
        print(("  ok   " if ok else "  FAIL ") + what)
        self.count += 1
        self.failed += 0 if ok else 1

    def same_array(self, got, want, what):
        got = np.asarray(got).reshape(want.shape) if np.size(got) == want.size else got
        same = np.shape(got) == want.shape and np.array_equal(got, want)
        diff = int(np.sum(got != want)) if np.shape(got) == want.shape else -1
        self.check(same, "%s: shape %s, %d values, %d differ" % (what, np.shape(got), want.size, diff))

    def exit_code(self):
        print("%d checks, %d failed" % (self.count, self.failed))
        return 1 if self.failed else 0
