/* The sand phase of Algorithm 1 (Wang et al. 2025 Sec. 5; lines 9-14 and 25).
 *
 * The paper computes F (Eq. 1) for the sand particles, projects it onto the yield surface
 * (Eq. 13-22), "computes the force density T" from it (no equation given) and updates the
 * neighbour lists every step, without saying what the sand's reference X is or how the
 * projected F is kept. We read it as an updated reference: each step the families of sand
 * bodies are found anew on the positions the step starts from, which are the step's X; the
 * elastic deformation gradient Fe (the projected F) is kept per particle, the step's trial is
 * F_tr = F_inc Fe with F_inc of Eq. 1 over the step's motion, and the force is the
 * correspondence force of Eq. 15's Kirchhoff stress of the projected F: T_ij = w_ij tau_i
 * F_inc^-T K_i^-1 xi_ij (the first Piola-Kirchhoff stress on the step's reference, with the
 * volumes of the rest state). Weights are the plain Wendland kernel (a flowing sand has no
 * lattice to correct), normalised per family. */
#include <math.h>
#include <string.h>

#include "math/svd3.h"
#include "neighbor/family_renewal.h"
#include "solvers/sbpd/sbpd_data.h"
#include "sph/kernels.h"
#include "world/world.h"

pd_status pd_sbpd_reserve_bonds(void* state, size_t bonds) {
    pd_sbpd_state* s = state;
    if (bonds <= s->fam.bond_capacity)
        return PD_OK;
    pd_family grown;
    memset(&grown, 0, sizeof grown);
    if (pd_family_allocate(&grown, s->n, bonds) != PD_OK) {
        pd_family_free(&grown);
        return PD_ERR_OUT_OF_MEMORY;
    }
    if (!s->fam.xi) /* the bonds keep their rest positions: so do these */
        pd_family_share_rest(&grown, s->fam.ref);
    pd_family_free(&s->fam);
    s->fam = grown;
    pd_family_free(&s->spare); /* of the old size: the next renewal allocates its own */
    return pd_state_bonds_reserve(&s->persist, bonds);
}

/* Renews the families of the sand bodies on `pos`, carrying the other bodies' bonds with their
 * weights and histories (the core carries the declared per-bond arrays; new bonds start with
 * zeros), into the spare family; the old one becomes the spare. On failure the old family and
 * arrays stay. */
static pd_status renew(pd_sbpd_state* s, const pd_particles* p, const pd_vec3* pos) {
    pd_renewal_def def = {.pos = pos,
                          .volume = p->volume,
                          .spacing = p->spacing,
                          .body = p->body,
                          .id = p->id,
                          .body_renews = s->body_renews,
                          .horizon = s->prm.horizon * (1 - 1e-9),
                          .cache = &s->renewal_list};
    pd_family out = s->spare;
    memset(&s->spare, 0, sizeof s->spare);
    uint32_t* old_bond = NULL;
    s->grid.keep_rows = 1; /* renewed every few steps: the search's rows kept */
    pd_status st = pd_family_renew_into(&s->fam, &s->grid, &def, &out, &old_bond);
    if (st != PD_OK)
        return st;
    st = pd_state_bonds_renew(&s->persist, &out, old_bond);
    pd_bonds_map_free(old_bond, &out);
    if (st != PD_OK) {
        pd_family_free(&out);
        return st;
    }
    s->spare = s->fam, s->fam = out;
    return PD_OK;
}

/* A grain whose family is too small or too lopsided to fit an F carries no stress this step
 * (it flies free until it has neighbours around it): with three neighbours at a surface K is
 * near singular, K^-1 xi large, and such grains were flung out of a settling pile at metres
 * per second (measured). At least SAND_MIN_BONDS neighbours and det K >= SAND_CONDITION (tr K /
 * 3)^3 (with two equal eigenvalues, the third at least 3 % of them). */
#define SAND_MIN_BONDS 6
#define SAND_CONDITION 0.1

/* The last step's end, where it really ended (after the world's collider projection, which
 * moved grains the step did not): F_inc from the last step's reference to y, projected and
 * kept as the elastic F, its plastic strain summed. Committed at the step's end instead, the
 * floor's push on the bottom grains was never in Fe: a standing cohesive column sank 0.4 mm
 * every 30 ms with no plastic flow (measured). */
static void commit(pd_sbpd_state* s, const pd_vec3* y) {
    for (uint32_t i = 0; i < s->n; ++i)
        if (s->sand[i]) {
            pd_real dp;
            pd_sbpd_sand_stress(s, y, i, &dp);
            s->Fe[i] = s->F[i];
            s->plastic[i] += dp;
        }
}

static int supported(const pd_sbpd_state* s, uint32_t i) {
    if (s->planar[i] || s->fam.offsets[i + 1] - s->fam.offsets[i] < SAND_MIN_BONDS)
        return 0;
    pd_mat3 K;
    if (!pd_m3_inverse(s->kinv[i], &K))
        return 0;
    pd_real tr = pd_m3_trace(K) / 3;
    return pd_m3_det(K) >= SAND_CONDITION * tr * tr * tr;
}

pd_real pd_sbpd_kernel_density(const pd_sbpd_state* s, const pd_vec3* x, uint32_t i) {
    pd_real r = s->prm.horizon * s->spacing[i], norm = 21 / (2 * PD_PI * r * r * r);
    pd_real rho = s->mass[i] * pd_sph_wendland_c2_shape(0);
    for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
        uint32_t j = s->fam.j[b];
        rho += s->mass[j] * pd_sph_wendland_c2_shape(pd_v3_len(pd_v3_sub(x[j], x[i])) / r);
    }
    return norm * rho;
}

/* Algorithm 1 line 26 (Eq. 23-24), on the positions the last step ended at and the elastic F
 * committed there: mu and kappa of grain i are scaled by exp(xi (rho_0^t - rho_0) / rho_0^t),
 * rho_0^t = rho_i |det Fe_i|. */
static void harden(pd_sbpd_state* s, const pd_particles* p, const pd_vec3* x, uint32_t i) {
    pd_real xi = s->mat[s->material[i]].hardening;
    if (!(xi > 0))
        return;
    pd_real rho_t = pd_sbpd_kernel_density(s, x, i) * fabs(pd_m3_det(s->Fe[i]));
    pd_real rho_0 = s->body_rho0[p->body[i]];
    s->harden[i] = rho_t > 0 ? exp(xi * (rho_t - rho_0) / rho_t) : 1;
}

pd_status pd_sbpd_sand_begin_step(pd_sbpd_state* s, pd_world* w) {
    const pd_particles* p = &w->particles;
    const pd_vec3* x = w->step_start; /* before the world moved the pins to the step's end */
    commit(s, x);
    pd_status st = renew(s, p, x);
    if (st != PD_OK)
        return st;
    w->bond_count = s->fam.bond_count;
    for (uint32_t i = 0; i < s->n; ++i) {
        if (!s->sand[i])
            continue;
        pd_real r = s->prm.horizon * p->spacing[i], sum = 0;
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b) {
            uint32_t j = s->fam.j[b];
            s->fam.xi[b] = pd_v3_sub(x[j], x[i]); /* the step's reference */
            s->w[b] = pd_sph_wendland_c2_shape(pd_v3_len(s->fam.xi[b]) / r);
            sum += s->w[b] * p->volume[j];
        }
        for (uint32_t b = s->fam.offsets[i]; b < s->fam.offsets[i + 1]; ++b)
            s->w[b] = sum > 0 ? s->w[b] / sum : 0;
        pd_sbpd_shape_tensor(s, i);
        s->planar[i] |= !supported(s, i);
        harden(s, p, x, i);
    }
    return PD_OK;
}

void pd_sbpd_sand_stress(pd_sbpd_state* s, const pd_vec3* y, uint32_t i, pd_real* plastic) {
    const pd_family* f = &s->fam;
    s->M[i] = pd_m3_zero();
    s->F[i] = s->Fe[i];
    if (plastic)
        *plastic = 0;
    if (s->planar[i]) /* a grain with too few neighbours to span a volume carries no stress */
        return;
    pd_mat3 inc_inv; /* Eq. 1 over the step (sand families keep their own X) */
    pd_mat3 inc = pd_family_deformation_gradient(f, i, s->w, s->volume, y, s->kinv[i]);
    pd_dp_map yield = s->mat[s->material[i]].yield;
    yield.mu *= s->harden[i], yield.kappa *= s->harden[i]; /* Eq. 24 */
    pd_mat3 tau;
    pd_dp_return_map(&yield, pd_m3_mul(inc, s->Fe[i]), &s->F[i], &tau, plastic); /* Eq. 14-22, 15 */
    if (!pd_m3_inverse(inc, &inc_inv))
        return;
    s->M[i] = pd_m3_mul(pd_m3_mul(tau, pd_m3_transpose(inc_inv)), s->kinv[i]);
}
