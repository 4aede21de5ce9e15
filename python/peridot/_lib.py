"""The C library through ctypes: where it is found, and the public structs laid out as in
include/peridot/ (each checked against the library's own sizeof, pd_type_size)."""
import ctypes
import ctypes.util
import os
from pathlib import Path

c_real = ctypes.c_double  # pd_real (a build with PD_REAL_FLOAT is refused by the size checks)


class Vec3(ctypes.Structure):
    _fields_ = [("x", c_real), ("y", c_real), ("z", c_real)]

    def tuple(self):
        return (self.x, self.y, self.z)


class Error(ctypes.Structure):  # pd_error
    _fields_ = [("file", ctypes.c_char * 1024), ("path", ctypes.c_char * 256),
                ("line", ctypes.c_int), ("message", ctypes.c_char * 768)]


class Keyframe(ctypes.Structure):  # pd_keyframe
    _fields_ = [("t", c_real), ("translate", Vec3), ("rotate_axis", Vec3),
                ("rotate_degrees", c_real)]


class Estimate(ctypes.Structure):  # pd_estimate
    _fields_ = [("particles", ctypes.c_size_t), ("bonds", ctypes.c_size_t),
                ("bytes", ctypes.c_size_t), ("output_bytes", ctypes.c_size_t),
                ("steps", ctypes.c_size_t)]


class WorldInfo(ctypes.Structure):  # pd_world_info
    _fields_ = [("particles", ctypes.c_size_t), ("bonds", ctypes.c_size_t),
                ("pins", ctypes.c_int), ("time", ctypes.c_double), ("dt", ctypes.c_double),
                ("steps", ctypes.c_uint64), ("steps_per_frame", ctypes.c_int),
                ("step_in_frame", ctypes.c_int), ("unconverged_steps", ctypes.c_uint64),
                ("worst_unconverged_by", ctypes.c_double),
                ("worst_unconverged_time", ctypes.c_double), ("iterations", ctypes.c_int),
                ("residual", ctypes.c_double), ("energy", ctypes.c_double),
                ("relative_error", ctypes.c_double), ("colliders", ctypes.c_int)]


class PinInfo(ctypes.Structure):  # pd_pin_info
    _fields_ = [("body", ctypes.c_int), ("index_in_body", ctypes.c_int), ("force", Vec3),
                ("released", ctypes.c_int), ("translate", Vec3), ("rotate_axis", Vec3),
                ("rotate_degrees", ctypes.c_double)]


class PvdEntry(ctypes.Structure):  # pd_pvd_entry
    _fields_ = [("time", ctypes.c_double), ("file", ctypes.c_char_p)]


class FrameStats(ctypes.Structure):  # pd_frame_stats
    _fields_ = [("kinetic_energy", ctypes.c_double), ("lo", Vec3), ("hi", Vec3)]


class ParticleView(ctypes.Structure):  # pd_particle_view
    _fields_ = [("count", ctypes.c_size_t), ("positions", ctypes.POINTER(c_real)),
                ("velocities", ctypes.POINTER(c_real)), ("order", ctypes.POINTER(ctypes.c_uint32))]


class FieldView(ctypes.Structure):  # pd_field_view
    _fields_ = [("components", ctypes.c_int), ("is_integer", ctypes.c_int),
                ("data", ctypes.c_void_p), ("names", ctypes.c_char_p * 6),
                ("unit", ctypes.c_char_p)]


class ColliderInfo(ctypes.Structure):  # pd_collider_info
    _fields_ = [("translate", Vec3), ("rotate_axis", Vec3), ("rotate_degrees", ctypes.c_double),
                ("center", Vec3), ("velocity", Vec3), ("angular_velocity", Vec3)]


_LAYOUTS = {"pd_error": Error, "pd_keyframe": Keyframe, "pd_estimate": Estimate, "pd_world_info": WorldInfo,
            "pd_pin_info": PinInfo, "pd_frame_stats": FrameStats,
            "pd_particle_view": ParticleView, "pd_field_view": FieldView,
            "pd_collider_info": ColliderInfo, "pd_pvd_entry": PvdEntry}

# the statuses the module tells apart (include/peridot/status.h's PD_STATUS_LIST order)
PD_ERR_UNSUPPORTED, PD_ERR_UNSTABLE = 8, 10
STATUS = {PD_ERR_UNSUPPORTED: "unsupported by this method",
          PD_ERR_UNSTABLE: "simulation went unstable"}

_NAME = "libperidot.so"


def _candidates():
    """Where the library is looked for, first found wins: $PERIDOT_LIB; the path `make install`
    wrote beside the module; the build folder of the source tree this module sits in
    (python/peridot -> build/); the system's library path."""
    env = os.environ.get("PERIDOT_LIB")
    if env:
        yield env
        return  # asked for this one: no other is tried in its place
    try:
        from . import _installed  # written by `make install`
        yield _installed.LIBRARY
    except ImportError:
        pass
    root = Path(__file__).resolve().parents[2]
    yield str(root / "build" / _NAME)
    found = ctypes.util.find_library("peridot")
    if found:
        yield found


def _open():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("peridot: cannot find the shared library libperidot.so; build it (make "
                      "build, or cmake --build build) or set PERIDOT_LIB to its path. Tried: "
                      + "; ".join(tried))


def _declare(lib):
    P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    E = ctypes.POINTER(Error)
    sigs = {
        "pd_version": (S, []),
        "pd_type_size": (ctypes.c_size_t, [S]),
        "pd_status_string": (S, [I]),
        "pd_scene_load": (I, [S, ctypes.POINTER(S), I, P, E]),
        "pd_scene_parse": (I, [S, S, S, ctypes.POINTER(S), I, P, E]),
        "pd_scene_free": (None, [P]),
        "pd_scene_resolved_json": (S, [P]),
        "pd_scene_estimate": (I, [P, ctypes.POINTER(Estimate), E]),
        "pd_scene_check_memory": (I, [P, ctypes.POINTER(Estimate), E]),
        "pd_create_world": (I, [P, ctypes.POINTER(P), E]),
        "pd_destroy_world": (None, [P]),
        "pd_world_step": (I, [P, E]),
        "pd_world_get_info": (WorldInfo, [P]),
        "pd_world_pin": (PinInfo, [P, I]),
        "pd_world_frame_stats": (FrameStats, [P]),
        "pd_world_write_frame": (I, [P, S, ctypes.c_uint, ctypes.c_uint, E]),
        "pd_write_pvd": (I, [S, ctypes.POINTER(PvdEntry), ctypes.c_size_t, E]),
        "pd_world_particles": (ParticleView, [P]),
        "pd_world_field": (I, [P, S, ctypes.POINTER(FieldView), E]),
        "pd_attribute_bit": (ctypes.c_uint, [S]),
        "pd_attribute_names": (S, []),
        "pd_world_collider": (ColliderInfo, [P, I]),
        "pd_world_move_collider": (I, [P, I, Keyframe, E]),
        "pd_world_move_pin": (I, [P, I, Keyframe, E]),
        "pd_set_threads": (None, [I]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    for code, text in STATUS.items():
        if lib.pd_status_string(code).decode() != text:
            raise ImportError(f"peridot: status {code} is not \"{text}\" in the library: the "
                              "module and the library are of different versions")
    for name, layout in _LAYOUTS.items():
        size = lib.pd_type_size(name.encode())
        if size != ctypes.sizeof(layout):
            raise ImportError(f"peridot: {name} is {size} bytes in the library but "
                              f"{ctypes.sizeof(layout)} in python/peridot/_lib.py: the module "
                              "and the library are of different versions")
    return lib


lib = _declare(_open())
SCENE_SIZE = lib.pd_type_size(b"pd_scene")
