/* What the `peridot run` tests share: a small ball scene, files in and out, and running the
 * command with its stderr captured. */
#ifndef PD_CLI_SUPPORT_H
#define PD_CLI_SUPPORT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define BALL_SCENE(frames, extra)                                                                  \
    "{\"version\":1,\"method\":\"projective_pd\",\"time\":{\"dt\":0.01,\"fps\":50,"                \
    "\"frames\":" #frames                                                                          \
    "},\"materials\":{\"m\":{\"density\":1000,\"youngs_modulus\":1e5,\"poisson_ratio\":0.3}},"     \
    "\"bodies\":[{\"name\":\"ball\",\"material\":\"m\",\"spacing\":0.02,"                          \
    "\"shape\":{\"type\":\"sphere\",\"center\":[0,0.5,0],\"radius\":0.06}" extra "}]}"

static inline void write_file(const char* path, const char* text) {
    FILE* f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static inline char* read_text(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f)
        return NULL;
    char* s = calloc(1, 65536);
    if (s)
        s[fread(s, 1, 65535, f)] = '\0';
    fclose(f);
    return s;
}

/* Exit status of `peridot ARGS`, stderr into *err (free it). */
static inline int run_cli(const char* dir, const char* args, char** err) {
    char cmd[4096], errfile[512];
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 '%s' %s >/dev/null 2>'%s'", PD_CLI_PATH, args,
             errfile);
    int status = system(cmd);
    *err = read_text(errfile);
    remove(errfile);
    printf("  peridot %s -> exit %d\n    stderr: %s", args,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1, *err && **err ? *err : "(empty)\n");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int exists(const char* path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static inline int count_frames(const char* dir) {
    DIR* d = opendir(dir);
    int n = 0;
    for (struct dirent* e; d && (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, "frame_", 6) == 0;
    if (d)
        closedir(d);
    return n;
}

static inline void remove_tree(const char* dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("  could not remove %s\n", dir);
}

#endif
