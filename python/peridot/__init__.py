"""Peridot from Python: load a scene, step it, read its particles and fields as numpy arrays,
drive its colliders and pins between steps, write its frames (docs/python.md).

    import peridot
    sim = peridot.load("scenes/demo.json", overrides={"time.frames": 10})
    while sim.frame < 10:
        sim.step_frame()
        print(sim.time, sim.positions[:, 1].min())

The module is pure Python over the shared library libperidot.so through ctypes (no compiled
extension): it is found through $PERIDOT_LIB, the path `make install` recorded, or the build
folder beside python/ (python/../build/libperidot.so).
"""
import ctypes
import json
import os
import time as _time

import numpy as np

from ._lib import (PD_ERR_UNSTABLE, PD_ERR_UNSUPPORTED, SCENE_SIZE, Error, Estimate, FieldView,
                   Keyframe, PvdEntry, Vec3, lib)

__all__ = ["load", "Simulation", "PeridotError", "UnstableError", "version"]

# output.format's names and their PD_FORMAT_* bits (include/peridot/types.h)
_FORMATS = {"ply": 1 << 0, "vtk": 1 << 1, "vtu": 1 << 2}
_PVD_NAME = "frames.pvd"  # the collection `peridot run` lists its .vtu frames in


def version():
    """The library's version ("0.1.0")."""
    return lib.pd_version().decode()


class PeridotError(Exception):
    """A library call failed. `status` is the status's message ("bad scene"), `code` its
    number (include/peridot/status.h), `path` the JSON path it is about ("bodies[0].spacing",
    "" when none), `file` and `line` where (when known), `message` what was expected."""

    def __init__(self, code, file="", path="", line=0, message=""):
        self.code, self.status = code, lib.pd_status_string(code).decode()
        self.file, self.path, self.line, self.message = file, path, line, message
        where = ":".join(x for x in (file, str(line) if line else "") if x)
        text = ": ".join(x for x in (where, path, message or self.status) if x)
        super().__init__(f"{text} ({self.status})" if message else text)


class UnstableError(PeridotError):
    """A step went unstable (a non-finite or runaway particle): the message says when and
    where; the state before the step is lost, as in `peridot run`."""


def _raise(code, err, file="", line=True):
    """line=False for a scene given as a dict: the line of the JSON text made from it would
    mean nothing to its author."""
    cls = UnstableError if code == PD_ERR_UNSTABLE else PeridotError
    raise cls(code, err.file.decode(errors="replace") or file, err.path.decode(errors="replace"),
              err.line if line else 0, err.message.decode(errors="replace"))


def _check(code, err, file="", line=True):
    if code != 0:
        _raise(code, err, file, line)


def _override_strings(overrides):
    """{"json.path": value} (values as JSON) or ["json.path=value", ...] as --set takes them."""
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [f"{k}={json.dumps(v)}" for k, v in overrides.items()]
    return [str(s) for s in overrides]


def load(scene, overrides=None, *, base_dir=None, threads=None):
    """A Simulation of `scene`: a scene file's path, or the scene as a dict (docs/scene-format.md).

    overrides: {"solver.iterations": 40, "method": "sbpd"} (each value as JSON) or a list of
    "json.path=value" strings, applied as `peridot run --set` applies them, before validation.
    base_dir: the folder a dict's relative mesh paths are resolved against (default: the
    working folder). threads: worker threads (default: the scene's, or all cores; OpenMP's,
    so for the whole process); results do not depend on it. A bad scene raises PeridotError with .path, .message (nothing is kept)."""
    return Simulation(scene, overrides, base_dir=base_dir, threads=threads)


def _as_array(pointer, count, ctype, dtype, owner):
    """count values at a C pointer as a read-only numpy array sharing that memory; the array
    keeps `owner` (the Simulation) alive, so that the world is not freed under it."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    buf = (ctype * count).from_address(ctypes.cast(pointer, ctypes.c_void_p).value)
    buf._owner = owner
    arr = np.frombuffer(buf, dtype=dtype)
    arr.flags.writeable = False
    return arr


class Simulation:
    """A world made from a scene, stepped from Python. Arrays it hands out are in particle-id
    order, the rows of the frames (see `positions` for their lifetime)."""

    def __init__(self, scene, overrides=None, *, base_dir=None, threads=None):
        self._lib = lib  # close() may run at interpreter exit, after the module's globals
        self._world = None
        self._scene = (ctypes.c_uint64 * ((SCENE_SIZE + 7) // 8))()  # pd_scene, 8-aligned
        self._scene_loaded = False
        sets = _override_strings(overrides)
        argv = (ctypes.c_char_p * max(1, len(sets)))(*[s.encode() for s in sets])
        err = Error()
        if isinstance(scene, dict):
            self._file = "<dict>"
            d = os.fspath(base_dir) if base_dir is not None else os.getcwd()
            code = lib.pd_scene_parse(json.dumps(scene).encode(), self._file.encode(),
                                      d.encode(), argv, len(sets), self._scene, ctypes.byref(err))
        else:
            self._file = os.fspath(scene)
            code = lib.pd_scene_load(self._file.encode(), argv, len(sets), self._scene,
                                     ctypes.byref(err))
        from_file = not isinstance(scene, dict)
        _check(code, err, self._file, line=from_file)
        self._scene_loaded = True
        self.scene = json.loads(lib.pd_scene_resolved_json(self._scene).decode())
        # as `peridot run`: a scene that needs more memory than the process may use is refused
        # before it is built
        self.estimate = Estimate()
        code = lib.pd_scene_estimate(self._scene, ctypes.byref(self.estimate), ctypes.byref(err))
        if code == 0:
            code = lib.pd_scene_check_memory(self._scene, ctypes.byref(self.estimate),
                                             ctypes.byref(err))
        world = ctypes.c_void_p()
        if code == 0:
            code = lib.pd_create_world(self._scene, ctypes.byref(world), ctypes.byref(err))
        if code != 0:
            self.close()
            _raise(code, err, self._file, line=from_file)
        self._world = world
        if threads:
            lib.pd_set_threads(int(threads))
        self._frame = 0
        # the last frame's steps, wall time per step, unconverged steps (stats.csv's columns)
        self._last_frame = (0, 0.0, 0)
        self._frame_start = (self.info["unconverged_steps"], 0.0, 0)  # (unconverged, s, steps)
        self._identity = None  # is the storage order the id order (known per step)?
        self._collections = {}  # directory -> {frame: time} of the .vtu frames written there

    # ---- life ----
    def close(self):
        """Frees the world and the scene (also done when the object is collected); arrays
        handed out as views must not be read after it."""
        if getattr(self, "_world", None):
            self._lib.pd_destroy_world(self._world)
            self._world = None
        if getattr(self, "_scene_loaded", False):
            self._lib.pd_scene_free(self._scene)
            self._scene_loaded = False

    def __del__(self):
        self.close()

    def __repr__(self):
        if not self._world:
            return "<peridot.Simulation (closed)>"
        return (f"<peridot.Simulation {self.scene['method']}, {len(self)} particles, frame "
                f"{self._frame}, t = {self.time:.6g} s>")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _w(self):
        if not self._world:
            raise ValueError("peridot: this Simulation was closed")
        return self._world

    # ---- stepping ----
    def step(self):
        """One time step of `dt`. UnstableError when it goes unstable."""
        err = Error()
        t0 = _time.perf_counter()
        code = lib.pd_world_step(self._w(), ctypes.byref(err))
        self._identity = None
        if code != 0:
            _raise(code, err, self._file)
        unconverged, seconds, steps = self._frame_start
        self._frame_start = (unconverged, seconds + _time.perf_counter() - t0, steps + 1)
        if lib.pd_world_get_info(self._world).step_in_frame == 0:
            self._end_frame()

    def _end_frame(self):
        unconverged, seconds, steps = self._frame_start
        now = self.info["unconverged_steps"]
        self._last_frame = (steps, 1e3 * seconds / max(steps, 1), now - unconverged)
        self._frame_start = (now, 0.0, 0)
        self._frame += 1

    def step_frame(self):
        """The steps to the end of the current frame (as `peridot run` steps a frame; time.dt
        "auto" may choose their number at the frame's start). Returns the frame's number."""
        self.step()
        while lib.pd_world_get_info(self._world).step_in_frame != 0:
            self.step()
        return self._frame

    @property
    def frame(self):
        """Frames completed (0 before the first step): the number of the frame written next."""
        return self._frame

    @property
    def time(self):
        """Simulated time (s)."""
        return lib.pd_world_get_info(self._w()).time

    @property
    def dt(self):
        """The time step in use (s)."""
        return lib.pd_world_get_info(self._w()).dt

    @property
    def info(self):
        """The world's clock and counters (pd_world_info) as a dict."""
        i = lib.pd_world_get_info(self._w())
        return {name: getattr(i, name) for name, _ in i._fields_}

    def __len__(self):
        return lib.pd_world_get_info(self._w()).particles

    # ---- particles and fields ----
    def _order(self):
        v = lib.pd_world_particles(self._w())
        order = _as_array(v.order, v.count, ctypes.c_uint32, np.uint32, self)
        if self._identity is None:
            self._identity = bool(np.array_equal(order, np.arange(v.count, dtype=np.uint32)))
        return v, order

    def _id_order(self, values, components):
        """values (storage order, one row per particle) in id order: a view when the world
        keeps its particles in id order, a copy otherwise."""
        v, order = self._order()
        rows = values.reshape(v.count, components) if components > 1 else values
        return rows if self._identity else rows[order]

    @property
    def positions(self):
        """N x 3 float64 positions (m), row k the particle with id k (the frames' row k).
        A copy, since the world keeps its particles in a Z-curve order of its own; when that
        order is the id order (as for a world that does not reorder), a read-only view of the
        world's memory instead, valid until the next step or close(): copy it to keep it."""
        v, _ = self._order()
        return self._id_order(
            _as_array(v.positions, 3 * v.count, ctypes.c_double, np.float64, self), 3)

    @property
    def velocities(self):
        """N x 3 float64 velocities (m/s), as `positions` (same order, same lifetime)."""
        v, _ = self._order()
        return self._id_order(
            _as_array(v.velocities, 3 * v.count, ctypes.c_double, np.float64, self), 3)

    @property
    def fields(self):
        """The names of the attributes the method publishes (what field() and the frames can
        give: "velocity", "material", "body", "id", and the method's own)."""
        out = []
        for name in lib.pd_attribute_names().decode().split("|"):
            try:
                self.field(name)
                out.append(name)
            except PeridotError:
                pass
        return out

    def field(self, name):
        """Attribute `name` (output.attributes: "velocity", "stress", "plastic_strain", ...) of
        every particle in id order: float64 or int32, N values or N x components (the frames'
        columns field_columns(name)). Same lifetime as `positions`. PeridotError (status
        "unsupported by this method") for one the method does not publish."""
        view, err = self._field_view(name)
        n = lib.pd_world_get_info(self._world).particles
        ctype, dtype = (ctypes.c_int32, np.int32) if view.is_integer else (ctypes.c_double,
                                                                            np.float64)
        return self._id_order(_as_array(view.data, n * view.components, ctype, dtype, self),
                              view.components)

    def field_columns(self, name):
        """(column names, unit) of attribute `name`, as the frames name them."""
        view, _ = self._field_view(name)
        return [view.names[c].decode() for c in range(view.components)], view.unit.decode()

    def _field_view(self, name):
        view, err = FieldView(), Error()
        _check(lib.pd_world_field(self._w(), name.encode(), ctypes.byref(view), ctypes.byref(err)),
               err, self._file)
        return view, err

    # ---- pins and colliders ----
    @property
    def pins(self):
        """Per pin (bodies in scene order, then each body's pins): body, index_in_body, the force
        it exerted on its body during the last step (N), released, and its pose now (translate,
        rotate_axis, rotate_degrees)."""
        out = []
        for k in range(lib.pd_world_get_info(self._w()).pins):
            p = lib.pd_world_pin(self._world, k)
            out.append({"body": p.body, "name": self.scene["bodies"][p.body]["name"],
                        "index_in_body": p.index_in_body, "force": np.array(p.force.tuple()),
                        "released": bool(p.released), "translate": np.array(p.translate.tuple()),
                        "rotate_axis": np.array(p.rotate_axis.tuple()),
                        "rotate_degrees": p.rotate_degrees})
        return out

    @property
    def colliders(self):
        """Per collider (scene order) its pose now (translate from its rest pose, rotate_axis,
        rotate_degrees about its centre), centre, and the velocity and angular velocity it
        moved with during the last step."""
        out = []
        for k in range(lib.pd_world_get_info(self._w()).colliders):
            c = lib.pd_world_collider(self._world, k)
            out.append({name: (np.array(getattr(c, name).tuple())
                               if isinstance(getattr(c, name), Vec3) else getattr(c, name))
                        for name, _ in c._fields_})
        return out

    def _keyframe(self, current, translate, rotate, arrive):
        axis, degrees = rotate if rotate is not None else (current["rotate_axis"],
                                                           current["rotate_degrees"])
        tr = translate if translate is not None else current["translate"]
        t = self.time + self.dt if arrive is None else float(arrive)
        return Keyframe(t, Vec3(*map(float, tr)), Vec3(*map(float, axis)), float(degrees))

    def move_collider(self, k, translate=None, rotate=None, arrive=None):
        """Moves collider k in a straight line from its pose now to `translate` (m, from its
        rest pose, as a scene keyframe's) and `rotate` ((axis, degrees) about its centre),
        arriving at time `arrive` (s; default: the end of the next step), and holds it there;
        its scene motion no longer acts. An omitted translate or rotate keeps the current one."""
        c = self.colliders[k] if 0 <= k < len(self.colliders) else {
            "translate": (0, 0, 0), "rotate_axis": (0, 1, 0), "rotate_degrees": 0}
        key, err = self._keyframe(c, translate, rotate, arrive), Error()
        _check(lib.pd_world_move_collider(self._w(), int(k), key, ctypes.byref(err)), err,
               self._file)

    def move_pin(self, k, translate=None, rotate=None, arrive=None):
        """Moves pin k (the order of `pins`) as move_collider moves a collider: translate from
        where its particles were sampled, rotate about its region's centre."""
        pins = self.pins
        p = pins[k] if 0 <= k < len(pins) else {
            "translate": (0, 0, 0), "rotate_axis": (0, 1, 0), "rotate_degrees": 0}
        key, err = self._keyframe(p, translate, rotate, arrive), Error()
        _check(lib.pd_world_move_pin(self._w(), int(k), key, ctypes.byref(err)), err, self._file)

    # ---- output ----
    def write_frame(self, directory, frame=None, formats=None):
        """Writes the state as `peridot run` writes a frame: DIR/frame_<frame>.ply (and .vtk,
        .vtu), in the scene's output.format (or `formats`, a list of "ply", "vtk", "vtu") with
        its output.attributes, atomically. A .vtu frame joins DIR/frames.pvd, ParaView's time
        series of the .vtu frames this simulation wrote there, rewritten whole (a frame written
        again takes its place). frame defaults to `self.frame`. Returns the paths written."""
        out = self.scene["output"]
        if formats is None:
            formats = out["format"] if isinstance(out["format"], list) else [out["format"]]
        attributes = 0
        for name in out.get("attributes", []):
            attributes |= lib.pd_attribute_bit(name.encode())
        os.makedirs(directory, exist_ok=True)
        paths = []
        for fmt in formats:
            if fmt not in _FORMATS:
                raise PeridotError(PD_ERR_UNSUPPORTED, self._file, "output.format", 0,
                                   f"the Python module writes {sorted(_FORMATS)} frames, "
                                   f"not \"{fmt}\"")
            number = self._frame if frame is None else frame
            path = os.path.join(os.fspath(directory), f"frame_{number:05d}.{fmt}")
            err = Error()
            _check(lib.pd_world_write_frame(self._w(), path.encode(), _FORMATS[fmt], attributes,
                                            ctypes.byref(err)), err, self._file)
            paths.append(path)
            if fmt == "vtu":
                self._list_in_collection(directory, number)
        return paths

    def _list_in_collection(self, directory, frame):
        """Adds frame (at the world's time) to DIR/frames.pvd, listed in frame order."""
        frames = self._collections.setdefault(os.path.abspath(directory), {})
        frames[frame] = lib.pd_world_get_info(self._w()).time
        names = [f"frame_{n:05d}.vtu".encode() for n in sorted(frames)]
        entries = (PvdEntry * len(names))(*[PvdEntry(frames[n], name)
                                            for n, name in zip(sorted(frames), names)])
        err = Error()
        _check(lib.pd_write_pvd(os.path.join(os.fspath(directory), _PVD_NAME).encode(), entries,
                                len(names), ctypes.byref(err)), err, self._file)

    @property
    def stats(self):
        """The row `peridot run` writes to stats.csv at the end of this frame, as a dict by
        column (docs/scene-format.md): the state now, with steps, wall_ms_per_step and
        unconverged_steps of the last frame completed (0 at frame 0); energy and
        relative_error NaN where the method reports none (empty in stats.csv)."""
        w = self._w()
        i, fs = lib.pd_world_get_info(w), lib.pd_world_frame_stats(w)
        steps, ms, unconverged = self._last_frame
        row = {"frame": self._frame, "time": i.time, "kinetic_energy": fs.kinetic_energy,
               "min_x": fs.lo.x, "min_y": fs.lo.y, "min_z": fs.lo.z,
               "max_x": fs.hi.x, "max_y": fs.hi.y, "max_z": fs.hi.z,
               "iterations": i.iterations, "residual": i.residual, "energy": i.energy,
               "relative_error": i.relative_error, "wall_ms_per_step": ms,
               "unconverged_steps": unconverged, "dt": i.dt, "steps": steps}
        for p in self.pins:
            for c, value in zip("xyz", p["force"]):
                row[f"{p['name']}.pin{p['index_in_body']}.force_{c}"] = float(value)
        return row
