/* projective_pd set-up: material mapping, families, the constant global matrix of Eq. 12
 * (its Jacobi bound and, for the direct solve, its Cholesky factor). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constitutive/elastic_constants.h"
#include "core/alloc.h"
#include "io/checkpoint_file.h"
#include "core/error.h"
#include "linalg/chebyshev.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "sph/kernels.h"
#include "sph/wall_density.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "boundary/collider.h"
#include "world/bodies.h"
#include "world/material_change.h"
#include "world/world.h"

#define M(field) offsetof(pd_ppd_material_params, field)

static const pd_param_info k_material_params[] = {
    {"deviatoric_scale", PD_PARAM_REAL, M(deviatoric_scale), 1, 0, 100, "1", NULL,
     "Multiplies the deviatoric constant mu of Eq. 8: the paper's knob for bending stiffness of "
     "shells and rods (Fig. 5); it also stiffens shear and stretch."},
    PD_CONTACT_MATERIAL_ROW(pd_ppd_material_params, contact_friction),
    {"granular", PD_PARAM_BLOCK, M(granular), 0, 0, 0, "-", NULL,
     "Wet or dry sand (Sec. 7): lambda of Eq. 8 becomes k_f(rho) + k_c(rho) per particle, with "
     "rho the particle's kernel density; needs drucker_prager plasticity."},
    {"granular.hardening", PD_PARAM_REAL, M(hardening), 10, 0, 100, "1", NULL,
     "H_f of Eq. 25: k_f = K_f exp(H_f (rho/rho_0 - 1)) above the rest density rho_0, 0 below; "
     "K_f is the material's Lame lambda from youngs_modulus and poisson_ratio."},
    {"granular.cohesion_stiffness", PD_PARAM_REAL, M(cohesion_stiffness), 0, 0, 1e12, "Pa", NULL,
     "K_c of Eq. 26, the cohesion stiffness of wet sand at rho >= rho_0; 0 is dry sand."},
    {"granular.saturation", PD_PARAM_REAL, M(saturation), 0, 0, 1, "1", NULL,
     "Water saturation theta of Eq. 27: wetter sand keeps its cohesion to a lower debonding "
     "density rho_1 = (1 - b theta) rho_0, with a gentler falloff H_c = H_0 theta^(-1/2)."},
    {"granular.cohesion_falloff", PD_PARAM_REAL, M(cohesion_falloff), 1, 0, 1000, "1", NULL,
     "H_0 of Eq. 27: k_c = K_c exp(-H_c (1 - rho/rho_0)) between rho_1 and rho_0 (the decay of "
     "the capillary force model the paper cites; docs/methods/projective_pd.md)."},
    {"granular.debonding", PD_PARAM_REAL, M(debonding), 1, 0, 1, "1", NULL,
     "b of Eq. 27 (the paper: typically 1)."},
    {"granular.compaction", PD_PARAM_ENUM, M(compaction), PD_PPD_COMPACTION_KERNEL, 0, 0, "-",
     "kernel_density|reference_kernel",
     "What rho / rho_0 of Eq. 25-26 reads. kernel_density: the kernel sum over the family and the "
     "colliders' share over the interior rest sum (as printed; a free surface reads loose: its "
     "kernel misses the air's grains). reference_kernel (beyond the paper; issue 37): the "
     "family's kernel sum at the current positions over the same family's at its reference "
     "vectors, which miss the same grains, so a free surface at rest reads 1 and only "
     "compaction or separation moves it; an empty family reads 0 (loose)."},
    {"granular.static_friction", PD_PARAM_BOOL, M(static_friction), 1, 0, 1, "-", NULL,
     "Static friction of Eq. 28: a particle the solve pushed back by eta of its predicted move "
     "stays where it was."},
    {"granular.static_threshold", PD_PARAM_REAL, M(static_threshold), 0.8, 0, 1, "1", NULL,
     "eta of Eq. 28 (the paper: 0.8)."},
    {"granular.repulsion", PD_PARAM_REAL, M(repulsion), 1, 0, 1.5, "spacing", NULL,
     "Closest two grains may come after a step, in particle spacings: a repulsive distance "
     "constraint (Sec. 8); 0 turns it off."},
    {"fluid", PD_PARAM_BLOCK, M(fluid), 0, 0, 0, "-", NULL,
     "A viscoelastic fluid (Sec. 6): constant Lame parameters, friction angle 0 (needs "
     "drucker_prager with friction_angle 0, or von_mises), kept from compressing by "
     "position-based density constraints (solver.density_iterations; unilateral as in Macklin "
     "et al. 2014: bilateral ones clump the free surface), with implicit viscosity and "
     "particle redistribution; neighbourhoods renew every step. The rest density is the "
     "material's density."},
    {"fluid.viscosity", PD_PARAM_REAL, M(viscosity), 0, 0, 1e6, "Pa s", NULL,
     "Dynamic viscosity of the implicit SPH viscous force (Sec. 6, Mueller 2003), solved by "
     "solver.viscosity_iterations Jacobi iterations; 0 turns it off (the plastic flow alone "
     "then resists like a viscosity of about G h)."},
    {"fluid.redistribution", PD_PARAM_REAL, M(redistribution), 0, 0, 1, "1", NULL,
     "delta of Eq. 24, the strength of particle redistribution (Eq. 21-24, "
     "solver.redistribution_iterations per step) against the tensile instability (Fig. 10). "
     "Off by default: as read (docs/methods/projective_pd.md) it evens the bulk but dilates a "
     "settling fluid (a slumped cube's volume x 1.68 at delta 1, x 1.23 at 0)."},
};
const pd_param_table pd_ppd_material_table = {
    k_material_params, (int)(sizeof k_material_params / sizeof k_material_params[0]),
    sizeof(pd_ppd_material_params)};

#define PPD_NU_BOND  0.25
#define PPD_NU_SLACK 0.005
#define PPD_NU_MAX   0.49

pd_status pd_ppd_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err) {
    const pd_ppd_params* prm = params;
    pd_real nu = pd_material_elastic(m).nu;
    if (nu < PPD_NU_BOND - PPD_NU_SLACK)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "projective_pd cannot show a Poisson ratio below 0.25 (got %.3g): its "
                       "bond energy (Eq. 8) gives nu = 1/4 and the dilatation term only adds "
                       "volume stiffness",
                       nu);
    if (!prm->dilatation && nu > PPD_NU_BOND + PPD_NU_SLACK)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "with solver.dilatation = false, projective_pd shows nu = 0.25 only (got "
                       "%.3g); set \"dilatation\": true in `solver` to honour it",
                       nu);
    if (nu > PPD_NU_MAX)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "projective_pd accepts Poisson ratios up to %.2f (got %.3g)", PPD_NU_MAX,
                       nu);
    const pd_ppd_material_params* mp = (const pd_ppd_material_params*)m->method_params;
    if (mp->granular && m->plasticity != PD_PLASTICITY_DRUCKER_PRAGER) {
        char child[sizeof err->path];
        snprintf(child, sizeof child, "%s.granular", path);
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "granular matter (He 2017 Sec. 7) is Drucker-Prager plastic: give the "
                       "material a plasticity block with \"model\": \"drucker_prager\"");
    }
    int zero_friction = (m->plasticity == PD_PLASTICITY_DRUCKER_PRAGER && m->friction_angle == 0) ||
                        m->plasticity == PD_PLASTICITY_VON_MISES;
    if (mp->fluid && (!zero_friction || mp->granular)) {
        char child[sizeof err->path];
        snprintf(child, sizeof child, "%s.fluid", path);
        return pd_fail(err, PD_ERR_BAD_SCENE, child,
                       "a viscoelastic fluid (He 2017 Sec. 6) has friction angle 0: give the "
                       "material drucker_prager plasticity with \"friction_angle\": 0, or "
                       "von_mises, and no granular block");
    }
    return pd_contact_check_friction(prm->contact, mp->contact_friction, path, err);
}

/* In the bulk, under a homogeneous small strain e, Y = F xi and Eq. 8 sums
 * (mu + lambda/2) w V (n.e.n)^2 over the bond directions n of a family: the stiffness tensor
 * is C = 2 (mu + lambda/2) M with M = sum_j w V n n n n, the family's fourth moment. For an
 * isotropic family M has A = M_xxxx = 1/5 and B = M_xxyy = 1/15 and the solid has Lame
 * constants 2 (mu + lambda/2)/15 each (nu = 1/4); a cubic lattice has A > 3B (stiffer along
 * its axes), which the bond factor f(n) of isotropic_weights removes (M then has A = 1/5,
 * B = 1/15 up to round-off). The dilatation term adds kv (tr e)^2 / 9, i.e. 2 kv / 9 to
 * C_xxxx and C_xxyy. Matching uniaxial stress along a family axis to (E, nu) gives
 *   mu + lambda/2 = G / (A - B),   kv = 4.5 (lambda_target - 2 G B / (A - B)),
 * with A, B measured on the interior families of the material (with f); M being isotropic,
 * the match holds in every direction and C_xyxy = G. mu and lambda of Eq. 8 are split
 * evenly. docs/methods/projective_pd.md has the derivation. */
pd_ppd_material pd_ppd_map_material(const pd_material_def* m, const pd_ppd_params* prm, pd_real A,
                                    pd_real B) {
    pd_elastic el = pd_material_elastic(m);
    pd_real G = el.mu, lam = el.lambda;
    pd_real k = G / (A - B);
    pd_ppd_material out;
    out.mu = (2.0 / 3.0) * k * ((const pd_ppd_material_params*)m->method_params)->deviatoric_scale;
    out.lambda = (2.0 / 3.0) * k;
    out.kv = prm->dilatation ? fmax(0, 4.5 * (lam - 2 * G * B / (A - B))) : 0;
    out.moment_a = A;
    out.moment_b = B;
    return out;
}

static double family_fill(const pd_ppd_state* s, size_t i) {
    double wv = 0; /* sum_j w V_j: 1 for the fullest family of the body */
    for (uint32_t k = s->fam.offsets[i]; k < s->fam.offsets[i + 1]; ++k)
        wv += s->fam.w[i] * s->volume[s->fam.j[k]];
    return wv;
}

/* A solid particle that is (or will be) of the material whose particles `takes` marks. */
static int solid_of(const pd_ppd_state* s, const uint8_t* flags, const uint8_t* takes, size_t i) {
    return takes[i] && !s->planar[i] && !(flags[i] & PD_P_SHELL);
}

static int compare_reals(const void* a, const void* b) {
    pd_real x = *(const pd_real*)a, y = *(const pd_real*)b;
    return (x > y) - (x < y);
}

/* Families of a material (its particles marked in `takes`) fuller than the returned value
 * count as interior: 0.95 of the 90th percentile of sum_j w V_j over its solid particles. On a
 * grid that is 0.95 (interior families are all full); with jittered sampling the family
 * volumes scatter below the fullest one, and a fixed 0.95 kept 1 or 2 families (measured). */
static pd_real interior_threshold(const pd_ppd_state* s, const uint8_t* flags,
                                  const uint8_t* takes) {
    size_t count = 0;
    for (size_t i = 0; i < s->n; ++i)
        count += solid_of(s, flags, takes, i);
    pd_real* fill = count ? PD_NEW_ARRAY(pd_real, count) : NULL;
    if (!fill)
        return 0.95; /* no solid particle (or no memory): the grid's value */
    size_t k = 0;
    for (size_t i = 0; i < s->n; ++i)
        if (solid_of(s, flags, takes, i))
            fill[k++] = family_fill(s, i);
    qsort(fill, count, sizeof *fill, compare_reals);
    pd_real thr = 0.95 * fill[(size_t)(0.9 * (double)(count - 1))];
    PD_FREE_ARRAY(fill, pd_real, count);
    return thr;
}

/* An interior family: solid, of the material of `takes`, fuller than `thr` (surface families
 * miss bonds). */
static int interior_family(const pd_ppd_state* s, const uint8_t* flags, const uint8_t* takes,
                           pd_real thr, size_t i) {
    return solid_of(s, flags, takes, i) && family_fill(s, i) >= thr;
}

/* The bond factor f(n) that makes the interior families' fourth moment isotropic
 * (src/neighbor/isotropy.h): the calibration below then holds in every direction, not only
 * along the lattice axes (issue 6; measured in tests/physics/anisotropy.c). Returns how far
 * the corrected moment stays from isotropic (~1e-17 when the families span enough bond
 * directions; a grid with a horizon below sqrt(2) spacings has axis bonds only). */
static pd_real isotropic_weights(const pd_ppd_state* s, const uint8_t* flags,
                                 const uint8_t* weighted, const uint8_t* takes, pd_real thr,
                                 pd_direction_weight* dw) {
    pd_moment_fit* fit = pd_calloc(1, sizeof *fit);
    memset(dw, 0, sizeof *dw);
    if (!fit)
        return -1;
    for (size_t i = 0; i < s->n; ++i)
        if (weighted[i] && interior_family(s, flags, takes, thr, i))
            pd_moment_fit_add(fit, &s->fam, s->volume, (uint32_t)i);
    pd_real dev = pd_moment_fit_solve(fit, dw);
    pd_free(fit, sizeof *fit);
    return dev;
}

/* Fourth moments A = <f n_x^4>, B = <f n_x^2 n_y^2> (averaged over the axes, with the bond
 * factor f of `dw`) of the interior families of the material of `takes`; the isotropic 1/5,
 * 1/15 when it has none. */
static void family_moments(const pd_ppd_state* s, const uint8_t* flags, const uint8_t* weighted,
                           const uint8_t* takes, pd_real thr, const pd_direction_weight* dw,
                           pd_real* A, pd_real* B) {
    const pd_family* f = &s->fam;
    double sa = 0, sb = 0, count = 0;
    for (size_t i = 0; i < s->n; ++i) {
        if (!interior_family(s, flags, takes, thr, i))
            continue;
        double a = 0, b = 0, wv = 0;
        for (uint32_t k = f->offsets[i]; k < f->offsets[i + 1]; ++k) {
            pd_vec3 X = pd_family_xi(f, (uint32_t)i, k), n = pd_v3_scale(X, 1.0 / pd_v3_len(X));
            double c = f->w[i] * s->volume[f->j[k]];
            double x2 = n.x * n.x, y2 = n.y * n.y, z2 = n.z * n.z;
            double cf = weighted[i] ? c * pd_direction_weight_at(dw, n) : c;
            a += cf * (x2 * x2 + y2 * y2 + z2 * z2) / 3;
            b += cf * (x2 * y2 + y2 * z2 + x2 * z2) / 3;
            wv += c;
        }
        sa += a / wv, sb += b / wv, count += 1;
    }
    *A = count > 0 ? sa / count : 0.2;
    *B = count > 0 ? sb / count : 1.0 / 15.0;
}

/* The state's arrays per particle (n): these lists drive allocation and release. The per-bond
 * arrays (c, kb where stored) are declared in declare_persistent: the core allocates them with
 * the family. */
#define PPD_PARTICLE_ARRAYS(X)                                                                     \
    X(kinv, pd_ppd_sym3, n)                                                                        \
    X(planar, uint8_t, n)                                                                          \
    X(diag, pd_real, n)                                                                            \
    X(ystar, pd_vec3, n)                                                                           \
    X(g, pd_vec3, n)                                                                               \
    X(fixed, uint8_t, n)                                                                           \
    X(weighted, uint8_t, n)

/* Per particle, only when some material is granular or a fluid (the density constraints, Sec.
 * 6-7; NULL otherwise: the published density takes its kernel radius and rest sum into the
 * Chebyshev scratch, density_def). */
#define PPD_GRANULAR_ARRAYS(X)                                                                     \
    X(vscale, pd_real, n)                                                                          \
    X(dens_radius, pd_real, n)                                                                     \
    X(dens_rest, pd_real, n)                                                                       \
    X(dens_inv_mass, pd_real, n)                                                                   \
    X(dens_lambda, pd_real, n)                                                                     \
    X(dens_pressure, pd_real, n)                                                                   \
    X(dens_hold, pd_real, n)                                                                       \
    X(dens_wall, pd_real, n)                                                                       \
    X(dens_kind, uint8_t, n)                                                                       \
    X(fluid_nu, pd_real, n)                                                                        \
    X(fluid_delta, pd_real, n)

#define ALLOC(field, T, count)                                                                     \
    do {                                                                                           \
        s->field = PD_NEW_ARRAY(T, (count) + 1);                                                   \
        if (!s->field)                                                                             \
            return PD_ERR_OUT_OF_MEMORY;                                                           \
    } while (0)
#define ALLOC_ITEM(field, T, count) ALLOC(field, T, count);

#define FREE(field, T, count)      PD_FREE_ARRAY(s->field, T, (count) + 1)
#define FREE_ITEM(field, T, count) FREE(field, T, count);

/* The Chebyshev sweeps' two scratch vectors are two of the optimiser's that no sweep finds in
 * use (48 bytes a particle less): in the accurate mode yold and rold, which the descent fills
 * only after the search direction (descent.c, iterate) and reads only in the line search and
 * the pair it keeps; in semi_iterative rold and work, as yold there holds the acceleration's
 * last iterate and ytrial the last energy check's (solve_semi), and work is never used. The
 * density stages that borrow them run between solves (projective_pd_granular.c), when all are
 * free. The sweeps clear them before use (pd_chebyshev_jacobi): the same bits as arrays of
 * their own. */
static void share_sweep_scratch(pd_ppd_state* s) {
    int semi = s->prm.iteration == PD_PPD_SEMI_ITERATIVE;
    s->cheb_a = semi ? s->opt.work : s->opt.yold;
    s->cheb_b = s->opt.rold;
}

static pd_status allocate_state(pd_ppd_state* s, const pd_world* w) {
    size_t n = s->n;
    PPD_PARTICLE_ARRAYS(ALLOC_ITEM)
    if (pd_state_bonds_reserve(&s->persist, s->fam.bond_capacity) != PD_OK)
        return PD_ERR_OUT_OF_MEMORY;
    pd_descent_def def = pd_default_descent_def();
    def.iterations = s->prm.iterations;
    def.tolerance = s->prm.tolerance;
    /* semi_iterative runs no descent (solve_semi): no L-BFGS pairs, 10 vectors a particle less
     * at the default history of 5 (240 of the 25K bunny's 1496 bytes a particle) */
    def.history = s->prm.iteration == PD_PPD_SEMI_ITERATIVE ? 0 : s->prm.history;
    def.line_search = s->prm.line_search;
    def.armijo = s->prm.armijo;
    /* the pairs in single precision: 120 bytes a particle less at the default history
     * (docs/methods/projective_pd.md, "Bond storage") */
    def.single_pairs = 1;
    if (pd_descent_init(&s->opt, n, &def) != PD_OK)
        return PD_ERR_OUT_OF_MEMORY;
    share_sweep_scratch(s);
    if (pd_collider_contact_init(&s->cc, n, &w->colliders) != PD_OK)
        return PD_ERR_OUT_OF_MEMORY;
    s->chunks = (n + 511) / 512;
    size_t tasks = n / PPD_TASK_GRAIN + PD_SCATTER_COLORS + 1; /* the most split_tasks makes */
    s->partial_count = 2 * (tasks > s->chunks ? tasks : s->chunks);
    ALLOC(partial, pd_real, s->partial_count);
    ALLOC(dens_partial, pd_real, pd_density_chunks(n));
    return PD_OK;
}

static pd_status allocate_granular(pd_ppd_state* s) {
    size_t n = s->n;
    PPD_GRANULAR_ARRAYS(ALLOC_ITEM)
    return PD_OK;
}

/* What lasts from step to step and follows the particles when the world reorders them; the
 * rest is rebuilt by the next step (or, as the Cholesky factor's rows, permuted apart). The
 * per-bond c and kb are rebuilt from the family after a renewal (pd_ppd_build_system): they
 * are declared so that the core sizes them with it and a checkpoint holds them; kb only where
 * it is stored (store_kb: pd_ppd_bond_kb derives it elsewhere). */
static void declare_persistent(pd_ppd_state* s, int store_kb) {
    pd_state_arrays* a = &s->persist;
    pd_state_arrays_init(a, &s->fam);
    PD_STATE_BONDS(a, s, c);
    if (store_kb)
        PD_STATE_BONDS(a, s, kb);
    PD_STATE_PARTICLES(a, s, kinv);
    PD_STATE_PARTICLES(a, s, planar);
    PD_STATE_PARTICLES(a, s, diag);
    PD_STATE_PARTICLES(a, s, fixed);
    PD_STATE_PARTICLES(a, s, plastic_strain);
    PD_STATE_PARTICLES(a, s, vscale);
    PD_STATE_PARTICLES(a, s, dens_pressure);
    /* the factor's numbering of the points (global_solve direct; NULL otherwise): a
     * reordering permutes it, a checkpoint restores it */
    pd_state_declare(a, "factor_row", &s->direct.row_of, sizeof(int32_t), PD_STATE_PER_PARTICLE);
}

/* The rebuild's per-particle stages run in parallel: each writes particle i's entries (its
 * bonds, its row) only, so the result does not depend on the threads. */
typedef struct build_job {
    pd_ppd_state* s;
    pd_real* gcorr; /* the surface correction per bond, or NULL */
    void (*stage)(const struct build_job* job, uint32_t i);
} build_job;

#define PPD_BUILD_GRAIN 512 /* s->partial holds one value per chunk of this size */

static void build_range(void* ctx, size_t begin, size_t end, int thread) {
    const build_job* job = ctx;
    for (size_t i = begin; i < end; ++i)
        job->stage(job, (uint32_t)i);
}

static void for_each_particle(pd_ppd_state* s, pd_real* gcorr,
                              void (*stage)(const build_job*, uint32_t)) {
    build_job job = {s, gcorr, stage};
    pd_parallel_for(s->n, PPD_BUILD_GRAIN, build_range, &job);
}

/* (X*X)^+ of i's family (Sec. 3); a family that spans only a plane (shell) or a line is
 * marked planar and gets the pseudo-inverse. */
pd_ppd_sym3 pd_ppd_family_kinv(const pd_ppd_state* s, uint32_t i, int* planar) {
    pd_mat3 k = pd_family_shape_tensor(&s->fam, i, NULL, s->volume); /* w_i V_j */
    pd_vec3 l;
    pd_mat3 q;
    pd_eigen_sym3(k, &l, &q);
    if (planar)
        *planar = l.x <= 1e-6 * l.z;
    pd_mat3 kinv = pd_m3_pinv_sym_eigen(l, q, 1e-6);
    return (pd_ppd_sym3){kinv.m[0][0], kinv.m[0][1], kinv.m[0][2],
                         kinv.m[1][1], kinv.m[1][2], kinv.m[2][2]};
}

static void refresh_shape_tensor(pd_ppd_state* s, uint32_t i) {
    int planar;
    s->kinv[i] = pd_ppd_family_kinv(s, i, &planar);
    s->planar[i] = (uint8_t)planar;
}

void pd_ppd_shape_tensor(pd_ppd_state* s, uint32_t i) {
    refresh_shape_tensor(s, i);
    if (s->stale) /* its references moved: the next rebuild redoes its bonds' stiffness */
        s->stale[i] |= PPD_STALE_REFS;
}

static void shape_tensor(const build_job* job, uint32_t i) {
    refresh_shape_tensor(job->s, i);
}

static void shape_tensors(pd_ppd_state* s) {
    for_each_particle(s, NULL, shape_tensor);
}

/* Per bond of i: into kb the direction weight f(n) of i's material when i is weighted (1
 * otherwise), which bond_stiffness reads.
 * Surface correction (job->gcorr; beyond the paper; after the energy-based correction of
 * Madenci & Oterkus 2014, Peridynamic Theory and Its Applications, Sec. 4.2): a particle near
 * a free surface misses bonds and is softer than the bulk (measured: a cantilever sagged 54 %
 * more than beam theory with 8 particles through the thickness). Per bond of i with direction
 * n, g_i(n) = A / S_i(n) compares i's stiffness under a uniform stretch along n,
 * S_i(n) = sum_j f w V_j (n_j . n)^4, with the bulk's (A: the interior moment, the same in
 * every direction once f makes it isotropic). The bond gets (g_i(n) + g_j(n)) / 2
 * (bond_stiffness), so it stays symmetric and interior bonds keep 1. Madenci & Oterkus
 * compare along the three axes only; on a staircase surface oblique to the lattice (a bar
 * along [1,1,1]) that interpolation stiffened the bar by 20 % (measured,
 * tests/physics/anisotropy.c). Planar families (shells, rods without ghosts) are left alone.
 * One evaluation of a bond's quartic monomials serves f(n) and its share of S_i; S_i at n,
 * which needs all of them, evaluates them again when the family is longer than one block of
 * PPD_GEOM_BLOCK bonds (a family of one block keeps them: quartic_block's samples on the 100K
 * sand's semi_iterative step 1.7 % -> 0.95 %). Both run over blocks of bonds as lanes
 * (quartic_block), each lane summing its own terms in the scalar order, so the bits do not
 * change (the sums over bonds stay sequential). On the 100K sand, whose rebuilds follow every
 * plastic correction, this stage took 13 % of the step's samples in scalar form, 6 % so
 * (2 threads; t_p 890-914 to 702-739 ms a step, three alternating runs). */
#define PPD_GEOM_BLOCK 64

/* The quartic monomials of the unit directions of i's bonds b0 .. b0 + count - 1, lane by
 * lane. */
static void quartic_block(const pd_family* f, uint32_t i, uint32_t b0, uint32_t count,
                          pd_real phi[PD_QUARTIC_TERMS][PPD_GEOM_BLOCK]) {
    pd_real xs[PPD_GEOM_BLOCK], ys[PPD_GEOM_BLOCK], zs[PPD_GEOM_BLOCK];
    for (uint32_t b = 0; b < count; ++b) {
        pd_vec3 X = pd_family_xi(f, i, b0 + b);
        xs[b] = X.x, ys[b] = X.y, zs[b] = X.z;
    }
#pragma omp simd
    for (uint32_t b = 0; b < count; ++b) {
        pd_vec3 X = pd_v3(xs[b], ys[b], zs[b]);
        pd_quartic_terms_strided(pd_v3_scale(X, 1 / pd_v3_len(X)), &phi[0][b], PPD_GEOM_BLOCK);
    }
}

/* Where bond_geometry leaves f(n) for bond_stiffness: kb, or c where kb is not stored (each
 * bond's slot is read back only by the same bond's stiffness, which then writes c). */
static float* direction_weights(pd_ppd_state* s) {
    return s->kb ? s->kb : s->c;
}

static void bond_geometry(const build_job* job, uint32_t i) {
    pd_ppd_state* s = job->s;
    const pd_family* f = &s->fam;
    const pd_ppd_material* m = &s->mat[s->material[i]];
    uint32_t first = f->offsets[i], last = f->offsets[i + 1];
    float* fns = direction_weights(s);
    if (!s->weighted[i] && !job->gcorr) {
        for (uint32_t b = first; b < last; ++b)
            fns[b] = 1;
        return;
    }
    pd_real q[PD_QUARTIC_TERMS] = {0}, phi[PD_QUARTIC_TERMS][PPD_GEOM_BLOCK];
    const pd_real* beta = m->iso.beta;
    for (uint32_t b0 = first; b0 < last; b0 += PPD_GEOM_BLOCK) {
        uint32_t count = last - b0 < PPD_GEOM_BLOCK ? last - b0 : PPD_GEOM_BLOCK;
        quartic_block(f, i, b0, count, phi);
        float* kb = fns + b0;
        if (s->weighted[i]) {
#pragma omp simd
            for (uint32_t b = 0; b < count; ++b) { /* pd_direction_weight_terms, per lane */
                pd_real fn = 1;
#pragma GCC unroll 15
                for (int k = 0; k < PD_QUARTIC_TERMS; ++k)
                    fn += beta[k] * phi[k][b];
                kb[b] = (float)fn;
            }
        } else {
            for (uint32_t b = 0; b < count; ++b)
                kb[b] = 1;
        }
        if (!job->gcorr)
            continue;
        for (uint32_t b = 0; b < count; ++b) { /* pd_quartic_add_terms, bond after bond */
            pd_real c = f->w[i] * s->volume[f->j[b0 + b]] * kb[b];
            for (int k = 0; k < PD_QUARTIC_TERMS; ++k)
                q[k] += c * pd_quartic_orderings[k] * phi[k][b];
        }
    }
    if (!job->gcorr)
        return;
    const int planar = s->planar[i];
    const pd_real moment = m->moment_a;
    for (uint32_t b0 = first; b0 < last; b0 += PPD_GEOM_BLOCK) {
        uint32_t count = last - b0 < PPD_GEOM_BLOCK ? last - b0 : PPD_GEOM_BLOCK;
        if (last - first > PPD_GEOM_BLOCK) /* one block: phi still holds its monomials */
            quartic_block(f, i, b0, count, phi);
        pd_real* g = job->gcorr + b0;
        pd_real S[PPD_GEOM_BLOCK] = {0};
        for (int k = 0; k < PD_QUARTIC_TERMS; ++k) /* pd_quartic_at_terms, per lane */
#pragma omp simd
            for (uint32_t b = 0; b < count; ++b)
                S[b] += q[k] * phi[k][b];
#pragma omp simd
        for (uint32_t b = 0; b < count; ++b) {
            /* bounded: a corner particle must not turn rigid */
            pd_real ratio = fmin(fmax(moment / S[b], 0.5), 4.0);
            g[b] = (planar | (S[b] <= 0)) ? 1 : ratio;
        }
    }
}

/* Where kb is not stored (pd_ppd_bond_kb): c_ij = 2 k_ij (w_i q_i + w_j q_j) straight away,
 * k_ij = V_i V_j f(n) / |X|^2 times the surface correction (kb_ij / w_i), each factor the same
 * bits seen from i or j (f(n) is even in n, X_ji = -X_ij), so that c_ij = c_ji to the bit as the
 * matrix needs. */
static void bond_weights_shared(const build_job* job, uint32_t i) {
    pd_ppd_state* s = job->s;
    const pd_family* f = &s->fam;
    pd_real wqi = f->w[i] * pd_ppd_kq(s, i);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        uint32_t j = f->j[b];
        pd_real fn = s->c[b]; /* bond_geometry */
        pd_real k = s->volume[i] * s->volume[j] / pd_v3_len2(pd_family_xi(f, i, b));
        if (s->weighted[i] && s->weighted[j])
            k *= fn;
        if (job->gcorr)
            k *= 0.5 * (job->gcorr[b] + job->gcorr[pd_family_rev(f, i, b)]);
        s->c[b] = (float)(2 * k * (wqi + f->w[j] * pd_ppd_kq(s, j)));
    }
}

/* Bond stiffness a_ij = 2 k_ij q_i of the quadratic form, k_ij = V_i V_j w f(n) / |X|^2 of i's
 * bonds (f: the material's isotropic direction weight, times the surface correction) into kb;
 * q_i = mu + (lambda/2 + kv) s_i (s_i the granular factor) is formed per use (pd_ppd_kq): a_ij
 * is not stored. */
static void bond_stiffness(const build_job* job, uint32_t i) {
    pd_ppd_state* s = job->s;
    const pd_family* f = &s->fam;
    if (!s->kb) {
        bond_weights_shared(job, i);
        return;
    }
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        uint32_t j = f->j[b];
        pd_real fn = s->kb[b]; /* bond_geometry */
        pd_real kb = s->volume[i] * s->volume[j] * f->w[i] / pd_v3_len2(pd_family_xi(f, i, b));
        if (s->weighted[i] && s->weighted[j]) /* solids: isotropic in every direction */
            kb *= fn;
        if (job->gcorr)
            kb *= 0.5 * (job->gcorr[b] + job->gcorr[pd_family_rev(f, i, b)]);
        s->kb[b] = (float)kb; /* the product in double, rounded (fn was, by bond_geometry) */
    }
}

/* Row i of the matrix: weights c_ij = a_ij + a_ji (where kb is stored; bond_weights_shared
 * wrote them otherwise) and the diagonal m/h^2 + sum c. Runs after bond_stiffness has filled
 * every particle's kb. */
static void matrix_row(const build_job* job, uint32_t i) {
    pd_ppd_state* s = job->s;
    const pd_family* f = &s->fam;
    pd_real sum = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        if (s->kb) {
            uint32_t r = pd_family_rev(f, i, b);
            s->c[b] =
                (float)(2 * s->kb[b] * pd_ppd_kq(s, i) + 2 * s->kb[r] * pd_ppd_kq(s, f->j[b]));
        }
        sum += s->c[b]; /* the rounded weights: the diagonal matches the matrix swept */
    }
    s->diag[i] = s->mass[i] / (s->matrix_dt * s->matrix_dt) + sum;
}

/* The bond stiffness, the matrix weights and diagonal, and the Jacobi bound rho. gcorr: the
 * surface correction per bond, or NULL. */
static void matrix_and_bound(pd_ppd_state* s) {
    for_each_particle(s, NULL, matrix_row);
    pd_sym_csr m = pd_ppd_matrix(s);
    s->rho = pd_jacobi_bound(&m, s->fixed);
}

static void stiffness(pd_ppd_state* s, pd_real* gcorr) {
    for_each_particle(s, gcorr, bond_stiffness);
    matrix_and_bound(s);
}

/* The global matrix of Eq. 12 as the shared solvers see it: the families' CSR with the
 * bond weights c off the diagonal. */
pd_sym_csr pd_ppd_matrix(const pd_ppd_state* s) {
    return (pd_sym_csr){s->n, s->fam.offsets, s->fam.j, NULL, s->diag, NULL, s->c};
}

/* Particles whose bonds take the isotropic direction weights: those of solid bodies. Shells
 * and rods (planar families, and a rod's particles with their ghosts) keep f = 1: their
 * families are no sample of a solid's. */
static void mark_weighted(const pd_ppd_state* s, const pd_world* w, uint8_t* weighted) {
    const pd_particles* p = &w->particles;
    for (size_t i = 0; i < s->n; ++i)
        weighted[i] = !s->planar[i] && !(p->flags[i] & PD_P_SHELL) &&
                      w->scene->bodies[p->body[i]].kind != PD_BODY_ROD;
}

/* Per material: the isotropic direction weights, the moments and the constants of Eq. 8, on
 * the families (at creation) of the particles that are of the material or will be after a
 * material change (`takes`, n + 1 bytes of scratch): a material first taken after a change
 * is calibrated on the lattice it will be on, not taken as isotropic. */
static pd_status calibrate_materials(pd_ppd_state* s, const pd_world* w, const uint8_t* weighted,
                                     uint8_t* takes) {
    const pd_scene* sc = w->scene;
    const uint8_t* flags = w->particles.flags;
    for (int m = 0; m < sc->material_count; ++m) {
        pd_world_particles_of_material(w, m, takes);
        pd_real A, B, thr = interior_threshold(s, flags, takes);
        pd_direction_weight dw;
        /* families with too few bond directions to be made isotropic were refused before
         * (pd_world_check_families, for every bonded method) */
        if (isotropic_weights(s, flags, weighted, takes, thr, &dw) < 0)
            return PD_ERR_OUT_OF_MEMORY;
        family_moments(s, flags, weighted, takes, thr, &dw, &A, &B);
        s->mat[m] = pd_ppd_map_material(&sc->materials[m], &s->prm, A, B);
        s->mat[m].iso = dw;
        pd_ppd_yield_constants(&sc->materials[m], &s->mat[m]);
        pd_ppd_granular_constants(&sc->materials[m], &s->mat[m]);
        /* rho_0: the kernel sum of a particle inside the cubic lattice the bodies are sampled
         * on (spacing 1, every particle's volume 1), which depends on the horizon only (a
         * jittered or Poisson-disk body at rest shows a slightly different mean); and the
         * height at which the bottom row of such a lattice rests on a wall at rho_0 */
        s->mat[m].rest_sum = pd_sph_poly6_lattice_sum(s->prm.horizon, -(int)ceil(s->prm.horizon));
        s->mat[m].rest_height = pd_sph_poly6_rest_height(s->prm.horizon, 0);
        s->plastic |= s->mat[m].plastic;
        s->granular |= s->mat[m].granular | s->mat[m].fluid;
        s->fluid |= s->mat[m].fluid;
    }
    return PD_OK;
}

/* Material constants, surface correction and bond stiffness. */
/* The scene's materials include one that flows (plastic, granular, a fluid): its bodies renew
 * their families and rebuild every step. */
static int scene_flows(const pd_ppd_state* s) {
    return s->plastic || s->granular || s->fluid;
}

/* One real a bond for the surface correction during a rebuild: kept (and grown) where the
 * system is rebuilt every step, so that its pages are not faulted in anew each time (4 % of
 * the 100K sand's samples were the kernel clearing them); allocated for the rebuild alone
 * elsewhere, where rebuilds are rare and the bytes count. */
static pd_real* surface_scratch(pd_ppd_state* s) {
    size_t nb = s->fam.bond_count + 1;
    if (!scene_flows(s))
        return PD_NEW_ARRAY(pd_real, nb);
    if (s->gcorr_capacity < nb) { /* an eighth more, as the renewed families' arrays, not
                                   * cleared (a rebuild writes every bond's): not resident */
        PD_FREE_ARRAY(s->gcorr, pd_real, s->gcorr_capacity);
        s->gcorr = pd_alloc((nb + nb / 8) * sizeof(pd_real));
        s->gcorr_capacity = s->gcorr ? nb + nb / 8 : 0;
    }
    return s->gcorr;
}

/* What depends on the families and on h: the shape tensors (X*X)^+, the bond stiffness with
 * the isotropic direction weights and the surface correction, the diagonal m/h^2 + sum c and
 * the Jacobi bound, and for the direct solve the Cholesky factor. At creation, after a renewal,
 * a removal of bonds or a new time step; the material constants stay as calibrated at
 * creation. */
/* What every rebuild ends with: the local step's plan, the direct solve's factor; the stale
 * marks cleared. */
static pd_status finish_build(pd_ppd_state* s, const pd_world* w, pd_error* err);

pd_status pd_ppd_build_system(pd_ppd_state* s, const pd_world* w, pd_error* err) {
    s->matrix_dt = w->def.dt;
    s->system_stale = 0;
    shape_tensors(s);
    mark_weighted(s, w, s->weighted);
    pd_ppd_granular_stiffness(s, w);
    pd_real* gcorr = s->prm.surface_correction ? surface_scratch(s) : NULL;
    if (s->prm.surface_correction && !gcorr)
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "solver", "out of memory");
    for_each_particle(s, gcorr, bond_geometry);
    stiffness(s, gcorr);
    if (gcorr != s->gcorr)
        PD_FREE_ARRAY(gcorr, pd_real, s->fam.bond_count + 1);
    /* the next renewal may rebuild in part: kb kept, and the surface correction where on */
    s->stale_valid = s->stale && s->kb && (!s->prm.surface_correction || gcorr == s->gcorr);
    return finish_build(s, w, err);
}

/* ------------------------------------------- the rebuild after a renewal, in part
 * A grain whose family and references did not change since the last rebuild keeps its shape
 * tensor (X*X)^+, its surface correction g_i(n) and its direction weights f(n) (which read its
 * own bonds only), and, where no neighbour changed either, its bond stiffness kb (which reads
 * the neighbour's g_j(n) and weight): only the marked grains (s->stale) and their neighbours
 * are rebuilt, the same arithmetic on the same values. The granular factor, the matrix weights
 * c, the diagonal and the Jacobi bound change with every step's densities: rebuilt whole. */

/* Whether i's bonds are rebuilt: its family or references changed, or a neighbour's. */
static int bonds_stale(const pd_ppd_state* s, uint32_t i) {
    const pd_family* f = &s->fam;
    if (s->stale[i])
        return 1;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        if (s->stale[f->j[b]])
            return 1;
    return 0;
}

static void stale_shape_tensor(const build_job* job, uint32_t i) {
    if (job->s->stale[i] & PPD_STALE_FAMILY) /* a moved reference refreshed its own */
        shape_tensor(job, i);
}

static void stale_bond_geometry(const build_job* job, uint32_t i) {
    if (bonds_stale(job->s, i))
        bond_geometry(job, i);
}

static void stale_bond_stiffness(const build_job* job, uint32_t i) {
    if (bonds_stale(job->s, i))
        bond_stiffness(job, i);
}

/* i's kb and surface correction from its place in the old family (the spare) to its place in
 * the new one (the same bonds in the same order). */
static void move_bonds(pd_ppd_state* s, pd_real* gcorr, uint32_t i) {
    uint32_t from = s->fam_spare.offsets[i], to = s->fam.offsets[i];
    uint32_t count = s->fam.offsets[i + 1] - to;
    memmove(s->kb + to, s->kb + from, count * sizeof(float));
    if (gcorr)
        memmove(gcorr + to, gcorr + from, count * sizeof(pd_real));
}

/* The kept grains' bonds to their new places: the blocks moving down in increasing order,
 * those moving up in decreasing order. Both families keep the grains in order, so a block
 * moving down lands only where earlier blocks moving down were (and up, later ones moving up):
 * no block is overwritten before it moved. Sequential: a memory move of 12 bytes a bond. */
static void carry_kept_bonds(pd_ppd_state* s, pd_real* gcorr) {
    const uint32_t *from = s->fam_spare.offsets, *to = s->fam.offsets;
    for (uint32_t i = 0; i < s->n; ++i)
        if (!s->stale[i] && to[i] < from[i])
            move_bonds(s, gcorr, i);
    for (uint32_t i = (uint32_t)s->n; i-- > 0;)
        if (!s->stale[i] && to[i] > from[i])
            move_bonds(s, gcorr, i);
}

pd_status pd_ppd_rebuild_renewed(pd_ppd_state* s, const pd_world* w, pd_error* err) {
    pd_real* gcorr = s->prm.surface_correction ? s->gcorr : NULL;
    if (!s->stale_valid || s->fam_spare.count != s->n ||
        (gcorr && s->gcorr_capacity < s->fam.bond_count + 1))
        return pd_ppd_build_system(s, w, err);
    s->matrix_dt = w->def.dt;
    s->system_stale = 0;
    s->rebuilds_in_part++;
    carry_kept_bonds(s, gcorr);
    for_each_particle(s, NULL, stale_shape_tensor);
    mark_weighted(s, w, s->weighted);
    pd_ppd_granular_stiffness(s, w);
    for_each_particle(s, gcorr, stale_bond_geometry);
    for_each_particle(s, gcorr, stale_bond_stiffness);
    matrix_and_bound(s);
    return finish_build(s, w, err);
}

static pd_status finish_build(pd_ppd_state* s, const pd_world* w, pd_error* err) {
    if (s->stale)
        memset(s->stale, 0, s->n);
    pd_status st = pd_ppd_plan_local_step(s, w);
    if (st != PD_OK)
        return pd_fail(err, st, "solver", "out of memory");
    if (s->prm.global_solve != PD_PPD_DIRECT)
        return PD_OK;
    pd_sym_csr a = pd_ppd_matrix(s);
    st = pd_sym_direct_factor(&s->direct, &a, s->fixed);
    if (st != PD_OK)
        return pd_fail(err, st, "solver.global_solve",
                       "the sparse Cholesky factorisation failed (%s)", pd_status_string(st));
    return PD_OK;
}

pd_status pd_ppd_plan_local_step(pd_ppd_state* s, const pd_world* w) {
    if (pd_scatter_plan_current(&s->plan, &s->fam))
        return PD_OK;
    return pd_scatter_plan_build(&s->plan, &s->fam, w->particles.pos, pd_world_order_cell(w),
                                 PPD_TASK_GRAIN);
}

/* Maps every material's E and nu onto the constants of Eq. 8 on the families at creation. */
static pd_status calibrate(pd_ppd_state* s, const pd_world* w) {
    uint8_t* weighted = PD_NEW_ARRAY(uint8_t, s->n + 1);
    uint8_t* takes = PD_NEW_ARRAY(uint8_t, s->n + 1);
    pd_status st = weighted && takes ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        mark_weighted(s, w, weighted);
        st = calibrate_materials(s, w, weighted, takes);
    }
    PD_FREE_ARRAY(takes, uint8_t, s->n + 1);
    PD_FREE_ARRAY(weighted, uint8_t, s->n + 1);
    return st;
}

/* src/contact for the world's particles: pairs are bonded within the families' horizon (within
 * any distance for a plastic body, whose families are renewed), the penalty stiffness comes
 * from each material's Young's modulus, friction from its contact_friction. */
static pd_status setup_contact(pd_ppd_state* s, const pd_world* w) {
    if (!s->prm.contact)
        return PD_OK;
    const pd_scene* sc = w->scene;
    uint8_t* renews = PD_NEW_ARRAY(uint8_t, (size_t)sc->material_count + 1);
    if (!renews)
        return PD_ERR_OUT_OF_MEMORY;
    for (int m = 0; m < sc->material_count; ++m)
        renews[m] = (uint8_t)s->mat[m].plastic; /* renew_plastic_bodies */
    pd_contact_def def = pd_default_contact_def();
    def.horizon = s->prm.horizon;
    def.stiffness = s->prm.contact_stiffness;
    pd_status st =
        pd_contact_init_scene(&s->contact, def, &w->particles, sc->materials, sc->material_count,
                              offsetof(pd_ppd_material_params, contact_friction), renews);
    PD_FREE_ARRAY(renews, uint8_t, (size_t)sc->material_count + 1);
    /* The candidate pairs outlive the step (rebuilt once a particle has moved a skin, and when
     * what makes a pair eligible changes: a reorder, a material change, a pin letting go). A
     * list dropped at every step's start was built anew at every step: 45 % of the CPU of the
     * 1.8K cantilever at h = 1/30 s (bench peers_cantilever). */
    s->contact.keep_candidates = 1;
    s->contact.eligible_only = 1;                    /* docs/benchmarks.md, Memory (item 4) */
    pd_contact_add_gradient_to_callers(&s->contact); /* into s->g (contact_energy) */
    return st;
}

/* When no material of the scene flows, no bond's X is ever edited (Sec. 5 moves them, a
 * renewal places new ones) and elastic families are never renewed (Sec. 8): each X stays
 * the difference of the rest positions it was built on, which the world keeps and
 * renumbers with the families, so the bonds need not store it (24 bytes a bond). Nor are the
 * opposite bonds needed but to rebuild the matrix (a look-up then, 4 bytes a bond), nor the
 * neighbour grid but for a renewal (it grows again then). A material change renews the
 * families, and the new ones store their X and opposite bonds again. */
static void keep_families_lean(pd_ppd_state* s, const pd_particles* p) {
    pd_family_share_rest(&s->fam, p->rest);
    pd_family_drop_reverse(&s->fam);
    pd_hash_grid_destroy(&s->grid);
}

/* scene_flows before the materials are calibrated: some material of the scene is plastic
 * (pd_ppd_yield_constants), granular or a fluid. */
static int materials_flow(const pd_scene* sc) {
    for (int m = 0; m < sc->material_count; ++m) {
        const pd_ppd_material_params* mp =
            (const pd_ppd_material_params*)sc->materials[m].method_params;
        pd_ppd_material mat;
        pd_ppd_yield_constants(&sc->materials[m], &mat);
        if (mat.plastic || mp->granular || mp->fluid)
            return 1;
    }
    return 0;
}

int pd_ppd_materials_change(const pd_scene* sc) {
    for (int b = 0; b < sc->body_count; ++b)
        if (sc->bodies[b].material_change_count > 0)
            return 1;
    return 0;
}

static pd_status setup(pd_ppd_state* s, pd_world* w, pd_error* err) {
    const pd_scene* sc = w->scene;
    const pd_particles* p = &w->particles;
    s->material_count = sc->material_count;
    ALLOC(mat, pd_ppd_material, sc->material_count);
    pd_status st = pd_family_build(&s->fam, &s->grid, p->rest, p->volume, p->spacing, p->body,
                                   p->count, s->prm.horizon);
    if (st == PD_OK)
        st = pd_world_check_families(w, &s->fam, s->prm.horizon, err);
    if (st != PD_OK)
        return st;
    /* before the state's arrays: the X and opposite bonds just built (28 bytes a bond) and the
     * grid were the peak of set-up beside them (the 25K bunny: 2264 bytes a particle, 1399
     * kept) */
    int flows = materials_flow(sc);
    if (!flows)
        keep_families_lean(s, p);
    /* kb is derived from c (pd_ppd_bond_kb) only where every family keeps its rest positions
     * and one material for good: no material flows (Sec. 5 edits X_ij and X_ji apart) and none
     * is changed (a renewal, and a family across two materials, whose f(n) is i's) */
    declare_persistent(s, flows || pd_ppd_materials_change(sc));
    st = allocate_state(s, w);
    if (st != PD_OK)
        return st;
    shape_tensors(s);
    st = calibrate(s, w);
    if (st != PD_OK)
        return st;
    if (s->granular && allocate_granular(s) != PD_OK)
        return PD_ERR_OUT_OF_MEMORY;
    if (s->plastic && !(s->plastic_strain = PD_NEW_ARRAY(pd_real, s->n + 1)))
        return PD_ERR_OUT_OF_MEMORY;
    size_t free_count = 0;
    for (size_t i = 0; i < s->n; ++i) {
        s->fixed[i] = (p->flags[i] & PD_P_CONSTRAINED) != 0;
        free_count += !s->fixed[i];
    }
    st = setup_contact(s, w);
    if (st != PD_OK)
        return st;
    if (s->prm.global_solve == PD_PPD_DIRECT) {
        st = pd_sym_direct_init(&s->direct, s->n, free_count);
        if (st != PD_OK)
            return st;
    }
    return pd_ppd_build_system(s, w, err);
}

/* The world reordered its particles (new i = old perm[i]): the family is renumbered (each
 * particle's bonds sorted again by neighbour, family_renewal.h) and the declared arrays follow
 * (declare_persistent). Per-step arrays are rebuilt by the next step. The Cholesky factor
 * keeps its rows: free_index follows the particles. */
pd_status pd_ppd_on_reorder(void* state, pd_world* w, const uint32_t* perm) {
    pd_ppd_state* s = state;
    pd_reorder r;
    pd_status st = pd_state_arrays_reorder(&s->persist, perm, &r); /* factor_row too */
    s->stale_valid = 0;      /* the surface correction and the marks are of the old order */
    s->density_in_order = 0; /* the published density is of the old order */
    pd_neighbor_cache_invalidate(&s->renewal_list);
    pd_contact_particles_reordered(&s->contact);
    if (st == PD_OK)
        st = pd_ppd_plan_local_step(s, w);
    pd_reorder_end(&r);
    return st;
}

pd_state_arrays* pd_ppd_persistent(void* state) {
    return &((pd_ppd_state*)state)->persist;
}

/* The scatter plan's shape, beside its arrays in a checkpoint. */
typedef struct ppd_plan_record {
    uint64_t count, tasks, color_task[PD_SCATTER_COLORS + 1];
    double cell;
    int32_t current, pad;
} ppd_plan_record;

/* The plan as it is: the bond forces are summed in its order, and it was made on the positions
 * of its moment (the last reordering or renewal), which a checkpoint does not hold: planned
 * anew, a resumed run parted from the run that wrote it in the last bits within a step
 * (block_on_incline, two_bunnies_collide). */
static void save_plan(const pd_ppd_state* s, pd_ckpt_writer* cw) {
    const pd_scatter_plan* p = &s->plan;
    ppd_plan_record rec;
    memset(&rec, 0, sizeof rec);
    rec.count = p->order ? p->count : 0, rec.tasks = p->tasks, rec.cell = p->cell;
    for (int c = 0; c <= PD_SCATTER_COLORS; ++c)
        rec.color_task[c] = p->color_task[c];
    rec.current = pd_scatter_plan_current(p, &s->fam);
    pd_ckpt_put(cw, "ppd.plan", &rec, sizeof rec);
    pd_ckpt_put(cw, "ppd.plan.order", p->order, rec.count * sizeof(uint32_t));
    pd_ckpt_put(cw, "ppd.plan.task", p->task, rec.count ? (rec.tasks + 1) * sizeof(uint32_t) : 0);
}

static pd_status load_plan(pd_ppd_state* s, pd_ckpt_reader* r, pd_error* err) {
    pd_scatter_plan* p = &s->plan;
    ppd_plan_record rec;
    pd_status st = pd_ckpt_get(r, "ppd.plan", &rec, sizeof rec, err);
    if (st == PD_OK && (rec.count != s->n && rec.count != 0))
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: a plan of %llu particles", r->path,
                       (unsigned long long)rec.count);
    if (st == PD_OK && rec.tasks > s->n + 1)
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: a plan of %llu tasks", r->path,
                       (unsigned long long)rec.tasks);
    if (st == PD_OK && rec.count && (st = pd_scatter_plan_reserve(p, s->n, rec.tasks)) != PD_OK)
        return st;
    if (st == PD_OK)
        st = pd_ckpt_get(r, "ppd.plan.order", p->order, rec.count * sizeof(uint32_t), err);
    if (st == PD_OK)
        st = pd_ckpt_get(r, "ppd.plan.task", p->task,
                         rec.count ? (rec.tasks + 1) * sizeof(uint32_t) : 0, err);
    if (st != PD_OK)
        return st;
    p->count = rec.count, p->tasks = rec.tasks, p->cell = rec.cell;
    for (int c = 0; c <= PD_SCATTER_COLORS; ++c)
        p->color_task[c] = rec.color_task[c];
    /* current for the family just read, or planned anew at the next step as it would be */
    p->generation = rec.current && rec.count ? s->fam.generation : 0;
    return PD_OK;
}

/* Beyond the arrays: which start point the last step took (the next tries the other first),
 * the Jacobi bounds of the last build, the pairs broken for good and the scatter plan. */
void pd_ppd_save(void* state, pd_ckpt_writer* cw) {
    const pd_ppd_state* s = state;
    int32_t motion_start = s->motion_start;
    pd_real bounds[2] = {s->rho, s->rho_contact};
    pd_ckpt_put(cw, "ppd.motion_start", &motion_start, sizeof motion_start);
    pd_ckpt_put(cw, "ppd.jacobi_bounds", bounds, sizeof bounds);
    pd_ckpt_put(cw, "ppd.broken", s->broken.keys, s->broken.count * sizeof(uint64_t));
    save_plan(s, cw);
}

/* After a checkpoint was read: the records of pd_ppd_save, and the factor of the direct solve
 * with the rows it was numbered with (the families' arrays are as saved). */
pd_status pd_ppd_restored(void* state, pd_world* w, pd_ckpt_reader* r, pd_error* err) {
    pd_ppd_state* s = state;
    int32_t motion_start = 0;
    pd_real bounds[2];
    size_t bytes = 0;
    pd_status st = pd_ckpt_get(r, "ppd.motion_start", &motion_start, sizeof motion_start, err);
    if (st == PD_OK)
        st = pd_ckpt_get(r, "ppd.jacobi_bounds", bounds, sizeof bounds, err);
    if (st == PD_OK)
        st = pd_ckpt_next(r, "ppd.broken", &bytes, err);
    if (st != PD_OK)
        return st;
    s->motion_start = motion_start, s->rho = bounds[0], s->rho_contact = bounds[1];
    /* A run may have written its system before rebuilding it after the last plastic flow
     * (system_stale): the next step's renewal rebuilds it, as in the run that wrote it. */
    s->system_stale = 0;
    s->stale_valid = 0; /* the surface correction is not in a checkpoint */
    pd_bond_set_free(&s->broken);
    size_t pairs = bytes / sizeof(uint64_t);
    if (pairs) {
        s->broken.keys = PD_NEW_ARRAY(uint64_t, pairs);
        if (!s->broken.keys)
            return PD_ERR_OUT_OF_MEMORY;
        s->broken.count = s->broken.capacity = pairs;
    }
    if ((st = pd_ckpt_read(r, s->broken.keys, bytes, err)) != PD_OK ||
        (st = load_plan(s, r, err)) != PD_OK)
        return st;
    w->bond_count = s->fam.bond_count;
    if (s->prm.global_solve != PD_PPD_DIRECT)
        return PD_OK;
    pd_sym_csr a = pd_ppd_matrix(s);
    st = pd_sym_direct_factor_rows(&s->direct, &a);
    return st == PD_OK
               ? PD_OK
               : pd_fail(err, st, "solver.global_solve",
                         "the sparse Cholesky factorisation failed (%s)", pd_status_string(st));
}

pd_status pd_ppd_create(pd_world* w, const void* params, void** state, pd_error* err) {
    pd_ppd_state* s = pd_calloc(1, sizeof *s);
    if (!s)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(&s->prm, params, sizeof s->prm);
    if (s->prm.iteration == PD_PPD_SEMI_ITERATIVE && s->prm.global_solve != PD_PPD_CHEBYSHEV) {
        pd_free(s, sizeof *s); /* its global step is one Jacobi sweep: no other solve is run */
        return pd_fail(err, PD_ERR_BAD_SCENE, "solver.global_solve",
                       "iteration semi_iterative takes one Jacobi sweep per iteration: "
                       "global_solve must be chebyshev");
    }
    s->n = w->particles.count;
    s->mass = w->particles.mass;
    s->volume = w->particles.volume;
    s->material = w->particles.material;
    pd_status st = setup(s, w, err);
    if (st != PD_OK) {
        pd_ppd_destroy_state(s);
        return st;
    }
    w->bond_count = s->fam.bond_count;
    s->world = w;
    *state = s;
    /* Sec. 8: plastic bodies search their neighbourhoods anew on the deformed positions at the
     * start of every step (new bonds placed by Eq. 20); elastic bodies keep their bonds */
    return pd_ppd_update_renewal(s, w, 1, err);
}

void pd_ppd_destroy_state(pd_ppd_state* s) {
    size_t n = s->n;
    PPD_PARTICLE_ARRAYS(FREE_ITEM)
    PPD_GRANULAR_ARRAYS(FREE_ITEM)
    FREE(plastic_strain, pd_real, n);
    FREE(density, pd_real, n);
    FREE(zero_strain, pd_real, n);
    pd_state_bonds_free(&s->persist);
    PD_FREE_ARRAY(s->gcorr, pd_real, s->gcorr_capacity);
    PD_FREE_ARRAY(s->stale, uint8_t, s->stale ? n + 1 : 0);
    pd_ppd_return_free(s);
    pd_descent_free(&s->opt);
    pd_collider_contact_free(&s->cc);
    FREE(partial, pd_real, s->partial_count);
    pd_scatter_plan_free(&s->plan);
    FREE(dens_partial, pd_real, pd_density_chunks(n));
    FREE(mat, pd_ppd_material, s->material_count);
    pd_contact_free(&s->contact);
    pd_sym_direct_free(&s->direct);
    pd_family_free(&s->fam);
    pd_family_free(&s->fam_spare);
    pd_bond_set_free(&s->broken);
    pd_hash_grid_destroy(&s->grid);
    pd_neighbor_cache_destroy(&s->renewal_list);
    pd_free(s, sizeof *s);
}
