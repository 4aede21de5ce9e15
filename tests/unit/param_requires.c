/* A row's `requires` ("<sibling>=<value>[|<value>]"): met or not by the sibling's value in the
 * struct, with the sentence naming both; a block row's key read inside its block and refused at
 * its own path; and the table self-check, which finds a condition naming no ENUM or BOOL sibling
 * or a value it cannot hold, and passes every registered method's tables. */
#include <stddef.h>
#include <string.h>

#include "scene/scene_json.h"
#include "solvers/solver.h"
#include "test.h"

typedef struct modes {
    int scheme;
    int fast;
    pd_real relax;
    pd_real speed;
    int group;
    pd_real group_weight;
} modes;

#define M(f) offsetof(modes, f)
static const pd_param_info k_modes[] = {
    {"scheme", PD_PARAM_ENUM, M(scheme), 0, 0, 0, "-", "plain|relaxed|hybrid", "mode"},
    {"fast", PD_PARAM_BOOL, M(fast), 0, 0, 1, "-", NULL, "switch"},
    {"relax", PD_PARAM_REAL, M(relax), 0.5, 0, 1, "1", NULL, "relaxed or hybrid only",
     "scheme=relaxed|hybrid"},
    {"speed", PD_PARAM_REAL, M(speed), 1, 0, 10, "1", NULL, "fast only", "fast=true"},
    {"group", PD_PARAM_BLOCK, M(group), 0, 0, 0, "-", NULL, "a block"},
    {"group.weight", PD_PARAM_REAL, M(group_weight), 1, 0, 10, "1", NULL, "plain only",
     "scheme=plain"},
};
static const pd_param_table k_table = {k_modes, 6, sizeof(modes)};

/* Parses `json` into m; the status, with err filled. */
static pd_status read_modes(const char* json, modes* m, pd_error* err) {
    cJSON* obj = cJSON_Parse(json);
    pd_params_set_defaults(&k_table, m);
    pd_status st = pd_json_params(obj, "solver", &k_table, m, err);
    printf("  %s -> %s %s\n", json, st == PD_OK ? "ok" : err->path,
           st == PD_OK ? "" : err->message);
    cJSON_Delete(obj);
    return st;
}

PD_TEST(requirement_follows_the_sibling_value) {
    modes m;
    char why[320];
    pd_params_set_defaults(&k_table, &m);
    PD_CHECK(pd_param_requirement(&k_table, &k_modes[0], &m, why, sizeof why)); /* none */
    PD_CHECK(!pd_param_requirement(&k_table, &k_modes[2], &m, why, sizeof why));
    printf("  %s\n", why);
    PD_CHECK(strcmp(why, "relax acts only with scheme \"relaxed|hybrid\" (the scene's scheme is "
                         "\"plain\")") == 0);
    m.scheme = 2; /* hybrid: the second value of the list */
    PD_CHECK(pd_param_requirement(&k_table, &k_modes[2], &m, why, sizeof why));
    PD_CHECK(!pd_param_requirement(&k_table, &k_modes[3], &m, why, sizeof why));
    PD_CHECK(strstr(why, "(the scene's fast is \"false\")") != NULL);
    m.fast = 1;
    PD_CHECK(pd_param_requirement(&k_table, &k_modes[3], &m, why, sizeof why));
    /* two conditions joined by ',': both must hold, the first that fails is named */
    pd_param_info both = k_modes[2];
    both.requires = "scheme=relaxed|hybrid,fast=true";
    PD_CHECK(pd_param_requirement(&k_table, &both, &m, why, sizeof why)); /* hybrid, fast */
    m.fast = 0;
    PD_CHECK(!pd_param_requirement(&k_table, &both, &m, why, sizeof why));
    PD_CHECK(strstr(why, "fast \"true\"") != NULL);
    m.scheme = 0;
    PD_CHECK(!pd_param_requirement(&k_table, &both, &m, why, sizeof why));
    PD_CHECK(strstr(why, "scheme \"relaxed|hybrid\"") != NULL);
}

/* Given keys are checked once the whole object is read, whatever their order; keys left out
 * are never refused; a block's key is refused at "<path>.<block>.<key>". */
PD_TEST(given_keys_are_checked_after_the_table_is_read) {
    modes m;
    pd_error err = {0};
    PD_CHECK(read_modes("{}", &m, &err) == PD_OK);
    PD_CHECK(read_modes("{\"relax\": 0.2, \"scheme\": \"relaxed\"}", &m, &err) == PD_OK);
    PD_CHECK(m.relax == (pd_real)0.2);
    PD_CHECK(read_modes("{\"scheme\": \"plain\", \"relax\": 0.2}", &m, &err) == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "solver.relax") == 0);
    PD_CHECK(read_modes("{\"speed\": 2}", &m, &err) == PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "solver.speed") == 0 && strstr(err.message, "fast \"true\""));
    PD_CHECK(read_modes("{\"fast\": true, \"speed\": 2, \"group\": {\"weight\": 2}}", &m, &err) ==
             PD_OK);
    PD_CHECK(read_modes("{\"scheme\": \"hybrid\", \"group\": {\"weight\": 2}}", &m, &err) ==
             PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "solver.group.weight") == 0);
}

/* The self-check finds a condition on a missing row, on a REAL row, on itself, with a value the
 * sibling cannot hold, without '=', or an empty or bad second condition; every registered
 * table passes it. */
PD_TEST(requirements_name_an_existing_mode) {
    PD_CHECK(pd_param_bad_requirement(&k_table) == NULL);
    static const char* k_bad[] = {"schema=plain", "relax=plain",   "x=plain",
                                  "scheme=fancy", "scheme=plain|", "fast=yes",
                                  "scheme",       "scheme=plain,", "fast=true,scheme=fancy"};
    for (int k = 0; k < (int)(sizeof k_bad / sizeof k_bad[0]); ++k) {
        pd_param_info rows[3] = {k_modes[0], k_modes[1], k_modes[2]};
        rows[2].name = k == 2 ? "x" : "relax";
        rows[2].requires = k_bad[k];
        const pd_param_table t = {rows, 3, sizeof(modes)};
        const pd_param_info* found = pd_param_bad_requirement(&t);
        printf("  requires \"%s\": %s\n", k_bad[k], found == &rows[2] ? "found" : "MISSED");
        PD_CHECK(found == &rows[2]);
    }
    const pd_solver_vtable* const* all = pd_solver_all();
    for (int i = 0; all[i]; ++i) {
        const pd_param_info* p = pd_param_bad_requirement(all[i]->params);
        const pd_param_info* q = pd_param_bad_requirement(all[i]->material_params);
        if (p || q)
            printf("  %s: bad requires on %s\n", all[i]->name, p ? p->name : q->name);
        PD_CHECK(p == NULL && q == NULL);
    }
}
