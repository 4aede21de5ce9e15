/* He 2017 Sec. 5 and 7, granular matter: the angle a pile of dry sand stands at (issue 7:
 * "pile angle ... within 5 degrees of [the friction angle] for 20, 30 and 40 degrees (drained
 * pile or tilted box)"). The tilted box, with gravity turned instead of the box: a layer of
 * sand 2.5 cm deep and 12 cm long on a rough (no-slip) floor between two slip walls 2 cm apart,
 * settled flat, then the world's gravity tilted by theta along the layer (each step's context
 * carries it to the solver). A cohesionless Mohr-Coulomb layer stands on a slope
 * below its friction angle and flows above it (the infinite slope, VALIDATION.md "Angle of
 * repose"); so the angle of repose lies within 5 degrees of phi when the layer's middle third
 * holds at phi - 5 degrees and moves at phi + 5. Four plastic corrections per step, as the
 * other granular tests. A known failure (docs/validation.md). */
#include "methods.h"
#include "projective_pd_support.h"

#include <stdlib.h>

#define SPACING 0.005

/* The scene's keys a run changes: the solver block's, the granular block's, the plasticity
 * block's beyond the friction angle (each a list of "key":value or empty). */
typedef struct layer_keys {
    const char *solver, *granular, *plasticity;
} layer_keys;

/* Four plastic corrections per step, the rest the defaults. */
static const layer_keys k_passes = {"\"plastic_passes\":4", "", ""};

/* The rows of the layer, one a spacing, by the height a grain had when gravity tilted. */
#define LAYER_ROWS 5

/* The mean downhill displacement (m) in t_end after gravity tilts by theta of the grains in the
 * middle third of the layer between heights y_lo and y_hi above the floor (a `floor` boundary:
 * "no_slip" or "slip"), the layer having settled flat for t_settle before; the mean of each row
 * of the middle third into `rows` (LAYER_ROWS of them) unless NULL. -1 on failure. */
static double slide_rows_between(layer_keys keys, double phi, double theta, double t_settle,
                                 double t_end, const char* floor, double y_lo, double y_hi,
                                 double* rows, double* above_1cm) {
    char json[4096];
    double t = theta * PD_PI / 180;
    pd_vec3 tilted = pd_v3(9.81 * sin(t), -9.81 * cos(t), 0);
    snprintf(json, sizeof json,
             "{\"version\":1,\"method\":\"projective_pd\",\"solver\":{%s},"
             "\"time\":{\"dt\":0.002,\"fps\":50,\"frames\":50},\"gravity\":[%.17g,%.17g,0],"
             "\"materials\":{\"sand\":{\"density\":1600,\"youngs_modulus\":3e5,"
             "\"poisson_ratio\":0.3,\"plasticity\":{\"model\":\"drucker_prager\","
             "\"friction_angle\":%.17g,\"cohesion\":0%s%s},\"granular\":{%s}}},"
             "\"bodies\":[{\"name\":\"layer\",\"material\":\"sand\",\"spacing\":%.17g,"
             "\"shape\":{\"type\":\"box\",\"min\":[0,0,0],\"max\":[0.12,0.025,0.02]}}],"
             "\"colliders\":[{\"type\":\"plane\",\"normal\":[0,1,0],\"boundary\":\"%s\"},"
             "{\"type\":\"box\",\"min\":[-1,-1,0],\"max\":[1,1,0.02],\"inside\":true,"
             "\"boundary\":\"slip\",\"friction\":0}]}",
             keys.solver, t_settle > 0 ? 0 : tilted.x, t_settle > 0 ? -9.81 : tilted.y, phi,
             *keys.plasticity ? "," : "", keys.plasticity, keys.granular, SPACING, floor);
    pd_test_sim s;
    if (!pd_test_sim_open(&s, json, NULL, 0))
        return -1;
    if (t_settle > 0) { /* the tilt: the world's gravity, which each step's context carries */
        int ok = pd_test_sim_run(&s, t_settle);
        s.world->def.gravity = tilted;
        if (!ok) {
            pd_test_sim_close(&s);
            return -1;
        }
    }
    const pd_particles* p = &s.world->particles;
    size_t n = p->count;
    double* x0 = malloc(n * sizeof *x0);
    int* row = malloc(n * sizeof *row);
    double* y0 = malloc(n * sizeof *y0);
    double out = -1;
    if (x0 && row && y0) {
        for (size_t i = 0; i < n; ++i) {
            x0[p->id[i]] = p->pos[i].y >= y_lo && p->pos[i].y < y_hi ? p->pos[i].x : -1;
            row[p->id[i]] = (int)(p->pos[i].y / SPACING);
            y0[p->id[i]] = p->pos[i].y;
        }
        if (pd_test_sim_run(&s, t_settle + t_end)) {
            double sum = 0, row_sum[LAYER_ROWS] = {0}, sum_1cm = 0;
            int count = 0, row_count[LAYER_ROWS] = {0}, count_1cm = 0;
            for (size_t i = 0; i < n; ++i) {
                double a = x0[p->id[i]];
                int r = row[p->id[i]];
                if (!(a > 0.04 && a < 0.08))
                    continue;
                sum += p->pos[i].x - a, ++count;
                if (y0[p->id[i]] >= 0.01)
                    sum_1cm += p->pos[i].x - a, ++count_1cm;
                if (r >= 0 && r < LAYER_ROWS)
                    row_sum[r] += p->pos[i].x - a, ++row_count[r];
            }
            out = count > 5 ? sum / count : -1;
            if (above_1cm)
                *above_1cm = count_1cm > 5 ? sum_1cm / count_1cm : -1;
            for (int r = 0; rows && r < LAYER_ROWS; ++r)
                rows[r] = row_count[r] ? row_sum[r] / row_count[r] : 0;
        }
    }
    free(x0);
    free(row);
    free(y0);
    pd_test_sim_close(&s);
    return out;
}

static double slide_between(layer_keys keys, double phi, double theta, double t_settle,
                            double t_end, const char* floor, double y_lo, double y_hi) {
    return slide_rows_between(keys, phi, theta, t_settle, t_end, floor, y_lo, y_hi, NULL, NULL);
}

/* The middle of the layer, more than 1 cm above the floor (the floor holds its own layer),
 * settled flat for 0.3 s first: gravity switched on at an angle loads a layer whose stress
 * starts outside the cone (its free ends let it spread), and it flows until the stress
 * redistributes, at any angle (session-8 note: a lateral stress ratio of 0.29 where phi 30
 * needs 0.45). */
static double layer_slide(layer_keys keys, double phi, double theta, double t_end) {
    return slide_between(keys, phi, theta, 0.3, t_end, "no_slip", 0.01, 1);
}

/* A no_slip floor holds the grains that rest on it: they sit within half a spacing of it, on
 * the density the floor's share gives them, and the steps after the solve (density
 * constraints, repulsion) must not carry them along it. Before, they were never held and the
 * layer slid as a block at 10 degrees (30 mm in 0.3 s). Control: the same layer on a slip
 * floor. */
PD_TEST(no_slip_floor_holds_the_bottom_of_a_sand_layer) {
    double held = slide_between(k_passes, 30, 10, 0, 0.3, "no_slip", 0, SPACING);
    double slid = slide_between(k_passes, 30, 10, 0, 0.3, "slip", 0, SPACING);
    printf("  bottom layer at 10 degrees, 0.3 s: %.5f m on no_slip, %.5f m on slip\n", held, slid);
    PD_CHECK(held > -1 && fabs(held) < 1e-4); /* -1: the run failed */
    PD_CHECK(slid > 5e-3);
}

PD_TEST(known_failure_sand_layer_stands_within_5_degrees_of_its_friction_angle) {
    const double phi[3] = {20, 30, 40};
    for (int k = 0; k < 3; ++k) {
        double below = layer_slide(k_passes, phi[k], phi[k] - 5, 0.3);
        double above = layer_slide(k_passes, phi[k], phi[k] + 5, 0.3);
        printf("  friction angle %g: the middle slid %.4f m at %g degrees, %.4f m at %g in 0.3 s\n",
               phi[k], below, phi[k] - 5, above, phi[k] + 5);
        PD_CHECK(below >= 0 && below < 0.001);
        PD_CHECK(above > 0.005);
    }
}

/* issue 37 item 1: with the density constraints and the repulsion in the solve
 * (granular_constraints in_solve) the density penalty carries the layer's bottom row on the
 * floor's density share at 0.5545 spacings (pd_sph_poly6_rest_height), above the half spacing
 * within which a no_slip floor held a grain: without Eq. 28 (which holds every grain at rest and
 * would hide it) the layer slid on the floor as a block, 188 mm in 0.3 s at 25 degrees. The
 * floor now holds a grain within that height. The layer, phi 30 on the extension cone (plane
 * strain's angle 29.7 degrees, docs/validation.md), four plastic corrections a step. It stands
 * on granular matter's half-space wall share: with the fluid's continued rows its slip side
 * walls stop over-reading, and it yields 3.1 mm (docs/validation.md, "Granular matter keeps the
 * half-space wall share"). */
static const layer_keys k_in_solve = {"\"plastic_passes\":4,\"granular_constraints\":\"in_solve\"",
                                      "\"static_friction\":false", "\"cone\":\"extension\""};

/* The angle a cohesionless layer stands at in plane strain on Eq. 15's cone of B (Mohr-Coulomb
 * with sin phi_eff = 3 B, docs/validation.md), for phi on the extension cone. */
static double plane_strain_angle(double phi) {
    double sp = sin(phi * PD_PI / 180), b = 2 * sp / (sqrt(3.0) * (3 + sp));
    return asin(3 * b) * 180 / PD_PI;
}

/* A Coulomb layer's acceleration down a slope of theta degrees at the plane-strain angle of a
 * friction angle phi: g (sin theta - cos theta tan phi_eff) (m/s^2). */
static double coulomb_acceleration(double phi, double theta) {
    double phi_eff = plane_strain_angle(phi) * PD_PI / 180, th = theta * PD_PI / 180;
    return 9.81 * (sin(th) - cos(th) * tan(phi_eff));
}

PD_TEST(in_solve_layer_stands_below_its_angle_on_a_no_slip_floor) {
    double below = layer_slide(k_in_solve, 30, 25, 0.3);
    printf("  phi 30 (plane strain %.1f degrees), density penalty in the solve, no Eq. 28: the "
           "middle slid %.5f m at 25 degrees in 0.3 s\n",
           plane_strain_angle(30), below);
    PD_CHECK(below >= 0 && below < 0.001);
}

/* Above the angle (5 degrees) a Coulomb layer on a rough floor accelerates as a whole at
 * g (sin theta - cos theta tan phi_eff) (1.05 m/s^2 at 35 degrees); issue 37 asks for at least
 * half of it. With the return after the solve the layer creeps (its viscosity G h). */
PD_TEST(known_failure_in_solve_layer_flows_above_its_angle) {
    double theta = 35, t = 0.3, a = coulomb_acceleration(30, theta);
    double above = layer_slide(k_in_solve, 30, theta, t), want = 0.5 * (0.5 * a) * t * t;
    printf("  the middle slid %.4f m at %g degrees in %g s; half of Coulomb's acceleration "
           "(%.3f m/s^2) moves it %.4f m\n",
           above, theta, t, a, want);
    PD_CHECK(above >= want);
}

/* The same layer with the return inside the solve (plastic_return in_solve: the references
 * returned from the step's start at every iterate, no viscosity G h), the yield check's moduli
 * those the energy has at the granular factor, compaction read against the family's reference
 * sum (granular.compaction reference_kernel: a free surface keeps its friction), and I1's
 * penalty pressure the mean over the density kernel (yield_pressure kernel_mean: the settled
 * lattice's penalty compresses alternate rows, whose own pressure read 2-2.5 times their load
 * and held the layer at 35 degrees, 9.8 mm in 0.3 s; docs/methods/projective_pd.md). */
static const layer_keys k_return = {
    "\"plastic_return\":\"in_solve\",\"granular_constraints\":\"in_solve\","
    "\"yield_pressure\":\"kernel_mean\"",
    "\"static_friction\":false,\"compaction\":\"reference_kernel\"", "\"cone\":\"extension\""};

/* The same with the yield check's default pressure, the grain's own (yield_pressure own): its
 * known failures below keep today's default measured. */
static const layer_keys k_return_own = {
    "\"plastic_return\":\"in_solve\",\"granular_constraints\":\"in_solve\"",
    "\"static_friction\":false,\"compaction\":\"reference_kernel\"", "\"cone\":\"extension\""};

/* A row of docs/measured.csv when PD_MEASURED names a file: the slide in mm. */
static void record(const char* test, const char* quantity, double slide, const char* range,
                   int ok) {
    const char* path = getenv("PD_MEASURED");
    if (!path || !*path)
        return;
    /* A known failure's rows as methods.h writes them: the name without its prefix, and "known
     * failure" for the verdict it does not meet. */
    const char* prefix = "known_failure_";
    int known = strncmp(test, prefix, strlen(prefix)) == 0;
    char key[256], row[512];
    snprintf(key, sizeof key, "drucker_prager,%s,projective_pd,%s,",
             test + (known ? strlen(prefix) : 0), quantity);
    snprintf(row, sizeof row, "%s%.4g,,%s,%s", key, 1000 * slide, range,
             ok      ? "pass"
             : known ? "known failure"
                     : "fail");
    pd_test_record_row(path, key, row);
}

/* The layer at 35 degrees (phi 30), run once for the two tests that read it: the middle third's
 * mean slide above 1 cm (layer_slide's) and above the bottom row per row (rows 1-4). */
typedef struct tilt_run {
    double above_1cm, mean, rows[LAYER_ROWS];
    int done;
} tilt_run;

static const tilt_run* layer_at_35(void) {
    static tilt_run r;
    if (!r.done) {
        r.mean = slide_rows_between(k_return, 30, 35, 0.3, 0.3, "no_slip", SPACING, 1, r.rows,
                                    &r.above_1cm);
        r.done = 1;
    }
    return &r;
}

/* The farthest a row of the phi 30 layer can slide from rest in t at theta degrees on its cone's
 * simple shear: g (sin theta - 3 b cos theta) t^2 / 2 (derived above
 * known_failure_return_in_the_solve_layer_flows_no_faster_than_its_cone_allows). */
static double cone_shear_slide(double theta, double t) {
    double th = theta * PD_PI / 180, three_b = sin(plane_strain_angle(30) * PD_PI / 180);
    return 0.5 * 9.81 * (sin(th) - three_b * cos(th)) * t * t;
}

/* With the kernel's mean pressure in I1 (k_return): 53.2 mm at 35 degrees; 9.8 mm with the
 * grain's own, the alternate rows' excess (docs/validation.md). */
PD_TEST(return_in_the_solve_lets_the_layer_flow_above_its_angle) {
    double theta = 35, t = 0.3, a = coulomb_acceleration(30, theta);
    double above = layer_at_35()->above_1cm, want = 0.5 * (0.5 * a) * t * t;
    printf("  return in the solve: the middle slid %.4f m at %g degrees in %g s; half of Coulomb's "
           "acceleration moves it %.4f m, all of it %.4f m\n",
           above, theta, t, want, 2 * want);
    /* and no faster than the cone's simple shear lets any row (within 10 %, as the rows' own
     * known failure below): a runaway layer fails here, the rows' test being out of make test */
    double most = 1.1 * cone_shear_slide(theta, t);
    char range[64];
    snprintf(range, sizeof range, ">= %.1f", 1000 * want);
    record("return_in_the_solve_lets_the_layer_flow_above_its_angle",
           "middle third's slide (mm) in 0.3 s at 35 degrees (half of Coulomb's acceleration)",
           above, range, above >= want);
    snprintf(range, sizeof range, "<= %.1f", 1000 * most);
    record("return_in_the_solve_lets_the_layer_flow_above_its_angle",
           "middle third's slide (mm) in 0.3 s at 35 degrees (the cone's simple shear)", above,
           range, above <= most);
    PD_CHECK(above >= want);
    PD_CHECK(above <= most);
}

/* Read from F (plastic_invariants auto under the return in the solve): from the bond strains
 * the density penalty's pressure, which alternates by row in the settled layer, left the
 * uncompressed rows' I1 to their bonds alone, and the layer slumped 2.3 mm on tilting. With the
 * kernel's mean pressure in I1 (k_return) 0.09 mm; with the grain's own 1.44 mm, its upper rows
 * flowing for 0.16 s (docs/validation.md). */
PD_TEST(return_in_the_solve_layer_stands_below_its_angle) {
    double below = layer_slide(k_return, 30, 25, 0.3);
    printf("  return in the solve: the middle slid %.5f m at 25 degrees in 0.3 s\n", below);
    int ok = below >= 0 && below < 0.001;
    record("return_in_the_solve_layer_stands_below_its_angle",
           "middle third's slide (mm) in 0.3 s at 25 degrees", below, "< 1", ok);
    PD_CHECK(ok);
}

/* The two tests above with the grain's own pressure in I1, the default (yield_pressure own):
 * the alternate rows' excess confinement holds the layer at 35 degrees (9.8 mm measured) and
 * lets its upper rows slump at 25 (1.44 mm). */
PD_TEST(known_failure_return_in_the_solve_with_the_grains_own_pressure_lets_the_layer_flow) {
    double theta = 35, t = 0.3, a = coulomb_acceleration(30, theta);
    double above = layer_slide(k_return_own, 30, theta, t), want = 0.5 * (0.5 * a) * t * t;
    printf(
        "  the grain's own pressure: the middle slid %.4f m at %g degrees in %g s (%.4f asked)\n",
        above, theta, t, want);
    char range[64];
    snprintf(range, sizeof range, ">= %.1f", 1000 * want);
    record("known_failure_return_in_the_solve_with_the_grains_own_pressure_lets_the_layer_flow",
           "middle third's slide (mm) in 0.3 s at 35 degrees (half of Coulomb's acceleration)",
           above, range, above >= want);
    PD_CHECK(above >= want);
}

PD_TEST(known_failure_return_in_the_solve_with_the_grains_own_pressure_layer_stands) {
    double below = layer_slide(k_return_own, 30, 25, 0.3);
    printf("  the grain's own pressure: the middle slid %.5f m at 25 degrees in 0.3 s\n", below);
    int ok = below >= 0 && below < 0.001;
    record("known_failure_return_in_the_solve_with_the_grains_own_pressure_layer_stands",
           "middle third's slide (mm) in 0.3 s at 25 degrees", below, "< 1", ok);
    PD_CHECK(ok);
}

/* The bound from above (issue 37): a cohesionless cone sqrt(J2) <= b I1 whose return keeps the
 * volume (Eq. 18's radial return) flows in simple shear with its deviator along the shear, so
 * sigma_xx = sigma_yy = sigma_zz = sigma_n in plane strain, sqrt(J2) = tau, I1 = 3 sigma_n and
 * tau <= 3 b sigma_n (mpm_sand_layer.c measures its layer at this rate). The no_slip floor holds
 * the bottom row, so the sand's own friction bounds the basal shear (the floor's, unbounded, is
 * not the weaker). Every slab of the layer above a depth that shears is on the cone there, and
 * accelerates at most at g (sin theta - 3 b cos theta) (26.3 degrees for phi 30; the plane
 * strain angle's tan 29.7 is the most the cone bears, with the best sigma_xx); where it does
 * not shear, the rows above move with the rows below. So no row of the middle third slides
 * farther than g (sin theta - 3 b cos theta) t^2 / 2 in t from rest: 74.3 mm at 35 degrees in
 * 0.3 s, asked within 10 %. */
/* A known failure with the kernel's mean pressure (k_return): the top row slid 82.4 mm, 0.9 %
 * over the bound's 10 % (with the grain's own pressure the layer arrested, 14.3 mm, a pass that
 * measured the over-hold; docs/validation.md). */
PD_TEST(known_failure_return_in_the_solve_layer_flows_no_faster_than_its_cone_allows) {
    double theta = 35, t = 0.3;
    double three_b = sin(plane_strain_angle(30) * PD_PI / 180);
    double bound = cone_shear_slide(theta, t);
    const tilt_run* run = layer_at_35();
    const double* rows = run->rows;
    double mean = run->mean;
    double fastest = 0;
    for (int r = 1; r < LAYER_ROWS; ++r)
        fastest = fmax(fastest, rows[r]);
    printf("  return in the solve, %g degrees, %g s: rows 1-4 of the middle third slid %.1f, %.1f, "
           "%.1f, %.1f mm (mean %.1f); the cone's simple shear (3b = %.3f) allows %.1f mm\n",
           theta, t, 1000 * rows[1], 1000 * rows[2], 1000 * rows[3], 1000 * rows[4], 1000 * mean,
           three_b, 1000 * bound);
    char range[64];
    snprintf(range, sizeof range, "<= %.1f", 1100 * bound);
    int ok = mean > 0 && fastest <= 1.1 * bound;
    record("known_failure_return_in_the_solve_layer_flows_no_faster_than_its_cone_allows",
           "fastest row of the middle third (mm) in 0.3 s at 35 degrees (the cone's simple shear)",
           fastest, range, ok);
    PD_CHECK(ok);
}

/* Issue 37 item 2 at friction angles 20 and 40 (plane-strain angles 20.8 and 37.7 degrees): 5
 * degrees below its angle the layer stands (under 1 mm in 0.3 s), 5 above it slides at least
 * half of Coulomb's g (sin theta - cos theta tan phi_eff) t^2 / 2. A known failure: at phi 40
 * the layer flows 5 degrees below its plane-strain angle, which lies above the cone's simple
 * shear angle, atan 3b = 31.4 degrees (docs/validation.md). */
PD_TEST(known_failure_return_in_the_solve_layer_stands_and_flows_about_its_angle_at_phi_20_and_40) {
    const double phi[2] = {20, 40}, t = 0.3;
    const char* test =
        "known_failure_return_in_the_solve_layer_stands_and_flows_about_its_angle_at_phi_20_and_40";
    for (int k = 0; k < 2; ++k) {
        double angle = plane_strain_angle(phi[k]);
        double below = layer_slide(k_return, phi[k], angle - 5, t);
        double above = layer_slide(k_return, phi[k], angle + 5, t);
        double want = 0.5 * (0.5 * coulomb_acceleration(phi[k], angle + 5)) * t * t;
        printf("  phi %g (plane strain %.2f degrees): the middle slid %.2f mm at %.2f degrees and "
               "%.1f mm at %.2f in 0.3 s; half of Coulomb's acceleration moves it %.1f mm\n",
               phi[k], angle, 1000 * below, angle - 5, 1000 * above, angle + 5, 1000 * want);
        char quantity[160], range[64];
        int stands = below >= 0 && below < 0.001, flows = above >= want;
        snprintf(quantity, sizeof quantity,
                 "middle third's slide (mm) in 0.3 s at %.2f degrees (phi %g; 5 below its angle)",
                 angle - 5, phi[k]);
        record(test, quantity, below, "< 1", stands);
        snprintf(quantity, sizeof quantity,
                 "middle third's slide (mm) in 0.3 s at %.2f degrees (phi %g; half of Coulomb's "
                 "acceleration)",
                 angle + 5, phi[k]);
        snprintf(range, sizeof range, ">= %.1f", 1000 * want);
        record(test, quantity, above, range, flows);
        PD_CHECK(stands);
        PD_CHECK(flows);
    }
}
