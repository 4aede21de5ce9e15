"""The Python module (python/peridot) against the command line and against physics it must
keep: frames equal `peridot run`'s bit for bit, a collider driven into a body pushes it, a pin
driven through a body pulls it with a force whose impulse is the body's momentum, and errors
carry their JSON path. Run by ctest (python.module) with PERIDOT_LIB and PERIDOT_CLI set to the
build's library and program; tiny scenes, a few seconds in all."""
import json
import math
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import peridot

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("PERIDOT_CLI", str(ROOT / "build" / "peridot"))


@pytest.fixture(autouse=True)
def wall_time(request):
    t0 = time.perf_counter()
    yield
    print(f"\n{request.node.name}: wall time {time.perf_counter() - t0:.2f} s")


def ball_scene(frames=4):
    """A ball of ~100 particles held at its top by a pin that drops it by 2 cm at t = 0.02 s
    onto a plane it reaches within the run; every attribute projective_pd writes, PLY and
    VTK."""
    return {
        "version": 1, "method": "projective_pd",
        "time": {"dt": 0.01, "fps": 50, "frames": frames},
        "materials": {"m": {"density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3}},
        "bodies": [{"name": "ball", "material": "m", "spacing": 0.02,
                    "shape": {"type": "sphere", "center": [0, 0.5, 0], "radius": 0.06},
                    "pins": [{"region": {"type": "sphere", "center": [0, 0.56, 0],
                                         "radius": 0.025},
                              "keyframes": [{"t": 0}, {"t": 0.02, "translate": [0, -0.02, 0]}]}]}],
        "colliders": [{"type": "plane", "point": [0, 0.43, 0], "normal": [0, 1, 0],
                       "friction": 0.3}],
        "output": {"dir": "out", "format": ["ply", "vtk", "vtu"],
                   "attributes": ["velocity", "material", "body", "plastic_strain", "density",
                                  "id"]},
    }


def read_ply(path):
    """A binary little-endian PLY of float / int vertex properties as a structured array."""
    data = Path(path).read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    count, names = 0, []
    for line in data[:end].decode().splitlines():
        words = line.split()
        if words[:2] == ["element", "vertex"]:
            count = int(words[2])
        elif words[:1] == ["property"]:
            names.append((words[2], {"float": "<f4", "int": "<i4"}[words[1]]))
    return np.frombuffer(data, dtype=np.dtype(names), count=count, offset=end)


def test_frames_equal_the_command_lines_bit_for_bit(tmp_path):
    frames = 4
    scene_path = tmp_path / "ball.json"
    scene_path.write_text(json.dumps(ball_scene(frames)))
    cli_dir, py_dir = tmp_path / "cli", tmp_path / "py"
    subprocess.run([CLI, "run", str(scene_path), "-o", str(cli_dir), "--quiet"], check=True)

    sim = peridot.load(scene_path)
    rows = [sim.stats]
    sim.write_frame(py_dir)
    while sim.frame < frames:
        sim.step_frame()
        sim.write_frame(py_dir)
        rows.append(sim.stats)

    compared = 0
    for f in range(frames + 1):
        for ext in ("ply", "vtk", "vtu"):
            name = f"frame_{f:05d}.{ext}"
            assert (py_dir / name).read_bytes() == (cli_dir / name).read_bytes(), name
            compared += 1
    # ParaView's time series: the same frames at the same times
    assert (py_dir / "frames.pvd").read_bytes() == (cli_dir / "frames.pvd").read_bytes()
    compared += 1
    print(f"{compared} frame files equal byte for byte")

    # stats.csv: every column the way the program prints it, but the wall time
    lines = (cli_dir / "stats.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header == list(rows[0].keys())
    for line, row in zip(lines[1:], rows, strict=True):
        for name, text in zip(header, line.split(",")):
            if name == "wall_ms_per_step":
                continue
            value = row[name]
            if text == "":
                assert math.isnan(value), name
            else:
                assert float(text) == pytest.approx(value, rel=1e-6, abs=0), (name, text, value)
    print(f"stats.csv: {len(rows)} rows of {len(header)} columns equal")

    # the arrays are the frames' rows: positions (float32 in the PLY), velocity, id order
    ply = read_ply(py_dir / f"frame_{frames:05d}.ply")
    pos, vel = sim.positions, sim.velocities
    assert pos.shape == (len(sim), 3) and len(ply) == len(sim)
    assert np.array_equal(pos.astype(np.float32), np.stack([ply["x"], ply["y"], ply["z"]], 1))
    assert np.array_equal(vel.astype(np.float32), np.stack([ply["vx"], ply["vy"], ply["vz"]], 1))
    assert np.array_equal(sim.field("velocity"), vel)
    assert np.array_equal(sim.field("id"), np.arange(len(sim)))
    assert np.array_equal(sim.field("body"), np.zeros(len(sim)))
    assert sim.field_columns("velocity") == (["vx", "vy", "vz"], "m/s")
    for name in ("density", "plastic_strain"):  # the method's own, as the frames hold them
        (column,), _ = sim.field_columns(name)
        assert np.array_equal(sim.field(name).astype(np.float32), ply[column]), name
    print(f"{len(sim)} particles; fields {sim.fields}")

    # positions are a copy here (the world keeps a Z-curve order): changing it changes nothing
    pos[:] = 0
    assert np.array_equal(sim.positions.astype(np.float32),
                          np.stack([ply["x"], ply["y"], ply["z"]], 1))


def test_arrays_are_views_when_the_world_keeps_the_id_order():
    """A row of particles along x: its Z-curve order is its id order, so positions is the
    world's own memory (read-only), current until the next step."""
    sim = peridot.load({
        "version": 1, "method": "projective_pd", "time": {"dt": 0.01, "fps": 50, "frames": 1},
        "materials": {"m": {"density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3}},
        "bodies": [{"name": "rod", "material": "m", "spacing": 0.02,
                    "shape": {"type": "box", "min": [0, 0, 0], "max": [0.2, 0.02, 0.02]}}]})
    a, b = sim.positions, sim.positions
    assert np.shares_memory(a, b) and not a.flags.writeable
    assert np.array_equal(a[:, 0], 0.01 + 0.02 * np.arange(len(sim)))
    y0 = a[:, 1].copy()
    sim.step()
    assert np.array_equal(a, sim.positions) and a[:, 1].max() < y0.max()  # it fell: a view
    print(f"{len(sim)} particles in a row: positions shares the world's memory")


def test_a_dict_scene_runs_as_its_file_on_any_thread_count(tmp_path):
    scene_path = tmp_path / "ball.json"
    scene_path.write_text(json.dumps(ball_scene(2)))
    a = peridot.load(scene_path, overrides={"time.frames": 1}, threads=1)
    a.step_frame()  # threads are the process's: each load sets them
    b = peridot.load(ball_scene(2), overrides=["time.frames=1"], threads=2)
    b.step_frame()
    assert a.scene["time"]["frames"] == b.scene["time"]["frames"] == 1
    assert np.array_equal(a.positions, b.positions)
    assert a.time == b.time == pytest.approx(0.02, abs=1e-15)


def pushed_box_scene():
    """A free box of 5^3 particles without gravity, and a box collider 0.03 m to its +x."""
    return {
        "version": 1, "method": "projective_pd", "gravity": [0, 0, 0],
        "time": {"dt": 0.005, "fps": 50, "frames": 10},
        "materials": {"m": {"density": 1000, "youngs_modulus": 1e5, "poisson_ratio": 0.3}},
        "bodies": [{"name": "box", "material": "m", "spacing": 0.02,
                    "shape": {"type": "box", "min": [-0.05, -0.05, -0.05],
                              "max": [0.05, 0.05, 0.05]}}],
        "colliders": [{"type": "box", "min": [0.08, -0.2, -0.2], "max": [0.3, 0.2, 0.2],
                       "friction": 0}],
    }


def test_a_collider_moved_into_a_body_pushes_it():
    """The wall is moved from Python at -v along x, step by step. Until it reaches the body
    nothing moves (no gravity); after, no particle is beyond its face, and the body is pushed
    ahead of it: a wall of infinite mass leaves it between v (a plastic impact) and 2 v (an
    elastic one), and it has gone at least as far as the wall went past the first contact
    (less its compression)."""
    sim = peridot.load(pushed_box_scene())
    v, dt = 0.5, sim.dt
    start = sim.positions.copy()
    face0 = 0.08
    leading = start[:, 0].max()
    contact_time = (face0 - leading) / v
    mean_vx, wall_faces = [], []
    while sim.time < contact_time + 0.1:
        t1 = sim.time + dt
        sim.move_collider(0, translate=(-v * t1, 0, 0))
        sim.step()
        wall = sim.colliders[0]
        assert wall["translate"] == pytest.approx((-v * t1, 0, 0), abs=1e-12)
        assert wall["velocity"] == pytest.approx((-v, 0, 0), rel=1e-9)
        face = face0 - v * t1
        x = sim.positions[:, 0]
        if t1 < contact_time - dt:
            assert np.abs(sim.positions - start).max() < 1e-12, f"moved before contact, t={t1}"
        assert x.max() <= face + 1e-9, f"a particle inside the wall at t = {t1}"
        mean_vx.append(sim.velocities[:, 0].mean())
        wall_faces.append(face)
    late = np.array(mean_vx[len(mean_vx) // 2:])
    shift = sim.positions[:, 0].mean() - start[:, 0].mean()
    travel = v * (sim.time - contact_time)
    print(f"contact at t = {contact_time:.4f} s; the wall went {travel:.4f} m past it, the "
          f"body's mean x {-shift:.4f} m; mean vx over the second half {late.mean():.4f} m/s "
          f"(wall -{v}, band {v} to {2 * v}), from {late.min():.4f} to {late.max():.4f}")
    assert 0.98 * v <= -late.mean() <= 2 * v
    assert 0.8 * travel <= -shift <= 2 * travel


def pulled_bar_scene():
    """A bar of 10 x 3 x 3 particles without gravity, pinned at its -x end."""
    return {
        "version": 1, "method": "projective_pd", "gravity": [0, 0, 0],
        "time": {"dt": 0.005, "fps": 50, "frames": 10},
        "solver": {"projective_pd": {"iterations": 60, "tolerance": 1e-7}},
        "materials": {"m": {"density": 1000, "youngs_modulus": 2e4, "poisson_ratio": 0.3}},
        "bodies": [{"name": "bar", "material": "m", "spacing": 0.02,
                    "shape": {"type": "box", "min": [0, 0, 0], "max": [0.2, 0.06, 0.06]},
                    "pins": [{"region": {"type": "box", "min": [-0.01, -0.01, -0.01],
                                         "max": [0.025, 0.07, 0.07]}}]}],
    }


def test_a_pin_moved_through_a_body_pulls_it_with_its_force():
    """The pin is moved from Python at v along x. The body follows, and the impulse of the
    pin's reported force, summed over the steps, is the body's momentum (no other external
    force acts): the force is the reaction the body gave the pin."""
    sim = peridot.load(pulled_bar_scene())
    v, dt = 0.2, sim.dt
    # every particle has one mass (one material, a grid): m from the kinetic energy
    impulse, steps = np.zeros(3), 0
    while sim.time < 0.2 - 1e-12:
        sim.move_pin(0, translate=(v * (sim.time + dt), 0, 0))
        sim.step()
        pin = sim.pins[0]
        impulse += pin["force"] * sim.dt
        steps += 1
        assert pin["translate"] == pytest.approx((v * sim.time, 0, 0), abs=1e-12)
    vel = sim.velocities
    mass = 2 * sim.stats["kinetic_energy"] / np.sum(vel * vel)
    momentum = mass * vel.sum(axis=0)
    shift = sim.positions[:, 0].mean() - peridot.load(pulled_bar_scene()).positions[:, 0].mean()
    print(f"{steps} steps: pin impulse {impulse} N s, body momentum {momentum} kg m/s "
          f"(particle mass {mass:.4g} kg); pin moved {v * sim.time:.4f} m, body's mean x "
          f"{shift:.4f} m")
    assert impulse[0] > 0
    assert momentum[0] == pytest.approx(impulse[0], rel=1e-6)
    assert np.abs(impulse[1:]).max() < 1e-3 * impulse[0]
    assert shift == pytest.approx(v * sim.time, rel=0.1)


def test_a_bad_scene_names_its_json_path(tmp_path):
    scene = ball_scene()
    scene["bodies"][0]["spacing"] = -1
    with pytest.raises(peridot.PeridotError) as e:
        peridot.load(scene)
    assert e.value.path == "bodies[0].spacing"
    assert e.value.status == "bad scene" and e.value.message
    assert e.value.file == "<dict>" and e.value.line == 0
    print(f"bad spacing: {e.value}")

    with pytest.raises(peridot.PeridotError) as e:
        peridot.load(ball_scene(), overrides={"time.fps": "fast"})
    assert e.value.path == "time.fps"
    print(f"bad override: {e.value}")

    huge = ball_scene()  # refused from its estimate, before anything is sampled
    huge["bodies"][0]["shape"]["radius"] = 50
    with pytest.raises(peridot.PeridotError) as e:
        peridot.load(huge, overrides={"bodies[0].spacing": 0.001, "gravity": [0, 0, 0]})
    assert e.value.status == "scene needs more memory than allowed" and e.value.path == "bodies"
    print(f"too large: {e.value}")

    with pytest.raises(peridot.PeridotError) as e:
        peridot.load(tmp_path / "missing.json")
    assert e.value.status == "input/output error" and "missing.json" in e.value.file

    (tmp_path / "broken.json").write_text('{"version": 1,\n "method": }')
    with pytest.raises(peridot.PeridotError) as e:
        peridot.load(tmp_path / "broken.json")
    assert e.value.line == 2
    print(f"broken JSON: {e.value}")


def test_misuse_between_steps_raises():
    sim = peridot.load(ball_scene())
    with pytest.raises(peridot.PeridotError) as e:
        sim.move_collider(3, translate=(0, 0, 0))
    assert e.value.path == "colliders[3]"
    with pytest.raises(peridot.PeridotError) as e:
        sim.move_collider(0, translate=(0, 0.1, 0), arrive=sim.time)
    assert e.value.path == "colliders[0]" and "after the time now" in e.value.message
    with pytest.raises(peridot.PeridotError) as e:
        sim.move_collider(0, rotate=((0, 0, 0), 30))
    assert "axis" in e.value.message
    with pytest.raises(peridot.PeridotError) as e:
        sim.field("temperature")
    assert "velocity" in e.value.message  # it lists the attributes there are
    missing = [n for n in ("stress", "density", "plastic_strain") if n not in sim.fields]
    assert missing
    with pytest.raises(peridot.PeridotError) as e:
        sim.field(missing[0])
    assert e.value.status == "unsupported by this method" and "projective_pd" in e.value.message
    sim.close()
    with pytest.raises(ValueError):
        sim.step()

    # a pin let go (sbpd lets pins go; projective_pd refuses `release`) is not moved
    released = ball_scene()
    released["bodies"][0]["pins"][0] = {"region": released["bodies"][0]["pins"][0]["region"],
                                        "release": 0.005}
    released["output"]["attributes"] = ["velocity"]
    sim = peridot.load(released, overrides={"method": "sbpd", "time.dt": "auto"})
    while sim.time < 0.01:  # let go by the first step starting at or after 0.005 s
        sim.step()
    assert sim.pins[0]["released"]
    with pytest.raises(peridot.PeridotError) as e:
        sim.move_pin(0, translate=(0, 0.1, 0))
    assert e.value.path == "pins[0]" and "released" in e.value.message
    print(f"released pin: {e.value}")


def test_an_unstable_step_raises_unstable_error():
    scene = ball_scene()
    scene["bodies"][0]["pins"][0]["keyframes"] = [{"t": 0},
                                                  {"t": 0.01, "translate": [1e150, 0, 0]}]
    sim = peridot.load(scene)
    with pytest.raises(peridot.UnstableError) as e:
        sim.step()
    assert "t = 0.01" in e.value.message
    print(f"unstable: {e.value}")


def test_a_stream_from_an_emitter_grows_the_arrays_and_the_frames(tmp_path):
    """An emitter (scene `emitters`) adds a layer of 13 particles every 10 ms: the arrays and
    the frames (PLY, VTU and the .pvd) hold the particles there are when read, the newest
    layer at the nozzle's velocity, and a frame written earlier is left as it was; the frames
    equal the command line's."""
    scene = {
        "version": 1, "method": "mpm", "time": {"dt": "auto", "fps": 50, "frames": 3},
        "materials": {"m": {"density": 1000, "youngs_modulus": 2e4, "poisson_ratio": 0.3}},
        "bodies": [{"name": "goo", "material": "m", "spacing": 0.01,
                    "shape": {"type": "sphere", "center": [0.1, 0.03, 0], "radius": 0.02}}],
        "emitters": [{"body": "goo", "center": [0, 0.2, 0], "radius": 0.02, "speed": 1}],
        "output": {"format": ["ply", "vtu"], "attributes": ["velocity", "id"]},
    }
    scene_path = tmp_path / "stream.json"
    scene_path.write_text(json.dumps(scene))
    cli_dir, py_dir = tmp_path / "cli", tmp_path / "py"
    subprocess.run([CLI, "run", str(scene_path), "-o", str(cli_dir), "--quiet"], check=True)
    sim = peridot.load(scene_path)
    counts = [len(sim)]
    sim.write_frame(py_dir)
    first = (py_dir / "frame_00000.ply").read_bytes()
    while sim.frame < 3:
        sim.step_frame()
        sim.write_frame(py_dir)
        counts.append(len(sim))
        assert sim.positions.shape == (len(sim), 3)
        assert np.array_equal(sim.field("id"), np.arange(len(sim)))
        assert np.array_equal(sim.velocities[-13:], np.tile([0.0, -1.0, 0.0], (13, 1)))
    # layers due at 0, 0.02, 0.04, 0.06 s: 1, 3, 5, 7 (k at k * 10 ms), 13 particles each
    assert [c - counts[0] for c in counts] == [0, 26, 52, 78]
    assert (py_dir / "frame_00000.ply").read_bytes() == first
    for f in range(4):
        ply = read_ply(py_dir / f"frame_{f:05d}.ply")
        assert len(ply) == counts[f]
        for ext in ("ply", "vtu"):
            name = f"frame_{f:05d}.{ext}"
            assert (py_dir / name).read_bytes() == (cli_dir / name).read_bytes(), name
    assert (py_dir / "frames.pvd").read_bytes() == (cli_dir / "frames.pvd").read_bytes()
    print(f"particles per frame {counts}")
