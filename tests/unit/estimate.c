/* What a scene will cost, before it is built (issue 30, item 3): particles from the bodies'
 * volumes within a factor 1.5 of what sampling makes (the bounding-box lattice overcounted the
 * flower 36 times at 3 mm and refused scenes that fit), the memory estimate (bonds short of a
 * full family near the surface) a bound on what the build and two steps allocate, and the
 * memory limit read from ulimit -v and the cgroup as well as the RAM. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/memory_limit.h"
#include "peridot/peridot.h"
#include "test.h"
#include "world/world.h"

/* Loads scenes/<name>.json at `spacing` (every body), estimates it, builds it, and checks the
 * estimate against what was built. */
static void check_estimate(const char* name, int bodies, const char* spacing) {
    char path[512], sets[2][64];
    snprintf(path, sizeof path, "%s/scenes/%s.json", PD_SOURCE_DIR, name);
    const char* overrides[2];
    for (int b = 0; b < bodies; ++b) {
        snprintf(sets[b], sizeof sets[b], "bodies[%d].spacing=%s", b, spacing);
        overrides[b] = sets[b];
    }
    pd_scene scene;
    pd_error err = {0};
    PD_REQUIRE(pd_scene_load(path, overrides, bodies, &scene, &err) == PD_OK);
    pd_estimate est;
    PD_REQUIRE(pd_scene_estimate(&scene, &est, &err) == PD_OK);
    size_t before = pd_bytes_in_use();
    pd_world* world = NULL;
    pd_status st = pd_create_world(&scene, &world, &err);
    if (st != PD_OK)
        printf("  %s: %s\n", err.path, err.message);
    PD_REQUIRE(st == PD_OK);
    for (int k = 0; k < 2; ++k) /* what the first steps add: contact buffers, scratch */
        PD_REQUIRE(pd_world_step(world, &err) == PD_OK);
    double built = (double)world->particles.count;
    double bonds = (double)pd_world_get_info(world).bonds;
    double allocated = (double)(pd_bytes_in_use() - before);
    printf("  %s at %s m: estimate %zu particles, built %.0f (ratio %.3f); %zu bonds, built %.0f "
           "(ratio %.3f); memory estimate %.1f MiB, allocated after two steps %.1f MiB (ratio "
           "%.2f)\n",
           name, spacing, est.particles, built, (double)est.particles / built, est.bonds, bonds,
           (double)est.bonds / bonds, (double)est.bytes / 1048576.0, allocated / 1048576.0,
           (double)est.bytes / allocated);
    PD_CHECK((double)est.particles < 1.5 * built && (double)est.particles > built / 1.5);
    /* a shell's families are discs (a solid's count was 6.9 times the Fig. 9 cloth's) */
    PD_CHECK((double)est.bonds < 1.5 * bonds && (double)est.bonds > bonds / 1.5);
    /* worded "up to": a bound, and within a factor 1.5 (measured 1.12-1.24; CHOLMOD's factor,
     * in the estimate, is not counted in allocated; the bounding box's estimate was 36 times) */
    PD_CHECK((double)est.bytes >= allocated && (double)est.bytes < 1.5 * allocated);
    pd_destroy_world(world);
    pd_scene_free(&scene);
}

PD_TEST(particle_and_bond_estimates_within_a_factor_1_5_of_the_built) {
    check_estimate("xu2018_fig1_flower", 1, "0.01");
    check_estimate("xu2018_fig1_flower", 1, "0.007");
    check_estimate("two_bunnies_collide", 2, "0.007");
    check_estimate("two_bunnies_collide", 2, "0.008");
    check_estimate("xu2018_fig9_cloth_horizon_4", 1, "0.01");
    check_estimate("xu2018_fig9_cloth_horizon_2", 1, "0.01");
}

static void write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void make_path(char* dir, const char* sub) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    mkdir(path, 0755);
}

/* A fake /proc/self/cgroup and /sys/fs/cgroup: the least limit along the cgroup's path wins,
 * "max" is none, v1's "no limit" number is none, and a limit above the RAM does not count. */
PD_TEST(memory_limit_reads_the_cgroup) {
    char dir[] = "/tmp/pd_cgroup_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char proc[300], root[300], file[400];
    snprintf(proc, sizeof proc, "%s/cgroup", dir);
    snprintf(root, sizeof root, "%s/fs", dir);
    make_path(dir, "fs");
    make_path(dir, "fs/a");
    make_path(dir, "fs/a/b");
    make_path(dir, "fs/memory");
    make_path(dir, "fs/memory/c");

    pd_memory_limit none = pd_memory_limit_read("/nonexistent", root);
    printf("  without a cgroup: %.3g GiB (%s)\n", none.bytes / 1073741824.0, none.source);
    PD_CHECK(strcmp(none.source, "the cgroup's memory limit") != 0);

    write_text(proc, "0::/a/b\n"); /* cgroup v2 */
    snprintf(file, sizeof file, "%s/a/b/memory.max", root);
    write_text(file, "max\n");
    snprintf(file, sizeof file, "%s/a/memory.max", root);
    write_text(file, "1073741824\n");
    pd_memory_limit v2 = pd_memory_limit_read(proc, root);
    printf("  v2: %.3g GiB (%s)\n", v2.bytes / 1073741824.0, v2.source);
    PD_CHECK_NEAR(v2.bytes, 1073741824.0, 0);
    PD_CHECK(strcmp(v2.source, "the cgroup's memory limit") == 0);

    write_text(file, "max\n"); /* no limit on the path: the RAM or ulimit */
    PD_CHECK(strcmp(pd_memory_limit_read(proc, root).source, "the cgroup's memory limit") != 0);

    write_text(proc, "12:cpu:/x\n11:memory:/c\n"); /* cgroup v1 */
    snprintf(file, sizeof file, "%s/memory/c/memory.limit_in_bytes", root);
    write_text(file, "536870912\n");
    PD_CHECK_NEAR(pd_memory_limit_read(proc, root).bytes, 536870912.0, 0);
    write_text(file, "9223372036854771712\n");
    PD_CHECK(strcmp(pd_memory_limit_read(proc, root).source, "the cgroup's memory limit") != 0);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    PD_CHECK(system(cmd) == 0);
}
