/* `peridot docs` prints exactly the committed docs/scene-format.md, so the reference cannot
 * drift from the parameter tables (regenerate: peridot docs > docs/scene-format.md). */
#define _POSIX_C_SOURCE 200809L /* popen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test.h"

/* Everything read from f, NUL-terminated; *len its length. */
static char* slurp(FILE* f, size_t* len) {
    size_t cap = 1 << 16, n = 0;
    char* s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char* bigger = realloc(s, cap *= 2);
            if (!bigger) {
                free(s);
                return NULL;
            }
            s = bigger;
        }
    }
    if (s)
        s[n] = '\0';
    *len = n;
    return s;
}

/* 1-based line of the first byte where a and b differ. */
static int first_difference(const char* a, const char* b) {
    int line = 1;
    for (; *a && *a == *b; ++a, ++b)
        line += *a == '\n';
    return line;
}

PD_TEST(docs_match_committed_reference) {
    FILE* p = popen("'" PD_CLI_PATH "' docs", "r");
    PD_REQUIRE(p);
    size_t out_len = 0, doc_len = 0;
    char* out = slurp(p, &out_len);
    int status = pclose(p);
    PD_REQUIRE(out);
    PD_CHECK(status == 0);
    FILE* f = fopen(PD_SOURCE_DIR "/docs/scene-format.md", "rb");
    char* doc = f ? slurp(f, &doc_len) : NULL;
    if (f)
        fclose(f);
    if (!doc) {
        printf("  FAIL cannot read %s\n", PD_SOURCE_DIR "/docs/scene-format.md");
        pd_test_failures++;
        free(out);
        return;
    }
    printf("  peridot docs: %zu bytes, docs/scene-format.md: %zu bytes\n", out_len, doc_len);
    int same = out_len == doc_len && memcmp(out, doc, out_len) == 0;
    if (!same)
        printf("  FAIL they differ from line %d: regenerate with `peridot docs > "
               "docs/scene-format.md`\n",
               first_difference(out, doc));
    PD_CHECK(same);
    /* The reference covers every method's solver keys and the general sections. */
    PD_CHECK(strstr(out, "### `projective_pd`") != NULL);
    PD_CHECK(strstr(out, "| `iterations` | int | 20 |") != NULL);
    PD_CHECK(strstr(out, "## `colliders[i]`") != NULL);
    free(out);
    free(doc);
}

/* `peridot docs methods docs/measured.csv` prints exactly the committed docs/methods.md: the
 * capability tables and the suite's last numbers, so neither drifts from the other (regenerate:
 * peridot docs methods docs/measured.csv > docs/methods.md). */
PD_TEST(methods_doc_matches_committed_reference) {
    FILE* p = popen("'" PD_CLI_PATH "' docs methods '" PD_SOURCE_DIR "/docs/measured.csv'", "r");
    PD_REQUIRE(p);
    size_t out_len = 0, doc_len = 0;
    char* out = slurp(p, &out_len);
    int status = pclose(p);
    PD_REQUIRE(out);
    PD_CHECK(status == 0);
    FILE* f = fopen(PD_SOURCE_DIR "/docs/methods.md", "rb");
    char* doc = f ? slurp(f, &doc_len) : NULL;
    if (f)
        fclose(f);
    if (!doc) {
        printf("  FAIL cannot read %s\n", PD_SOURCE_DIR "/docs/methods.md");
        pd_test_failures++;
        free(out);
        return;
    }
    printf("  peridot docs methods: %zu bytes, docs/methods.md: %zu bytes\n", out_len, doc_len);
    int same = out_len == doc_len && memcmp(out, doc, out_len) == 0;
    if (!same)
        printf("  FAIL they differ from line %d: regenerate with `peridot docs methods "
               "docs/measured.csv > docs/methods.md`\n",
               first_difference(out, doc));
    PD_CHECK(same);
    /* a row per capability, a column per method, and measured numbers in it */
    PD_CHECK(strstr(out, "| `elastic`: ") != NULL);
    PD_CHECK(strstr(out, " `sbpd` |") != NULL);
    PD_CHECK(strstr(out, "`bar_shows_e_and_nu_025`") != NULL);
    free(out);
    free(doc);
}

/* A row of a capability its method does not declare is refused (the table would hide it). */
PD_TEST(methods_doc_refuses_a_stale_row) {
    const char* path = "/tmp/pd_test_stale_measured.csv";
    FILE* f = fopen(path, "w");
    PD_REQUIRE(f);
    fprintf(f, "capability,test,method,quantity,measured,reference,tolerance,verdict\n"
               "fluid,some_test,sbpd,volume,1,1,5 %%,pass\n");
    fclose(f);
    int status = system("'" PD_CLI_PATH "' docs methods /tmp/pd_test_stale_measured.csv "
                        ">/dev/null 2>&1");
    PD_CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
    remove(path);
}

PD_TEST(docs_rejects_arguments) {
    int status = system("'" PD_CLI_PATH "' docs --bogus 2>/dev/null >/dev/null");
    PD_CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 2);
}
