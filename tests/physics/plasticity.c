/* He 2017 Sec. 5: plasticity by moving the reference vectors (Eq. 14-19). A block of clay
 * (E = 0.2 MPa, nu = 0.3) on a no-slip floor is indented by a sphere collider (its lowest point 5.7
 * mm below the settled top), held, and released. References: the yield criterion itself (Eq. 14:
 * after every plastic correction the strain state lies on or inside the surface), and perfect
 * plasticity against elasticity: a perfectly plastic (von Mises) block keeps its dent after
 * unloading (depth at rest within 20 % of the depth at full load), the same block elastic recovers
 * (its dent at rest below 2 % of the loaded one). */
#include <stdlib.h>

#include "methods.h"
#include "projective_pd_support.h"
#include "triaxial.h"
#include "core/alloc.h"
#include "world/fields.h"
#include "solvers/projective_pd/projective_pd_internal.h"

static const char* k_indent =
    "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{\"iterations\":20},"
    "\"time\":{\"dt\":0.016666666666666666,\"fps\":30,\"frames\":45},"
    "\"materials\":{\"clay\":{\"density\":1500,\"youngs_modulus\":2e5,\"poisson_ratio\":0.3}},"
    "\"bodies\":[{\"name\":\"block\",\"material\":\"clay\",\"spacing\":0.006666666666666667,"
    "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.1,0.04,0.1]}}],"
    "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"no_slip\"},"
    "{\"type\":\"sphere\",\"center\":[0.05,0.0701,0.05],\"radius\":0.03,"
    "\"keyframes\":[{\"t\":0},{\"t\":0.4,\"translate\":[0,-0.0125,0]},"
    "{\"t\":0.6,\"translate\":[0,-0.0125,0]},{\"t\":0.9,\"translate\":[0,0.03,0]}]}]}";

#define SPACING   (1.0 / 150)
#define VON_MISES "materials.clay.plasticity={\"model\":\"von_mises\",\"yield_stress\":1000}"

/* Depth of the dent: how far the top layer's particles under the indenter (within 1 cm of its
 * axis) sit below the top layer's particles far from it (beyond 3.5 cm), on average. */
static double dent_depth(const pd_particles* p) {
    double near = 0, far = 0;
    int kn = 0, kf = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 r = p->rest[i];
        double dx = r.x - 0.05, dz = r.z - 0.05, d2 = dx * dx + dz * dz;
        if (r.y < 0.04 - SPACING)
            continue;
        if (d2 < 1e-4)
            near += p->pos[i].y, ++kn;
        else if (d2 > 0.035 * 0.035)
            far += p->pos[i].y, ++kf;
    }
    return kn && kf ? far / kf - near / kn : 0;
}

/* Largest (sqrt(J2) - A) / A over the particles, A = 1 kPa / sqrt(3) the von Mises limit
 * (B = 0), and the largest plastic strain as the method publishes it (the `plastic_strain`
 * output attribute, world/fields.h). */
static double worst_excess(pd_test_sim* t, double* max_plastic) {
    pd_ppd_state* s = pd_test_ppd(t);
    const pd_vec3* y = t->world->particles.pos;
    pd_field field;
    pd_error err = {0};
    int got = pd_world_fields(t->world, PD_ATTR_PLASTIC_STRAIN, &field, &err);
    const pd_real* ep = got == 1 ? field.data : NULL;
    double worst = -1;
    *max_plastic = ep ? 0 : -1; /* -1: not published */
    for (size_t i = 0; i < s->n; ++i) {
        pd_real limit, ex = pd_ppd_yield_excess(s, y, (uint32_t)i, &limit), a = 1000 / sqrt(3.0);
        worst = fmax(worst, (ex + limit - a) / a); /* sqrt(J2) = ex + limit */
        if (ep)
            *max_plastic = fmax(*max_plastic, ep[i]);
    }
    return worst;
}

typedef struct indent_result {
    double loaded, rest, worst_excess, max_plastic;
    int ok;
} indent_result;

/* The paper's order (Sec. 5): the return once after the step's elastic solve. */
#define AFTER_SOLVE "solver.plastic_return=after_solve"

/* The return inside the solve (issue 37; a departure, docs/methods/projective_pd.md). */
#define IN_SOLVE "solver.plastic_return=in_solve"

/* The indentation with `plasticity` (NULL: elastic), `solver` and `solver2` (--sets, or NULL:
 * the defaults). */
static indent_result run_indent_with2(const char* plasticity, const char* solver,
                                      const char* solver2) {
    indent_result out = {0};
    pd_test_sim t;
    const char* sets[3];
    int n = 0;
    if (plasticity)
        sets[n++] = plasticity;
    if (solver)
        sets[n++] = solver;
    if (solver2)
        sets[n++] = solver2;
    if (!pd_test_sim_open(&t, k_indent, sets, n))
        return out;
    pd_error err = {0};
    out.worst_excess = -1;
    while (t.world->time < 1.5 - 1e-9) {
        if (pd_world_step(t.world, &err) != PD_OK) {
            printf("  step failed: %s\n", err.message);
            pd_test_sim_close(&t);
            return out;
        }
        double mp;
        out.worst_excess = fmax(out.worst_excess, worst_excess(&t, &mp));
        out.max_plastic = mp;
        if (fabs(t.world->time - 0.6) < 1e-6)
            out.loaded = dent_depth(&t.world->particles);
    }
    out.rest = dent_depth(&t.world->particles);
    out.ok = 1;
    pd_test_sim_close(&t);
    return out;
}

static indent_result run_indent_with(const char* plasticity, const char* solver) {
    return run_indent_with2(plasticity, solver, NULL);
}

static indent_result run_indent(const char* plasticity) {
    return run_indent_with(plasticity, NULL);
}

/* Each indentation runs once for both tests. */
static indent_result indent(const char* plasticity) {
    static indent_result cache[2];
    static int done[2];
    int k = plasticity != NULL;
    if (!done[k])
        cache[k] = run_indent(plasticity), done[k] = 1;
    return cache[k];
}

PD_TEST(plastic_block_keeps_its_dent_elastic_recovers) {
    indent_result el = indent(NULL), pl = indent(VON_MISES);
    PD_REQUIRE(el.ok && pl.ok);
    printf("  elastic: dent %.3g mm loaded, %.3g mm at rest; plastic (von Mises 1 kPa): %.3g mm "
           "loaded, %.3g mm at rest, largest plastic strain %.3g\n",
           1e3 * el.loaded, 1e3 * el.rest, 1e3 * pl.loaded, 1e3 * pl.rest, pl.max_plastic);
    PD_CHECK(el.loaded > 0.0015 && pl.loaded > 0.0015); /* both were really indented */
    PD_CHECK_NEAR(el.rest / el.loaded, 0, 0.02);
    PD_CHECK_NEAR(pl.rest / pl.loaded, 1, 0.2);
    PD_CHECK(el.max_plastic == 0 && pl.max_plastic > 0.01);
}

/* Eq. 14 after every correction: over every particle and step of the plastic indentation,
 * (sqrt(J2) - (A + B I1)) / (A + B I1) stays at or below 2 % (the correction is the radial
 * return of Eq. 18, exact to first order in the strain). The elastic block, which never
 * corrects, goes well outside the same surface: the measure can tell. */
PD_TEST(strain_state_stays_on_or_inside_the_yield_surface) {
    indent_result el = indent(NULL), pl = indent(VON_MISES);
    PD_REQUIRE(el.ok && pl.ok);
    printf("  largest relative excess over the yield limit: %.3g plastic, %.3g elastic\n",
           pl.worst_excess, el.worst_excess);
    PD_CHECK(pl.worst_excess <= 0.02);
    PD_CHECK(el.worst_excess > 1);
}

/* The invariants Eq. 14 compares against Hooke's law for a homogeneous small strain of 1e-3 at
 * an interior particle of a grid-sampled cube (E = 0.2 MPa, nu = 0.3): uniaxial strain eps_xx
 * gives I1 = -3 K eps and sqrt(J2) = sqrt(4/3) G eps; simple shear gamma (eps_xy = gamma/2)
 * gives I1 = 0 and sqrt(J2) = G gamma, along the lattice axes and along a diagonal. From the
 * family's F (the default) they are Hooke's to second order in the strain (0.5 %); from the
 * bond strains (Eq. 16-17, `plastic_invariants: "bond_strains"`) sqrt(J2) reads +8 %, -6 % and
 * +8 %: a cubic family's bond strains are not isotropic, so the option shows in uniaxial strain. */
PD_TEST(stress_invariants_follow_hookes_law) {
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_indent, NULL, 0));
    pd_ppd_state* s = pd_test_ppd(&t);
    const pd_particles* p = &t.world->particles;
    size_t centre = 0;
    for (size_t i = 0; i < p->count; ++i) /* the particle nearest the block's centre */
        if (pd_v3_len(pd_v3_sub(p->rest[i], pd_v3(0.05, 0.02, 0.05))) <
            pd_v3_len(pd_v3_sub(p->rest[centre], pd_v3(0.05, 0.02, 0.05))))
            centre = i;
    double E = 2e5, nu = 0.3, K = E / (3 * (1 - 2 * nu)), G = E / (2 * (1 + nu)), eps = 1e-3;
    pd_mat3 cases[3] = {pd_m3_identity(), pd_m3_identity(), pd_m3_identity()};
    cases[0].m[0][0] += eps;                                  /* uniaxial strain along x */
    cases[1].m[0][1] += eps;                                  /* simple shear gamma = eps in x-y */
    cases[2].m[0][0] += eps / 2, cases[2].m[1][1] -= eps / 2; /* the same shear, turned 45 deg */
    double want_i1[3] = {-3 * K * eps, 0, 0};
    double want_j2[3] = {sqrt(4.0 / 3) * G * eps, G * eps, G * eps};
    const int modes[2] = {PD_PPD_INVARIANTS_DEFORMATION_GRADIENT, PD_PPD_INVARIANTS_BOND_STRAINS};
    const double tol_j2[2] = {0.005, 0.15};
    double uniaxial[2] = {0, 0};
    pd_vec3* y = PD_NEW_ARRAY(pd_vec3, p->count);
    PD_REQUIRE(y);
    for (int k = 0; k < 2; ++k) {
        s->prm.plastic_invariants = modes[k];
        for (int c = 0; c < 3; ++c) {
            for (size_t i = 0; i < p->count; ++i)
                y[i] = pd_m3_mulv(cases[c], p->rest[i]);
            pd_real i1, sj2;
            pd_ppd_stress_invariants(s, y, (uint32_t)centre, &i1, &sj2);
            printf("  %s, case %d: I1 %.4g Pa (Hooke %.4g), sqrt(J2) %.4g Pa (Hooke %.4g)\n",
                   k ? "bond strains" : "F", c, i1, want_i1[c], sj2, want_j2[c]);
            PD_CHECK_NEAR(i1, want_i1[c], 0.1 * K * eps);
            PD_CHECK_REL(sj2, want_j2[c], tol_j2[k]);
            if (c == 0)
                uniaxial[k] = sj2;
        }
    }
    PD_CHECK(fabs(uniaxial[1] - uniaxial[0]) > 0.03 * want_j2[0]); /* the option acts */
    PD_FREE_ARRAY(y, pd_vec3, p->count);
    pd_test_sim_close(&t);
}

/* Eq. 20: a neighbour a renewal adds to a plastic particle gets X = F^-1 (y_j - y_i), F from
 * the particle's old family with its singular values clamped to the family's range of
 * stretches. Under a homogeneous isotropic compression with a turn, y = 0.8 R x, that range
 * is [0.8, 0.8] and F = 0.8 R exactly, so a new bond's X must be its rest vector x_j - x_i
 * (reference: the rest configuration). Compressed, the horizon of 2.01 spacings takes in
 * neighbours up to 2.51 rest spacings away. The same block elastic keeps its bonds' current
 * vectors (the control: they are 0.8 R times the rest vector, far from it). */
static double new_bond_error(const char* plasticity, size_t* added) {
    pd_test_sim t;
    const char* sets[] = {plasticity};
    if (!pd_test_sim_open(&t, k_indent, sets, plasticity ? 1 : 0))
        return -1;
    pd_particles* p = &t.world->particles;
    double c = cos(0.5), s = sin(0.5), worst = 0;
    for (size_t i = 0; i < p->count; ++i) { /* y = 0.8 R x, R a turn of 0.5 rad about z */
        pd_vec3 x = p->rest[i];
        p->pos[i] = pd_v3_scale(pd_v3(c * x.x - s * x.y, s * x.x + c * x.y, x.z), 0.8);
    }
    size_t before = t.world->bond_count;
    uint8_t all = 1;
    pd_error err = {0};
    if (pd_world_renew_families(t.world, &all, &err) != PD_OK) {
        printf("  renewal failed: %s\n", err.message);
        pd_test_sim_close(&t);
        return -1;
    }
    const pd_family* f = &pd_test_ppd(&t)->fam;
    double reach = 2.01 * SPACING * (1 + 1e-9);
    *added = t.world->bond_count - before;
    for (uint32_t i = 0; i < f->count; ++i)
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            pd_vec3 rest = pd_v3_sub(p->rest[f->j[b]], p->rest[i]);
            if (pd_v3_len(rest) > reach) /* not in the family at creation: new */
                worst = fmax(worst, pd_v3_len(pd_v3_sub(f->xi[b], rest)) / pd_v3_len(rest));
        }
    pd_test_sim_close(&t);
    return worst;
}

PD_TEST(new_neighbours_of_plastic_particles_take_eq20_references) {
    size_t added_pl = 0, added_el = 0;
    double pl = new_bond_error(VON_MISES, &added_pl), el = new_bond_error(NULL, &added_el);
    printf("  %zu bonds added; largest |X - (x_j - x_i)| / |x_j - x_i| of the new ones: %.3g "
           "plastic, %.3g elastic (%zu added)\n",
           added_pl, pl, el, added_el);
    PD_REQUIRE(pl >= 0 && el >= 0);
    PD_CHECK(added_pl > 1000);
    PD_CHECK_NEAR(pl, 0, 1e-9);
    PD_CHECK(el > 0.1);
}

/* A plastic body whose neighbourhoods renew every step for 1000 steps (the clay indented and
 * released, then resting) holds as many bonds and bytes per particle at the end as after its
 * first steps (within 25 %): renewal neither leaks nor accumulates bonds. */
PD_TEST(plastic_body_memory_stays_bounded_over_1000_renewals) {
    pd_test_sim t;
    const char* sets[] = {VON_MISES};
    PD_REQUIRE(pd_test_sim_open(&t, k_indent, sets, 1));
    pd_error err = {0};
    size_t bonds10 = 0, bytes10 = 0, bonds_max = 0, bytes_max = 0;
    for (int step = 1; step <= 1000; ++step) {
        PD_REQUIRE(pd_world_step(t.world, &err) == PD_OK);
        size_t bonds = t.world->bond_count, bytes = pd_bytes_in_use();
        if (step == 10)
            bonds10 = bonds, bytes10 = bytes;
        if (step > 10)
            bonds_max = bonds > bonds_max ? bonds : bonds_max,
            bytes_max = bytes > bytes_max ? bytes : bytes_max;
    }
    double n = (double)t.world->particles.count;
    printf("  bonds per particle: %.1f after 10 steps, at most %.1f after; bytes per particle: "
           "%.0f, at most %.0f\n",
           bonds10 / n, bonds_max / n, bytes10 / n, bytes_max / n);
    PD_CHECK((double)bonds_max <= 1.25 * (double)bonds10);
    PD_CHECK((double)bytes_max <= 1.25 * (double)bytes10);
    pd_test_sim_close(&t);
}

/* Drucker-Prager's pressure dependence (Eq. 14-15, B > 0): under the indenter the clay is
 * compressed (I1 > 0), so at equal cohesion a friction angle of 30 degrees yields later than
 * 0 degrees: a shallower permanent dent (by more than 5 %; measured 12 %) and less plastic
 * strain. (With I1's sign reversed the friction angle weakens it: measured, this test then
 * fails.) Friction angle 0 with cohesion 500 Pa is von Mises at sqrt(3) A = 1 kPa (Eq. 15),
 * and must dent as the von Mises clay does. */
#define DP0                                                                                        \
    "materials.clay.plasticity={\"model\":\"drucker_prager\",\"friction_angle\":0,\"cohesion\":"   \
    "500}"
#define DP30                                                                                       \
    "materials.clay.plasticity={\"model\":\"drucker_prager\",\"friction_angle\":30,\"cohesion\":"  \
    "500}"

/* Measured in the paper's order (plastic_return after_solve, the default, set here); with the
 * return in the solve the test below. */
PD_TEST(friction_angle_strengthens_compressed_clay) {
    indent_result vm = run_indent_with(VON_MISES, AFTER_SOLVE),
                  a = run_indent_with(DP0, AFTER_SOLVE), b = run_indent_with(DP30, AFTER_SOLVE);
    PD_REQUIRE(vm.ok && a.ok && b.ok);
    printf("  dent at rest: %.3g mm (friction angle 0), %.3g mm (30 deg), %.3g mm (von Mises "
           "1 kPa); largest plastic strain %.3g, %.3g\n",
           1e3 * a.rest, 1e3 * b.rest, 1e3 * vm.rest, a.max_plastic, b.max_plastic);
    PD_CHECK_REL(a.rest, vm.rest, 1e-3);
    PD_CHECK(b.rest < 0.95 * a.rest); /* shallower by more than 5 %: the qualitative law */
    PD_CHECK(b.max_plastic < a.max_plastic);
}

/* The same law with the return in the solve (plastic_return in_solve) and the apex after the
 * solve (apex_return after_solve: at the iterates a state past the apex keeps its tension, the
 * correction after the solve takes it to the apex). Returned to the apex at every iterate the 30
 * degree clay gained ln J_p 0.18 under the sphere (the first touch, then five steps of the
 * unloading at the apex) and ended 2.66 mm above its far surface, the 0 degree and von Mises
 * clays at 3.60 mm (docs/validation.md). Friction angle 0 is von Mises by the cone's constants,
 * which the test above checks: the von Mises run is not repeated here. */
#define APEX_AFTER "solver.apex_return=after_solve"

/* The law under the return in the solve, the apex where `apex` sets it (NULL: the default, at
 * every iterate): 30 degrees shallower than 0 by more than 5 % and above the far surface, with
 * less plastic strain. `test` names the measured.csv row. */
static void in_solve_clay_law(const char* test, const char* apex) {
    indent_result a = run_indent_with2(DP0, IN_SOLVE, apex),
                  b = run_indent_with2(DP30, IN_SOLVE, apex);
    PD_REQUIRE(a.ok && b.ok);
    printf("  the return in the solve, the apex %s: dent at rest %.3g mm (friction angle 0), "
           "%.3g mm (30 deg); largest plastic strain %.3g, %.3g\n",
           apex ? "after it" : "at every iterate", 1e3 * a.rest, 1e3 * b.rest, a.max_plastic,
           b.max_plastic);
    const char* path = getenv("PD_MEASURED");
    int ok = b.rest > 0 && b.rest < 0.95 * a.rest && b.max_plastic < a.max_plastic;
    if (path && *path) {
        char key[256], row[512];
        snprintf(key, sizeof key,
                 "drucker_prager,%s,projective_pd,dent at rest at 30 degrees over 0 degrees,",
                 test);
        snprintf(row, sizeof row, "%s%.4g,,0..0.95,%s", key, b.rest / a.rest,
                 ok ? "pass" : (apex ? "fail" : "known failure"));
        pd_test_record_row(path, key, row);
    }
    PD_CHECK(b.rest > 0 && b.rest < 0.95 * a.rest);
    PD_CHECK(b.max_plastic < a.max_plastic);
}

PD_TEST(return_in_the_solve_friction_angle_strengthens_compressed_clay) {
    in_solve_clay_law("return_in_the_solve_friction_angle_strengthens_compressed_clay", APEX_AFTER);
}

/* The same with the apex at every iterate, the default (apex_return in_solve): the 30 degree clay
 * ends above its far surface (-2.66 mm measured). */
PD_TEST(known_failure_return_in_the_solve_with_the_apex_at_every_iterate_strengthens_clay) {
    in_solve_clay_law("return_in_the_solve_with_the_apex_at_every_iterate_strengthens_clay", NULL);
}

/* Eq. 18's second case, beyond the apex: a Drucker-Prager clay (friction angle 30 degrees,
 * cohesion 500 Pa) stretched isotropically by 1 % is in tension past A + B I1 = 0 (I1 =
 * -9 K e_iso = -15 kPa against A / B = 2.6 kPa). The correction flows all of the deviatoric
 * part and the fraction alpha of the isotropic part that brings the state to the apex:
 * afterwards A + B I1 = 0 at the interior particles (to first order in the strain: within 2 %
 * of A; without the isotropic flow it would stay at -2 kPa). An isotropic stretch has no
 * deviatoric part, so sqrt(J2) is printed only. */
PD_TEST(tension_past_the_apex_returns_to_the_apex) {
    const char* dp30 = "materials.clay.plasticity={\"model\":\"drucker_prager\","
                       "\"friction_angle\":30,\"cohesion\":500}";
    const char* sets[] = {dp30};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_indent, sets, 1));
    pd_particles* p = &t.world->particles;
    for (size_t i = 0; i < p->count; ++i)
        p->pos[i] = pd_v3_scale(p->rest[i], 1.01);
    pd_ppd_state* s = pd_test_ppd(&t);
    const pd_ppd_material* m = &s->mat[0];
    pd_real i1_before, j2_before;
    size_t centre = p->count / 2;
    pd_ppd_stress_invariants(s, p->pos, (uint32_t)centre, &i1_before, &j2_before);
    pd_error err = {0};
    PD_REQUIRE(pd_ppd_plastic_flow(s, t.world, t.world->particles.pos, 0, &err) == PD_OK);
    double worst_lim = 0, worst_j2 = 0;
    int interior = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 r = p->rest[i];
        if (r.x < 0.02 || r.x > 0.08 || r.y < 0.015 || r.y > 0.025 || r.z < 0.02 || r.z > 0.08)
            continue;
        pd_real i1, sj2;
        pd_ppd_stress_invariants(s, p->pos, (uint32_t)i, &i1, &sj2);
        worst_lim = fmax(worst_lim, fabs(m->yield_a + m->yield_b * i1));
        worst_j2 = fmax(worst_j2, sj2);
        interior++;
    }
    printf("  before: I1 %.4g Pa, A + B I1 %.4g Pa; after, over %d interior particles: "
           "|A + B I1| at most %.3g Pa, sqrt(J2) at most %.3g Pa (A = %.4g Pa)\n",
           i1_before, m->yield_a + m->yield_b * i1_before, interior, worst_lim, worst_j2,
           m->yield_a);
    PD_CHECK(m->yield_a + m->yield_b * i1_before < -m->yield_a); /* well past the apex */
    PD_CHECK(interior > 50);
    PD_CHECK_NEAR(worst_lim, 0, 0.02 * m->yield_a);
    pd_test_sim_close(&t);
}

/* Eq. 18's repeated corrections (flow_particle) read each state from F with the shape tensor
 * of the references they have just moved. The von Mises clay (A = 1 kPa / sqrt(3)) strained
 * homogeneously by diag(3, -1, -2) g, g = 0.007 (sqrt(J2) = sqrt(28) G g = 4.9 A), is
 * corrected once (pd_ppd_plastic_flow, up to four passes); read afresh after the rebuild, the
 * interior particles' sqrt(J2) lies on the surface within 1 % of A (measured 0.993 A). A pass
 * reading F with the shape tensor of the references before its move, X X'^T (X X^T)^-1 for
 * F X'^-1, sees the strain it has just taken out grow instead, and the next pass overshoots
 * into the surface: 0.915 A (measured). (A simple shear hides it: its two principal strains are
 * held within the range of the bond strains, which a homogeneous strain's span; the middle one of
 * this strain is not.) */
PD_TEST(repeated_corrections_end_on_the_surface_read_afresh) {
    const char* sets[] = {VON_MISES};
    pd_test_sim t;
    PD_REQUIRE(pd_test_sim_open(&t, k_indent, sets, 1));
    pd_particles* p = &t.world->particles;
    const double g = 0.007, a = 1000 / sqrt(3.0);
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 r = p->rest[i];
        p->pos[i] = pd_v3_add(r, pd_v3(3 * g * r.x, -g * r.y, -2 * g * r.z));
    }
    pd_ppd_state* s = pd_test_ppd(&t);
    pd_error err = {0};
    PD_REQUIRE(pd_ppd_plastic_flow(s, t.world, p->pos, 0, &err) == PD_OK);
    double lo = INFINITY, hi = -INFINITY;
    int interior = 0;
    for (size_t i = 0; i < p->count; ++i) {
        pd_vec3 r = p->rest[i];
        if (r.x < 0.02 || r.x > 0.08 || r.y < 0.015 || r.y > 0.025 || r.z < 0.02 || r.z > 0.08)
            continue;
        pd_real i1, sj2;
        pd_ppd_stress_invariants(s, p->pos, (uint32_t)i, &i1, &sj2);
        lo = fmin(lo, sj2 / a), hi = fmax(hi, sj2 / a);
        interior++;
    }
    printf("  after one correction of diag(3, -1, -2) %.3g, over %d interior particles: "
           "sqrt(J2) / A %.5f to %.5f\n",
           g, interior, lo, hi);
    PD_CHECK(interior > 50);
    PD_CHECK_NEAR(lo, 1, 0.01);
    PD_CHECK_NEAR(hi, 1, 0.01);
    pd_test_sim_close(&t);
}

/* q / p at the onset of yield of the interior particle nearest the block's centre, in
 * triaxial compression along x: a homogeneous confining strain e_r = 1e-3 on every axis plus
 * an isochoric one, -t along x and t/2 across, t found by bisection where Eq. 14's excess turns
 * positive. p and q are Hooke's for the imposed strain (p = 3 K e_r, q = 3 G t): what the body
 * holds, not the method's own estimate of it. */
static double triaxial_ratio_at_yield(const char* plasticity) {
    const char* sets[] = {plasticity};
    pd_test_sim t;
    if (!pd_test_sim_open(&t, k_indent, sets, 1))
        return -1;
    pd_ppd_state* s = pd_test_ppd(&t);
    const pd_particles* p = &t.world->particles;
    size_t centre = 0;
    for (size_t i = 0; i < p->count; ++i)
        if (pd_v3_len(pd_v3_sub(p->rest[i], pd_v3(0.05, 0.02, 0.05))) <
            pd_v3_len(pd_v3_sub(p->rest[centre], pd_v3(0.05, 0.02, 0.05))))
            centre = i;
    double E = 2e5, nu = 0.3, K = E / (3 * (1 - 2 * nu)), G = E / (2 * (1 + nu)), er = 1e-3;
    pd_vec3* y = PD_NEW_ARRAY(pd_vec3, p->count);
    double lo = 0, hi = 0.01;
    for (int it = 0; y && it < 50; ++it) {
        double mid = 0.5 * (lo + hi), limit;
        for (size_t i = 0; i < p->count; ++i)
            y[i] = pd_v3(p->rest[i].x * (1 - er - mid), p->rest[i].y * (1 - er + mid / 2),
                         p->rest[i].z * (1 - er + mid / 2));
        if (pd_ppd_yield_excess(s, y, (uint32_t)centre, &limit) > 0)
            hi = mid;
        else
            lo = mid;
    }
    PD_FREE_ARRAY(y, pd_vec3, p->count);
    pd_test_sim_close(&t);
    return 3 * G * 0.5 * (lo + hi) / (3 * K * er);
}

/* q / p at yield in triaxial compression for friction angles 20, 30, 40 degrees, on the
 * compression cone (ext 0) or the extension cone (ext 1), with Mohr-Coulomb's corner beside. */
static void triaxial_ratios(double got[3][2], double want[3][2]) {
    const double phis[] = {20, 30, 40};
    for (int k = 0; k < 3; ++k)
        for (int ext = 0; ext < 2; ++ext) {
            char set[256];
            snprintf(set, sizeof set,
                     "materials.clay.plasticity={\"model\":\"drucker_prager\",\"friction_angle\":"
                     "%g,\"cone\":\"%s\"}",
                     phis[k], ext ? "extension" : "compression");
            double sp = sin(phis[k] * PD_PI / 180);
            want[k][ext] = 6 * sp / (ext ? 3 + sp : 3 - sp);
            got[k][ext] = triaxial_ratio_at_yield(set);
            printf("  phi %g, %s cone: q/p at yield %.4f (Mohr-Coulomb's corner %.4f, %+.1f %%)\n",
                   phis[k], ext ? "extension" : "compression", got[k][ext], want[k][ext],
                   100 * (got[k][ext] / want[k][ext] - 1));
        }
}

/* One cone for one friction angle (issue 31): plasticity.cone chooses the cone the friction
 * angle gives, and the body yields on it: the compression cone's triaxial strength over the
 * extension cone's is (3 + sin phi) / (3 - sin phi), within 1 % (the two swapped, or one
 * convention for both, fail). */
PD_TEST(triaxial_compression_fails_on_the_stated_cone) {
    double got[3][2], want[3][2];
    triaxial_ratios(got, want);
    for (int k = 0; k < 3; ++k)
        PD_CHECK_REL(got[k][0] / got[k][1], want[k][0] / want[k][1], 0.01);
}

/* The compression cone's q / p at yield for friction angle phi: triaxial.c compares it with
 * Mohr-Coulomb's 6 sin phi / (3 - sin phi), as every method's (issue 31's 2 %). */
double pd_test_ppd_triaxial_ratio(double phi) {
    char set[256];
    snprintf(set, sizeof set,
             "materials.clay.plasticity={\"model\":\"drucker_prager\",\"friction_angle\":%g,"
             "\"cone\":\"compression\"}",
             phi);
    return triaxial_ratio_at_yield(set);
}
