#!/usr/bin/env bash
# Installs the Debian packages Peridot needs, only those that are missing.
# Used by `make demo` and `make test`; safe to run again. Needs root (or sudo) on Debian 12.
# `setup.sh peers` (used by `make bench`) adds LAMMPS and Open MPI for peridot_bench's
# peers_lammps case, which compares our local step with LAMMPS's peri/lps and peri/pmb, and
# gnuplot for its --convergence plot. `setup.sh fuzz` adds clang, libFuzzer and libomp;
# `setup.sh test` what the tests read frames with (below).
set -eu
# libopenblas0-serial: the BLAS under CHOLMOD (global_solve = direct); Debian's reference BLAS
# made each solve 2.5x slower (measured on the 25K bunny). Serial: no thread pool competing
# with OpenMP's, and the same bits whatever the core count.
# libopenvdb-dev: `peridot surface` (particles to meshes) is a user's command, and a build
# without OpenVDB needs a rebuild to gain it, so the base list has it (about 65 MB installed
# with TBB, Imath, Blosc, log4cplus and Boost iostreams; it brings g++ only through
# build-essential, which is here anyway).
# python3-numpy, python3-pytest: the Python module (python/peridot, over libperidot.so through
# ctypes) and its tests (tests/python), under Debian's python3.
need=(build-essential cmake pkg-config libcjson-dev libsuitesparse-dev libassimp-dev libpng-dev
      libopenblas0-serial python3 python3-numpy python3-pytest libopenvdb-dev)
[ "${1:-}" = "peers" ] && need+=(lammps openmpi-bin gnuplot-nox)
# `setup.sh fuzz` (used by `make fuzz`): clang with libFuzzer and its OpenMP runtime
[ "${1:-}" = "fuzz" ] && need+=(clang libclang-rt-dev libomp-dev)
# `setup.sh test` (used by `make test`): what reads the VTU frames in tests/cli/vtu_frames.c:
# ParaView's pvpython (paraview 437 MB + python3-paraview 106 MB, with Qt, GDAL, HDF5 and Open MPI
# about 1.1 GB and 210 packages on a bare Debian 12) and meshio (python3-meshio, 0.6 MB; with
# numpy, lxml, rich 32 MB), and ffmpeg (about 90 MB with its libraries), whose ffprobe reads
# back a rendered movie's frame rate (tests/cli/render_truth.c; users need ffmpeg only for MP4).
# Only the tests need them, so `make demo` does not install them.
[ "${1:-}" = "test" ] && need+=(paraview python3-paraview python3-meshio ffmpeg)
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
