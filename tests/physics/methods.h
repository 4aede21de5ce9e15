/* One phenomenon, every method (issue 31 item 4): a test runs the same scene (its JSON's
 * `method` overridden by "method=<name>") for every method whose capabilities
 * (pd_solver_capabilities, src/solvers/solver.h) include the phenomenon's, with the same
 * reference. A method that misses the reference is listed in the test's `known` string (method
 * names, space separated): the plain test skips it and the test's known_failure_ twin runs
 * only the listed ones, printing the measurement without failing the suite
 * (docs/validation.md, "Known failures").
 *
 * Every checked number is printed and, when the environment variable PD_MEASURED names a CSV
 * file, recorded there (one row per capability, test, method and quantity, replacing the row
 * of an earlier run): docs/measured.csv is that file, and `peridot docs methods
 * docs/measured.csv` writes docs/methods.md from it and the capability tables. */
#ifndef PD_TEST_METHODS_H
#define PD_TEST_METHODS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "solvers/solver.h"
#include "support.h"

/* The method pd_test_for_each_method runs now (for the checks and the recorder). */
typedef struct pd_test_method_ctx {
    const pd_solver_vtable* method;
    const char* test;    /* the phenomenon's test name, without known_failure_ */
    unsigned capability; /* the PD_CAP_* bit the test exercises */
    int known;           /* 1: this method is a listed known failure */
} pd_test_method_ctx;

static pd_test_method_ctx g_pd_method;

/* A single-method test: its measured.csv rows and its checks' labels go under `method`. */
static inline void pd_test_as_method(const char* method, const char* test, unsigned capability) {
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m)
        if (strcmp((*m)->name, method) == 0)
            g_pd_method = (pd_test_method_ctx){*m, test, capability, 0};
}

static inline double pd_test_wall_seconds(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 1 when `name` is a word of the space-separated `list`. */
static inline int pd_test_listed(const char* list, const char* name) {
    size_t n = strlen(name);
    for (const char* s = list; s && *s;) {
        s += strspn(s, " ");
        size_t len = strcspn(s, " ");
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        s += len;
    }
    return 0;
}

/* Opens `json` for the method of the current run, with the overrides `sets`. */
static inline int pd_test_method_open(pd_test_sim* t, const char* json, const char* const* sets,
                                      int count) {
    char method[96];
    const char* all[16];
    snprintf(method, sizeof method, "method=%s", g_pd_method.method->name);
    all[0] = method;
    for (int k = 0; k < count && k < 15; ++k)
        all[k + 1] = sets[k];
    return pd_test_sim_open(t, json, all, count + 1);
}

/* Replaces (or adds) the row keyed by its first four fields in the CSV file `path`. */
static inline void pd_test_record_row(const char* path, const char* key, const char* row) {
    char* kept = NULL;
    size_t len = 0, cap = 0;
    FILE* f = fopen(path, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) == 0)
            continue;
        size_t n = strlen(line);
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char* bigger = realloc(kept, cap);
            if (!bigger)
                break;
            kept = bigger;
        }
        memcpy(kept + len, line, n + 1);
        len += n;
    }
    if (f)
        fclose(f);
    f = fopen(path, "w");
    if (!f) {
        printf("  cannot write %s\n", path);
        free(kept);
        return;
    }
    if (len == 0)
        fprintf(f, "capability,test,method,quantity,measured,reference,tolerance,verdict\n");
    else
        fwrite(kept, 1, len, f);
    fprintf(f, "%s\n", row);
    fclose(f);
    free(kept);
}

/* Checks |measured - reference| <= tol (relative: tol * |reference|), prints it, counts a
 * failure, and records the row (when PD_MEASURED is set). `what` names the quantity (no
 * commas). Returns 1 when within. */
static inline int pd_test_method_check(const char* what, double measured, double reference,
                                       double tol, int relative) {
    double allowed = relative ? tol * fabs(reference) : tol;
    int ok = fabs(measured - reference) <= allowed;
    char tolerance[64];
    if (relative)
        snprintf(tolerance, sizeof tolerance, "%g %%", 100 * tol);
    else
        snprintf(tolerance, sizeof tolerance, "+-%g", tol);
    printf("  %s %s %s: %.5g, reference %.5g, %s\n", ok ? "ok  " : "FAIL", g_pd_method.method->name,
           what, measured, reference, tolerance);
    if (!ok)
        pd_test_failures++;
    const char* path = getenv("PD_MEASURED");
    if (path && *path) {
        char key[256], row[768];
        snprintf(key, sizeof key, "%s,%s,%s,%s,", pd_capability_name(g_pd_method.capability),
                 g_pd_method.test, g_pd_method.method->name, what);
        snprintf(row, sizeof row, "%s%.4g,%.4g,%s,%s", key, measured, reference, tolerance,
                 ok                  ? "pass"
                 : g_pd_method.known ? "known failure"
                                     : "FAIL");
        pd_test_record_row(path, key, row);
    }
    return ok;
}

/* Checks lo <= measured <= hi (either bound may be +-INFINITY), like pd_test_method_check. */
static inline int pd_test_method_bound(const char* what, double measured, double lo, double hi) {
    int ok = measured >= lo && measured <= hi;
    char range[64];
    if (isinf(hi))
        snprintf(range, sizeof range, ">= %g", lo);
    else if (isinf(lo))
        snprintf(range, sizeof range, "<= %g", hi);
    else
        snprintf(range, sizeof range, "%g..%g", lo, hi);
    printf("  %s %s %s: %.5g, expected %s\n", ok ? "ok  " : "FAIL", g_pd_method.method->name, what,
           measured, range);
    if (!ok)
        pd_test_failures++;
    const char* path = getenv("PD_MEASURED");
    if (path && *path) {
        char key[256], row[768];
        snprintf(key, sizeof key, "%s,%s,%s,%s,", pd_capability_name(g_pd_method.capability),
                 g_pd_method.test, g_pd_method.method->name, what);
        snprintf(row, sizeof row, "%s%.4g,,%s,%s", key, measured, range,
                 ok                  ? "pass"
                 : g_pd_method.known ? "known failure"
                                     : "FAIL");
        pd_test_record_row(path, key, row);
    }
    return ok;
}

/* A number reported beside the checks, not checked (e.g. a static sag the linear theory
 * predicts only roughly): printed and recorded with the verdict "reported". */
static inline void pd_test_method_report(const char* what, double measured, double reference) {
    printf("  %s %s: %.5g, reference %.5g (reported, not checked)\n", g_pd_method.method->name,
           what, measured, reference);
    const char* path = getenv("PD_MEASURED");
    if (path && *path) {
        char key[256], row[768];
        snprintf(key, sizeof key, "%s,%s,%s,%s,", pd_capability_name(g_pd_method.capability),
                 g_pd_method.test, g_pd_method.method->name, what);
        snprintf(row, sizeof row, "%s%.4g,%.4g,,reported", key, measured, reference);
        pd_test_record_row(path, key, row);
    }
}

/* 1 when the current method accepts `json` with `sets`; 0 (printed, and recorded as the
 * quantity `what` refused) when it refuses it at a path starting with `prefix` (a value the
 * method cannot represent, e.g. a Poisson ratio); any other refusal counts as a failure. */
static inline int pd_test_method_accepts(const char* json, const char* const* sets, int count,
                                         const char* prefix, const char* what) {
    char method[96];
    const char* all[16];
    snprintf(method, sizeof method, "method=%s", g_pd_method.method->name);
    all[0] = method;
    for (int k = 0; k < count && k < 15; ++k)
        all[k + 1] = sets[k];
    pd_scene scene;
    pd_error err = {0};
    pd_status st =
        pd_scene_parse(json, "test.json", PD_SOURCE_DIR "/scenes", all, count + 1, &scene, &err);
    if (st == PD_OK) {
        pd_scene_free(&scene);
        return 1;
    }
    int expected = strncmp(err.path, prefix, strlen(prefix)) == 0;
    printf("  %s %s refuses the scene (%s: %s): %s\n", expected ? "skip" : "FAIL",
           g_pd_method.method->name, err.path, err.message,
           expected ? "skipped, a value it cannot represent" : "unexpected refusal");
    if (!expected) {
        pd_test_failures++;
        return 0;
    }
    const char* path = getenv("PD_MEASURED");
    if (path && *path) {
        char key[256], row[768];
        snprintf(key, sizeof key, "%s,%s,%s,%s,", pd_capability_name(g_pd_method.capability),
                 g_pd_method.test, g_pd_method.method->name, what);
        snprintf(row, sizeof row, "%s,,,refused at %s", key, err.path);
        pd_test_record_row(path, key, row);
    }
    return 0;
}

/* A condition the scene needs (not a measurement against the reference): printed and counted
 * like PD_CHECK. */
#define PD_METHOD_REQUIRE(cond)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("  FAIL %s: required %s\n", g_pd_method.method->name, #cond);                   \
            pd_test_failures++;                                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* Runs fn once for every method with `capability`: those in `known` only when known_run is
 * 1, the others only when it is 0. Prints each method's wall time. */
static inline void pd_test_for_each_method(const char* test, unsigned capability, const char* known,
                                           int known_run, void (*fn)(void)) {
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m) {
        const char* name = (*m)->name;
        if (!(pd_solver_capabilities(*m) & capability)) {
            printf("  %s: skipped (does not declare %s)\n", name, pd_capability_name(capability));
            continue;
        }
        int listed = pd_test_listed(known, name);
        if (listed != known_run) {
            printf("  %s: run by %s%s\n", name, listed ? "known_failure_" : "", test);
            continue;
        }
        printf("  == %s\n", name);
        g_pd_method = (pd_test_method_ctx){*m, test, capability, listed};
        double t0 = pd_test_wall_seconds();
        clock_t c0 = clock();
        fn();
        printf("  %s: wall time %.1f s, CPU time %.1f s\n", name, pd_test_wall_seconds() - t0,
               (double)(clock() - c0) / CLOCKS_PER_SEC);
    }
}

/* Declares the test `name`, running fn for every method with `capability`. */
#define PD_TEST_EACH_METHOD(name, capability, fn)                                                  \
    PD_TEST(name) {                                                                                \
        pd_test_for_each_method(#name, capability, "", 0, fn);                                     \
    }

/* The same, but the methods of `known` (docs/validation.md's known failures) are run by the
 * test's known_failure_ twin instead. */
#define PD_TEST_EACH_METHOD_KNOWN(name, capability, known, fn)                                     \
    PD_TEST(name) {                                                                                \
        pd_test_for_each_method(#name, capability, known, 0, fn);                                  \
    }                                                                                              \
    PD_TEST(known_failure_##name) {                                                                \
        pd_test_for_each_method(#name, capability, known, 1, fn);                                  \
    }

#endif
