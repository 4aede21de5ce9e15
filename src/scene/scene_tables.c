/* The rows of the scene format's common keys (scene_tables.h). The docs text of each key lives
 * here, beside its type, default and range, so that `peridot docs`, the parser and the resolved
 * scene read one declaration. */
#include "scene/scene_tables.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scene/scene_parse.h"

/* ENUM rows store an int at their offset: the enums of the def structs must be int-sized. */
_Static_assert(sizeof(pd_sampling) == sizeof(int), "pd_sampling is read as an int");
_Static_assert(sizeof(pd_body_kind) == sizeof(int), "pd_body_kind is read as an int");
_Static_assert(sizeof(pd_shape_type) == sizeof(int), "pd_shape_type is read as an int");
_Static_assert(sizeof(pd_collider_type) == sizeof(int), "pd_collider_type is read as an int");
_Static_assert(sizeof(pd_boundary) == sizeof(int), "pd_boundary is read as an int");

#define INF        INFINITY
#define COUNT(a)   (int)(sizeof a / sizeof a[0])
#define HAND       PD_KEY_BY_HAND
#define REQ        PD_KEY_REQUIRED
#define POSITIVE   0, INF /* with PD_KEY_MIN_OPEN: > 0 */
#define ANY_NUMBER -INF, INF

static const pd_scene_key k_top[] = {
    {.p = {"version", PD_PARAM_INT, 0, 1, 1, 1, "-", NULL, "Scene format version."},
     .flags = HAND | REQ,
     .range_doc = "1"},
    {.p = {"method", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "The simulation method; one of the methods below."},
     .flags = HAND | REQ},
    {.p = {"solver", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Options per method, keyed by its name: {\"projective_pd\": {\"iterations\": 40}, "
           "\"sbpd\": {...}}. Every block is checked against its method's keys (listed in the "
           "method's section below) whichever method runs; only the running method's acts. The "
           "flat form of earlier scenes ({\"iterations\": 40}) is read as the running "
           "method's block."},
     .flags = HAND,
     .type_doc = "object",
     .def_doc = "{}"},
    {.p = {"time", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL, "Time stepping (section `time`)."},
     .flags = HAND | REQ,
     .type_doc = "object"},
    {.p = {"gravity", PD_PARAM_VEC3, offsetof(pd_scene_top, gravity), 0, ANY_NUMBER, "m/s^2", NULL,
           "Gravitational acceleration."},
     .def_doc = "[0, -9.81, 0]"},
    {.p = {"seed", PD_PARAM_INT, offsetof(pd_scene_top, seed), 1, 0, 2147483647.0, "1", NULL,
           "Seed of any randomness (jittered sampling); same seed and threads, same results."}},
    {.p = {"materials", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Map from material name to material (section `materials.<name>`)."},
     .flags = HAND | REQ,
     .type_doc = "object",
     .range_doc = "at least one"},
    {.p = {"bodies", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Bodies sampled into particles (section `bodies[i]`)."},
     .flags = HAND | REQ,
     .type_doc = "array",
     .range_doc = "at least one"},
    {.p = {"colliders", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Colliders (section `colliders[i]`)."},
     .flags = HAND,
     .type_doc = "array",
     .def_doc = "[]"},
    {.p = {"emitters", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Continuous sources: nozzles that pour material into a body while the run goes "
           "(section `emitters[i]`)."},
     .flags = HAND,
     .type_doc = "array",
     .def_doc = "[]",
     .range_doc = "a method that takes them (mpm, xpbi)"},
    {.p = {"output", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL, "What is written (section `output`)."},
     .flags = HAND,
     .type_doc = "object",
     .def_doc = "see `output`"},
    {.p = {"peridot_version", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Written into resolved scenes by the program that ran them; not read."},
     .flags = HAND,
     .def_doc = "(ignored)"},
};

static const pd_scene_key k_time[] = {
    {.p = {"dt", PD_PARAM_REAL, offsetof(pd_world_def, dt), 0.004, POSITIVE, "s", NULL,
           "The solver's time step; never longer than a frame, and a frame holds at most "
           "2147483647 steps (refused, not clamped). \"auto\": each method takes the step it "
           "can (an implicit method its documented default, an explicit one 0.9 of its "
           "stability bound, recomputed at every frame's start, and by mpm before every step too). "
           "An object keyed by method "
           "name gives a step per method, {\"projective_pd\": 0.001}; a method it does not name "
           "takes \"auto\"."},
     .flags = REQ | HAND | PD_KEY_MIN_OPEN,
     .type_doc = "number, \"auto\" or object",
     .range_doc = "> 0, <= 1/fps, fps dt >= 1/2147483647"},
    {.p = {"fps", PD_PARAM_REAL, offsetof(pd_world_def, fps), 30, POSITIVE, "1/s", NULL,
           "Output frame rate; a frame is 1/fps s, simulated in ceil(1/(fps dt)) steps."},
     .flags = PD_KEY_MIN_OPEN},
    {.p = {"frames", PD_PARAM_INT, offsetof(pd_world_def, frames), 90, 1, 1e9, "1", NULL,
           "Frames to simulate."}},
    {.p = {"dt_chosen", PD_PARAM_REAL, 0, 0, 0, 0, "s", NULL,
           "Written into resolved scenes with dt \"auto\" under an implicit method: the step it "
           "took (rounded to a whole number of steps per frame); not read. An explicit "
           "method's steps are in stats.csv's dt column, frame by frame."},
     .flags = HAND,
     .range_doc = "-",
     .def_doc = "(ignored)"},
};

static const pd_scene_key k_material[] = {
    {.p = {"density", PD_PARAM_REAL, offsetof(pd_material_def, density), 1000, POSITIVE, "kg/m^3",
           NULL, "Mass density."},
     .flags = REQ | PD_KEY_MIN_OPEN},
    {.p = {"youngs_modulus", PD_PARAM_REAL, offsetof(pd_material_def, youngs_modulus), 1e5,
           POSITIVE, "Pa", NULL,
           "Young's modulus E (the instantaneous modulus E_0 with a Prony series)."},
     .flags = PD_KEY_MIN_OPEN},
    {.p = {"poisson_ratio", PD_PARAM_REAL, offsetof(pd_material_def, poisson_ratio), 0.25, -1, 0.5,
           "1", NULL, "Poisson's ratio nu; a method that cannot honour it refuses the material."},
     .flags = PD_KEY_MIN_OPEN | PD_KEY_MAX_OPEN},
    {.p = {"lame", PD_PARAM_REALS, 0, 0, 0, 0, "Pa", NULL,
           "[lambda, mu] instead of youngs_modulus + poisson_ratio (giving both is an error)."},
     .flags = HAND,
     .size = 2,
     .type_doc = "[2] number",
     .def_doc = "-",
     .range_doc = "mu > 0, lambda + 2 mu / 3 > 0"},
    {.p = {"plasticity", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Plastic flow (section `plasticity`). Refused unless the chosen method implements the "
           "model (its section below lists what it honours)."},
     .flags = HAND,
     .type_doc = "object",
     .def_doc = "none",
     .range_doc = "a model the method implements"},
    {.p = {"viscoelasticity", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Viscoelasticity (section `viscoelasticity`): a Prony series or a Maxwell branch on "
           "the Hencky strain. Refused unless the chosen method implements the model."},
     .flags = HAND,
     .type_doc = "object",
     .def_doc = "none",
     .range_doc = "a method that implements it"},
};

/* `model` is stored as pd_plasticity_model, whose 0 is "none" (the absence of the block). */
static const pd_scene_key k_plasticity[] = {
    {.p = {"model", PD_PARAM_ENUM, 0, 0, 0, 0, "-", PD_SCENE_PLASTICITY_MODELS, "Yield criterion."},
     .flags = HAND | REQ},
    {.p = {"friction_angle", PD_PARAM_REAL, offsetof(pd_material_def, friction_angle), 30, 0, 90,
           "degrees", NULL, "Internal friction angle (drucker_prager, cam_clay)."},
     .flags = PD_KEY_MAX_OPEN},
    {.p = {"cohesion", PD_PARAM_REAL, offsetof(pd_material_def, cohesion), 0, 0, INF, "Pa", NULL,
           "Cohesion (drucker_prager, cam_clay)."}},
    {.p = {"cone", PD_PARAM_ENUM, offsetof(pd_material_def, cone), 0, 0, 0, "-",
           "compression|extension",
           "drucker_prager: the cone friction_angle and cohesion give, the same under every "
           "method (src/constitutive/drucker_prager.h). compression: through Mohr-Coulomb's "
           "triaxial-compression corners (Klar et al. 2016; a triaxial test fails at q = 6 sin "
           "phi / (3 - sin phi) p); extension: through its extension corners (3 + sin phi, He "
           "2017 Eq. 15 as printed), a narrower cone."}},
    {.p = {"volume_correction", PD_PARAM_BOOL, offsetof(pd_material_def, volume_correction), 1, 0,
           1, "-", NULL,
           "drucker_prager: the volume correction of Tampubolon et al. 2017 (Sec. 4.3.1): the "
           "volume sand gains when pulled apart is kept per particle and given back to the next "
           "trial strain, so that sand pushed back together closes it stress-free and does not "
           "compact beyond the volume it had. Implemented by mpm (on by default there); true is "
           "refused by the methods without it."},
     .def_doc = "the method's (mpm: true)"},
    {.p = {"rate_dependence", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "drucker_prager: a rate-dependent friction (section `rate_dependence`), beyond the "
           "papers. Implemented by mpm; refused by the methods without it."},
     .flags = HAND,
     .type_doc = "object",
     .def_doc = "none",
     .range_doc = "a method that implements it"},
    {.p = {"yield_stress", PD_PARAM_REAL, offsetof(pd_material_def, yield_stress), 0, 0, INF, "Pa",
           NULL,
           "Yield stress sigma_Y (von_mises, herschel_bulkley; required there): flow from "
           "sqrt(3 J2) = sigma_Y, the yield stress in shear tau_y = sigma_Y / sqrt 3. "
           "herschel_bulkley takes 0 (a power-law fluid; h 1: Newtonian of viscosity eta / 2) "
           "with a viscosity > 0."},
     .def_doc = "required",
     .range_doc = "> 0 (von_mises), >= 0 (herschel_bulkley)"},
    {.p = {"viscosity", PD_PARAM_REAL, offsetof(pd_material_def, hb_viscosity), 0, 0, INF, "Pa s^h",
           NULL,
           "herschel_bulkley: eta of Yue et al. 2015's flow rule (Sec. 4; "
           "src/constitutive/herschel_bulkley.h): past the von Mises surface the plastic rate is "
           "((|s| - sqrt(2/3) sigma_Y) / eta)^(1 / h), so that simple shear flows at tau = tau_y + "
           "(eta / sqrt 2) (gamma' / sqrt 2)^h (h 1: Bingham with plastic viscosity eta / 2). 0: "
           "perfect von Mises plasticity."}},
    {.p = {"exponent", PD_PARAM_REAL, offsetof(pd_material_def, hb_exponent), 1, 0, INF, "1", NULL,
           "herschel_bulkley: h of the flow rule (1 Bingham, below 1 shear-thinning, above 1 "
           "shear-thickening)."},
     .flags = PD_KEY_MIN_OPEN},
    {.p = {"tension_ratio", PD_PARAM_REAL, offsetof(pd_material_def, cc_tension_ratio), 0.05, 0,
           INF, "1", NULL,
           "cam_clay: beta of the non-associated Cam-clay ellipse (Wolper et al. 2019; "
           "src/constitutive/cam_clay.h), the pressure running from -beta p_0 (tension) to p_0 "
           "(compaction); friction_angle gives its slope M = 6 sin phi / (3 - sin phi). Yu 2024 "
           "Table 2: 0.05 (snow) to 0.5."}},
    {.p = {"hardening", PD_PARAM_REAL, offsetof(pd_material_def, cc_hardening), 30, 0, INF, "1",
           NULL,
           "cam_clay: xi, p_0 = K sinh(xi max(-alpha, 0)) with alpha = ln J^P (Yu 2024 Table 2: "
           "30 for snow, 1)."}},
    {.p = {"log_plastic_volume", PD_PARAM_REAL, offsetof(pd_material_def, cc_log_plastic_volume),
           -0.0005, -1, 1, "1", NULL,
           "cam_clay: alpha_0, ln J^P at the start: below 0 the material starts compacted, with "
           "p_0 = K sinh(-xi alpha_0); above 0 it has no strength until compacted (Yu 2024 "
           "Table 2: -0.0005 for snow, -0.02)."}},
};

/* `model` is stored as rate_dependence, whose 0 is none (the absence of the block). */
static const pd_scene_key k_rate[] = {
    {.p = {"model", PD_PARAM_ENUM, 0, 0, 0, 0, "-", PD_SCENE_RATE_MODELS,
           "mu_i: the mu(I) rheology of dense granular flow (GDR MiDi 2004; Jop, Forterre & "
           "Pouliquen 2006 Eq. 2-3) as a rate-dependent Drucker-Prager cone, a departure beyond "
           "Klar 2016 (src/constitutive/hencky_plasticity.h): the friction sqrt(J2) / p is "
           "mu(I) = mu_s + (mu_2 - mu_s) / (I_0 / I + 1), I = gamma_dot d / sqrt(p / rho_s), "
           "gamma_dot the plastic shear rate the return takes over the step (du/dy in simple "
           "shear), p = I1 / 3, rho_s = density / solid_fraction. mu_s is the cone's own 3 b "
           "(the friction its sand bears in shear along a plane; friction_angle and cone set "
           "it)."},
     .flags = HAND | REQ},
    {.p = {"mu_2", PD_PARAM_REAL, offsetof(pd_material_def, mui_mu_2), 0, 0, INF, "1", NULL,
           "mu_i: the friction at large I (> mu_s). Left out: mu_s + 0.2616, Jop 2006's glass "
           "beads' tan 32.76 - tan 20.9 (their mu_2 0.643 over mu_s 0.382)."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "mu_s + 0.2616",
     .range_doc = "> mu_s"},
    {.p = {"I_0", PD_PARAM_REAL, offsetof(pd_material_def, mui_i0), 0.279, 0, INF, "1", NULL,
           "mu_i: the inertial number at which the friction is halfway from mu_s to mu_2 (Jop "
           "2006: 0.279)."},
     .flags = PD_KEY_MIN_OPEN},
    {.p = {"grain_diameter", PD_PARAM_REAL, offsetof(pd_material_def, mui_grain_diameter), 0.5e-3,
           0, INF, "m", NULL,
           "mu_i: d, the grains' diameter (a property of the sand, not of the particles; Jop "
           "2006: 0.5 mm glass beads)."},
     .flags = PD_KEY_MIN_OPEN},
    {.p = {"solid_fraction", PD_PARAM_REAL, offsetof(pd_material_def, mui_solid_fraction), 0.6, 0,
           1, "1", NULL,
           "mu_i: phi, the material's density over its grains' rho_s (Jop 2006: 0.6)."},
     .flags = PD_KEY_MIN_OPEN},
};

static const pd_scene_key k_visco[] = {
    {.p = {"model", PD_PARAM_ENUM, 0, 0, 0, 0, "-", PD_SCENE_VISCO_MODELS,
           "prony: E(t) = E_inf + sum E_k exp(-t / tau_k), E_inf = youngs_modulus - sum E_k. "
           "hencky_maxwell: a Maxwell branch beside the elastic one (youngs_modulus, "
           "poisson_ratio), StVK on the Hencky strain of its own F_N with the viscous flow of "
           "Fang 2019 Eq. 7-8."},
     .flags = HAND | REQ},
    {.p = {"moduli", PD_PARAM_REALS, offsetof(pd_material_def, prony_moduli), 0, POSITIVE, "Pa",
           NULL, "prony: the moduli E_k; the long-term modulus E_inf must stay > 0."},
     .flags = HAND | PD_KEY_MIN_OPEN,
     .size = PD_MAX_PRONY,
     .type_doc = "array of number",
     .def_doc = "required (prony)",
     .range_doc = "1 to 8 values, each > 0, sum < E_0"},
    {.p = {"times", PD_PARAM_REALS, offsetof(pd_material_def, prony_times), 0, POSITIVE, "s", NULL,
           "prony: the relaxation times tau_k."},
     .flags = HAND | PD_KEY_MIN_OPEN,
     .size = PD_MAX_PRONY,
     .type_doc = "array of number",
     .def_doc = "required (prony)",
     .range_doc = "as many as moduli, each > 0"},
    {.p = {"shear_modulus", PD_PARAM_REAL, offsetof(pd_material_def, maxwell_shear_modulus), 0, 0,
           INF, "Pa", NULL, "hencky_maxwell: mu_N of the branch (Eq. 6)."},
     .def_doc = "required (hencky_maxwell)"},
    {.p = {"bulk_modulus", PD_PARAM_REAL, offsetof(pd_material_def, maxwell_bulk_modulus), 0, 0,
           INF, "Pa", NULL,
           "hencky_maxwell: K_N of the branch; its lambda_N = K_N - 2 mu_N / 3 (Eq. 6)."},
     .def_doc = "required (hencky_maxwell): this or lambda"},
    {.p = {"lambda", PD_PARAM_REAL, offsetof(pd_material_def, maxwell_lambda), 0, ANY_NUMBER, "Pa",
           NULL,
           "hencky_maxwell: lambda_N of the branch (Eq. 6), in place of bulk_modulus: K_N = "
           "lambda_N + 2 mu_N / 3, which must be >= 0."},
     .def_doc = "required (hencky_maxwell): this or bulk_modulus"},
    {.p = {"deviatoric_viscosity", PD_PARAM_REAL,
           offsetof(pd_material_def, maxwell_deviatoric_viscosity), 0, POSITIVE, "Pa s", NULL,
           "hencky_maxwell: nu_d of Eq. 7; the branch's shear relaxes with tau_d = nu_d / (2 "
           "mu_N)."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "required (hencky_maxwell)"},
    {.p = {"volumetric_viscosity", PD_PARAM_REAL,
           offsetof(pd_material_def, maxwell_volumetric_viscosity), 0, POSITIVE, "Pa s", NULL,
           "hencky_maxwell: nu_v of Eq. 7; the branch's volume relaxes at the rate 2 K_N / "
           "nu_v."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "required (hencky_maxwell)"},
};

static const pd_scene_key k_body[] = {
    {.p = {"name", PD_PARAM_STRING, offsetof(pd_body_def, name), 0, 0, 0, "-", NULL,
           "Exported as the `body` attribute and used in stats.csv pin columns."},
     .size = PD_NAME_MAX,
     .def_doc = "body<i>",
     .range_doc = "unique"},
    {.p = {"material", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL, "The body's material."},
     .flags = HAND | REQ,
     .range_doc = "a key of `materials`"},
    {.p = {"spacing", PD_PARAM_REAL, offsetof(pd_body_def, spacing), 0.01, POSITIVE, "m", NULL,
           "Particle spacing; the method derives its horizon / kernel radius from it."},
     .flags = REQ | PD_KEY_MIN_OPEN},
    {.p = {"shape", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL, "Geometry (section `shape`)."},
     .flags = HAND | REQ,
     .type_doc = "object"},
    {.p = {"sampling", PD_PARAM_ENUM, offsetof(pd_body_def, sampling), PD_SAMPLING_GRID, 0, 0, "-",
           PD_SCENE_SAMPLINGS,
           "grid: lattice min + spacing (i + 1/2) over the bounding box, kept where inside; "
           "jittered: grid plus offsets from `seed`; poisson_disk: darts at least 0.85 spacing "
           "apart from `seed`; poisson_disk_relaxed: those darts shifted over 30 iterations "
           "towards every particle's kernel-gradient sum over a support of 2 spacings matching "
           "the shape's continuum (balanced neighbourhoods: a uniform stress then puts almost no "
           "force on an inner particle of a corrected-gradient method; solids only: refused on a "
           "shell, a rod or a body thinner than the spacing along an axis). A "
           "particle's volume (its mass over the density) is spacing^3, for poisson_disk and "
           "poisson_disk_relaxed the shape's volume over the count (it packs about 1.08 a "
           "spacing^3; a mesh of overlapping closed pieces occupies their union, measured on a "
           "lattice of the spacing)."}},
    {.p = {"velocity", PD_PARAM_VEC3, offsetof(pd_body_def, velocity), 0, ANY_NUMBER, "m/s", NULL,
           "Initial velocity."},
     .range_doc = "not for kind fixed"},
    {.p = {"angular_velocity", PD_PARAM_VEC3, offsetof(pd_body_def, angular_velocity), 0,
           ANY_NUMBER, "rad/s", NULL, "Initial spin about the body's centre."},
     .range_doc = "not for kind fixed"},
    {.p = {"kind", PD_PARAM_ENUM, offsetof(pd_body_def, kind), PD_BODY_DYNAMIC, 0, 0, "-",
           PD_SCENE_KINDS,
           "fixed: ghost particles that never move; shell: one layer (the shape's bounding box is "
           "thinner than spacing along exactly one axis); rod: a line of particles (thinner along "
           "exactly two)."}},
    {.p = {"pins", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL, "Pinned regions (section `pins[k]`)."},
     .flags = HAND,
     .type_doc = "array",
     .def_doc = "[]"},
    {.p = {"material_changes", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Changes of material at given times, for the whole body or the part of it in a "
           "region (section `material_changes[k]`)."},
     .flags = HAND,
     .type_doc = "array",
     .def_doc = "[]",
     .range_doc = "a method that implements them"},
};

/* Which type takes which key is the rule of scene_body.c (shape_keys); min, max, center, radius,
 * base and height are required by the types that take them. */
static const pd_scene_key k_shape[] = {
    {.p = {"type", PD_PARAM_ENUM, offsetof(pd_shape_def, type), PD_SHAPE_BOX, 0, 0, "-",
           PD_SCENE_SHAPE_TYPES, "Which keys follow."},
     .flags = REQ},
    {.p = {"min", PD_PARAM_VEC3, offsetof(pd_shape_def, min), 0, ANY_NUMBER, "m", NULL,
           "Box: lower corner."},
     .def_doc = "required (box)",
     .range_doc = "< max in x, y, z"},
    {.p = {"max", PD_PARAM_VEC3, offsetof(pd_shape_def, max), 0, ANY_NUMBER, "m", NULL,
           "Box: upper corner."},
     .def_doc = "required (box)",
     .range_doc = "> min in x, y, z"},
    {.p = {"center", PD_PARAM_VEC3, offsetof(pd_shape_def, center), 0, ANY_NUMBER, "m", NULL,
           "Sphere: centre."},
     .def_doc = "required (sphere)"},
    {.p = {"radius", PD_PARAM_REAL, offsetof(pd_shape_def, radius), 0.5, POSITIVE, "m", NULL,
           "Sphere or cylinder radius."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "required (sphere, cylinder)"},
    {.p = {"base", PD_PARAM_VEC3, offsetof(pd_shape_def, base), 0, ANY_NUMBER, "m", NULL,
           "Cylinder: centre of the base disc."},
     .def_doc = "required (cylinder)"},
    {.p = {"axis", PD_PARAM_VEC3, offsetof(pd_shape_def, axis), 0, ANY_NUMBER, "1", NULL,
           "Cylinder: axis direction (normalised)."},
     .def_doc = "[0, 1, 0]",
     .range_doc = "non-zero"},
    {.p = {"height", PD_PARAM_REAL, offsetof(pd_shape_def, height), 1, POSITIVE, "m", NULL,
           "Cylinder: length along axis."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "required (cylinder)"},
    {.p = {"path", PD_PARAM_STRING, offsetof(pd_shape_def, path), 0, 0, 0, "-", NULL,
           "Mesh: OBJ, PLY or STL file, relative to the scene file's folder. PLY (ascii or "
           "binary) is read by Peridot: the vertex element's x, y, z and the face element's "
           "vertex_indices, polygons as fans of triangles; OBJ and STL through Assimp. A body's "
           "mesh must enclose a volume (a flat or single-triangle mesh is refused); counts in "
           "its header must fit in the file's size."},
     .flags = HAND,
     .size = PD_PATH_MAX,
     .def_doc = "required (mesh)",
     .range_doc = "an existing regular file"},
    {.p = {"scale", PD_PARAM_REAL, offsetof(pd_shape_def, scale), 1, POSITIVE, "1", NULL,
           "Mesh: uniform scale, applied first."},
     .flags = PD_KEY_MIN_OPEN},
    {.p = {"rotate", PD_PARAM_REALS, 0, 0, 0, 0, "1, degrees", NULL,
           "Mesh: [axis_x, axis_y, axis_z, angle], applied after scale."},
     .flags = HAND,
     .size = 4,
     .type_doc = "[4] number",
     .def_doc = "[0, 1, 0, 0]",
     .range_doc = "axis non-zero"},
    {.p = {"translate", PD_PARAM_VEC3, offsetof(pd_shape_def, translate), 0, ANY_NUMBER, "m", NULL,
           "Mesh: translation, applied last."}},
};

static const pd_scene_key k_pin[] = {
    {.p = {"region", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "A shape (section `shape`); the body's particles inside follow the keyframes."},
     .flags = HAND | REQ,
     .type_doc = "object",
     .range_doc = "box, sphere or cylinder"},
    {.p = {"keyframes", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Motion of the region (section `keyframes[j]`), piecewise linear, held after the "
           "last."},
     .flags = HAND,
     .type_doc = "array",
     .def_doc = "[] (fixed in place)"},
    {.p = {"release", PD_PARAM_REAL, offsetof(pd_pin_def, release), INF, 0, INF, "s", NULL,
           "Time the pin lets go: from the first step starting at or after it (to 1e-6 of a "
           "step) its particles move freely, e.g. a body stretched and released. Only for a "
           "method that honours it (its section below); refused otherwise."},
     .def_doc = "never",
     .range_doc = ">= 0"},
};

static const pd_scene_key k_material_change[] = {
    {.p = {"t", PD_PARAM_REAL, offsetof(pd_material_change_def, t), 0, 0, INF, "s", NULL,
           "When: the change applies at the start of the first step whose start time is >= t "
           "(to 1e-6 of a step)."},
     .flags = REQ,
     .range_doc = ">= 0, not below the previous change's"},
    {.p = {"material", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "The material the particles take from then on."},
     .flags = HAND | REQ,
     .range_doc = "a key of `materials`; the method may refuse some (its section below)"},
    {.p = {"region", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "A shape (section `shape`): only the body's particles sampled inside it change "
           "(tested on the sampled positions, as pins: the same particles whenever the change "
           "comes, wherever they have moved). It must hold at least one of them."},
     .flags = HAND,
     .type_doc = "object",
     .def_doc = "none (the whole body)",
     .range_doc = "box, sphere or cylinder"},
};

static const pd_scene_key k_keyframe[] = {
    {.p = {"t", PD_PARAM_REAL, offsetof(pd_keyframe, t), 0, 0, INF, "s", NULL,
           "Time of the keyframe."},
     .flags = REQ,
     .range_doc = ">= 0, strictly increasing"},
    {.p = {"translate", PD_PARAM_VEC3, offsetof(pd_keyframe, translate), 0, ANY_NUMBER, "m", NULL,
           "Displacement from the start."}},
    {.p = {"rotate", PD_PARAM_REALS, 0, 0, 0, 0, "1, degrees", NULL,
           "Rotation [axis_x, axis_y, axis_z, angle] about the region's / collider's centre."},
     .flags = HAND,
     .size = 4,
     .type_doc = "[4] number",
     .def_doc = "[0, 1, 0, 0]",
     .range_doc = "axis non-zero"},
};

/* Besides these, a collider other than a plane takes the keys of its shape type (k_shape). */
static const pd_scene_key k_collider[] = {
    {.p = {"type", PD_PARAM_ENUM, offsetof(pd_collider_def, type), PD_COLLIDER_PLANE, 0, 0, "-",
           PD_SCENE_COLLIDER_TYPES,
           "box, sphere, cylinder and mesh take the keys of section `shape` (without `type`) in "
           "the collider object itself."},
     .flags = REQ},
    {.p = {"point", PD_PARAM_VEC3, offsetof(pd_collider_def, point), 0, ANY_NUMBER, "m", NULL,
           "Plane: a point on the plane."}},
    {.p = {"normal", PD_PARAM_VEC3, offsetof(pd_collider_def, normal), 0, ANY_NUMBER, "1", NULL,
           "Plane: outward normal (normalised); particles stay on its side."},
     .def_doc = "required (plane)",
     .range_doc = "non-zero"},
    {.p = {"inside", PD_PARAM_BOOL, offsetof(pd_collider_def, inside), 0, 0, 1, "-", NULL,
           "Not for planes. true: keep particles inside (a container); for an open mesh, put the "
           "wall on the front of its faces instead of behind them."}},
    {.p = {"thickness", PD_PARAM_REAL, offsetof(pd_collider_def, thickness), 0, POSITIVE, "m", NULL,
           "Mesh only, and only for an open mesh (some edge in one triangle): the wall behind its "
           "faces (the side opposite their counter-clockwise normal). At least twice the distance "
           "a particle moves in one step: one that gets deeper than half of it leaves through the "
           "back. A closed mesh is a solid and takes no thickness."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "required (open mesh)"},
    {.p = {"boundary", PD_PARAM_ENUM, offsetof(pd_collider_def, boundary), PD_BOUNDARY_SLIP, 0, 0,
           "-", PD_SCENE_BOUNDARIES,
           "slip: project out, keep tangential velocity, apply Coulomb friction; no_slip: "
           "stick (particles within half a spacing of the surface are held tangentially)."}},
    {.p = {"friction", PD_PARAM_REAL, offsetof(pd_collider_def, friction), 0, 0, INF, "1", NULL,
           "Coulomb friction coefficient (slip; refused with no_slip, which sticks regardless)."},
     .range_doc = ">= 0, slip only"},
    {.p = {"velocity", PD_PARAM_VEC3, offsetof(pd_collider_def, velocity), 0, ANY_NUMBER, "m/s",
           NULL, "Constant velocity."},
     .range_doc = "not with keyframes"},
    {.p = {"angular_velocity", PD_PARAM_VEC3, offsetof(pd_collider_def, angular_velocity), 0,
           ANY_NUMBER, "rad/s", NULL, "Constant spin about the collider's centre."},
     .range_doc = "not with keyframes"},
    {.p = {"keyframes", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "Scripted motion (section `keyframes[j]`) instead of a constant velocity."},
     .flags = HAND,
     .type_doc = "array",
     .def_doc = "[]"},
};

/* `format` and `attributes` are lists of choices stored as bit sets (bit i: choice i). */
static const pd_scene_key k_emitter[] = {
    {.p = {"body", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL,
           "The body the emitted particles join, as its tail (its `body` attribute, its contact "
           "field, its material changes)."},
     .flags = HAND | REQ,
     .range_doc = "a name of `bodies`, kind dynamic"},
    {.p = {"material", PD_PARAM_STRING, 0, 0, 0, 0, "-", NULL, "The emitted material."},
     .flags = HAND,
     .def_doc = "the body's",
     .range_doc = "a key of `materials`"},
    {.p = {"center", PD_PARAM_VEC3, offsetof(pd_emitter_def, center), 0, ANY_NUMBER, "m", NULL,
           "Centre of the nozzle: a disc normal to `direction`."},
     .flags = REQ},
    {.p = {"direction", PD_PARAM_VEC3, offsetof(pd_emitter_def, direction), 0, ANY_NUMBER, "1",
           NULL, "Direction of the flow out of the nozzle (normalised)."},
     .def_doc = "[0, -1, 0]",
     .range_doc = "non-zero"},
    {.p = {"radius", PD_PARAM_REAL, offsetof(pd_emitter_def, radius), 0, POSITIVE, "m", NULL,
           "Radius of the nozzle. A layer is the lattice of `spacing` in the disc, one point "
           "on its centre: about pi radius^2 / spacing^2 particles."},
     .flags = REQ | PD_KEY_MIN_OPEN},
    {.p = {"speed", PD_PARAM_REAL, offsetof(pd_emitter_def, speed), 0, POSITIVE, "m/s", NULL,
           "Exit speed: the particles appear with velocity speed direction, a layer each time the "
           "material in the nozzle has moved one spacing (every spacing / speed s)."},
     .flags = REQ | PD_KEY_MIN_OPEN},
    {.p = {"start", PD_PARAM_REAL, offsetof(pd_emitter_def, start), 0, 0, INF, "s", NULL,
           "Time of the first layer."}},
    {.p = {"stop", PD_PARAM_REAL, offsetof(pd_emitter_def, stop), 0, 0, INF, "s", NULL,
           "No layer from this time on."},
     .def_doc = "the run's end",
     .range_doc = "> start"},
    {.p = {"spacing", PD_PARAM_REAL, offsetof(pd_emitter_def, spacing), 0, POSITIVE, "m", NULL,
           "Particle spacing of the stream; each particle has mass density spacing^3."},
     .flags = PD_KEY_MIN_OPEN,
     .def_doc = "the body's"},
};

static const pd_scene_key k_output[] = {
    {.p = {"dir", PD_PARAM_STRING, offsetof(pd_output_def, dir), 0, 0, 0, "-", NULL,
           "Output folder, relative to the working directory; `peridot run -o` overrides it. A "
           "run first removes an earlier run's frame_*.ply/.vtk/.vtu, frames.pvd, stats.csv, "
           "scene.resolved.json and preview.png there; a folder holding other files is refused "
           "unless "
           "`--overwrite`. A run holds the folder while it runs (a lock on `.peridot.lock`, "
           "naming its pid): a second run into it is refused."},
     .size = PD_PATH_MAX,
     .def_doc = "\"out\""},
    {.p = {"every", PD_PARAM_INT, offsetof(pd_output_def, every), 1, 1, INT_MAX, "frames", NULL,
           "Write every n-th frame; the last frame is always written too."},
     .range_doc = "1 to time.frames"},
    {.p = {"format", PD_PARAM_ENUM, offsetof(pd_output_def, formats), 0, 0, 0, "-",
           PD_SCENE_FORMATS,
           "ply: frame_<N>.ply, binary little-endian, element vertex with float x y z then the "
           "attributes' properties (meshio, Blender, Houdini). vtk: frame_<N>.vtk, legacy VTK "
           "3.0 binary POLYDATA (vertices; a 3-component attribute as VECTORS, the others one "
           "SCALARS array a component). vtu (ParaView): frame_<N>.vtu, VTK XML "
           "UnstructuredGrid, raw appended binary with UInt64 block headers, a vertex cell a "
           "particle, each attribute one point-data array under its name with its components "
           "(velocity: 3, float32; material, body, id: int32), the frame's time as field data "
           "TimeValue; and frames.pvd, the collection of the frames written with their times "
           "(stats.csv's), rewritten after every frame, so a run that fails or is stopped "
           "leaves one of the frames it wrote. Values are the PLY frame's, bit for bit."},
     .flags = HAND,
     .type_doc = "array of string",
     .def_doc = "[\"ply\"]",
     .range_doc = "one or more"},
    {.p = {"attributes", PD_PARAM_ENUM, offsetof(pd_output_def, attributes), 0, 0, 0, "-",
           PD_SCENE_ATTRIBUTES,
           "velocity (PLY vx vy vz), material, body and id (int) are published by the world for "
           "every method; plastic_strain, stress and density only by the methods that compute "
           "them (each method's section lists what it publishes). An attribute the chosen method "
           "does not publish is refused, never written as zeros."},
     .flags = HAND,
     .type_doc = "array of string",
     .def_doc = "[\"velocity\"]",
     .range_doc = "published ones"},
    {.p = {"checkpoint_every", PD_PARAM_INT, offsetof(pd_output_def, checkpoint_every), 0, 0,
           INT_MAX, "frames", NULL,
           "Write checkpoint_<frame>.pdck (everything the next step reads) every n-th frame; 0 "
           "writes none. `peridot run --resume DIR` continues from the newest, bit for bit as "
           "the run that wrote it. Every method writes them."},
     .range_doc = "0 (none) or more"},
};

const pd_scene_table pd_scene_top_table = {"Top level", NULL, k_top, COUNT(k_top)};
const pd_scene_table pd_scene_time_table = {"`time`", NULL, k_time, COUNT(k_time)};
const pd_scene_table pd_scene_material_table = {
    "`materials.<name>`",
    "A material is named by its key. Elastic stiffness is `youngs_modulus` + `poisson_ratio` "
    "or `lame`; a method that cannot honour E and nu exactly documents how it maps them.",
    k_material, COUNT(k_material)};
const pd_scene_table pd_scene_plasticity_table = {
    "`materials.<name>.plasticity`",
    "Only the keys of the chosen model are accepted: drucker_prager reads `friction_angle`, "
    "`cohesion`, `cone`, `volume_correction` and `rate_dependence`, cam_clay `friction_angle`, "
    "`cohesion`, "
    "`tension_ratio`, `hardening` and `log_plastic_volume`, "
    "von_mises `yield_stress`, herschel_bulkley `yield_stress`, `viscosity` and `exponent`.",
    k_plasticity, COUNT(k_plasticity)};
const pd_scene_table pd_scene_rate_table = {
    "`materials.<name>.plasticity.rate_dependence`",
    "drucker_prager only; the keys of mu_i: `mu_2`, `I_0`, `grain_diameter`, `solid_fraction` "
    "(defaults: Jop et al. 2006's glass beads). Off where p <= 0 (the static cone there).",
    k_rate, COUNT(k_rate)};
const pd_scene_table pd_scene_visco_table = {
    "`materials.<name>.viscoelasticity`",
    "Only the keys of the chosen model are accepted: prony reads `moduli` and `times`, "
    "hencky_maxwell `shear_modulus`, `bulk_modulus`, `deviatoric_viscosity` and "
    "`volumetric_viscosity`.",
    k_visco, COUNT(k_visco)};
const pd_scene_table pd_scene_body_table = {"`bodies[i]`", NULL, k_body, COUNT(k_body)};
const pd_scene_table pd_scene_shape_table = {
    "`shape` (`bodies[i].shape`, `bodies[i].pins[k].region`, "
    "`bodies[i].material_changes[k].region`)",
    "Each type takes only its own keys; a region cannot be a mesh.", k_shape, COUNT(k_shape)};
const pd_scene_table pd_scene_pin_table = {"`bodies[i].pins[k]`", NULL, k_pin, COUNT(k_pin)};
const pd_scene_table pd_scene_material_change_table = {
    "`bodies[i].material_changes[k]`",
    "Changes apply in list order (equal times too: a later change overrides an earlier one "
    "where their regions overlap). The method says what a changed particle keeps; "
    "projective_pd: docs/methods/projective_pd.md; hyperelastic_pd keeps the bonds and rest "
    "shape, docs/methods/hyperelastic_pd.md. Refused (at `bodies[i].material_changes`) "
    "unless the chosen method implements changes.",
    k_material_change, COUNT(k_material_change)};
const pd_scene_table pd_scene_keyframe_table = {"`keyframes[j]` (pins and colliders)", NULL,
                                                k_keyframe, COUNT(k_keyframe)};
const pd_scene_table pd_scene_collider_table = {"`colliders[i]`", NULL, k_collider,
                                                COUNT(k_collider)};
const pd_scene_table pd_scene_emitter_table = {
    "`emitters[i]`",
    "Particles enter at the end of each step in which layers fall due, as the tail of `body` "
    "(ids after every particle before them): frames hold more particles as the run goes. A layer "
    "is emitted at start + k spacing / speed (k = 0, 1, ...), before `stop` and within the "
    "run, and has moved speed (t - t_k) along `direction` when it appears. Room for every "
    "particle the emitter will make is reserved when the run starts (`peridot info` counts "
    "it). Refused by the methods that keep bonds (projective_pd, hyperelastic_pd, sbpd).",
    k_emitter, COUNT(k_emitter)};
const pd_scene_table pd_scene_output_table = {"`output`", NULL, k_output, COUNT(k_output)};

const pd_scene_table* const pd_scene_tables[] = {
    &pd_scene_top_table,
    &pd_scene_time_table,
    &pd_scene_material_table,
    &pd_scene_plasticity_table,
    &pd_scene_rate_table,
    &pd_scene_visco_table,
    &pd_scene_body_table,
    &pd_scene_shape_table,
    &pd_scene_pin_table,
    &pd_scene_material_change_table,
    &pd_scene_keyframe_table,
    &pd_scene_collider_table,
    &pd_scene_emitter_table,
    &pd_scene_output_table,
    NULL,
};

const pd_scene_key* pd_scene_key_find(const pd_scene_table* t, const char* name) {
    for (int i = 0; i < t->count; ++i)
        if (strcmp(t->keys[i].p.name, name) == 0)
            return &t->keys[i];
    return NULL;
}

void pd_scene_table_keys(const pd_scene_table* t, char* out, size_t cap) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < t->count && used < cap; ++i) {
        int w = snprintf(out + used, cap - used, "%s%s", i ? "|" : "", t->keys[i].p.name);
        used += w > 0 ? (size_t)w : 0;
    }
}

pd_jrange pd_scene_key_range(const pd_scene_key* k) {
    return pd_jr(k->p.min, (k->flags & PD_KEY_MIN_OPEN) != 0, k->p.max,
                 (k->flags & PD_KEY_MAX_OPEN) != 0, k->p.unit);
}
