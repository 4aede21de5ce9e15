/* Parameter tables hold every kind of key a method declares (numbers, integers, bools,
 * choices, [3] vectors such as an anisotropy direction, lists such as Prony moduli or basis
 * coefficients, strings): each is read from JSON by its declared type with range checks and
 * JSON-path errors, and the resolved scene writes it back in a form that reads back equal. */
#include <stddef.h>
#include <string.h>

#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "test.h"

typedef struct kinds {
    pd_real stiffness;
    int layers;
    int hollow;
    int basis;
    pd_vec3 fibre;
    pd_param_reals moduli;
    char label[PD_PARAM_STRING_MAX];
} kinds;

#define K(f) offsetof(kinds, f)
static const pd_param_info k_kinds[] = {
    {"stiffness", PD_PARAM_REAL, K(stiffness), 2, 0, 10, "Pa", NULL, "a number"},
    {"layers", PD_PARAM_INT, K(layers), 3, 1, 8, "1", NULL, "an integer"},
    {"hollow", PD_PARAM_BOOL, K(hollow), 0, 0, 1, "-", NULL, "a bool"},
    {"basis", PD_PARAM_ENUM, K(basis), 1, 0, 0, "-", "stvk|neo_hookean|fung", "a choice"},
    {"fibre", PD_PARAM_VEC3, K(fibre), 0, -1, 1, "1", NULL, "a direction"},
    {"moduli", PD_PARAM_REALS, K(moduli), 0, 0, 1e9, "Pa", NULL, "a list"},
    {"label", PD_PARAM_STRING, K(label), 0, 0, 0, "-", NULL, "a string"},
};
static const pd_param_table k_table = {k_kinds, 7, sizeof(kinds)};

/* Reads every key of `json` into `out` (after the defaults); 0 and the error on failure. */
static int read(const char* json, kinds* out, pd_error* err) {
    pd_params_set_defaults(&k_table, out);
    cJSON* root = cJSON_Parse(json);
    if (!root)
        return 0;
    int ok = 1;
    for (const cJSON* c = root->child; c && ok; c = c->next) {
        char path[PD_JPATH_MAX];
        pd_jpath_key(path, "materials.m", c->string);
        const pd_param_info* p = pd_param_find(&k_table, c->string);
        ok = p && pd_json_param(p, c, out, path, err) == PD_OK;
    }
    cJSON_Delete(root);
    return ok;
}

PD_TEST(every_parameter_type_reads_and_writes_back) {
    kinds a, b;
    pd_error err = {0};
    PD_REQUIRE(read("{\"stiffness\": 4.5, \"layers\": 6, \"hollow\": true, \"basis\": \"fung\","
                    "\"fibre\": [0, 0.6, 0.8], \"moduli\": [3000, 1000, 5e8],"
                    "\"label\": \"cornea\"}",
                    &a, &err));
    PD_CHECK(a.stiffness == 4.5 && a.layers == 6 && a.hollow == 1 && a.basis == 2);
    PD_CHECK(a.fibre.x == 0 && a.fibre.y == 0.6 && a.fibre.z == 0.8);
    PD_CHECK(a.moduli.count == 3 && a.moduli.v[0] == 3000 && a.moduli.v[2] == 5e8);
    PD_CHECK(strcmp(a.label, "cornea") == 0);
    cJSON* out = cJSON_CreateObject();
    pd_scene_add_params(out, &k_table, &a);
    char* text = cJSON_PrintUnformatted(out);
    printf("  resolved: %s\n", text);
    PD_REQUIRE(read(text, &b, &err));
    PD_CHECK(memcmp(&a, &b, sizeof a) == 0);
    cJSON_free(text);
    cJSON_Delete(out);
}

PD_TEST(defaults_follow_the_table) {
    kinds a;
    pd_error err = {0};
    PD_REQUIRE(read("{}", &a, &err));
    PD_CHECK(a.stiffness == 2 && a.layers == 3 && a.hollow == 0 && a.basis == 1);
    PD_CHECK(a.fibre.x == 0 && a.moduli.count == 0 && a.label[0] == '\0');
}

/* Each wrong value is refused at its JSON path (an element's own index for lists). */
PD_TEST(wrong_values_name_their_path) {
    static const struct {
        const char* json;
        const char* path;
        const char* words;
    } k_bad[] = {
        {"{\"fibre\": [0, 1]}", "materials.m.fibre", "expected 3 numbers"},
        {"{\"fibre\": [0, 2, 0]}", "materials.m.fibre[1]", "[-1, 1]"},
        {"{\"fibre\": \"up\"}", "materials.m.fibre", "expected [x, y, z]"},
        {"{\"moduli\": [1, \"a\"]}", "materials.m.moduli[1]", "expected a number"},
        {"{\"moduli\": [-5]}", "materials.m.moduli[0]", "[0, 1e+09]"},
        {"{\"moduli\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}", "materials.m.moduli",
         "at most 16"},
        {"{\"moduli\": 5}", "materials.m.moduli", "expected a list of numbers"},
        {"{\"label\": 5}", "materials.m.label", "expected a string"},
        {"{\"label\": \"0123456789012345678901234567890123456789012345678901234567890123\"}",
         "materials.m.label", "at most 63"},
        {"{\"basis\": \"ogden\"}", "materials.m.basis", "stvk"},
        {"{\"layers\": 2.5}", "materials.m.layers", "integer"},
        {"{\"hollow\": 1}", "materials.m.hollow", "true or false"},
        {"{\"stiffness\": [1]}", "materials.m.stiffness", "expected a number (Pa)"},
    };
    int wrong = 0;
    for (size_t k = 0; k < sizeof k_bad / sizeof k_bad[0]; ++k) {
        kinds a;
        pd_error err = {0};
        int ok = read(k_bad[k].json, &a, &err);
        int named = !ok && strcmp(err.path, k_bad[k].path) == 0 &&
                    strstr(err.message, k_bad[k].words) != NULL;
        if (!named)
            printf("  FAIL %s -> %s: %s\n", k_bad[k].json, err.path, err.message);
        wrong += !named;
    }
    PD_CHECK(wrong == 0);
}
