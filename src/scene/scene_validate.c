/* The checks a scene passes after every key has been read, shared by `run` and `info`
 * (docs/scene-format.md, "What the method can represent"): the material blocks the method
 * honours, time stepping that an int step count can hold, physical values the method can
 * represent, and shapes that suit their body's kind. A value is refused with its JSON path and
 * the representable range; nothing is clamped or silently altered. */
#include <float.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "geometry/mesh.h"
#include "geometry/sampling.h"
#include "scene/scene_json.h"
#include "scene/scene_parse.h"
#include "solvers/solver.h"
#include "world/emitters.h"

/* dt^2 E / (rho h^2) above this loses the inertia term M / dt^2 of the implicit step to rounding
 * next to the stiffness (double keeps 16 digits; 1e12 leaves 4), so that the step no longer
 * describes motion; the He 2017 scenes stay below 1e4. */
#define PD_MAX_STIFFNESS_RATIO 1e12
/* A mesh body whose enclosed volume is below this fraction of its bounding box encloses none. */
#define PD_MIN_MESH_VOLUME_FRACTION 1e-9

/* "drucker_prager, von_mises" for the models in `bits`, or "none". */
static void plasticity_list(unsigned bits, char* out, size_t cap) {
    const char* s = PD_SCENE_PLASTICITY_MODELS;
    out[0] = '\0';
    for (int model = 1; *s; ++model) {
        size_t len = strcspn(s, "|"), used = strlen(out);
        if (bits & (1u << model))
            snprintf(out + used, cap - used, "%s%.*s", used ? ", " : "", (int)len, s);
        s += len + (s[len] == '|');
    }
    if (!out[0])
        snprintf(out, cap, "no plasticity model");
}

/* Name of a plasticity model (its choice in the scene). */
static const char* plasticity_name(pd_plasticity_model model, char* out, size_t cap) {
    const char* s = PD_SCENE_PLASTICITY_MODELS;
    snprintf(out, cap, "this");
    for (int k = 1; *s; ++k) {
        size_t len = strcspn(s, "|");
        if (k == (int)model)
            snprintf(out, cap, "%.*s", (int)len, s);
        s += len + (s[len] == '|');
    }
    return out;
}

static pd_status check_material_blocks(const pd_scene* s, pd_error* err) {
    static const pd_material_support none = {0, 0, 0};
    const pd_material_support* sup = s->solver->materials ? s->solver->materials : &none;
    for (int i = 0; i < s->material_count; ++i) {
        const pd_material_def* m = &s->materials[i];
        char path[PD_JPATH_MAX], child[PD_JPATH_MAX], list[160], name[32];
        pd_jpath_key(path, "materials", m->name);
        if (m->plasticity != PD_PLASTICITY_NONE && !(sup->plasticity & (1u << m->plasticity))) {
            pd_jpath_key(child, path, sup->plasticity ? "plasticity.model" : "plasticity");
            plasticity_list(sup->plasticity, list, sizeof list);
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "method %s does not implement %s plasticity, so the block would be "
                           "ignored; it supports %s%s",
                           s->solver->name, plasticity_name(m->plasticity, name, sizeof name), list,
                           sup->plasticity ? "" : " (elastic materials only)");
        }
        if (m->volume_correction == 1 && !(sup->volume_correction & (1u << m->plasticity))) {
            pd_jpath_key(child, path, "plasticity.volume_correction");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "method %s's %s return has no volume correction, so the key would be "
                           "ignored (leave it out or give false; mpm implements it)",
                           s->solver->name, plasticity_name(m->plasticity, name, sizeof name));
        }
        if (m->rate_dependence && !(sup->rate_dependence & (1u << m->plasticity))) {
            pd_jpath_key(child, path, "plasticity.rate_dependence");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "method %s's %s return has no rate dependence, so the block would be "
                           "ignored (leave it out; mpm implements mu_i on drucker_prager)",
                           s->solver->name, plasticity_name(m->plasticity, name, sizeof name));
        }
        if (m->viscoelasticity != PD_VISCO_NONE &&
            !(sup->viscoelasticity & (1u << m->viscoelasticity))) {
            pd_jpath_key(child, path,
                         sup->viscoelasticity ? "viscoelasticity.model" : "viscoelasticity");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "method %s does not implement %s viscoelasticity, so the block would be "
                           "ignored; it supports %s",
                           s->solver->name,
                           m->viscoelasticity == PD_VISCO_PRONY ? "prony" : "hencky_maxwell",
                           (sup->viscoelasticity & (1u << PD_VISCO_PRONY)) ? "the prony model"
                           : (sup->viscoelasticity & (1u << PD_VISCO_HENCKY_MAXWELL))
                               ? "the hencky_maxwell model"
                               : "no viscoelasticity");
        }
    }
    return PD_OK;
}

/* SCENE.md: a frame is 1/fps s simulated in ceil(1/(fps dt)) equal steps; the count is an int. */
static pd_status check_time(const pd_world_def* w, pd_error* err) {
    double frame = 1.0 / w->fps;
    if (!isfinite(frame))
        return pd_fail(err, PD_ERR_BAD_SCENE, "time.fps",
                       "a frame of 1/fps = 1/%g s is not a representable duration", w->fps);
    if (w->dt > frame * (1 + 1e-9))
        return pd_fail(err, PD_ERR_BAD_SCENE, "time.dt",
                       "a time step of %g s is longer than a frame (1/fps = %g s); a step is "
                       "never stretched or cut to fit: use time.dt <= %g s or a lower time.fps",
                       w->dt, frame, frame);
    double steps = ceil(1.0 / (w->fps * w->dt) - 1e-9);
    if (!(steps <= INT_MAX))
        return pd_fail(err, PD_ERR_BAD_SCENE, w->fps < 1 ? "time.fps" : "time.dt",
                       "a frame of %g s at time.dt = %g s needs %.3g steps, more than the %d "
                       "a frame can hold; the representable range is fps * dt >= %.3g",
                       frame, w->dt, steps, INT_MAX, 1.0 / INT_MAX);
    return PD_OK;
}

/* |v| without overflow for components up to DBL_MAX. */
static pd_real norm(pd_vec3 v) {
    pd_real big = fmax(fabs(v.x), fmax(fabs(v.y), fabs(v.z)));
    return big > 0 ? big * pd_v3_len(pd_v3_scale(v, 1 / big)) : 0;
}

/* Extent of [lo, hi] along the unit direction d. */
static pd_real extent_along(pd_vec3 lo, pd_vec3 hi, pd_vec3 d) {
    pd_vec3 e = pd_v3_sub(hi, lo);
    return fabs(e.x * d.x) + fabs(e.y * d.y) + fabs(e.z * d.z);
}

/* A mesh body must enclose a volume: a flat or single-triangle mesh has no inside to fill. */
static pd_status mesh_bounds(const pd_body_def* b, const char* path, pd_vec3* lo, pd_vec3* hi,
                             pd_error* err) {
    char spath[PD_JPATH_MAX], ppath[PD_JPATH_MAX];
    pd_jpath_key(spath, path, "shape");
    pd_mesh mesh;
    pd_status st = pd_mesh_load(&b->shape, &mesh, spath, err);
    if (st == PD_ERR_MESH)
        st = PD_ERR_BAD_SCENE; /* the file is part of the scene: refused like any key */
    if (st != PD_OK)
        return st;
    pd_mesh_bounds(&mesh, lo, hi);
    pd_vec3 e = pd_v3_sub(*hi, *lo);
    pd_real box = fmax(e.x, fmax(e.y, e.z));
    pd_real volume = pd_mesh_enclosed_volume(&mesh);
    size_t triangles = mesh.triangle_count;
    pd_mesh_free(&mesh);
    if (volume > PD_MIN_MESH_VOLUME_FRACTION * box * box * box)
        return PD_OK;
    pd_jpath_key(ppath, spath, "path");
    return pd_fail(err, PD_ERR_BAD_SCENE, ppath,
                   "mesh '%s' (%zu triangles) encloses no volume (it is flat), so a body has no "
                   "inside to fill with particles; use a closed surface",
                   b->shape.path, triangles);
}

static pd_status body_bounds(const pd_body_def* b, const char* path, pd_vec3* lo, pd_vec3* hi,
                             pd_error* err) {
    if (b->shape.type == PD_SHAPE_MESH)
        return mesh_bounds(b, path, lo, hi, err);
    char spath[PD_JPATH_MAX];
    pd_jpath_key(spath, path, "shape");
    return pd_shape_bounds(&b->shape, lo, hi, spath, err);
}

/* A shell is one layer of particles: its shape is thinner than the spacing in exactly one
 * direction of the lattice; a rod, one line: thinner in exactly two (sampling.c). */
static pd_status check_kind(const pd_scene* s, const pd_body_def* b, const char* path, pd_vec3 lo,
                            pd_vec3 hi, pd_error* err) {
    if (b->kind != PD_BODY_SHELL && b->kind != PD_BODY_ROD)
        return PD_OK;
    char child[PD_JPATH_MAX];
    pd_jpath_key(child, path, "kind");
    /* a method that does not declare one-layer or one-line bodies would simulate them as loose
     * particles: refused */
    unsigned cap = b->kind == PD_BODY_SHELL ? PD_CAP_SHELL : PD_CAP_ROD;
    if (!(pd_solver_capabilities(s->solver) & cap))
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "method %s does not simulate %s bodies (docs/methods.md lists what each "
                       "method does)",
                       s->solver->name, b->kind == PD_BODY_SHELL ? "shell" : "rod");
    pd_vec3 e = pd_v3_sub(hi, lo);
    int thin = (e.x < b->spacing) + (e.y < b->spacing) + (e.z < b->spacing);
    int want = b->kind == PD_BODY_SHELL ? 1 : 2;
    if (thin == want)
        return PD_OK;
    return pd_fail(err, PD_ERR_BAD_SCENE, child,
                   "a %s needs a shape thinner than the spacing (%g m) in exactly %s of x, y, z "
                   "(%s), but its bounding box is %g x %g x %g m",
                   want == 1 ? "shell" : "rod", b->spacing, want == 1 ? "one" : "two",
                   want == 1 ? "one layer of particles" : "one line of particles", e.x, e.y, e.z);
}

/* poisson_disk_relaxed relaxes a solid only: on a shape thinner than the spacing along an axis
 * (every shell and rod, and a thin plate) sampling.c keeps the darts on their plane or line
 * unrelaxed, so the key would do nothing there: refused. The same test as sampling.c's
 * lattice (extent < spacing) on the same bounding box. */
static pd_status check_sampling(const pd_body_def* b, const char* path, pd_vec3 lo, pd_vec3 hi,
                                pd_error* err) {
    if (b->sampling != PD_SAMPLING_POISSON_DISK_RELAXED)
        return PD_OK;
    pd_vec3 e = pd_v3_sub(hi, lo);
    if (e.x >= b->spacing && e.y >= b->spacing && e.z >= b->spacing)
        return PD_OK;
    char child[PD_JPATH_MAX];
    pd_jpath_key(child, path, "sampling");
    return pd_fail(err, PD_ERR_BAD_SCENE, child,
                   "poisson_disk_relaxed relaxes solids only, but this %s's bounding box "
                   "(%g x %g x %g m) is thinner than the spacing (%g m) along an axis, where "
                   "the darts stay unrelaxed; use poisson_disk, jittered or grid",
                   b->kind == PD_BODY_SHELL ? "shell"
                   : b->kind == PD_BODY_ROD ? "rod"
                                            : "body",
                   e.x, e.y, e.z, b->spacing);
}

/* The Young's modulus a body meets when a load comes on: a prony material's youngs_modulus is
 * already E_0, its value before any relaxation; a hencky_maxwell branch (Fang 2019 Eq. 2, 6)
 * adds its stress to the equilibrated one at the same strain while F_N = F, so the body's Lame
 * constants are the two branches' sums (E_E + E_N when their Poisson ratios agree, above it
 * otherwise). Over time the branch relaxes and the body flows under its weight, as a
 * viscoelastic fluid (mu_E near 0, Fig. 14) should. */
static pd_real instantaneous_modulus(const pd_material_def* m) {
    if (m->viscoelasticity != PD_VISCO_HENCKY_MAXWELL)
        return m->youngs_modulus;
    pd_elastic e = pd_material_elastic(m);
    pd_real mu = e.mu + m->maxwell_shear_modulus;
    pd_real lambda = e.lambda + m->maxwell_bulk_modulus - 2 * m->maxwell_shear_modulus / 3;
    return pd_elastic_from_lame(lambda, mu).E;
}

/* What one body's material (its own, or one a material change gives it), spacing, time step
 * and gravity ask of the method. */
static pd_status check_body_physics(const pd_scene* s, const pd_body_def* b, int material,
                                    const char* path, pd_vec3 lo, pd_vec3 hi, pd_error* err) {
    const pd_material_def* m = &s->materials[material];
    char mpath[PD_JPATH_MAX], child[PD_JPATH_MAX];
    pd_jpath_key(mpath, "materials", m->name);
    pd_real h = b->spacing, rho = m->density, dt = s->world.dt;
    pd_real mass = rho * h * h * h;
    if (!(mass >= DBL_MIN) || !isfinite(mass)) {
        pd_jpath_key(child, path, "spacing");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "a particle's mass density * spacing^3 = %g * %g^3 kg is not a "
                       "representable positive number; the representable range is %g to %g kg",
                       rho, h, DBL_MIN, DBL_MAX);
    }
    if (b->kind == PD_BODY_FIXED)
        return PD_OK;
    /* the kinetic energy stats.csv sums must stay a number */
    pd_vec3 e3 = pd_v3_sub(hi, lo);
    pd_real reach = 0.5 * norm(e3), spin = norm(b->angular_velocity) * reach;
    pd_real speed = norm(b->velocity) + spin;
    pd_real energy = 0.5 * rho * fmax(e3.x, h) * fmax(e3.y, h) * fmax(e3.z, h) * speed * speed;
    if (!isfinite(energy)) {
        pd_jpath_key(child, path, spin > norm(b->velocity) ? "angular_velocity" : "velocity");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "the body's kinetic energy (speeds up to %g m/s) is not a representable "
                       "number; the representable range is speeds below %.3g m/s",
                       speed,
                       sqrt(DBL_MAX / (rho * fmax(e3.x, h) * fmax(e3.y, h) * fmax(e3.z, h))));
    }
    /* the stiffness the implicit step meets is the instantaneous one (a Maxwell branch's too) */
    pd_real ratio = dt * dt * instantaneous_modulus(m) / (rho * h * h);
    if (!(ratio <= PD_MAX_STIFFNESS_RATIO)) {
        pd_jpath_key(child, mpath, m->has_lame ? "lame" : "youngs_modulus");
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "with %s (spacing %g m) and time.dt = %g s, dt^2 E / (density spacing^2) "
                       "= %.3g exceeds %g (E the instantaneous Young's modulus, %g Pa, with the "
                       "material's viscoelastic branch if it has one): the inertia of the implicit "
                       "step would be lost to rounding; the representable range is E <= %.3g Pa "
                       "at this dt and spacing",
                       path, h, dt, ratio, PD_MAX_STIFFNESS_RATIO, instantaneous_modulus(m),
                       PD_MAX_STIFFNESS_RATIO * rho * h * h / (dt * dt));
    }
    pd_vec3 gv = s->world.gravity;
    pd_real big = fmax(fabs(gv.x), fmax(fabs(gv.y), fabs(gv.z)));
    if (big > 0) {
        pd_vec3 dir = pd_v3_scale(gv, 1 / big); /* |g| without overflow, even for 1e308 */
        pd_real g = big * pd_v3_len(dir);
        pd_real height = extent_along(lo, hi, pd_v3_scale(dir, 1 / pd_v3_len(dir)));
        /* the weight comes on at once: a viscoelastic body meets it with its instantaneous
         * modulus, and what it does after (creeps, flows) is the method's to simulate */
        pd_real e0 = instantaneous_modulus(m);
        pd_real strain = rho * fmax(height, h) * (g / e0);
        if (!(strain <= 1))
            return pd_fail(err, PD_ERR_BAD_SCENE, "gravity",
                           "at rest under |gravity| = %g m/s^2 the weight of %s (%g m tall, "
                           "material %s) would compress it by density |g| height / E = %.3g, "
                           "more than 100 %%, which no elastic body represents (E = %g Pa, the "
                           "instantaneous Young's modulus: with a hencky_maxwell branch that of "
                           "both branches' summed Lame constants); the representable range is "
                           "|gravity| <= %.3g m/s^2",
                           g, path, height, m->name, strain, e0, e0 / (rho * fmax(height, h)));
    }
    return PD_OK;
}

static pd_status check_bodies(const pd_scene* s, pd_error* err) {
    for (int i = 0; i < s->body_count; ++i) {
        const pd_body_def* b = &s->bodies[i];
        char path[PD_JPATH_MAX];
        pd_vec3 lo, hi;
        pd_jpath_index(path, "bodies", i);
        PD_JTRY(body_bounds(b, path, &lo, &hi, err));
        PD_JTRY(check_kind(s, b, path, lo, hi, err));
        PD_JTRY(check_sampling(b, path, lo, hi, err));
        PD_JTRY(check_body_physics(s, b, b->material, path, lo, hi, err));
        for (int k = 0; k < b->material_change_count; ++k)
            PD_JTRY(check_body_physics(s, b, b->material_changes[k].material, path, lo, hi, err));
    }
    return PD_OK;
}

/* Material changes are refused by a method that does not implement them (they would be
 * ignored); the body's material and each change's by the method's own rule
 * (check_body_material). */
static pd_status check_body_materials(const pd_scene* s, pd_error* err) {
    for (int i = 0; i < s->body_count; ++i) {
        const pd_body_def* b = &s->bodies[i];
        char path[PD_JPATH_MAX], child[PD_JPATH_MAX], cp[PD_JPATH_MAX];
        pd_jpath_index(path, "bodies", i);
        pd_jpath_key(child, path, "material_changes");
        for (int k = 0; k < b->pin_count; ++k)
            if (isfinite(b->pins[k].release) && !s->solver->releases_pins) {
                char at[PD_JPATH_MAX];
                pd_jpath_key(cp, path, "pins");
                pd_jpath_index(at, cp, k);
                pd_jpath_key(cp, at, "release");
                return pd_fail(err, PD_ERR_BAD_SCENE, cp,
                               "method %s does not let pins go (its solve keeps pinned "
                               "particles out for good), so the release would be ignored; "
                               "remove the key or choose a method that honours it",
                               s->solver->name);
            }
        if (b->material_change_count > 0 && !s->solver->change_materials)
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "method %s does not implement material changes, so they would be "
                           "ignored; remove the key or choose a method that implements them",
                           s->solver->name);
        if (!s->solver->check_body_material)
            continue;
        pd_jpath_key(cp, path, "material");
        PD_JTRY(s->solver->check_body_material(s, i, b->material, cp, err));
        for (int k = 0; k < b->material_change_count; ++k) {
            char at[PD_JPATH_MAX];
            pd_jpath_index(at, child, k);
            pd_jpath_key(cp, at, "material");
            PD_JTRY(s->solver->check_body_material(s, i, b->material_changes[k].material, cp, err));
        }
    }
    return PD_OK;
}

/* Every n-th frame with n > frames writes what n = frames writes, frame 0 and the last (which
 * is always written): the larger value would claim a choice it does not make. */
/* Checkpoints only from a method that declares what it keeps across steps. */
static pd_status check_checkpoints(const pd_scene* s, pd_error* err) {
    if (s->output.checkpoint_every == 0 || s->solver->persistent)
        return PD_OK;
    char list[256] = "";
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m)
        if ((*m)->persistent) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", (*m)->name);
        }
    return pd_fail(err, PD_ERR_BAD_SCENE, "output.checkpoint_every",
                   "method %s does not write checkpoints yet (the methods that do: %s); set 0",
                   s->solver->name, list);
}

static pd_status check_output(const pd_scene* s, pd_error* err) {
    PD_JTRY(check_checkpoints(s, err));
    if (s->output.every <= s->world.frames)
        return PD_OK;
    return pd_fail(err, PD_ERR_BAD_SCENE, "output.every",
                   "every %d-th of %d frames writes what every %d writes (the first and the last "
                   "frame); expected 1 to time.frames (%d)",
                   s->output.every, s->world.frames, s->world.frames, s->world.frames);
}

/* Emitters only under a method that takes particles arriving in the run (on_emit), into a
 * dynamic body, of a material the method runs on that body. */
static pd_status check_emitters(const pd_scene* s, pd_error* err) {
    if (s->emitter_count == 0)
        return PD_OK;
    if (!s->solver->on_emit) {
        char list[256] = "";
        for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m)
            if ((*m)->on_emit) {
                size_t used = strlen(list);
                snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", (*m)->name);
            }
        return pd_fail(err, PD_ERR_BAD_SCENE, "emitters",
                       "method %s does not take emitters: its particles keep bonds made when the "
                       "run starts, and a particle arriving later would have none (the methods "
                       "that take them: %s)",
                       s->solver->name, list);
    }
    for (int i = 0; i < s->emitter_count; ++i) {
        const pd_emitter_def* e = &s->emitters[i];
        char path[PD_JPATH_MAX], child[PD_JPATH_MAX];
        pd_jpath_index(path, "emitters", i);
        if (s->bodies[e->body].kind != PD_BODY_DYNAMIC) {
            pd_jpath_key(child, path, "body");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "expected a dynamic body to pour into; body '%s' is not",
                           s->bodies[e->body].name);
        }
        if (e->radius > PD_EMITTER_MAX_RADIUS * e->spacing) {
            pd_jpath_key(child, path, "radius");
            return pd_fail(err, PD_ERR_BAD_SCENE, child,
                           "a nozzle of %.3g spacings in radius pours layers of about %.3g "
                           "particles; expected at most %d spacings (%.3g m at spacing %g m)",
                           e->radius / e->spacing,
                           PD_PI * (e->radius / e->spacing) * (e->radius / e->spacing),
                           PD_EMITTER_MAX_RADIUS, PD_EMITTER_MAX_RADIUS * e->spacing, e->spacing);
        }
        pd_jpath_key(child, path, "material");
        if (s->solver->check_body_material)
            PD_JTRY(s->solver->check_body_material(s, e->body, e->material, child, err));
    }
    return PD_OK;
}

pd_status pd_scene_validate(const pd_scene* s, pd_error* err) {
    PD_JTRY(check_material_blocks(s, err));
    PD_JTRY(check_time(&s->world, err));
    PD_JTRY(check_output(s, err));
    PD_JTRY(check_body_materials(s, err));
    PD_JTRY(check_emitters(s, err));
    return check_bodies(s, err);
}
