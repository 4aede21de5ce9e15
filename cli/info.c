/* peridot info: what a scene will need, without simulating it. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"

static const char k_usage[] =
    "usage: peridot info SCENE [--set KEY=VALUE]... [--estimate]\n"
    "\n"
    "Prints the method, particles, bonds, memory and time steps SCENE needs. It samples the\n"
    "bodies and builds the method's families to count them exactly; with --estimate it only\n"
    "estimates from the bodies' volumes (instant, for scenes too large to build). It refuses a\n"
    "scene estimated above the memory this process may use (80 % of the least of physical\n"
    "memory, ulimit -v and its cgroup's limit) or whose output exceeds the free space of its\n"
    "output folder's file system.\n"
    "It refuses what 'peridot run' refuses: the scene is validated by the same code, and the\n"
    "world is built as a run builds it (bodies inside colliders, empty pin regions); with\n"
    "--estimate only the checks that need the sampled particles are left out.\n"
    "Exit status: 0 ok, 2 bad scene or usage.\n";

/* Builds the world to count exactly what it holds. */
static int print_built(const pd_scene* scene) {
    pd_world* world = NULL;
    pd_error err = {0};
    size_t before = pd_bytes_in_use();
    pd_status st = pd_create_world(scene, &world, &err);
    if (st != PD_OK) {
        snprintf(err.file, sizeof err.file, "%s", scene->file);
        pd_cli_print_error("info", &err, st);
        return 2;
    }
    size_t bytes = pd_bytes_in_use() - before;
    pd_world_info in = pd_world_get_info(world);
    pd_method_info method;
    pd_method_find(scene->method, &method);
    printf("built        %zu particles, %zu bonds, %d bodies, %d pins, %d colliders\n",
           in.particles, in.bonds, scene->body_count, in.pins, scene->collider_count);
    printf("memory       %.1f MiB allocated\n", (double)bytes / 1048576.0);
    printf("steps        %d per frame of %.6g s (dt %.6g s%s)\n", in.steps_per_frame,
           1.0 / (double)scene->world.fps, in.dt,
           !scene->world.dt_auto  ? ""
           : method.explicit_step ? ", \"auto\": 0.9 of the stability bound, "
                                    "recomputed every frame"
                                  : ", \"auto\": the method's default");
    pd_destroy_world(world);
    return 0;
}

static void print_estimate(const pd_scene* scene, const pd_estimate* est) {
    pd_method_info method;
    pd_method_find(scene->method, &method);
    printf("scene        %s\n", scene->file);
    printf("method       %s (%s)\n", scene->method, method.paper);
    if (scene->world.dt_auto && method.explicit_step)
        printf("time         dt \"auto\" (the stability bound's, see steps), %d frames at %.6g "
               "fps\n",
               scene->world.frames, (double)scene->world.fps);
    else
        printf("time         dt %.6g s%s, %d frames at %.6g fps, %zu steps\n",
               (double)scene->world.dt, scene->world.dt_auto ? " (\"auto\")" : "",
               scene->world.frames, (double)scene->world.fps, est->steps);
    printf("estimate     ~%zu particles, ~%zu bonds, up to ~%.1f MiB\n", est->particles, est->bonds,
           (double)est->bytes / 1048576.0);
    int frames = scene->world.frames, every = scene->output.every;
    printf("output       ~%.1f MiB: %d frames written of %d, stats.csv, the resolved scene\n",
           (double)est->output_bytes / 1048576.0, 1 + frames / every + (frames % every != 0),
           frames + 1);
}

int pd_cli_info(int argc, char** argv) {
    int estimate_only = 0, kept = 0;
    for (int i = 0; i < argc; ++i) { /* --estimate is info's own option */
        if (i > 0 && strcmp(argv[i], "--estimate") == 0)
            estimate_only = 1;
        else
            argv[kept++] = argv[i];
    }
    pd_cli_scene_args a;
    pd_scene scene;
    pd_estimate est;
    int code = pd_cli_prepare(kept, argv, k_usage, &a, &scene, &est);
    if (code)
        return code < 0 ? 0 : code;
    print_estimate(&scene, &est);
    if (!estimate_only)
        code = print_built(&scene);
    pd_scene_free(&scene);
    return code;
}
