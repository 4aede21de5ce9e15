/* Every method, by its scene key. Add a method here and in its own folder
 * (docs/adding-a-solver.md). */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "peridot/scene.h"
#include "peridot/world.h"
#include "solvers/solver.h"

extern const pd_solver_vtable pd_projective_pd_solver;
extern const pd_solver_vtable pd_hyperelastic_pd_solver;
extern const pd_solver_vtable pd_sbpd_solver;
extern const pd_solver_vtable pd_mpm_solver;
extern const pd_solver_vtable pd_xpbi_solver;

static const pd_solver_vtable* const k_solvers[] = {
    &pd_projective_pd_solver, &pd_hyperelastic_pd_solver,
    &pd_sbpd_solver,          &pd_mpm_solver,
    &pd_xpbi_solver,          NULL,
};

_Static_assert(sizeof k_solvers / sizeof k_solvers[0] - 1 <= PD_MAX_METHODS,
               "pd_scene.other_solver_params holds PD_MAX_METHODS methods");

const pd_solver_vtable* const* pd_solver_all(void) {
    return k_solvers;
}

const pd_solver_vtable* pd_solver_find(const char* name) {
    for (int i = 0; k_solvers[i]; ++i)
        if (strcmp(k_solvers[i]->name, name) == 0)
            return k_solvers[i];
    return NULL;
}

static pd_method_info method_info(const pd_solver_vtable* v) {
    return (pd_method_info){v->name, v->paper, v->max_time_step != NULL, v->auto_time_step};
}

int pd_method_find(const char* name, pd_method_info* out) {
    const pd_solver_vtable* v = pd_solver_find(name);
    if (v)
        *out = method_info(v);
    return v != NULL;
}

int pd_material_volume_correction(const pd_material_def* m, const pd_material_support* sup) {
    if (m->plasticity == PD_PLASTICITY_NONE || m->volume_correction == 0)
        return 0;
    return m->volume_correction == 1 ||
           (sup && (sup->volume_correction & (1u << m->plasticity)) != 0);
}

pd_status pd_solver_require_volume_body(const pd_scene* scene, int body, const char* method,
                                        pd_error* err) {
    pd_body_kind kind = scene->bodies[body].kind;
    if (kind == PD_BODY_DYNAMIC)
        return PD_OK;
    char at[64];
    snprintf(at, sizeof at, "bodies[%d].kind", body);
    return pd_fail(err, PD_ERR_BAD_SCENE, at,
                   "%s simulates solid volumes: a %s body is not one (use `dynamic`, and a "
                   "collider for an obstacle)",
                   method,
                   kind == PD_BODY_FIXED   ? "fixed"
                   : kind == PD_BODY_SHELL ? "shell"
                                           : "rod");
}

unsigned pd_solver_capabilities(const pd_solver_vtable* m) {
    unsigned c = m->capabilities & PD_CAP_DECLARED;
    if (m->materials) {
        if (m->materials->plasticity & (1u << PD_PLASTICITY_DRUCKER_PRAGER))
            c |= PD_CAP_DRUCKER_PRAGER;
        if (m->materials->plasticity & (1u << PD_PLASTICITY_VON_MISES))
            c |= PD_CAP_VON_MISES;
        if (m->materials->viscoelasticity & (1u << PD_VISCO_PRONY))
            c |= PD_CAP_PRONY;
        if (m->materials->viscoelasticity & (1u << PD_VISCO_HENCKY_MAXWELL))
            c |= PD_CAP_MAXWELL;
    }
    if (m->change_materials)
        c |= PD_CAP_MATERIAL_CHANGES;
    if (m->releases_pins)
        c |= PD_CAP_PIN_RELEASE;
    if (m->persistent)
        c |= PD_CAP_CHECKPOINTS;
    if (m->on_emit)
        c |= PD_CAP_EMITTERS;
    return c;
}

static const struct {
    const char* name;
    const char* doc;
} k_capabilities[PD_CAP_COUNT] = {
    {"elastic", "elastic solid bodies"},
    {"shell", "one-layer bodies (`kind` shell)"},
    {"rod", "one-line bodies (`kind` rod)"},
    {"fluid", "a fluid"},
    {"fracture", "bonds that break for good by a material's criterion"},
    {"contact", "contact between bodies (`solver.contact`)"},
    {"collider_friction", "colliders with Coulomb friction"},
    {"drucker_prager", "Drucker-Prager plasticity (`plasticity.model`)"},
    {"von_mises", "von Mises plasticity (`plasticity.model`)"},
    {"prony", "Prony-series viscoelasticity (`viscoelasticity`)"},
    {"material_changes", "`bodies[i].material_changes`"},
    {"pin_release", "`bodies[i].pins[k].release`"},
    {"checkpoints", "`output.checkpoint_every`"},
    {"hencky_maxwell", "a Maxwell branch on the Hencky strain (`viscoelasticity` hencky_maxwell)"},
    {"emitters", "particles poured in while the run goes (`emitters`)"},
};

static int capability_index(unsigned cap) {
    for (int k = 0; k < PD_CAP_COUNT; ++k)
        if (cap == 1u << k)
            return k;
    return -1;
}

const char* pd_capability_name(unsigned cap) {
    int k = capability_index(cap);
    return k < 0 ? NULL : k_capabilities[k].name;
}

const char* pd_capability_doc(unsigned cap) {
    int k = capability_index(cap);
    return k < 0 ? NULL : k_capabilities[k].doc;
}
