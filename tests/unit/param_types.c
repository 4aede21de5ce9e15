/* Parameter tables hold every kind of key a method declares (numbers, integers, bools,
 * choices, [3] vectors such as an anisotropy direction, lists such as Prony moduli or basis
 * coefficients, named terms such as a strain-energy's coefficients, strings): each is read from
 * JSON by its declared type with range checks and JSON-path errors, and the resolved scene writes
 * it back in a form that reads back equal. */
#include <stddef.h>
#include <string.h>

#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "solvers/solver.h"
#include "test.h"

typedef struct kinds {
    pd_real stiffness;
    int layers;
    int hollow;
    int basis;
    pd_vec3 fibre;
    pd_param_reals moduli;
    char label[PD_PARAM_STRING_MAX];
    pd_param_reals terms;
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
    {"terms", PD_PARAM_TERMS, K(terms), 0, -10, 10, "Pa", "A1|A2|B1|B3|C1", "named numbers"},
};
static const pd_param_table k_table = {k_kinds, 8, sizeof(kinds)};

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
                    "\"label\": \"cornea\", \"terms\": {\"B3\": -2.5, \"A1\": 1e-3}}",
                    &a, &err));
    PD_CHECK(a.stiffness == 4.5 && a.layers == 6 && a.hollow == 1 && a.basis == 2);
    PD_CHECK(a.fibre.x == 0 && a.fibre.y == 0.6 && a.fibre.z == 0.8);
    PD_CHECK(a.moduli.count == 3 && a.moduli.v[0] == 3000 && a.moduli.v[2] == 5e8);
    PD_CHECK(strcmp(a.label, "cornea") == 0);
    PD_CHECK(a.terms.count == 5 && a.terms.v[0] == 1e-3 && a.terms.v[3] == -2.5);
    cJSON* out = cJSON_CreateObject();
    pd_scene_add_params(out, &k_table, &a);
    char* text = cJSON_PrintUnformatted(out);
    printf("  resolved: %s\n", text);
    PD_CHECK(strstr(text, "\"terms\":{\"A1\":0.001,\"B3\":-2.5}") != NULL); /* non-zero only */
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
    PD_CHECK(a.terms.count == 5); /* one slot per choice, each 0 */
    for (int k = 0; k < PD_PARAM_MAX_REALS; ++k)
        PD_CHECK(a.terms.v[k] == 0);
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
        {"{\"terms\": {\"A1\": 1, \"C2\": 1}}", "materials.m.terms.C2",
         "unknown key \"C2\"; valid keys: A1, A2, B1, B3, C1"},
        {"{\"terms\": {\"B1\": 10.5}}", "materials.m.terms.B1", "[-10, 10] (Pa), got 10.5"},
        {"{\"terms\": {\"B1\": -11}}", "materials.m.terms.B1", "[-10, 10]"},
        {"{\"terms\": {\"A2\": \"1\"}}", "materials.m.terms.A2", "expected a number"},
        {"{\"terms\": {\"A2\": [1]}}", "materials.m.terms.A2", "expected a number"},
        {"{\"terms\": {\"A2\": 1, \"A2\": 2}}", "materials.m.terms.A2", "given twice"},
        {"{\"terms\": [1, 2]}", "materials.m.terms",
         "expected an object of named numbers (Pa) with names among A1, A2, B1, B3, C1"},
        {"{\"terms\": 5}", "materials.m.terms", "expected an object of named numbers"},
        {"{\"terms\": \"A1\"}", "materials.m.terms", "expected an object of named numbers"},
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

/* ---- blocks: a BLOCK row is a JSON object whose keys are the rows "<block>.<key>" ---- */

typedef struct sand {
    int granular; /* block flags */
    int fibres;
    pd_real stiffness;
    pd_real hardening;
    int model;
    pd_vec3 direction;
    pd_real fibre_stiffness;
} sand;

/* Rows of a block declared apart from it, and a block key ("fibres.stiffness") that shares
 * its name with a top-level row: the level decides which row a key is. */
#define S(f) offsetof(sand, f)
static const pd_param_info k_sand_rows[] = {
    {"granular", PD_PARAM_BLOCK, S(granular), 0, 0, 0, "-", NULL, "a block"},
    {"stiffness", PD_PARAM_REAL, S(stiffness), 2, 0, 10, "Pa", NULL, "a top-level number"},
    {"granular.hardening", PD_PARAM_REAL, S(hardening), 10, 0, 100, "1", NULL, "in the block"},
    {"fibres", PD_PARAM_BLOCK, S(fibres), 0, 0, 0, "-", NULL, "another block"},
    {"granular.model", PD_PARAM_ENUM, S(model), 0, 0, 0, "-", "dry|wet", "in the block"},
    {"fibres.direction", PD_PARAM_VEC3, S(direction), 0, -1, 1, "1", NULL, "in the other"},
    {"fibres.stiffness", PD_PARAM_REAL, S(fibre_stiffness), 5, 0, 10, "Pa", NULL, "same key"},
};
static const pd_param_table k_sand = {k_sand_rows, 7, sizeof(sand)};

/* `json` as the material `name` of a scene's "materials", changed by the `--set` override
 * `set` (NULL: none), then read as the scene reads a material's method keys: its own keys
 * (`density` and the rows of t) checked, then every row of t into out (after the defaults). */
static pd_status read_material(const pd_param_table* t, const char* name, const char* json,
                               const char* set, void* out, pd_error* err) {
    char path[PD_JPATH_MAX];
    cJSON* material = cJSON_Parse(json);
    pd_params_set_defaults(t, out);
    if (!material)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "the test's JSON does not parse");
    cJSON* root = cJSON_CreateObject();
    cJSON_AddItemToObject(cJSON_AddObjectToObject(root, "materials"), name, material);
    pd_jpath_key(path, "materials", name);
    pd_status st = set ? pd_scene_apply_overrides(root, &set, 1, err) : PD_OK;
    material = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(root, "materials"), name);
    if (st == PD_OK)
        st = pd_json_check_object(material, path, "density", t, err);
    if (st == PD_OK)
        st = pd_json_params(material, path, t, out, err);
    cJSON_Delete(root);
    return st;
}

/* A scene that must be refused: its JSON, the path the error names, words of the message. */
typedef struct bad_case {
    const char* json;
    const char* path;
    const char* words;
} bad_case;

/* How many of the cases are not refused as PD_ERR_BAD_SCENE at their path with their words,
 * each printed with its verdict. */
static int misnamed(const bad_case* cases, size_t count,
                    pd_status (*reader)(const char* json, pd_error* err)) {
    int wrong = 0;
    for (size_t k = 0; k < count; ++k) {
        pd_error err = {0};
        pd_status st = reader(cases[k].json, &err);
        int named = st == PD_ERR_BAD_SCENE && strcmp(err.path, cases[k].path) == 0 &&
                    strstr(err.message, cases[k].words) != NULL;
        printf("  %s %s -> %s: %s\n", named ? "ok  " : "FAIL", cases[k].json, err.path,
               err.message);
        wrong += !named;
    }
    return wrong;
}

static pd_status read_sand(const char* json, sand* out, pd_error* err) {
    return read_material(&k_sand, "sand", json, NULL, out, err);
}

static pd_status sand_reader(const char* json, pd_error* err) {
    sand a;
    return read_sand(json, &a, err);
}

/* Fails when the flag is not set, a nested key is not read, or a block key is looked up without
 * its block (fibres.stiffness landing in the top-level stiffness). */
PD_TEST(block_sets_its_flag_and_nested_values) {
    sand a;
    pd_error err = {0};
    PD_REQUIRE(read_sand("{\"density\": 1, \"granular\": {\"hardening\": 40, \"model\": \"wet\"},"
                         "\"fibres\": {\"stiffness\": 3, \"direction\": [0, 1, 0]}}",
                         &a, &err) == PD_OK);
    PD_CHECK(a.granular == 1 && a.fibres == 1);
    PD_CHECK(a.hardening == 40 && a.model == 1);
    PD_CHECK(a.fibre_stiffness == 3 && a.stiffness == 2);
    PD_CHECK(a.direction.x == 0 && a.direction.y == 1 && a.direction.z == 0);
}

/* Fails when a block's flag is set without the block, or its keys lose their defaults. */
PD_TEST(absent_block_leaves_flag_zero_and_defaults) {
    sand a;
    pd_error err = {0};
    PD_REQUIRE(read_sand("{\"stiffness\": 4}", &a, &err) == PD_OK);
    PD_CHECK(a.granular == 0 && a.fibres == 0 && a.stiffness == 4);
    PD_CHECK(a.hardening == 10 && a.model == 0 && a.fibre_stiffness == 5);
    PD_REQUIRE(read_sand("{\"granular\": {}}", &a, &err) == PD_OK); /* given, with its defaults */
    PD_CHECK(a.granular == 1 && a.fibres == 0 && a.hardening == 10 && a.model == 0);
}

/* Each wrong block is refused at its JSON path, listing the keys supported there (only the
 * block's inside it, none of them outside it). */
PD_TEST(block_errors_name_their_path_and_keys) {
    static const bad_case k_bad[] = {
        {"{\"granular\": {\"hardenin\": 1}}", "materials.sand.granular.hardenin",
         "unknown key \"hardenin\"; valid keys: hardening, model"},
        {"{\"hardening\": 1}", "materials.sand.hardening",
         "valid keys: density, granular, stiffness, fibres"},
        {"{\"granular.hardening\": 1}", "materials.sand.granular.hardening", "unknown key"},
        {"{\"fibres\": {\"hardening\": 1}}", "materials.sand.fibres.hardening",
         "valid keys: direction, stiffness"},
        {"{\"granular\": {\"granular\": {}}}", "materials.sand.granular.granular", "unknown key"},
        {"{\"granular\": 5}", "materials.sand.granular",
         "expected an object with keys hardening, model, got the number 5"},
        {"{\"granular\": [1]}", "materials.sand.granular", "expected an object with keys"},
        {"{\"granular\": {\"hardening\": 200}}", "materials.sand.granular.hardening", "[0, 100]"},
        {"{\"granular\": {\"hardening\": \"x\"}}", "materials.sand.granular.hardening",
         "expected a number"},
        {"{\"granular\": {\"model\": \"moist\"}}", "materials.sand.granular.model", "dry"},
        {"{\"fibres\": {\"direction\": [0, 1]}}", "materials.sand.fibres.direction",
         "expected 3 numbers"},
        {"{\"granular\": {\"model\": \"dry\", \"model\": \"wet\"}}",
         "materials.sand.granular.model", "given twice"},
    };
    PD_CHECK(misnamed(k_bad, sizeof k_bad / sizeof k_bad[0], sand_reader) == 0);
}

/* The resolved form nests a given block with all its keys and omits an absent one; both read
 * back equal. Fails when a block is written flat, written when absent (it would read back as
 * given), or written without the keys left at their defaults. */
PD_TEST(block_resolved_form_reads_back) {
    static const char* const k_json[] = {
        "{\"granular\": {\"hardening\": 40}, \"stiffness\": 4}",
        "{\"fibres\": {\"direction\": [0, 0.6, 0.8]}}",
    };
    for (int i = 0; i < 2; ++i) {
        sand a, b;
        pd_error err = {0};
        PD_REQUIRE(read_sand(k_json[i], &a, &err) == PD_OK);
        cJSON* out = cJSON_CreateObject();
        pd_scene_add_params(out, &k_sand, &a);
        char* text = cJSON_PrintUnformatted(out);
        printf("  resolved: %s\n", text);
        const char* nested = i == 0 ? "\"granular\":{\"hardening\":40,\"model\":\"dry\"}"
                                    : "\"fibres\":{\"direction\":[0,0.6,0.8],\"stiffness\":5}";
        PD_CHECK(strstr(text, nested) != NULL);
        PD_CHECK(strstr(text, i == 0 ? "\"fibres\"" : "\"granular\"") == NULL);
        PD_CHECK(strstr(text, "granular.") == NULL && strstr(text, "fibres.") == NULL);
        PD_CHECK(read_sand(text, &b, &err) == PD_OK);
        PD_CHECK(memcmp(&a, &b, sizeof a) == 0);
        cJSON_free(text);
        cJSON_Delete(out);
    }
}

/* A "<block>.<key>" row is read only inside its block, so a row before its block, two levels
 * deep, or a block with a '.' would never be read: such tables are found, and every registered
 * method's tables are free of them. */
PD_TEST(block_tables_are_well_formed) {
    PD_CHECK(pd_param_misplaced_row(&k_sand) == NULL);
    static const pd_param_info k_early[] = {
        {"g.a", PD_PARAM_REAL, 0, 0, 0, 1, "1", NULL, "before its block"},
        {"g", PD_PARAM_BLOCK, 0, 0, 0, 0, "-", NULL, "block"},
    };
    static const pd_param_info k_deep[] = {
        {"g", PD_PARAM_BLOCK, 0, 0, 0, 0, "-", NULL, "block"},
        {"g.a.b", PD_PARAM_REAL, 0, 0, 0, 1, "1", NULL, "two dots"},
    };
    static const pd_param_info k_dotted[] = {
        {"g", PD_PARAM_BLOCK, 0, 0, 0, 0, "-", NULL, "block"},
        {"g.h", PD_PARAM_BLOCK, 0, 0, 0, 0, "-", NULL, "a block in a block"},
    };
    const pd_param_table early = {k_early, 2, sizeof(int)}, deep = {k_deep, 2, sizeof(int)},
                         dotted = {k_dotted, 2, sizeof(int)};
    PD_CHECK(pd_param_misplaced_row(&early) == &k_early[0]);
    PD_CHECK(pd_param_misplaced_row(&deep) == &k_deep[1]);
    PD_CHECK(pd_param_misplaced_row(&dotted) == &k_dotted[1]);
    const pd_solver_vtable* const* all = pd_solver_all();
    for (int i = 0; all[i]; ++i) {
        PD_CHECK(pd_param_misplaced_row(all[i]->params) == NULL);
        PD_CHECK(pd_param_misplaced_row(all[i]->material_params) == NULL);
    }
}

/* ---- terms: an object of named numbers, one slot per name of the row's choices ---- */

typedef struct rubber {
    int hyperelastic; /* block flag */
    int order;
    pd_param_reals g;
} rubber;

/* Terms as a strain-energy's coefficients in a block, the way a method declares them. */
#define R(f) offsetof(rubber, f)
static const pd_param_info k_rubber_rows[] = {
    {"hyperelastic", PD_PARAM_BLOCK, R(hyperelastic), 0, 0, 0, "-", NULL, "a block"},
    {"hyperelastic.order", PD_PARAM_INT, R(order), 2, 1, 3, "1", NULL, "in the block"},
    {"hyperelastic.g", PD_PARAM_TERMS, R(g), 0, 0, 1e6, "Pa", "A1|A2|B1|B2|C1", "terms"},
};
static const pd_param_table k_rubber = {k_rubber_rows, 3, sizeof(rubber)};

static pd_status read_rubber(const char* json, const char* set, rubber* out, pd_error* err) {
    return read_material(&k_rubber, "rubber", json, set, out, err);
}

static pd_status rubber_reader(const char* json, pd_error* err) {
    rubber a;
    return read_rubber(json, NULL, &a, err);
}

/* Fails when a term lands in another choice's slot, the count is not the number of choices,
 * or a term left out keeps a value. */
PD_TEST(terms_fill_the_slot_of_their_name) {
    rubber a;
    pd_error err = {0};
    PD_REQUIRE(read_rubber("{\"hyperelastic\": {\"g\": {\"C1\": 7, \"A2\": 0.5}}}", NULL, &a,
                           &err) == PD_OK);
    PD_CHECK(a.hyperelastic == 1 && a.order == 2 && a.g.count == 5);
    PD_CHECK(a.g.v[0] == 0 && a.g.v[1] == 0.5 && a.g.v[2] == 0 && a.g.v[3] == 0 && a.g.v[4] == 7);
    for (int k = 5; k < PD_PARAM_MAX_REALS; ++k)
        PD_CHECK(a.g.v[k] == 0);
}

/* Fails when a second object keeps the terms of the first that it leaves out. */
PD_TEST(terms_object_replaces_every_term) {
    kinds a;
    pd_error err = {0};
    const pd_param_info* p = pd_param_find(&k_table, "terms");
    cJSON* first = cJSON_Parse("{\"A1\": 1, \"B1\": 2}");
    cJSON* second = cJSON_Parse("{\"B3\": 3}");
    pd_params_set_defaults(&k_table, &a);
    PD_CHECK(pd_json_param(p, first, &a, "materials.m.terms", &err) == PD_OK);
    PD_CHECK(a.terms.v[0] == 1 && a.terms.v[2] == 2);
    PD_CHECK(pd_json_param(p, second, &a, "materials.m.terms", &err) == PD_OK);
    PD_CHECK(a.terms.count == 5 && a.terms.v[0] == 0 && a.terms.v[2] == 0 && a.terms.v[3] == 3);
    cJSON_Delete(first);
    cJSON_Delete(second);
}

/* Each wrong term is a scene error at its own JSON path, an unknown name listing the names
 * accepted; so is a value that is no object of numbers, and the terms' key outside its block. */
PD_TEST(terms_errors_name_their_path) {
    static const bad_case k_bad[] = {
        {"{\"hyperelastic\": {\"g\": {\"A1\": 1, \"C2\": 0.5}}}",
         "materials.rubber.hyperelastic.g.C2",
         "unknown key \"C2\"; valid keys: A1, A2, B1, B2, C1"},
        {"{\"hyperelastic\": {\"g\": {\"B2\": -1}}}", "materials.rubber.hyperelastic.g.B2",
         "expected a value in [0, 1e+06] (Pa), got -1"},
        {"{\"hyperelastic\": {\"g\": {\"B2\": 2e6}}}", "materials.rubber.hyperelastic.g.B2",
         "[0, 1e+06]"},
        {"{\"hyperelastic\": {\"g\": {\"A2\": true}}}", "materials.rubber.hyperelastic.g.A2",
         "expected a number, got true"},
        {"{\"hyperelastic\": {\"g\": [1, 2]}}", "materials.rubber.hyperelastic.g",
         "expected an object of named numbers (Pa) with names among A1, A2, B1, B2, C1, got an "
         "array of 2"},
        {"{\"hyperelastic\": {\"g\": 3}}", "materials.rubber.hyperelastic.g",
         "expected an object of named numbers"},
        {"{\"hyperelastic\": {\"A1\": 3}}", "materials.rubber.hyperelastic.A1",
         "valid keys: order, g"},
        {"{\"g\": {\"A1\": 3}}", "materials.rubber.g", "unknown key \"g\""},
    };
    PD_CHECK(misnamed(k_bad, sizeof k_bad / sizeof k_bad[0], rubber_reader) == 0);
}

/* The resolved form names the non-zero terms only (an empty object when all are 0) and reads
 * back equal. Fails when a zero term is written, a term is written under another name, or the
 * object is left out. */
PD_TEST(terms_resolved_form_reads_back) {
    static const struct {
        const char* json;
        const char* written;
    } k_cases[] = {
        {"{\"hyperelastic\": {\"g\": {\"B2\": 0.25, \"A1\": 2e5, \"C1\": 0}}}",
         "\"hyperelastic\":{\"order\":2,\"g\":{\"A1\":200000,\"B2\":0.25}}"},
        {"{\"hyperelastic\": {\"order\": 3}}", "\"hyperelastic\":{\"order\":3,\"g\":{}}"},
    };
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; ++i) {
        rubber a, b;
        pd_error err = {0};
        PD_REQUIRE(read_rubber(k_cases[i].json, NULL, &a, &err) == PD_OK);
        cJSON* out = cJSON_CreateObject();
        pd_scene_add_params(out, &k_rubber, &a);
        char* text = cJSON_PrintUnformatted(out);
        printf("  resolved: %s\n", text);
        PD_CHECK(strstr(text, k_cases[i].written) != NULL);
        PD_CHECK(read_rubber(text, NULL, &b, &err) == PD_OK);
        PD_CHECK(memcmp(&a, &b, sizeof a) == 0);
        cJSON_free(text);
        cJSON_Delete(out);
    }
}

/* `--set materials.<m>.<block>.<terms>.<name>=v` edits one term of the JSON and keeps the
 * others (or gives the block and the object when the scene has neither); an unknown name is
 * refused at the path the override wrote. */
PD_TEST(terms_set_override_edits_one_term) {
    rubber a;
    pd_error err = {0};
    PD_REQUIRE(read_rubber("{\"hyperelastic\": {\"g\": {\"B1\": 0.5}}}",
                           "materials.rubber.hyperelastic.g.A1=1", &a, &err) == PD_OK);
    PD_CHECK(a.g.v[0] == 1 && a.g.v[2] == 0.5);
    PD_REQUIRE(read_rubber("{}", "materials.rubber.hyperelastic.g.A1=1", &a, &err) == PD_OK);
    PD_CHECK(a.hyperelastic == 1 && a.g.count == 5 && a.g.v[0] == 1 && a.g.v[2] == 0);
    PD_CHECK(read_rubber("{}", "materials.rubber.hyperelastic.g.C2=1", &a, &err) ==
             PD_ERR_BAD_SCENE);
    PD_CHECK(strcmp(err.path, "materials.rubber.hyperelastic.g.C2") == 0);
}

/* A TERMS row has one slot per choice, so more choices than PD_PARAM_MAX_REALS is the
 * table's mistake: refused as a code error (never as the scene's), with no term stored, and
 * found in no registered method's tables. */
PD_TEST(terms_choices_fit_their_slots) {
    pd_param_reals r;
    pd_error err = {0};
    static const pd_param_info k_full = {
        "g", PD_PARAM_TERMS, 0, 0, 0, 1, "1", "a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p", "16 terms"};
    static const pd_param_info k_over = {
        "g", PD_PARAM_TERMS, 0, 0, 0, 1, "1", "a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q", "17 terms"};
    cJSON* last = cJSON_Parse("{\"p\": 1}");
    PD_CHECK(pd_param_term_count(&k_full) == 16 && pd_param_term_count(&k_over) == -1);
    PD_CHECK(pd_json_param(&k_full, last, &r, "g", &err) == PD_OK);
    PD_CHECK(r.count == 16 && r.v[15] == 1);
    pd_param_set_default(&k_over, &r);
    PD_CHECK(r.count == 0);
    PD_CHECK(pd_json_param(&k_over, last, &r, "g", &err) == PD_ERR_INVALID_ARGUMENT);
    PD_CHECK(r.count == 0);
    cJSON_Delete(last);
    const pd_solver_vtable* const* all = pd_solver_all();
    for (int i = 0; all[i]; ++i)
        for (int j = 0; j < 2; ++j) {
            const pd_param_table* t = j ? all[i]->material_params : all[i]->params;
            for (int k = 0; t && k < t->count; ++k)
                PD_CHECK(t->params[k].type != PD_PARAM_TERMS ||
                         pd_param_term_count(&t->params[k]) >= 0);
        }
}
