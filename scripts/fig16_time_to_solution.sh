#!/bin/sh
# Time to solution of Fang 2019 Fig. 16's sand column, the ADMM against the explicit step
# (issue 32: the ADMM at least 3 x faster; docs/benchmarks.md, "mpm ... time to solution").
#
# usage: scripts/fig16_time_to_solution.sh [SPACING [FRAMES [OUT]]]
#   SPACING  the grains' spacing (m; 0.005 is the scene's, 0.01 a quarter of a minute explicit)
#   FRAMES   frames of 0.04 s (15: 0.6 s, the column is at rest from about 0.4 s)
#   OUT      the folder for the two runs (default /tmp/fig16_tts)
# Runs scenes/fang2019_fig16_sand_column.json on one thread, explicit and by the ADMM with the
# paper's 15 iterations a step (dt "auto": 10 x the explicit bound), and prints each run's CPU
# and wall time (GNU time) and its runout dR/R0 frame by frame (scripts/axisym_runout.py).
# CPU time is the measure on a shared machine. ADMM_SET adds overrides to the ADMM's run, e.g.
# ADMM_SET="--set solver.mpm.auto_step_factor=30" (its dt; docs/benchmarks.md).
set -e
spacing=${1:-0.01}
frames=${2:-15}
out=${3:-/tmp/fig16_tts}
here=$(cd "$(dirname "$0")/.." && pwd)
peridot=${PERIDOT:-$here/build/peridot}
mkdir -p "$out"
for mode in explicit admm; do
    extra=""
    [ "$mode" = admm ] && extra="--set solver.mpm.integrator=admm --set solver.mpm.iterations=15 ${ADMM_SET:-}"
    # shellcheck disable=SC2086 # $extra is several words on purpose
    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE /usr/bin/time -f "$mode: %e s wall, %U s CPU" \
        "$peridot" run "$here/scenes/fang2019_fig16_sand_column.json" -o "$out/$mode" --threads 1 \
        --quiet --overwrite --frames "$frames" --set "bodies[0].spacing=$spacing" $extra
    awk -F, -v m="$mode" 'NR > 1 { s += $17; it += $10 * $17 }
        END { printf "%s: %d steps, %.1f iterations a step (1 for the explicit step)\n", m, s, it / s }' \
        "$out/$mode/stats.csv"
    python3 "$here/scripts/axisym_runout.py" "$out/$mode" "$spacing" 0.05
done
