/* `peridot docs` lists a method's block (type object) with its "<block>.<key>" rows right
 * under it, by their full names, wherever the table declares them. No registered method has a
 * block yet, so the CLI's own table printer (cli/docs.c, compiled in here for its static
 * functions) is run on a stand-in table. */
#define _POSIX_C_SOURCE 200809L /* dup, fileno */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/docs/scene_doc.c"
#include "../../src/docs/methods_doc.c"
#include "test.h"

typedef struct granular_params {
    int granular, fibres;
    pd_real friction, hardening, cohesion_scale, fibre_stiffness;
} granular_params;

/* The block's rows declared apart from it, to see them printed under it. */
#define G(f) offsetof(granular_params, f)
static const pd_param_info k_rows[] = {
    {"granular", PD_PARAM_BLOCK, G(granular), 0, 0, 0, "-", NULL, "Granular behaviour."},
    {"friction", PD_PARAM_REAL, G(friction), 0.5, 0, 10, "1", NULL, "A flat key."},
    {"granular.hardening", PD_PARAM_REAL, G(hardening), 10, 0, 100, "1", NULL, "In the block."},
    {"fibres", PD_PARAM_BLOCK, G(fibres), 0, 0, 0, "-", NULL, "Another block."},
    {"granular.cohesion_scale", PD_PARAM_REAL, G(cohesion_scale), 1, 0, 5, "1", NULL, "Too."},
    {"fibres.stiffness", PD_PARAM_REAL, G(fibre_stiffness), 5, 0, 10, "Pa", NULL, "Its key."},
};
static const pd_param_table k_table = {k_rows, 6, sizeof(granular_params)};

/* What print_params writes to stdout for t, NUL-terminated (NULL on failure). */
static char* printed_table(const pd_param_table* t) {
    FILE* tmp = tmpfile();
    int saved = tmp ? dup(STDOUT_FILENO) : -1;
    if (saved < 0)
        return NULL;
    fflush(stdout);
    dup2(fileno(tmp), STDOUT_FILENO);
    print_params("material keys", t);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long n = ftell(tmp);
    char* text = n >= 0 ? calloc((size_t)n + 1, 1) : NULL;
    rewind(tmp);
    if (text && fread(text, 1, (size_t)n, tmp) != (size_t)n) {
        free(text);
        text = NULL;
    }
    fclose(tmp);
    return text;
}

/* 1 when print_params writes exactly `expected` for t; else prints both and returns 0. */
static int printed_as(const pd_param_table* t, const char* expected) {
    char* text = printed_table(t);
    int same = text && strcmp(text, expected) == 0;
    if (!same)
        printf("  FAIL printed:\n%s  expected:\n%s", text ? text : "(nothing)", expected);
    free(text);
    return same;
}

/* Fails when a block's rows follow the table's order (friction between the granular rows),
 * are printed twice or not at all, or lose the block's name; or when the block row is not
 * typed object, or the table's columns change. */
PD_TEST(docs_block_rows_under_their_block) {
    static const char* k_expected =
        "#### material keys\n\n"
        "| key | type | default | allowed | unit | meaning |\n"
        "|---|---|---|---|---|---|\n"
        "| `granular` | object | none | an object of the `granular.*` keys below | - | Granular "
        "behaviour. |\n"
        "| `granular.hardening` | number | 10 | [0, 100] | 1 | In the block. |\n"
        "| `granular.cohesion_scale` | number | 1 | [0, 5] | 1 | Too. |\n"
        "| `friction` | number | 0.5 | [0, 10] | 1 | A flat key. |\n"
        "| `fibres` | object | none | an object of the `fibres.*` keys below | - | Another "
        "block. |\n"
        "| `fibres.stiffness` | number | 5 | [0, 10] | Pa | Its key. |\n\n";
    PD_CHECK(printed_as(&k_table, k_expected));
}

/* A TERMS row is typed apart from a block (whose type is object), with its accepted names and
 * their range. Fails when the names, the range or the all-zero default are not printed. */
PD_TEST(docs_terms_row_names_its_terms) {
    static const pd_param_info k_terms[] = {
        {"g", PD_PARAM_TERMS, 0, 0, -1, 2.5, "Pa", "A1|A2|B1", "Coefficients."},
    };
    static const pd_param_table k_terms_table = {k_terms, 1, sizeof(pd_param_reals)};
    static const char* k_expected = "#### material keys\n\n"
                                    "| key | type | default | allowed | unit | meaning |\n"
                                    "|---|---|---|---|---|---|\n"
                                    "| `g` | named numbers | {} (every term 0) | keys `A1`, `A2`, "
                                    "`B1`; each [-1, 2.5] | Pa | Coefficients. |\n\n";
    PD_CHECK(printed_as(&k_terms_table, k_expected));
}
