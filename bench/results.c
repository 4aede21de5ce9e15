/* The committed benchmark results: a history per machine and case, and the latest table. */
#define _POSIX_C_SOURCE 200809L
#include "results.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_COLUMNS    48
#define MAX_ROWS       4096
#define MAX_CASES      128
#define LINE_MAX_BYTES 8192

int results_machine_dir(const char* root, const char* model, int cores, char* dir, size_t size) {
    char slug[32] = "";
    if (strstr(model, "EPYC"))
        snprintf(slug, sizeof slug, "epyc");
    else if (strstr(model, "Xeon"))
        snprintf(slug, sizeof slug, "xeon");
    else { /* the model's first word, lower case, letters and digits only */
        size_t k = 0;
        for (const char* c = model; *c && *c != ' ' && k + 1 < sizeof slug; ++c)
            if (isalnum((unsigned char)*c))
                slug[k++] = (char)tolower((unsigned char)*c);
        slug[k] = '\0';
    }
    snprintf(dir, size, "%s/%s-%dc", root, slug[0] ? slug : "cpu", cores);
    if ((mkdir(root, 0777) != 0 && errno != EEXIST) || (mkdir(dir, 0777) != 0 && errno != EEXIST)) {
        fprintf(stderr, "peridot_bench: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The first line of path into line (without its newline); 0 when the file is missing. */
static int first_line(const char* path, char* line, size_t size) {
    FILE* f = fopen(path, "r");
    if (!f)
        return 0;
    int got = fgets(line, (int)size, f) != NULL;
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    return got;
}

int results_append(const char* dir, const char* name, const char* header, const char* row) {
    char path[1200], existing[LINE_MAX_BYTES];
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    int has = first_line(path, existing, sizeof existing);
    if (has && strcmp(existing, header) != 0) {
        fprintf(stderr,
                "peridot_bench: %s has other columns than this run's; its row is not appended "
                "(move the file aside to start a new history)\n",
                path);
        return -1;
    }
    FILE* f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "peridot_bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!has)
        fprintf(f, "%s\n", header);
    fprintf(f, "%s\n", row);
    if (fclose(f) != 0) {
        fprintf(stderr, "peridot_bench: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- reading a history */

/* One CSV file in memory: its lines, split in place into fields. */
typedef struct history {
    char* text;
    int columns;
    char* header[MAX_COLUMNS];
    int rows;
    char* (*cell)[MAX_COLUMNS];
} history;

/* Splits the line at s into fields (double-quoted ones unquoted in place); the end of the line
 * (after its newline) is returned. */
static char* split_line(char* s, char** fields, int max, int* count) {
    int n = 0;
    char* w = s;
    for (;;) {
        if (n < max)
            fields[n] = w;
        n++;
        if (*s == '"') { /* quoted: "" is a quote */
            for (++s; *s && !(*s == '"' && s[1] != '"'); ++s)
                *w++ = *s == '"' ? *++s : *s;
            s += *s == '"';
        }
        while (*s && *s != ',' && *s != '\n')
            *w++ = *s++;
        char end = *s;
        *w = '\0';
        if (end != ',') {
            *count = n < max ? n : max;
            return end ? s + 1 : s;
        }
        w = ++s;
    }
}

static void history_free(history* h) {
    free(h->text);
    free(h->cell);
}

static int history_read(const char* path, history* h) {
    memset(h, 0, sizeof *h);
    FILE* f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    h->text = malloc((size_t)n + 1);
    h->cell = calloc(MAX_ROWS, sizeof *h->cell);
    size_t got = h->text ? fread(h->text, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!h->text || !h->cell || got != (size_t)n) {
        history_free(h);
        return -1;
    }
    h->text[n] = '\0';
    char* s = split_line(h->text, h->header, MAX_COLUMNS, &h->columns);
    while (*s && h->rows < MAX_ROWS) {
        int count;
        s = split_line(s, h->cell[h->rows], MAX_COLUMNS, &count);
        for (int c = count; c < MAX_COLUMNS; ++c)
            h->cell[h->rows][c] = "";
        h->rows++;
    }
    return 0;
}

static int column_of(const history* h, const char* name) {
    for (int c = 0; c < h->columns; ++c)
        if (strcmp(h->header[c], name) == 0)
            return c;
    return -1;
}

static const char* value(const history* h, int row, const char* name) {
    int c = column_of(h, name);
    return c < 0 ? "" : h->cell[row][c];
}

/* The rows of the history's newest date: [*first, h->rows), rows being appended in time. */
static int latest_run_start(const history* h) {
    int c = column_of(h, "date"), first = h->rows;
    while (c >= 0 && first > 0 && strcmp(h->cell[first - 1][c], h->cell[h->rows - 1][c]) == 0)
        first--;
    return first;
}

/* ---------------------------------------------------------------- latest.md */

static int compare_names(const void* a, const void* b) {
    return strcmp((const char*)a, (const char*)b);
}

/* The case names (file stems) of dir's histories, sorted; their count. */
static int list_cases(const char* dir, char names[][128], int max) {
    DIR* d = opendir(dir);
    int n = 0;
    for (struct dirent* e; d && (e = readdir(d)) != NULL && n < max;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < 128 && strcmp(e->d_name + len - 4, ".csv") == 0)
            snprintf(names[n++], 128, "%.*s", (int)(len - 4), e->d_name);
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    return n;
}

/* A scene case's history has the stage column. */
static int is_scene_case(const history* h) {
    return column_of(h, "stages") >= 0 && column_of(h, "ms_median") >= 0;
}

static void scene_table_header(FILE* f) {
    fprintf(f, "| case | date | commit | label | threads | particles | ms/step (median) | "
               "particle-steps/s | iterations/step | residual (median) | stages, ms/step | "
               "core-ms/step | paper ms/step (threads) | ours / paper (core-ms) |\n"
               "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
}

static void scene_table_rows(FILE* f, const char* name, const history* h) {
    for (int r = latest_run_start(h); r < h->rows; ++r) {
        double core = atof(value(h, r, "core_ms")), paper_core = atof(value(h, r, "paper_core_ms"));
        char ratio[32] = "-", paper[48] = "-";
        if (paper_core > 0 && core > 0)
            snprintf(ratio, sizeof ratio, "%.1fx", core / paper_core);
        if (atof(value(h, r, "paper_ms")) > 0)
            snprintf(paper, sizeof paper, "%s (%s)", value(h, r, "paper_ms"),
                     atoi(value(h, r, "paper_threads")) > 0 ? value(h, r, "paper_threads") : "GPU");
        char stages[512];
        snprintf(stages, sizeof stages, "%s", value(h, r, "stages"));
        for (char* c = stages; *c; ++c)
            if (*c == ';')
                *c = ' ';
        const char* error = value(h, r, "error");
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s%s | %s | %s | %s |\n",
                name, value(h, r, "date"), value(h, r, "commit"), value(h, r, "label"),
                value(h, r, "threads"), value(h, r, "particles"), value(h, r, "ms_median"),
                value(h, r, "particle_steps_per_s"), value(h, r, "iterations"),
                value(h, r, "residual_median"), stages, error[0] ? " failed: " : "", error,
                value(h, r, "core_ms"), paper, ratio);
    }
}

/* Another history (peers, the triad, convergence): its latest run with every column. */
static void other_table(FILE* f, const char* name, const history* h) {
    fprintf(f, "\n## %s (latest run)\n\n|", name);
    for (int c = 0; c < h->columns; ++c)
        fprintf(f, " %s |", h->header[c]);
    fprintf(f, "\n|");
    for (int c = 0; c < h->columns; ++c)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (int r = latest_run_start(h); r < h->rows; ++r) {
        fprintf(f, "|");
        for (int c = 0; c < h->columns; ++c)
            fprintf(f, " %s |", h->cell[r][c]);
        fprintf(f, "\n");
    }
}

int results_write_latest(const char* dir) {
    static char names[MAX_CASES][128];
    int n = list_cases(dir, names, MAX_CASES);
    char path[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/latest.md", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "peridot_bench: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "# peridot_bench: the latest run of each case on this machine\n\n"
               "Written by peridot_bench from the histories beside this file (one <case>.csv per "
               "case, a row per run and thread count); docs/benchmarks.md reads them.\n\n");
    int first = 1;
    for (int pass = 0; pass < 2; ++pass)
        for (int k = 0; k < n; ++k) {
            history h;
            snprintf(path, sizeof path, "%.1000s/%.127s.csv", dir, names[k]);
            if (history_read(path, &h) != 0 || h.rows == 0) {
                history_free(&h);
                continue;
            }
            if (pass == 0 && is_scene_case(&h)) {
                if (first)
                    scene_table_header(f);
                first = 0;
                scene_table_rows(f, names[k], &h);
            } else if (pass == 1 && !is_scene_case(&h)) {
                other_table(f, names[k], &h);
            }
            history_free(&h);
        }
    int ok = fclose(f) == 0;
    snprintf(path, sizeof path, "%s/latest.md", dir);
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "peridot_bench: cannot write %s\n", path);
        remove(tmp);
        return -1;
    }
    return 0;
}
