/* peridot info: what a scene will need, without simulating it. */
#include <stdio.h>

#include "commands.h"
#include "common.h"
#include "core/alloc.h"
#include "world/world.h"

static const char k_usage[] =
    "usage: peridot info SCENE [--set KEY=VALUE]... [--estimate]\n"
    "\n"
    "Prints the method, particles, bonds, memory and time steps SCENE needs. It samples the\n"
    "bodies and builds the method's families to count them exactly; with --estimate it only\n"
    "estimates from the bodies' bounding boxes (instant, for scenes too large to build).\n"
    "Exit status: 0 ok, 2 bad scene or usage.\n";

static void print_estimate(const pd_scene* scene, const pd_estimate* est) {
    printf("scene        %s\n", scene->file);
    printf("method       %s (%s)\n", scene->method, scene->solver->paper);
    printf("time         dt %.6g s, %d frames at %.6g fps, %zu steps\n", (double)scene->world.dt,
           scene->world.frames, (double)scene->world.fps, est->steps);
    printf("estimate     <= %zu particles, ~%zu bonds, ~%.1f MiB\n", est->particles, est->bonds,
           (double)est->bytes / 1048576.0);
}

int pd_cli_info(int argc, char** argv) {
    int estimate_only = 0;
    int kept = 0;
    for (int i = 0; i < argc; ++i) { /* --estimate is info's own flag */
        if (i > 0 && argv[i][0] == '-' && argv[i][1] == '-' && argv[i][2] == 'e')
            estimate_only = 1;
        else
            argv[kept++] = argv[i];
    }
    pd_cli_scene_args a;
    int code = pd_cli_parse_scene_args(kept, argv, &a, k_usage);
    if (code)
        return code < 0 ? 0 : code;
    pd_scene scene;
    if ((code = pd_cli_load_scene(&a, &scene)) != 0)
        return code;
    pd_estimate est;
    code = pd_cli_check_memory(&scene, &est);
    if (code == 0)
        print_estimate(&scene, &est);
    if (code == 0 && !estimate_only) {
        pd_world* world = NULL;
        pd_error err = {0};
        size_t before = pd_bytes_in_use();
        pd_status st = pd_create_world(&scene, &world, &err);
        if (st == PD_OK) {
            size_t bytes = pd_bytes_in_use() - before;
            printf("built        %zu particles, %zu bonds, %d bodies, %d pins, %d colliders\n",
                   world->particles.count, world->bond_count, scene.body_count, world->pin_count,
                   scene.collider_count);
            printf("memory       %.1f MiB allocated\n", (double)bytes / 1048576.0);
            printf("steps        %d per frame of %.6g s (dt %.6g s)\n", world->steps_per_frame,
                   1.0 / (double)scene.world.fps, (double)world->def.dt);
        } else {
            snprintf(err.file, sizeof err.file, "%s", scene.file);
            pd_cli_print_error("info", &err, st);
            code = 2;
        }
        pd_destroy_world(world);
    }
    pd_scene_free(&scene);
    return code;
}
