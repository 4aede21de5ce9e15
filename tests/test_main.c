#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PD_MAX_TESTS 512

typedef struct {
    char file[128];
    const char* name;
    pd_test_fn fn;
} pd_test_entry;

static pd_test_entry g_tests[PD_MAX_TESTS];
static int g_count;
int pd_test_failures;

static void file_stem(const char* path, char* out, size_t cap) {
    const char* base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strcspn(base, ".");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, base, n);
    out[n] = '\0';
}

void pd_test_register(const char* file, const char* name, pd_test_fn fn) {
    if (g_count >= PD_MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(3);
    }
    file_stem(file, g_tests[g_count].file, sizeof g_tests[g_count].file);
    g_tests[g_count].name = name;
    g_tests[g_count].fn = fn;
    g_count++;
}

/* Tests named known_failure_* measure physics that does not match its reference yet
 * (docs/validation.md, "Known failures"): they print their measurement and verdict but do not
 * fail the suite. PD_KNOWN_FAILURES selects them: "run" (unset: with the others), "skip" (`make
 * test`: the suite must fit CI's budget, and they cannot fail it) or "only" (`make
 * known-failures`, which re-measures them). */
static int is_known_failure(const char* name) {
    return strncmp(name, "known_failure_", 14) == 0;
}

typedef enum { KNOWN_RUN, KNOWN_SKIP, KNOWN_ONLY } known_mode;

static known_mode known_failures_mode(void) {
    const char* v = getenv("PD_KNOWN_FAILURES");
    if (v && strcmp(v, "skip") == 0)
        return KNOWN_SKIP;
    if (v && strcmp(v, "only") == 0)
        return KNOWN_ONLY;
    return KNOWN_RUN;
}

static int selected(known_mode mode, const char* name) {
    if (mode == KNOWN_SKIP)
        return !is_known_failure(name);
    if (mode == KNOWN_ONLY)
        return is_known_failure(name);
    return 1;
}

/* Wall seconds since an arbitrary start: each test's time is printed so the suite's cost can be
 * traced to the tests that spend it (the suite must fit CI's budget). */
static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Usage: test_<area> [file-stem [test-name]] */
int main(int argc, char** argv) {
    int passed = 0, failed = 0, known = 0, skipped = 0, matched = 0;
    known_mode mode = known_failures_mode();
    for (int i = 0; i < g_count; ++i) {
        if (argc > 1 && strcmp(argv[1], g_tests[i].file) != 0)
            continue;
        if (argc > 2 && strcmp(argv[2], g_tests[i].name) != 0)
            continue;
        matched++;
        if (argc <= 2 && !selected(mode, g_tests[i].name)) { /* a test named is always run */
            skipped++;
            continue;
        }
        printf("[ RUN  ] %s.%s\n", g_tests[i].file, g_tests[i].name);
        fflush(stdout);
        int before = pd_test_failures;
        double start = wall_seconds();
        g_tests[i].fn();
        double seconds = wall_seconds() - start;
        int ok = pd_test_failures == before;
        if (!ok && is_known_failure(g_tests[i].name)) {
            pd_test_failures = before;
            printf("[ KNOWN FAILURE ] %s.%s (docs/validation.md) %.1f s\n", g_tests[i].file,
                   g_tests[i].name, seconds);
            known++;
            continue;
        }
        printf("[ %s ] %s.%s %.1f s\n", ok ? " OK " : "FAIL", g_tests[i].file, g_tests[i].name,
               seconds);
        fflush(stdout);
        ok ? passed++ : failed++;
    }
    if (known)
        printf("%d known failure(s), listed in docs/validation.md\n", known);
    if (matched == 0) {
        fprintf(stderr, "no test matched\n");
        return 3;
    }
    if (skipped)
        printf("%d not run (PD_KNOWN_FAILURES=%s)\n", skipped,
               mode == KNOWN_SKIP ? "skip" : "only");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
