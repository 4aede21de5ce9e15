/* `peridot docs`: prints the scene-format reference (Markdown). The general sections are the
 * tables below; each registered method's section is generated from its parameter tables, so
 * the reference cannot drift from the parser. docs/scene-format.md is this output, and a CLI
 * test compares the two byte for byte. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "scene/scene_parse.h"
#include "peridot/peridot.h"
#include "solvers/solver.h"
#include "world/fields.h"

/* One documented key. `choices` ("a|b|c"), when set, is printed as the allowed values. */
typedef struct doc_row {
    const char* key;
    const char* type;
    const char* def; /* default, or "required" */
    const char* range;
    const char* choices;
    const char* unit;
    const char* doc;
} doc_row;

typedef struct doc_section {
    const char* title;
    const char* intro;
    const doc_row* rows;
    int count;
} doc_section;

#define ROWS(a) a, (int)(sizeof a / sizeof a[0])

static const doc_row k_top[] = {
    {"version", "int", "required", "1", NULL, "-", "Scene format version."},
    {"method", "string", "required", NULL, NULL, "-",
     "The simulation method; one of the methods below."},
    {"solver", "object", "{}", NULL, NULL, "-",
     "Options of the method; its keys are listed in the method's section below."},
    {"time", "object", "required", NULL, NULL, "-", "Time stepping (section `time`)."},
    {"gravity", "[3] number", "[0, -9.81, 0]", NULL, NULL, "m/s^2", "Gravitational acceleration."},
    {"seed", "int", "1", "[0, 2147483647]", NULL, "1",
     "Seed of any randomness (jittered sampling); same seed and threads, same results."},
    {"materials", "object", "required", "at least one", NULL, "-",
     "Map from material name to material (section `materials.<name>`)."},
    {"bodies", "array", "required", "at least one", NULL, "-",
     "Bodies sampled into particles (section `bodies[i]`)."},
    {"colliders", "array", "[]", NULL, NULL, "-", "Colliders (section `colliders[i]`)."},
    {"output", "object", "see `output`", NULL, NULL, "-", "What is written (section `output`)."},
    {"peridot_version", "string", "(ignored)", NULL, NULL, "-",
     "Written into resolved scenes by the program that ran them; not read."},
};

static const doc_row k_time[] = {
    {"dt", "number", "required", "> 0, <= 1/fps, fps dt >= 1/2147483647", NULL, "s",
     "The solver's time step; never longer than a frame, and a frame holds at most 2147483647 "
     "steps (refused, not clamped)."},
    {"fps", "number", "30", "> 0", NULL, "1/s",
     "Output frame rate; a frame is 1/fps s, simulated in ceil(1/(fps dt)) steps."},
    {"frames", "int", "90", "[1, 1e9]", NULL, "1", "Frames to simulate."},
};

static const doc_row k_material[] = {
    {"density", "number", "required", "> 0", NULL, "kg/m^3", "Mass density."},
    {"youngs_modulus", "number", "1e5", "> 0", NULL, "Pa",
     "Young's modulus E (the instantaneous modulus E_0 with a Prony series)."},
    {"poisson_ratio", "number", "0.25", "(-1, 0.5)", NULL, "1",
     "Poisson's ratio nu; a method that cannot honour it refuses the material."},
    {"lame", "[2] number", "-", "mu > 0, lambda + 2 mu / 3 > 0", NULL, "Pa",
     "[lambda, mu] instead of youngs_modulus + poisson_ratio (giving both is an error)."},
    {"plasticity", "object", "none", "a model the method implements", NULL, "-",
     "Plastic flow (section `plasticity`). Refused unless the chosen method implements the "
     "model (its section below lists what it honours)."},
    {"viscoelasticity", "object", "none", "a method that implements it", NULL, "-",
     "Prony-series viscoelasticity (section `viscoelasticity`). Refused unless the chosen "
     "method implements it."},
    {"<method key>", "number", "-", NULL, NULL, "-",
     "Keys the method adds to a material; see its section below."},
};

static const doc_row k_plasticity[] = {
    {"model", "string", "required", NULL, PD_SCENE_PLASTICITY_MODELS, "-", "Yield criterion."},
    {"friction_angle", "number", "30", "[0, 90)", NULL, "degrees",
     "Internal friction angle (drucker_prager, cam_clay)."},
    {"cohesion", "number", "0", ">= 0", NULL, "Pa", "Cohesion (drucker_prager, cam_clay)."},
    {"yield_stress", "number", "required", "> 0", NULL, "Pa",
     "Yield stress (von_mises, herschel_bulkley; required there)."},
};

static const doc_row k_visco[] = {
    {"model", "string", "required", NULL, PD_SCENE_VISCO_MODELS, "-",
     "E(t) = E_inf + sum E_k exp(-t / tau_k), E_inf = youngs_modulus - sum E_k."},
    {"moduli", "array of number", "required", "1 to 8 values, each > 0, sum < E_0", NULL, "Pa",
     "Prony moduli E_k; the long-term modulus E_inf must stay > 0."},
    {"times", "array of number", "required", "as many as moduli, each > 0", NULL, "s",
     "Relaxation times tau_k."},
};

static const doc_row k_body[] = {
    {"name", "string", "body<i>", "unique, < 64 characters", NULL, "-",
     "Exported as the `body` attribute and used in stats.csv pin columns."},
    {"material", "string", "required", "a key of `materials`", NULL, "-", "The body's material."},
    {"spacing", "number", "required", "> 0", NULL, "m",
     "Particle spacing; the method derives its horizon / kernel radius from it."},
    {"shape", "object", "required", NULL, NULL, "-", "Geometry (section `shape`)."},
    {"sampling", "string", "grid", NULL, PD_SCENE_SAMPLINGS, "-",
     "grid: lattice min + spacing (i + 1/2) over the bounding box, kept where inside; jittered: "
     "grid plus offsets from `seed`."},
    {"velocity", "[3] number", "[0, 0, 0]", "not for kind fixed", NULL, "m/s", "Initial velocity."},
    {"angular_velocity", "[3] number", "[0, 0, 0]", "not for kind fixed", NULL, "rad/s",
     "Initial spin about the body's centre."},
    {"kind", "string", "dynamic", NULL, PD_SCENE_KINDS, "-",
     "fixed: ghost particles that never move; shell: one layer (the shape's bounding box is "
     "thinner than spacing along exactly one axis); rod: a line of particles (thinner along "
     "exactly two)."},
    {"pins", "array", "[]", NULL, NULL, "-", "Pinned regions (section `pins[k]`)."},
};

static const doc_row k_shape[] = {
    {"type", "string", "required", NULL, PD_SCENE_SHAPE_TYPES, "-", "Which keys follow."},
    {"min", "[3] number", "required (box)", "< max in x, y, z", NULL, "m", "Box: lower corner."},
    {"max", "[3] number", "required (box)", "> min in x, y, z", NULL, "m", "Box: upper corner."},
    {"center", "[3] number", "required (sphere)", NULL, NULL, "m", "Sphere: centre."},
    {"radius", "number", "required (sphere, cylinder)", "> 0", NULL, "m",
     "Sphere or cylinder radius."},
    {"base", "[3] number", "required (cylinder)", NULL, NULL, "m",
     "Cylinder: centre of the base disc."},
    {"axis", "[3] number", "[0, 1, 0]", "non-zero", NULL, "1",
     "Cylinder: axis direction (normalised)."},
    {"height", "number", "required (cylinder)", "> 0", NULL, "m", "Cylinder: length along axis."},
    {"path", "string", "required (mesh)", "an existing regular file", NULL, "-",
     "Mesh: OBJ, PLY or STL file, relative to the scene file's folder. A body's mesh must "
     "enclose a volume (a flat or single-triangle mesh is refused); counts in its header must "
     "fit in the file's size."},
    {"scale", "number", "1", "> 0", NULL, "1", "Mesh: uniform scale, applied first."},
    {"rotate", "[4] number", "[0, 1, 0, 0]", "axis non-zero", NULL, "1, degrees",
     "Mesh: [axis_x, axis_y, axis_z, angle], applied after scale."},
    {"translate", "[3] number", "[0, 0, 0]", NULL, NULL, "m", "Mesh: translation, applied last."},
};

static const doc_row k_pin[] = {
    {"region", "object", "required", "box, sphere or cylinder", NULL, "-",
     "A shape (section `shape`); the body's particles inside follow the keyframes."},
    {"keyframes", "array", "[] (fixed in place)", NULL, NULL, "-",
     "Motion of the region (section `keyframes[j]`), piecewise linear, held after the last."},
};

static const doc_row k_keyframe[] = {
    {"t", "number", "required", ">= 0, strictly increasing", NULL, "s", "Time of the keyframe."},
    {"translate", "[3] number", "[0, 0, 0]", NULL, NULL, "m", "Displacement from the start."},
    {"rotate", "[4] number", "[0, 1, 0, 0]", "axis non-zero", NULL, "1, degrees",
     "Rotation [axis_x, axis_y, axis_z, angle] about the region's / collider's centre."},
};

static const doc_row k_collider[] = {
    {"type", "string", "required", NULL, PD_SCENE_COLLIDER_TYPES, "-",
     "box, sphere, cylinder and mesh take the keys of section `shape` (without `type`) in the "
     "collider object itself."},
    {"point", "[3] number", "[0, 0, 0]", NULL, NULL, "m", "Plane: a point on the plane."},
    {"normal", "[3] number", "required (plane)", "non-zero", NULL, "1",
     "Plane: outward normal (normalised); particles stay on its side."},
    {"inside", "bool", "false", NULL, NULL, "-",
     "Not for planes. true: keep particles inside (a container); for an open mesh, put the "
     "wall on the front of its faces instead of behind them."},
    {"thickness", "number", "required (open mesh)", "> 0", NULL, "m",
     "Mesh only, and only for an open mesh (some edge in one triangle): the wall behind its "
     "faces (the side opposite their counter-clockwise normal). At least twice the distance a "
     "particle moves in one step: one that gets deeper than half of it leaves through the back. "
     "A closed mesh is a solid and takes no thickness."},
    {"boundary", "string", "slip", NULL, PD_SCENE_BOUNDARIES, "-",
     "slip: project out, keep tangential velocity, apply Coulomb friction; no_slip: stick."},
    {"friction", "number", "0", ">= 0, slip only", NULL, "1",
     "Coulomb friction coefficient (slip; refused with no_slip, which sticks regardless)."},
    {"velocity", "[3] number", "[0, 0, 0]", "not with keyframes", NULL, "m/s",
     "Constant velocity."},
    {"angular_velocity", "[3] number", "[0, 0, 0]", "not with keyframes", NULL, "rad/s",
     "Constant spin about the collider's centre."},
    {"keyframes", "array", "[]", NULL, NULL, "-",
     "Scripted motion (section `keyframes[j]`) instead of a constant velocity."},
};

static const doc_row k_output[] = {
    {"dir", "string", "out", NULL, NULL, "-",
     "Output folder, relative to the working directory; `peridot run -o` overrides it. A run "
     "first removes an earlier run's frame_*.ply/.vtk, stats.csv, scene.resolved.json and "
     "preview.png there; a folder holding other files is refused unless `--overwrite`."},
    {"every", "int", "1", "1 to time.frames", NULL, "frames", "Write every n-th frame."},
    {"format", "array of string", "[\"ply\"]", "one or more", PD_SCENE_FORMATS, "-",
     "ply: binary little-endian, element vertex with float x y z then the attributes."},
    {"attributes", "array of string", "[\"velocity\"]", "published ones", PD_SCENE_ATTRIBUTES, "-",
     "velocity (PLY vx vy vz), material, body and id (int) are published by the world for "
     "every method; plastic_strain, stress and density only by the methods that compute them "
     "(each method's section lists what it publishes). An attribute the chosen method does "
     "not publish is refused, never written as zeros."},
};

static const doc_section k_sections[] = {
    {"Top level", NULL, ROWS(k_top)},
    {"`time`", NULL, ROWS(k_time)},
    {"`materials.<name>`",
     "A material is named by its key. Elastic stiffness is `youngs_modulus` + `poisson_ratio` "
     "or `lame`; a method that cannot honour E and nu exactly documents how it maps them.",
     ROWS(k_material)},
    {"`materials.<name>.plasticity`",
     "Only the keys of the chosen model are accepted: drucker_prager and cam_clay read "
     "`friction_angle` and `cohesion`, von_mises and herschel_bulkley read `yield_stress`.",
     ROWS(k_plasticity)},
    {"`materials.<name>.viscoelasticity`", NULL, ROWS(k_visco)},
    {"`bodies[i]`", NULL, ROWS(k_body)},
    {"`shape` (`bodies[i].shape`, `bodies[i].pins[k].region`)",
     "Each type takes only its own keys; a pin region cannot be a mesh.", ROWS(k_shape)},
    {"`bodies[i].pins[k]`", NULL, ROWS(k_pin)},
    {"`keyframes[j]` (pins and colliders)", NULL, ROWS(k_keyframe)},
    {"`colliders[i]`", NULL, ROWS(k_collider)},
    {"`output`", NULL, ROWS(k_output)},
};

/* Prints text with '|' escaped, so it stays inside one table cell. */
static void cell(const char* text) {
    for (const char* s = text ? text : ""; *s; ++s) {
        if (*s == '|')
            putchar('\\');
        putchar(*s);
    }
}

/* "`a`, `b`, `c`" from "a|b|c". */
static void choices(const char* list) {
    for (const char* s = list; *s;) {
        size_t len = strcspn(s, "|");
        printf("%s`%.*s`", s == list ? "" : ", ", (int)len, s);
        s += len;
        if (*s == '|')
            ++s;
    }
}

static void table_head(void) {
    printf("| key | type | default | allowed | unit | meaning |\n");
    printf("|---|---|---|---|---|---|\n");
}

static void print_row(const doc_row* r) {
    printf("| `%s` | ", r->key);
    cell(r->type);
    printf(" | ");
    cell(r->def);
    printf(" | ");
    if (r->choices)
        choices(r->choices);
    else
        cell(r->range ? r->range : "-");
    printf(" | ");
    cell(r->unit);
    printf(" | ");
    cell(r->doc);
    printf(" |\n");
}

static void print_section(const doc_section* s) {
    printf("## %s\n\n", s->title);
    if (s->intro)
        printf("%s\n\n", s->intro);
    table_head();
    for (int i = 0; i < s->count; ++i)
        print_row(&s->rows[i]);
    printf("\n");
}

static const char* param_type(pd_param_type t) {
    switch (t) {
        case PD_PARAM_REAL:
            return "number";
        case PD_PARAM_INT:
            return "int";
        case PD_PARAM_BOOL:
            return "bool";
        case PD_PARAM_ENUM:
            return "string";
        case PD_PARAM_VEC3:
            return "[3] number";
        case PD_PARAM_REALS:
            return "[n] number";
        case PD_PARAM_STRING:
            return "string";
    }
    return "?";
}

static void print_param(const pd_param_info* p) {
    char def[64];
    if (p->type == PD_PARAM_ENUM)
        pd_param_choice_name(p, (int)p->def, def, sizeof def);
    else if (p->type == PD_PARAM_BOOL)
        snprintf(def, sizeof def, "%s", p->def != 0 ? "true" : "false");
    else if (p->type == PD_PARAM_VEC3)
        snprintf(def, sizeof def, "[%g, %g, %g]", p->def, p->def, p->def);
    else if (p->type == PD_PARAM_REALS)
        snprintf(def, sizeof def, "[] (at most %d)", PD_PARAM_MAX_REALS);
    else if (p->type == PD_PARAM_STRING)
        snprintf(def, sizeof def, "\"\" (at most %d characters)", PD_PARAM_STRING_MAX - 1);
    else
        snprintf(def, sizeof def, "%g", p->def);
    printf("| `%s` | %s | %s | ", p->name, param_type(p->type), def);
    if (p->type == PD_PARAM_ENUM)
        choices(p->choices);
    else if (p->type == PD_PARAM_BOOL)
        printf("true, false");
    else if (p->type == PD_PARAM_STRING)
        printf("-");
    else
        printf("[%g, %g]%s", p->min, p->max,
               p->type == PD_PARAM_REALS || p->type == PD_PARAM_VEC3 ? " each" : "");
    printf(" | ");
    cell(p->unit);
    printf(" | ");
    cell(p->doc);
    printf(" |\n");
}

static void print_params(const char* title, const pd_param_table* t) {
    printf("#### %s\n\n", title);
    if (!t || t->count == 0) {
        printf("None.\n\n");
        return;
    }
    table_head();
    for (int i = 0; i < t->count; ++i)
        print_param(&t->params[i]);
    printf("\n");
}

static void print_material_support(const pd_solver_vtable* m) {
    unsigned plasticity = m->materials ? m->materials->plasticity : 0;
    int visco = m->materials ? m->materials->viscoelasticity : 0;
    printf("#### material blocks\n\n");
    printf("`plasticity`: ");
    if (!plasticity)
        printf("none (a material with a `plasticity` block is refused)");
    const char* s = PD_SCENE_PLASTICITY_MODELS;
    for (int model = 1, first = 1; *s; ++model) {
        size_t len = strcspn(s, "|");
        if (plasticity & (1u << model)) {
            printf("%s`%.*s`", first ? "" : ", ", (int)len, s);
            first = 0;
        }
        s += len + (s[len] == '|');
    }
    printf("; `viscoelasticity`: %s.\n\n",
           visco ? "honoured" : "not implemented (a material with the block is refused)");
}

static void print_published(const pd_solver_vtable* m) {
    printf("#### published attributes\n\n");
    if (!m->fields || m->field_count == 0) {
        printf("None beyond the world's (`velocity`, `material`, `body`, `id`); `plastic_strain`, "
               "`stress` and `density` are refused.\n\n");
        return;
    }
    printf("| attribute | PLY properties | unit | meaning |\n|---|---|---|---|\n");
    for (int k = 0; k < m->field_count; ++k) {
        const pd_field_info* f = &m->fields[k];
        int bit = 0;
        while ((1u << bit) != f->attribute && bit < 31)
            ++bit;
        const char* s = PD_SCENE_ATTRIBUTES;
        for (int j = 0; j < bit && *s; ++j)
            s += strcspn(s, "|") + (s[strcspn(s, "|")] == '|');
        printf("| `%.*s` | ", (int)strcspn(s, "|"), s);
        for (int c = 0; c < f->components; ++c)
            printf("%s%s", c ? " " : "", f->names[c]);
        printf(" | ");
        cell(f->unit);
        printf(" | ");
        cell(f->doc);
        printf(" |\n");
    }
    printf("\n");
}

/* The rules of scene/scene_validate.c, which refuse values each key accepts alone but that the
 * method cannot represent together. */
static void print_limits(void) {
    printf("## What the method can represent\n\n");
    printf("After every key is read, `peridot run` and `peridot info` (one validation for both) "
           "refuse, with the JSON path and the representable range, a scene whose values "
           "together leave what the method can represent. Nothing is clamped or silently "
           "altered.\n\n");
    printf("| rule | path refused | why |\n|---|---|---|\n");
    printf("| `time.dt` <= 1/`fps` | `time.dt` | a step is never stretched or cut to fit a frame "
           "(a frame is ceil(1/(fps dt)) equal steps) |\n");
    printf("| ceil(1/(fps dt)) <= 2147483647 | `time.dt` (`time.fps` when fps < 1) | the steps "
           "of a frame are counted in an int |\n");
    printf("| density spacing^3 a normal double (>= 2.2e-308 kg) | `bodies[i].spacing` | a "
           "particle's mass |\n");
    printf("| dt^2 E / (density spacing^2) <= 1e12 | `materials.<m>.youngs_modulus` (or `lame`) "
           "| the inertia term M/dt^2 of the implicit step must stay 4 digits above rounding "
           "next to the stiffness (double keeps 16); the He 2017 scenes stay below 1e4 |\n");
    printf("| 1/2 density V (\\|v\\| + \\|omega\\| r)^2 finite (V, r of the bounding box) | "
           "`bodies[i].velocity` / `angular_velocity` | the kinetic energy stats.csv sums |\n");
    printf("| density \\|gravity\\| height / E <= 1 | `gravity` | at rest, a body's own "
           "weight would compress it by more than 100 %% (height along gravity, at least one "
           "spacing); no elastic body represents that |\n");
    printf("| `kind: shell` / `rod` thin along exactly one / two axes | `bodies[i].kind` | one "
           "layer / one line of particles |\n");
    printf("| a mesh body encloses a volume | `bodies[i].shape.path` | a flat or open "
           "single-triangle mesh has no inside |\n");
    printf("| no dynamic particle starts inside a collider | `bodies[i]` (and the collider in "
           "the message) | the first projection would throw it out with energy from nothing; "
           "refused rather than resolved (needs the sampled particles: `info --estimate` skips "
           "it) |\n");
    printf("| an output attribute is published | `output.attributes[k]` | never written as "
           "zeros |\n");
    printf("| `output.every` <= `time.frames` | `output.every` | more would write frame 0 "
           "only |\n\n");
    printf("Within these rules dt is used as SCENE.md says: a frame of 1/fps s is simulated in "
           "ceil(1/(fps dt)) equal steps of 1/(fps ceil(1/(fps dt))) s, which `peridot run` "
           "and `peridot info` print.\n\n");
    printf("Fixed bodies are exempt from the stiffness and gravity rules (they do not move). "
           "While running, a non-finite position, velocity or solver residual stops the run "
           "with exit status 1; the frames written before stay valid.\n\n");
    printf("Files are bounded by their size: a scene file must be a regular file of at most "
           "16 MiB, a mesh or frame file a regular file whose header counts (PLY elements, "
           "binary STL triangles) fit in its bytes.\n\n");
}

static void print_methods(void) {
    const pd_solver_vtable* const* all = pd_solver_all();
    printf("## Methods\n\n");
    printf("The `method` key selects one of these. Each documents its keys of `solver` and the "
           "keys it adds to a material (numbers, in the material object itself).\n\n");
    for (int i = 0; all[i]; ++i) {
        printf("### `%s`\n\n%s.\n\n", all[i]->name, all[i]->paper ? all[i]->paper : "");
        print_params("`solver` keys", all[i]->params);
        print_params("material keys", all[i]->material_params);
        print_material_support(all[i]);
        print_published(all[i]);
    }
}

static void print_intro(void) {
    printf("<!-- Generated by `peridot docs` from the parser's tables and the methods' parameter "
           "tables. Do not edit: regenerate with `peridot docs > docs/scene-format.md`. -->\n\n");
    printf("# Scene format reference (version %d)\n\n", PD_SCENE_VERSION);
    printf("A scene is one JSON file: which method simulates, for how long, the materials, the "
           "bodies sampled into particles, the colliders that bound them, and what is written "
           "out. SI units (m, kg, s, Pa), angles in degrees, y up, right-handed.\n\n");
    printf("An unknown key, a value of the wrong type or out of range, or a missing required "
           "key is an error naming the file, the JSON path (`bodies[1].shape.radius`) and the "
           "line; nothing is simulated and nothing is written (`peridot run` exits with status "
           "2). A key left out takes its default; the resolved scene, with every default "
           "explicit, is what a run records.\n\n");
    printf("In the tables, *default* \"required\" marks a key that must be given, and *unit* "
           "\"1\" a dimensionless number, \"-\" none.\n\n");
}

static void print_overrides(void) {
    printf("## Overrides (`--set`)\n\n");
    printf("`--set json.path=value` changes the scene before it is validated, exactly as if the "
           "file said so. The path joins keys with `.` and array elements with `[i]` "
           "(`solver.iterations=40`, `time.frames=3`, `materials.rubber.youngs_modulus=2e5`, "
           "`bodies[0].spacing=0.02`); missing object keys are created. The value is read as "
           "JSON when it parses (`40`, `true`, `[0, 1, 0]`) and as a string otherwise "
           "(`solver.global_solve=direct`). A malformed override is an error whose path is "
           "`--set <text>`.\n");
}

int pd_cli_docs(int argc, char** argv) {
    if (argc > 1) {
        int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        fprintf(help ? stdout : stderr,
                "usage: peridot docs\n\nPrints the scene-format reference (Markdown) generated "
                "from the parameter tables; docs/scene-format.md is its output.\n");
        return help ? 0 : 2;
    }
    print_intro();
    for (size_t i = 0; i < sizeof k_sections / sizeof k_sections[0]; ++i)
        print_section(&k_sections[i]);
    print_limits();
    print_methods();
    print_overrides();
    return fflush(stdout) == 0 ? 0 : 1;
}
