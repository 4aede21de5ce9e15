#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "commands.h"
#include "peridot/peridot.h"

typedef struct {
    const char* name;
    int (*fn)(int argc, char** argv);
    const char* summary;
} pd_command;

static const pd_command k_commands[] = {
    {"run", pd_cli_run, "simulate a scene and write frames"},
    {"info", pd_cli_info, "particles, bonds, memory and time steps a scene needs"},
    {"render", pd_cli_render, "render frames to a PNG (or MP4 with ffmpeg)"},
    {"surface", pd_cli_surface, "closed triangle meshes of the particles, for Blender and Houdini"},
    {"docs", pd_cli_docs, "print the scene-format reference generated from the parameter tables"},
};
enum { k_command_count = sizeof k_commands / sizeof k_commands[0] };

static void usage(FILE* f) {
    fprintf(f, "usage: peridot <command> [options]\n\ncommands:\n");
    for (int i = 0; i < k_command_count; ++i)
        fprintf(f, "  %-8s %s\n", k_commands[i].name, k_commands[i].summary);
    fprintf(f, "\n'peridot <command> --help' describes a command. 'peridot --version' prints the "
               "version.\n");
}

int main(int argc, char** argv) {
    pd_prefer_passive_waiting(argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("peridot %s\n", pd_version());
        return 0;
    }
    for (int i = 0; i < k_command_count; ++i)
        if (strcmp(argv[1], k_commands[i].name) == 0)
            return k_commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "peridot: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
