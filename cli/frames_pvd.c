/* peridot run's frames.pvd (frames_pvd.h). */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "frames_pvd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void pd_cli_pvd_start(pd_cli_pvd* c, const char* dir) {
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s/%s", dir, PD_CLI_PVD_NAME);
}

void pd_cli_pvd_free(pd_cli_pvd* c) {
    free(c->entries);
    free(c->files);
    c->entries = NULL;
    c->files = NULL;
    c->count = c->cap = 0;
}

/* Room for one more entry: the list doubles, so a run of F frames grows it log2(F) times. */
static int reserve_one(pd_cli_pvd* c) {
    if (c->count < c->cap)
        return 1;
    size_t cap = c->cap ? 2 * c->cap : 64;
    pd_pvd_entry* entries = realloc(c->entries, cap * sizeof *entries);
    if (entries)
        c->entries = entries;
    char(*files)[32] = entries ? realloc(c->files, cap * sizeof *files) : NULL;
    if (!files)
        return 0;
    c->files = files;
    c->cap = cap;
    for (size_t i = 0; i < c->count; ++i) /* the names moved with their array */
        c->entries[i].file = c->files[i];
    return 1;
}

static int append(pd_cli_pvd* c, int frame, double time) {
    if (!reserve_one(c))
        return 0;
    snprintf(c->files[c->count], sizeof c->files[c->count], "frame_%05d.vtu", frame);
    c->entries[c->count] = (pd_pvd_entry){time, c->files[c->count]};
    c->count++;
    return 1;
}

pd_status pd_cli_pvd_add(pd_cli_pvd* c, int frame, double time, pd_error* err) {
    if (!append(c, frame, time))
        return pd_cli_fail(err, PD_ERR_OUT_OF_MEMORY, "no memory for the list of %s", c->path);
    return pd_write_pvd(c->path, c->entries, c->count, err);
}

static int has_vtu(const char* dir, long frame) {
    char path[PD_PATH_MAX + 64];
    struct stat st;
    snprintf(path, sizeof path, "%s/frame_%05ld.vtu", dir, frame);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* stats.csv's rows "frame,time,..." up to `frame`: each whose frame_<N>.vtu is there joins
 * the list, at the time the row states (the text the collection writes again, %.9g). */
static int list_from_stats(pd_cli_pvd* c, const char* dir, int frame) {
    char path[PD_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    FILE* f = fopen(path, "r");
    if (!f)
        return 0;
    char* line = NULL;
    size_t cap = 0;
    int ok = getline(&line, &cap, f) > 0; /* the header */
    while (ok && getline(&line, &cap, f) > 0) {
        char* end;
        long n = strtol(line, &end, 10);
        if (end == line || *end != ',' || n > frame)
            break;
        double time = strtod(end + 1, NULL);
        if (has_vtu(dir, n))
            ok = append(c, (int)n, time);
    }
    free(line);
    fclose(f);
    return ok;
}

int pd_cli_pvd_resume(pd_cli_pvd* c, const char* dir, int frame) {
    pd_cli_pvd_start(c, dir);
    pd_error err = {0};
    pd_status st = list_from_stats(c, dir, frame)
                       ? pd_write_pvd(c->path, c->entries, c->count, &err)
                       : pd_cli_fail(&err, PD_ERR_IO,
                                     "cannot list the frames of %s "
                                     "from its stats.csv",
                                     dir);
    if (st == PD_OK)
        return 0;
    pd_cli_print_error("run", &err, st);
    return 1;
}
