"""Opens a run's frames.pvd with ParaView's own reader (pvpython, offscreen: no X server) and
checks what a ParaView user sees against the run's PLY frames (vtu_reference.py): one time step
per frame written, at the times of stats.csv; in each, a vertex cell per particle, and every
attribute as a point-data array of its name, components, type and values (bit for bit).
Usage: pvpython --force-offscreen-rendering vtu_paraview.py OUT_DIR; exit 0 when all hold."""
import sys

import numpy as np
from paraview import servermanager
from paraview.simple import PVDReader
from vtkmodules.util.numpy_support import vtk_to_numpy

import vtu_reference as ref

VTK_VERTEX = 1


def check_frame(checks, data, ply, label):
    n = len(ply["x"])
    checks.check(data.GetClassName() == "vtkUnstructuredGrid", "%s: %s" % (label, data.GetClassName()))
    checks.check(data.GetNumberOfPoints() == n and data.GetNumberOfCells() == n,
                 "%s: %d points, %d cells, PLY %d rows" % (label, data.GetNumberOfPoints(),
                                                           data.GetNumberOfCells(), n))
    types = np.array([data.GetCellType(i) for i in range(data.GetNumberOfCells())])
    checks.check(np.all(types == VTK_VERTEX), "%s: every cell a VTK_VERTEX" % label)
    cells = data.GetCells()
    checks.same_array(vtk_to_numpy(cells.GetConnectivityArray()), np.arange(n), label + " connectivity")
    points = np.stack([ply["x"], ply["y"], ply["z"]], axis=1)
    checks.same_array(vtk_to_numpy(data.GetPoints().GetData()), points, label + " points")
    pd = data.GetPointData()
    names = [pd.GetArrayName(k) for k in range(pd.GetNumberOfArrays())]
    checks.check(sorted(names) == sorted(ref.ARRAYS), "%s: arrays %s" % (label, names))
    for name, want in ref.expected_columns(ply).items():
        array = pd.GetArray(name)
        if array is None:
            checks.check(False, "%s: no array %s" % (label, name))
            continue
        kind = "int" if name in ref.INTEGER_ARRAYS else "float"
        components = [array.GetComponentName(c) for c in range(array.GetNumberOfComponents())]
        checks.check(array.GetDataTypeAsString() == kind and array.GetNumberOfComponents() == want.shape[1],
                     "%s: %s is %s with %d components %s" % (label, name, array.GetDataTypeAsString(),
                                                            array.GetNumberOfComponents(), components))
        checks.same_array(vtk_to_numpy(array), want, "%s %s" % (label, name))
    velocity = pd.GetArray("velocity")
    if velocity is not None:
        names = [velocity.GetComponentName(c) for c in range(3)]
        checks.check(names == ref.ARRAYS["velocity"], "%s: velocity's components %s" % (label, names))


def main(out_dir):
    checks = ref.Checks()
    frames = ref.ply_frames(out_dir)
    times = ref.stats_times(out_dir)
    reader = PVDReader(FileName=out_dir + "/frames.pvd")
    steps = list(reader.TimestepValues)
    want = [times[f] for f in frames]
    checks.check(steps == want, "time steps %s, stats.csv's of the PLY frames %s" % (steps, want))
    for frame, t in zip(frames, steps):
        reader.UpdatePipeline(t)
        data = servermanager.Fetch(reader)
        ply = ref.read_ply("%s/frame_%05d.ply" % (out_dir, frame))
        check_frame(checks, data, ply, "t = %g (frame %d)" % (t, frame))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
