#!/usr/bin/env bash
# `make fuzz`: runs each libFuzzer target of BUILD for SECONDS (ASan + UBSan), seeded with the
# shipped scenes, meshes (the PLY cube in ascii and both binary orders) and a frame, and prints
# what each found. Crashing inputs land in BUILD/fuzz/crashes/<target>/; add each to
# tests/bad_input/fuzz/<target>/ with its fix.
# Usage: scripts/fuzz.sh BUILD SECONDS [TARGET...]   (targets: scene mesh frame)
set -eu
build=$1
seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scene mesh frame)
root=$(cd "$(dirname "$0")/.." && pwd)
work="$build/fuzz"
mkdir -p "$work"

# Seeds: the scene target's inputs are scene files; the mesh target's are a byte choosing the
# extension (0 ply, 1 obj, 2 stl) and the file; the frame target's are PLY frames.
seed() {
    local target=$1 dir="$work/seeds/$1"
    rm -rf "$dir" && mkdir -p "$dir"
    case $target in
        scene) cp "$root"/scenes/*.json "$root"/bench/scenes/*.json "$dir"/ ;;
        mesh)
            for f in "$root"/fuzz/seeds/*.obj "$root"/scenes/meshes/block.obj; do
                { printf '\001'; cat "$f"; } > "$dir/$(basename "$f").in"
            done
            for f in "$root"/fuzz/seeds/cube*.ply; do # ascii, binary little- and big-endian
                { printf '\000'; cat "$f"; } > "$dir/$(basename "$f").in"
            done
            { printf '\002'; cat "$root/fuzz/seeds/cube.stl"; } > "$dir/cube.stl.in" ;;
        frame) cp "$root"/fuzz/seeds/frame*.ply "$root"/fuzz/seeds/cube*.ply "$dir"/ ;;
    esac
}

for t in "${targets[@]}"; do
    seed "$t"
    mkdir -p "$work/corpus/$t" "$work/crashes/$t"
    max_len=65536
    [ "$t" = scene ] || max_len=1048576
    echo "fuzz_$t: $seconds s"
    # -rss_limit_mb: a scene may ask the estimate for a large mesh; -timeout: one input's
    # parse longer than 30 s is a finding too. A single allocation larger than the machine
    # fails as in a release build (NULL, Assimp's std::bad_alloc, a refused file) rather than
    # stopping the run: allocator_may_return_null and a malloc limit above the RSS limit.
    ASAN_OPTIONS="allocator_may_return_null=1" LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp" \
        "$build/fuzz_$t" -max_total_time="$seconds" -max_len=$max_len -rss_limit_mb=4096 \
        -malloc_limit_mb=1048576 \
        -timeout=30 -print_final_stats=1 -artifact_prefix="$work/crashes/$t/" \
        "$work/corpus/$t" "$work/seeds/$t" 2>"$work/$t.log" || true
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE" "$work/$t.log" || true
    found=$(ls "$work/crashes/$t" | wc -l)
    echo "fuzz_$t: $found crashing input(s) in $work/crashes/$t (log: $work/$t.log)"
done
