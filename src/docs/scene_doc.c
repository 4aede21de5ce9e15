/* `peridot docs`: prints the scene-format reference (Markdown). The general sections are the
 * parser's own tables of the common keys (scene/scene_tables.c) and each registered method's
 * section is generated from its parameter tables, so the reference cannot drift from the
 * parser. docs/scene-format.md is this output, and a CLI test compares the two byte for byte. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene_parse.h"
#include "scene/scene_tables.h"
#include "peridot/docs.h"
#include "peridot/peridot.h"
#include "solvers/solver.h"
#include "world/fields.h"

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
        case PD_PARAM_TERMS:
            return "named numbers";
        case PD_PARAM_STRING:
            return "string";
        case PD_PARAM_BLOCK:
            return "object";
    }
    return "?";
}

/* A number as a reader writes it: the shortest text that reads back exactly, 1e5 rather than
 * 100000 but 0.004 rather than 4e-3 (an exponent only when it saves two characters). */
static const char* doc_number(double v, char* out, size_t cap) {
    char best[40] = "", fixed[40] = "";
    for (int digits = 1; digits <= 17; ++digits) {
        char buf[40], *e;
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) != v)
            continue;
        if ((e = strchr(buf, 'e')) != NULL) { /* 1e+05 -> 1e5, 1e-05 -> 1e-5 */
            char* digit = e + 1 + (e[1] == '+' || e[1] == '-');
            int neg = e[1] == '-';
            while (*digit == '0' && digit[1])
                ++digit;
            memmove(e + 1 + neg, digit, strlen(digit) + 1);
        }
        if (!best[0] || strlen(buf) < strlen(best))
            snprintf(best, sizeof best, "%s", buf);
        if (!fixed[0] && !strchr(buf, 'e'))
            snprintf(fixed, sizeof fixed, "%s", buf);
    }
    snprintf(out, cap, "%s", fixed[0] && strlen(fixed) < strlen(best) + 2 ? fixed : best);
    return out;
}

/* The allowed column of a number from min, max and the open flags: "> 0", "(-1, 0.5)". */
static void key_range(const pd_scene_key* k) {
    char lo[40], hi[40];
    int lo_open = (k->flags & PD_KEY_MIN_OPEN) != 0, hi_open = (k->flags & PD_KEY_MAX_OPEN) != 0;
    doc_number(k->p.min, lo, sizeof lo);
    doc_number(k->p.max, hi, sizeof hi);
    if ((k->p.type != PD_PARAM_REAL && k->p.type != PD_PARAM_INT) ||
        (isinf(k->p.min) && isinf(k->p.max)))
        printf("-");
    else if (isinf(k->p.max))
        printf("%s %s", lo_open ? ">" : ">=", lo);
    else if (isinf(k->p.min))
        printf("%s %s", hi_open ? "<" : "<=", hi);
    else
        printf("%c%s, %s%c", lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
}

/* The allowed column: the choices, the row's text, and for a string the length the parser
 * takes (a string key is never empty). */
static void key_allowed(const pd_scene_key* k) {
    if (k->p.choices) {
        choices(k->p.choices);
        return;
    }
    if (k->range_doc)
        cell(k->range_doc);
    if (k->p.type == PD_PARAM_STRING && k->size)
        printf("%s1 to %zu characters", k->range_doc ? ", " : "", k->size - 1);
    else if (!k->range_doc)
        key_range(k);
}

/* The default column: the row's text, "required", or p.def in the key's type. */
static void key_default(const pd_scene_key* k) {
    char name[64], num[40];
    const pd_param_info* p = &k->p;
    if (k->def_doc)
        cell(k->def_doc);
    else if (k->flags & PD_KEY_REQUIRED)
        printf("required");
    else if (p->type == PD_PARAM_ENUM) {
        pd_param_choice_name(p, (int)p->def, name, sizeof name);
        printf("%s", name);
    } else if (p->type == PD_PARAM_BOOL)
        printf("%s", p->def != 0 ? "true" : "false");
    else if (p->type == PD_PARAM_VEC3)
        printf("[%s, %s, %s]", doc_number(p->def, num, sizeof num), num, num);
    else if (p->type == PD_PARAM_REAL || p->type == PD_PARAM_INT)
        printf("%s", doc_number(p->def, num, sizeof num));
    else
        printf("-");
}

static void print_key(const pd_scene_key* k) {
    printf("| `%s` | ", k->p.name);
    cell(k->type_doc ? k->type_doc : param_type(k->p.type));
    printf(" | ");
    key_default(k);
    printf(" | ");
    key_allowed(k);
    printf(" | ");
    cell(k->p.unit);
    printf(" | ");
    cell(k->p.doc);
    printf(" |\n");
}

static void print_section(const pd_scene_table* t) {
    printf("## %s\n\n", t->title);
    if (t->intro)
        printf("%s\n\n", t->intro);
    table_head();
    for (int i = 0; i < t->count; ++i)
        print_key(&t->keys[i]);
    /* Not a key of its own: where each method's material table (below) joins this object. */
    if (t == &pd_scene_material_table)
        printf(
            "| `<method key>` | number | - | - | - | Keys the method adds to a material; see its "
            "section below. |\n");
    printf("\n");
}

/* The default and allowed columns of a block: absent unless given; the keys below it. */
static void print_block(const pd_param_info* p) {
    printf("| `%s` | %s | none | an object of the `%s.*` keys below | ", p->name,
           param_type(p->type), p->name);
    cell(p->unit);
    printf(" | ");
    cell(p->doc);
    printf(" |\n");
}

/* " Only with `iteration` `semi_iterative` (refused otherwise)." for a row's `requires`
 * ("a=x|y,b=true": `a` `x` or `y` and `b` `true`). */
static void print_requirement(const pd_param_info* p) {
    if (!p->requires)
        return;
    printf(" Only with ");
    for (const char* s = p->requires; *s;) {
        size_t len = strcspn(s, "=,|");
        char sep = s[len];
        printf(sep == '=' ? "`%.*s` " : "`%.*s`", (int)len, s);
        s += len;
        if (*s)
            ++s;
        printf("%s", sep == '|' ? " or " : sep == ',' ? " and " : "");
    }
    printf(" (refused otherwise).");
}

static void print_param(const pd_param_info* p) {
    char def[64];
    if (p->type == PD_PARAM_BLOCK) {
        print_block(p);
        return;
    }
    if (p->type == PD_PARAM_ENUM)
        pd_param_choice_name(p, (int)p->def, def, sizeof def);
    else if (p->type == PD_PARAM_BOOL)
        snprintf(def, sizeof def, "%s", p->def != 0 ? "true" : "false");
    else if (p->type == PD_PARAM_VEC3)
        snprintf(def, sizeof def, "[%g, %g, %g]", p->def, p->def, p->def);
    else if (p->type == PD_PARAM_REALS)
        snprintf(def, sizeof def, "[] (at most %d)", PD_PARAM_MAX_REALS);
    else if (p->type == PD_PARAM_TERMS)
        snprintf(def, sizeof def, "{} (every term 0)");
    else if (p->type == PD_PARAM_STRING)
        snprintf(def, sizeof def, "\"\" (at most %d characters)", PD_PARAM_STRING_MAX - 1);
    else
        snprintf(def, sizeof def, "%g", p->def);
    printf("| `%s` | %s | %s | ", p->name, param_type(p->type), def);
    if (p->type == PD_PARAM_ENUM)
        choices(p->choices);
    else if (p->type == PD_PARAM_TERMS) { /* the names the object may hold, and their range */
        printf("keys ");
        choices(p->choices);
        printf("; each [%g, %g]", p->min, p->max);
    } else if (p->type == PD_PARAM_BOOL)
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
    print_requirement(p);
    printf(" |\n");
}

static void print_params(const char* title, const pd_param_table* t) {
    printf("#### %s\n\n", title);
    if (!t || t->count == 0) {
        printf("None.\n\n");
        return;
    }
    table_head();
    /* a block's rows right under it, by their full name, wherever the table declares them */
    for (int i = 0; i < t->count; ++i) {
        const pd_param_info* p = &t->params[i];
        if (!pd_param_in_block(p, NULL))
            continue;
        print_param(p);
        for (int j = i + 1; p->type == PD_PARAM_BLOCK && j < t->count; ++j)
            if (pd_param_in_block(&t->params[j], p->name))
                print_param(&t->params[j]);
    }
    printf("\n");
}

/* The `viscoelasticity` models a method honours (one today at most). */
static const char* visco_models(unsigned visco) {
    if (visco & (1u << PD_VISCO_PRONY))
        return "`prony`";
    if (visco & (1u << PD_VISCO_HENCKY_MAXWELL))
        return "`hencky_maxwell`";
    return "not implemented (a material with the block is refused)";
}

static void print_material_support(const pd_solver_vtable* m) {
    unsigned plasticity = m->materials ? m->materials->plasticity : 0;
    unsigned visco = m->materials ? m->materials->viscoelasticity : 0;
    printf("#### material blocks\n\n");
    printf("`plasticity`: ");
    if (!plasticity)
        printf("none (a material with a `plasticity` block is refused)");
    const char* s = PD_SCENE_PLASTICITY_MODELS;
    for (int model = 1, first = 1; *s; ++model) {
        size_t len = strcspn(s, "|");
        if (plasticity & (1u << model)) {
            printf("%s`%.*s`", first ? "" : ", ", (int)len, s);
            unsigned vc = m->materials->volume_correction & (1u << model);
            unsigned rate = m->materials->rate_dependence & (1u << model);
            if (vc || rate)
                printf(" (with %s%s%s)", vc ? "`volume_correction`" : "", vc && rate ? " and " : "",
                       rate ? "`rate_dependence`" : "");
            first = 0;
        }
        s += len + (s[len] == '|');
    }
    printf("; `viscoelasticity`: %s.\n\n", visco_models(visco));
    printf("`bodies[i].material_changes`: %s.\n\n",
           m->change_materials
               ? "implemented (what a changed particle keeps: the method's page in docs/methods/)"
               : "not implemented (a body with changes is refused)");
    printf("`bodies[i].pins[k].release`: %s.\n\n",
           m->releases_pins ? "honoured (the pin's particles are free from then on)"
                            : "not honoured (a pin with a release is refused)");
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
    printf("| dt^2 E / (density spacing^2) <= 1e12, E the instantaneous Young's modulus (as "
           "below) | `materials.<m>.youngs_modulus` (or `lame`) "
           "| the inertia term M/dt^2 of the implicit step must stay 4 digits above rounding "
           "next to the stiffness (double keeps 16); the He 2017 scenes stay below 1e4 |\n");
    printf("| 1/2 density V (\\|v\\| + \\|omega\\| r)^2 finite (V, r of the bounding box) | "
           "`bodies[i].velocity` / `angular_velocity` | the kinetic energy stats.csv sums |\n");
    printf("| density \\|gravity\\| height / E <= 1, E the instantaneous Young's modulus "
           "(a `prony` material's `youngs_modulus`; with a `hencky_maxwell` branch, E of the "
           "summed Lame constants of the material and the branch) | `gravity` | at rest, a "
           "body's own weight would compress it at once by more than 100 %% (height along "
           "gravity, at least one spacing); no elastic body represents that. A viscoelastic "
           "body that then creeps or flows (mu_E near 0) is the method's to simulate |\n");
    printf("| the two rules above for every material a body takes (its own and its "
           "`material_changes`) | as above | a body is that material after the change |\n");
    printf("| the method implements material changes; the body's material and each change's "
           "(the method's own rule) | `bodies[i].material_changes`; `bodies[i].material`, "
           "`...material_changes[k].material` | never ignored; projective_pd refuses a flowing "
           "material on a one-layer shell or a rod, from the start or by a change |\n");
    printf("| a material change's region holds a sampled particle of its body | "
           "`bodies[i].material_changes[k].region` | it would change nothing (needs the sampled "
           "particles: `info --estimate` skips it) |\n");
    printf("| `kind: shell` / `rod` thin along exactly one / two axes | `bodies[i].kind` | one "
           "layer / one line of particles |\n");
    printf("| a mesh body encloses a volume | `bodies[i].shape.path` | a flat or open "
           "single-triangle mesh has no inside |\n");
    printf("| no dynamic particle starts inside a collider | `bodies[i]` (and the collider in "
           "the message) | the first projection would throw it out with energy from nothing; "
           "refused rather than resolved (needs the sampled particles: `info --estimate` skips "
           "it) |\n");
    printf("| the families of a solid body span enough bond directions to resist shear (on a "
           "grid: `solver.horizon` >= 1.42, the face diagonals) | `solver.horizon` | a grid's "
           "axis bonds alone have no shear stiffness (a hyperelastic_pd cantilever sagged 93 mm "
           "instead of 14); every bonded method (needs the sampled particles) |\n");
    printf("| no two bodies start interpenetrated: their particles closer than the contact "
           "distance (s_i + s_j)/2 by at most half of it | `bodies[j]` (and `bodies[i]` and the "
           "depth in the message) | the methods would leave them interpenetrated (projective_pd) "
           "or throw them apart (sbpd); bodies that touch (outer layers one spacing apart, a "
           "stack) are accepted (needs the sampled particles) |\n");
    printf("| an output attribute is published | `output.attributes[k]` | never written as "
           "zeros |\n");
    printf("| `output.every` <= `time.frames` | `output.every` | more writes what `time.frames` "
           "writes: the first and the last frame |\n\n");
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
           "keys it adds to a material (in the material object itself). A key of type object "
           "is a block: `\"<block>\": {\"<key>\": value}` sets the row `<block>.<key>`, "
           "only those rows are accepted inside it (and none of them outside it), and they "
           "take their defaults whether or not the block is given.\n\n");
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
    printf(
        "`--set json.path=value` changes the scene before it is validated, exactly as if the "
        "file said so. The path joins keys with `.` and array elements with `[i]` "
        "(`solver.projective_pd.iterations=40`, `time.frames=3`, "
        "`materials.rubber.youngs_modulus=2e5`, `bodies[0].spacing=0.02`, "
        "`materials.<m>.<block>.<key>=v` for a key of a method's block); `solver.<key>=v` sets "
        "the running method's option (the method of the last `--set method=...`, else the "
        "scene's), so `--set method=sbpd --set solver.iterations=200` runs a scene under another "
        "method with its options. "
        "Missing object keys are created (so that one gives the block too). The value is read as "
        "JSON when it parses (`40`, `true`, `[0, 1, 0]`) and as a string otherwise "
        "(`solver.global_solve=direct`). A malformed override is an error whose path is "
        "`--set <text>`.\n\n");
}

/* The columns of stats.csv as cli/run.c writes them (stats_header, stats_row). */
static void print_stats_csv(void) {
    printf("## stats.csv\n\n");
    printf("`peridot run` writes `stats.csv` into the output folder: a header, then one row per "
           "frame (every frame, whatever `output.every`), written as the frame ends, so a run "
           "that fails keeps the rows of the frames before. Real values are printed with 9 "
           "significant digits, `residual`, `relative_error` and `wall_ms_per_step` with 6. An "
           "empty field is a value the method does not report (never written as `nan`). Frame "
           "0 is the scene before any step: `iterations`, `residual` and `wall_ms_per_step` are "
           "0 there, `energy` and `relative_error` empty, the pin forces 0.\n\n");
    printf("| column | unit | meaning |\n|---|---|---|\n");
    printf("| `frame` | - | Frame index, 0 to `time.frames`. |\n");
    printf("| `time` | s | Simulated time at the end of the frame. |\n");
    printf("| `kinetic_energy` | J | Sum of 1/2 m \\|v\\|^2 over every particle not of a "
           "fixed body (pinned particles included), at the end of the frame. |\n");
    printf("| `min_x`, `min_y`, `min_z`, `max_x`, `max_y`, `max_z` | m | Bounding box of all "
           "particles (fixed bodies included) at the end of the frame. |\n");
    printf("| `iterations` | - | Nonlinear iterations of the frame's last step (for "
           "`projective_pd` the local/global iterations, over all its friction and plastic "
           "passes; `sbpd` the passes of Eq. 12). |\n");
    printf("| `residual` | 1 | Relative residual at the end of the frame's last step, as the "
           "method measures it (`projective_pd`: \\|r\\| of Eq. 12 over the larger of "
           "\\|r\\| at the inertial prediction and the force the step has to produce; `sbpd`: the "
           "largest move of the last pass over the largest particle spacing). A "
           "non-finite residual stops the run. |\n");
    printf("| `energy` | J | The objective the implicit solve of the frame's last step minimised, "
           "at its end: for the energy-based methods E of the implicit Euler step, inertia + "
           "elastic + contact potentials. `projective_pd`: the merit of Eq. 12 (inertia, bond "
           "energy, contact between bodies, collider friction) of its last descent pass at the "
           "accepted end iterate; the density, redistribution and plastic corrections that "
           "follow the solve are not in it. Empty when the method does not report one. |\n");
    printf("| `relative_error` | 1 | Xu 2018 Eq. 25 at the end of the frame's last step: the last "
           "iteration's decrease of E over the step's. Empty when the method does not report "
           "it (`projective_pd` does not). |\n");
    printf("| `wall_ms_per_step` | ms | Wall-clock time of the frame's steps over their number "
           "(the steps only, not the frame's output). |\n");
    printf("| `unconverged_steps` | - | Steps of the frame that stopped at the method's "
           "iteration cap (`solver.iterations`) with the measure its `solver.tolerance` judges "
           "above 10 times the tolerance (`projective_pd`: the residual; `hyperelastic_pd`: Eq. "
           "25's relative error); 0 for explicit methods. `peridot run` prints the run's total "
           "and the worst step at its end. |\n");
    printf("| `dt` | s | The time step of the frame's steps: `time.dt` rounded to a whole number "
           "of steps per frame, or with `\"auto\"` the step the method chose for the frame (a "
           "method that follows its bound within a frame, `mpm`: the frame's last and shortest "
           "step). |\n");
    printf("| `steps` | - | Steps the frame took (0 for frame 0 and for the frame a resumed run "
           "starts from). |\n");
    printf("| `<body>.pin<k>.force_x`, `_y`, `_z` | N | Three per pin, after the columns above, "
           "bodies in scene order (`<body>` its `name`, `k` the pin's index in its `pins`): the "
           "force the pin exerted on the body during the frame's last step, the sum over the "
           "pin's particles of m a - f_internal - m g. |\n");
}

int pd_docs_scene_format(void) {
    print_intro();
    for (int i = 0; pd_scene_tables[i]; ++i)
        print_section(pd_scene_tables[i]);
    print_limits();
    print_methods();
    print_overrides();
    print_stats_csv();
    return fflush(stdout) == 0 ? 0 : 1;
}
