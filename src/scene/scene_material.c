/* The scene's `materials` map: density, elastic constants (E + nu or Lame), plasticity,
 * Prony-series viscoelasticity and the method's own material keys (docs/scene-format.md). */
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "core/alloc.h"
#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "scene/scene_tables.h"
#include "solvers/solver.h"

/* Both descriptions are kept filled in the def (for the resolved scene and the checks); the
 * methods take their constants from pd_material_elastic. */
static void fill_elasticity(pd_material_def* m, pd_elastic c) {
    m->youngs_modulus = c.E, m->poisson_ratio = c.nu;
    m->lame_lambda = c.lambda, m->lame_mu = c.mu;
}

static pd_status parse_lame(const cJSON* item, const char* path, pd_material_def* m,
                            pd_error* err) {
    char child[PD_JPATH_MAX];
    double v[2];
    pd_jpath_key(child, path, "lame");
    PD_JTRY(pd_json_numbers(item, child, 2, "[lambda, mu] (Pa)", v, err));
    /* mu > 0 and bulk modulus lambda + 2 mu / 3 > 0 are E > 0 and -1 < nu < 0.5. */
    if (!(v[1] > 0) || !(v[0] + 2.0 * v[1] / 3.0 > 0))
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected mu > 0 and lambda + 2 mu / 3 > 0 (Pa), got lambda = %g, mu = %g",
                       v[0], v[1]);
    m->has_lame = 1;
    m->lame_lambda = (pd_real)v[0];
    m->lame_mu = (pd_real)v[1];
    fill_elasticity(m, pd_elastic_from_lame(m->lame_lambda, m->lame_mu));
    return PD_OK;
}

static pd_status parse_elasticity(const cJSON* obj, const char* path, pd_material_def* m,
                                  pd_error* err) {
    const cJSON* lame = cJSON_GetObjectItemCaseSensitive(obj, "lame");
    if (lame) {
        if (cJSON_GetObjectItemCaseSensitive(obj, "youngs_modulus") ||
            cJSON_GetObjectItemCaseSensitive(obj, "poisson_ratio")) {
            char child[PD_JPATH_MAX];
            pd_jpath_key(child, path, "lame");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "expected either lame [lambda, mu] or youngs_modulus + poisson_ratio, "
                           "got both");
        }
        return parse_lame(lame, path, m, err);
    }
    PD_JTRY(pd_scene_read_key(&pd_scene_material_table, "youngs_modulus", obj, path, 0, m, err));
    PD_JTRY(pd_scene_read_key(&pd_scene_material_table, "poisson_ratio", obj, path, 0, m, err));
    fill_elasticity(m, pd_elastic_from_e_nu(m->youngs_modulus, m->poisson_ratio));
    return PD_OK;
}

/* Keys each plasticity model reads (besides `model`). */
static const char* plasticity_keys(pd_plasticity_model model) {
    switch (model) {
        case PD_PLASTICITY_DRUCKER_PRAGER:
            return "model|friction_angle|cohesion|cone|volume_correction|rate_dependence";
        case PD_PLASTICITY_CAM_CLAY:
            return "model|friction_angle|cohesion|tension_ratio|hardening|log_plastic_volume";
        case PD_PLASTICITY_VON_MISES:
            return "model|yield_stress";
        case PD_PLASTICITY_HERSCHEL_BULKLEY:
            return "model|yield_stress|viscosity|exponent";
        case PD_PLASTICITY_NONE:
            break;
    }
    return "model";
}

/* yield_stress 0 is a fluid: von Mises would carry no stress at all; Herschel-Bulkley flows
 * viscously (a power law) if it has a viscosity. */
static pd_status check_yield_stress(const char* p, const pd_material_def* m, pd_error* err) {
    char child[PD_JPATH_MAX];
    if (m->plasticity == PD_PLASTICITY_VON_MISES && !(m->yield_stress > 0)) {
        pd_jpath_key(child, p, "yield_stress");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected a number > 0 (Pa) for von_mises, got %g", m->yield_stress);
    }
    if (m->plasticity == PD_PLASTICITY_HERSCHEL_BULKLEY && !(m->yield_stress > 0) &&
        !(m->hb_viscosity > 0)) {
        pd_jpath_key(child, p, "viscosity");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "herschel_bulkley with yield_stress 0 needs a viscosity > 0 (Pa s^h): "
                       "without either nothing resists the flow");
    }
    return PD_OK;
}

/* drucker_prager's `rate_dependence` block (mu(I)): its model and keys; mu_2 > mu_s is checked
 * where the cone is known (the method's set-up). */
static pd_status parse_rate(const cJSON* plasticity, const char* path, pd_material_def* m,
                            pd_error* err) {
    char p[PD_JPATH_MAX];
    pd_jpath_key(p, path, "rate_dependence");
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(plasticity, "rate_dependence");
    if (!item)
        return PD_OK;
    const pd_scene_table* t = &pd_scene_rate_table;
    PD_JTRY(pd_scene_check_keys(item, p, t, NULL, err));
    int model = 0;
    PD_JTRY(
        pd_json_choice(item, "model", p, 1, pd_scene_key_find(t, "model")->p.choices, &model, err));
    m->rate_dependence = model + 1;
    return pd_scene_read_keys(t, item, p, m, err);
}

static pd_status parse_plasticity(const cJSON* obj, const char* path, pd_material_def* m,
                                  pd_error* err) {
    char p[PD_JPATH_MAX];
    pd_jpath_key(p, path, "plasticity");
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(obj, "plasticity");
    if (!item)
        return PD_OK;
    const pd_scene_table* t = &pd_scene_plasticity_table;
    PD_JTRY(pd_scene_check_keys(item, p, t, NULL, err));
    int model = 0;
    PD_JTRY(
        pd_json_choice(item, "model", p, 1, pd_scene_key_find(t, "model")->p.choices, &model, err));
    m->plasticity = (pd_plasticity_model)(model + 1);
    PD_JTRY(pd_json_check_object(item, p, plasticity_keys(m->plasticity), NULL, err));
    PD_JTRY(pd_scene_read_key(t, "friction_angle", item, p, 0, m, err));
    PD_JTRY(pd_scene_read_key(t, "cohesion", item, p, 0, m, err));
    if (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER) {
        PD_JTRY(pd_scene_read_key(t, "cone", item, p, 0, m, err));
        PD_JTRY(pd_scene_read_key(t, "volume_correction", item, p, 0, m, err));
        PD_JTRY(parse_rate(item, p, m, err));
    }
    if (m->plasticity == PD_PLASTICITY_CAM_CLAY) {
        PD_JTRY(pd_scene_read_key(t, "tension_ratio", item, p, 0, m, err));
        PD_JTRY(pd_scene_read_key(t, "hardening", item, p, 0, m, err));
        PD_JTRY(pd_scene_read_key(t, "log_plastic_volume", item, p, 0, m, err));
    }
    if (m->plasticity == PD_PLASTICITY_HERSCHEL_BULKLEY) {
        PD_JTRY(pd_scene_read_key(t, "viscosity", item, p, 0, m, err));
        PD_JTRY(pd_scene_read_key(t, "exponent", item, p, 0, m, err));
    }
    int needs_yield =
        m->plasticity == PD_PLASTICITY_VON_MISES || m->plasticity == PD_PLASTICITY_HERSCHEL_BULKLEY;
    PD_JTRY(pd_scene_read_key(t, "yield_stress", item, p, needs_yield, m, err));
    return check_yield_stress(p, m, err);
}

static pd_status parse_prony(const cJSON* item, const char* p, pd_material_def* m, pd_error* err) {
    char child[PD_JPATH_MAX];
    const pd_scene_table* t = &pd_scene_visco_table;
    const pd_scene_key *moduli = pd_scene_key_find(t, "moduli"),
                       *tau = pd_scene_key_find(t, "times");
    int times = 0;
    PD_JTRY(pd_json_check_object(item, p, "model|moduli|times", NULL, err));
    PD_JTRY(pd_json_number_list(item, "moduli", p, (int)moduli->size, pd_scene_key_range(moduli),
                                m->prony_moduli, &m->prony_count, err));
    PD_JTRY(pd_json_number_list(item, "times", p, (int)tau->size, pd_scene_key_range(tau),
                                m->prony_times, &times, err));
    if (times != m->prony_count) {
        pd_jpath_key(child, p, "times");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected as many relaxation times as moduli (%d), got %d", m->prony_count,
                       times);
    }
    pd_real sum = 0;
    for (int k = 0; k < m->prony_count; ++k)
        sum += m->prony_moduli[k];
    if (!(m->youngs_modulus - sum > 0)) {
        pd_jpath_key(child, p, "moduli");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected the long-term modulus E_inf = youngs_modulus - sum(moduli) > 0 "
                       "(Pa), got %g - %g = %g",
                       m->youngs_modulus, sum, m->youngs_modulus - sum);
    }
    return PD_OK;
}

/* The branch's K_N from `bulk_modulus`, or from Fang 2019's own lambda_N (Eq. 6) as `lambda`:
 * one of the two, never both. */
static pd_status read_branch_bulk_modulus(const cJSON* item, const char* p, pd_material_def* m,
                                          pd_error* err) {
    const pd_scene_table* t = &pd_scene_visco_table;
    int has_k = cJSON_HasObjectItem(item, "bulk_modulus"),
        has_l = cJSON_HasObjectItem(item, "lambda");
    char child[PD_JPATH_MAX];
    if (has_k && has_l) {
        pd_jpath_key(child, p, "lambda");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected bulk_modulus or lambda for the branch, not both");
    }
    if (!has_l)
        return pd_scene_read_key(t, "bulk_modulus", item, p, 1, m, err);
    PD_JTRY(pd_scene_read_key(t, "lambda", item, p, 1, m, err));
    m->maxwell_by_lambda = 1;
    m->maxwell_bulk_modulus = m->maxwell_lambda + 2 * m->maxwell_shear_modulus / 3;
    if (!(m->maxwell_bulk_modulus >= 0)) {
        pd_jpath_key(child, p, "lambda");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "expected lambda_N >= -2 shear_modulus / 3 (a bulk modulus K_N >= 0), got "
                       "K_N = %g Pa",
                       m->maxwell_bulk_modulus);
    }
    return PD_OK;
}

static pd_status parse_hencky_maxwell(const cJSON* item, const char* p, pd_material_def* m,
                                      pd_error* err) {
    const pd_scene_table* t = &pd_scene_visco_table;
    PD_JTRY(pd_json_check_object(item, p,
                                 "model|shear_modulus|bulk_modulus|lambda|deviatoric_viscosity|"
                                 "volumetric_viscosity",
                                 NULL, err));
    PD_JTRY(pd_scene_read_key(t, "shear_modulus", item, p, 1, m, err));
    PD_JTRY(read_branch_bulk_modulus(item, p, m, err));
    PD_JTRY(pd_scene_read_key(t, "deviatoric_viscosity", item, p, 1, m, err));
    return pd_scene_read_key(t, "volumetric_viscosity", item, p, 1, m, err);
}

static pd_status parse_viscoelasticity(const cJSON* obj, const char* path, pd_material_def* m,
                                       pd_error* err) {
    char p[PD_JPATH_MAX];
    pd_jpath_key(p, path, "viscoelasticity");
    const cJSON* item = cJSON_GetObjectItemCaseSensitive(obj, "viscoelasticity");
    if (!item)
        return PD_OK;
    const pd_scene_table* t = &pd_scene_visco_table;
    PD_JTRY(pd_scene_check_keys(item, p, t, NULL, err));
    int model = 0;
    PD_JTRY(
        pd_json_choice(item, "model", p, 1, pd_scene_key_find(t, "model")->p.choices, &model, err));
    m->viscoelasticity = (pd_visco_model)(model + 1);
    return m->viscoelasticity == PD_VISCO_PRONY ? parse_prony(item, p, m, err)
                                                : parse_hencky_maxwell(item, p, m, err);
}

/* The method's material keys, stored in m->method_params by its table (any parameter type,
 * blocks as nested objects). */
static pd_status parse_method_params(const cJSON* obj, const char* path, const pd_scene* s,
                                     pd_material_def* m, pd_error* err) {
    const pd_param_table* t = s->solver->material_params;
    if (!t)
        return PD_OK;
    if (t->struct_size > sizeof m->method_params)
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, path,
                       "method %s declares more material parameters than fit", s->method);
    pd_params_set_defaults(t, m->method_params);
    return pd_json_params(obj, path, t, m->method_params, err);
}

/* A key the running method's material table lacks but another method's has (a fluid block
 * under hyperelastic_pd): that method's feature, which the running one does not implement. */
static pd_status refuse_other_methods_keys(const cJSON* obj, const char* path, const pd_scene* s,
                                           pd_error* err) {
    char keys[PD_SCENE_KEYS_MAX], child[PD_JPATH_MAX];
    pd_scene_table_keys(&pd_scene_material_table, keys, sizeof keys);
    const pd_solver_vtable* const* all = pd_solver_all();
    for (const cJSON* c = obj->child; c; c = c->next) {
        if (pd_json_choice_index(keys, c->string) >= 0 ||
            pd_param_find_key(s->solver->material_params, NULL, c->string))
            continue;
        for (int k = 0; all[k]; ++k)
            if (pd_param_find_key(all[k]->material_params, NULL, c->string)) {
                pd_jpath_key(child, path, c->string);
                return pd_fail(err, PD_ERR_BAD_SCENE, child,
                               "method %s does not implement \"%s\" (a material key of method "
                               "%s), so it would be ignored",
                               s->method, c->string, all[k]->name);
            }
    }
    return PD_OK;
}

static pd_status parse_material(const cJSON* obj, const char* path, const pd_scene* s,
                                pd_material_def* m, pd_error* err) {
    if (cJSON_IsObject(obj))
        PD_JTRY(refuse_other_methods_keys(obj, path, s, err));
    PD_JTRY(
        pd_scene_check_keys(obj, path, &pd_scene_material_table, s->solver->material_params, err));
    if (strlen(obj->string) >= sizeof m->name || !obj->string[0])
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "expected a material name of 1 to %d characters", PD_NAME_MAX - 1);
    strcpy(m->name, obj->string);
    PD_JTRY(pd_scene_read_key(&pd_scene_material_table, "density", obj, path, 0, m, err));
    PD_JTRY(parse_elasticity(obj, path, m, err));
    PD_JTRY(parse_plasticity(obj, path, m, err));
    PD_JTRY(parse_viscoelasticity(obj, path, m, err));
    PD_JTRY(parse_method_params(obj, path, s, m, err));
    if (s->solver->check_material)
        return s->solver->check_material(m, s->solver_params, path, err);
    return PD_OK;
}

pd_status pd_scene_parse_materials(const cJSON* item, pd_scene* s, pd_error* err) {
    char found[96];
    int n = cJSON_IsObject(item) ? cJSON_GetArraySize(item) : 0;
    if (n < 1)
        return pd_fail(err, PD_ERR_BAD_SCENE, "materials",
                       "expected an object mapping names to materials (at least one), got %s",
                       pd_json_describe(item, found, sizeof found));
    s->materials = PD_NEW_ARRAY(pd_material_def, (size_t)n);
    if (!s->materials)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "materials", "out of memory");
    s->material_count = n;
    int i = 0;
    for (const cJSON* c = item->child; c; c = c->next, ++i) {
        char path[PD_JPATH_MAX];
        pd_jpath_key(path, "materials", c->string);
        for (const cJSON* d = c->next; d; d = d->next)
            if (strcmp(c->string, d->string) == 0)
                return pd_fail(err, PD_ERR_BAD_SCENE, path, "material \"%s\" is given twice",
                               c->string);
        s->materials[i] = pd_default_material_def();
        PD_JTRY(parse_material(c, path, s, &s->materials[i], err));
    }
    return PD_OK;
}
