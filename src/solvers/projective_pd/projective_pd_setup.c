/* projective_pd set-up: material mapping, families, the constant global matrix of Eq. 12
 * (its Jacobi bound and, for the direct solve, its Cholesky factor). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "math/svd3.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "boundary/collider.h"
#include "world/world.h"

static const pd_param_info k_material_params[] = {
    {"deviatoric_scale", PD_PARAM_REAL, PD_PPD_MAT_DEVIATORIC_SCALE * sizeof(pd_real), 1, 0, 100,
     "1", NULL,
     "Multiplies the deviatoric constant mu of Eq. 8: the paper's knob for bending stiffness of "
     "shells and rods (Fig. 5); it also stiffens shear and stretch."},
    {"contact_friction", PD_PARAM_REAL, PD_PPD_MAT_CONTACT_FRICTION * sizeof(pd_real), 0, 0, 10,
     "1", NULL,
     "Coulomb friction coefficient of this material against other bodies (and itself) in "
     "particle-particle contact; a pair takes sqrt(mu_a mu_b). Requires solver.contact."},
};
const pd_param_table pd_ppd_material_table = {
    k_material_params, (int)(sizeof k_material_params / sizeof k_material_params[0]),
    PD_MAX_METHOD_PARAMS * sizeof(pd_real)};

static void youngs_poisson(const pd_material_def* m, pd_real* E, pd_real* nu) {
    if (m->has_lame) {
        pd_real l = m->lame_lambda, u = m->lame_mu;
        *E = u * (3 * l + 2 * u) / (l + u);
        *nu = l / (2 * (l + u));
    } else {
        *E = m->youngs_modulus;
        *nu = m->poisson_ratio;
    }
}

#define PPD_NU_BOND  0.25
#define PPD_NU_SLACK 0.005
#define PPD_NU_MAX   0.49

pd_status pd_ppd_check_material(const pd_material_def* m, const void* params, const char* path,
                                pd_error* err) {
    const pd_ppd_params* prm = params;
    pd_real E, nu;
    youngs_poisson(m, &E, &nu);
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
    if (!prm->contact && m->method_params[PD_PPD_MAT_CONTACT_FRICTION] > 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, path,
                       "contact_friction acts only in particle-particle contact, which "
                       "solver.contact = false turns off; drop the key or turn contact on");
    return PD_OK;
}

/* In the bulk, under a homogeneous small strain e, Y = F xi and Eq. 8 sums
 * (mu + lambda/2) w V (n.e.n)^2 over the bond directions n of a family: the stiffness tensor
 * is C = 2 (mu + lambda/2) M with M = sum_j w V n n n n, the family's fourth moment. For an
 * isotropic family M has A = M_xxxx = 1/5 and B = M_xxyy = 1/15 and the solid has Lame
 * constants 2 (mu + lambda/2)/15 each (nu = 1/4); a cubic lattice has A > 3B (stiffer along
 * its axes). The dilatation term adds kv (tr e)^2 / 9, i.e. 2 kv / 9 to C_xxxx and C_xxyy.
 * Matching uniaxial stress along a family axis to (E, nu) gives
 *   mu + lambda/2 = G / (A - B),   kv = 4.5 (lambda_target - 2 G B / (A - B)),
 * with A, B measured on the interior families of the material; mu and lambda of Eq. 8 are
 * split evenly. docs/methods/projective_pd.md has the derivation. */
pd_ppd_material pd_ppd_map_material(const pd_material_def* m, const pd_ppd_params* prm, pd_real A,
                                    pd_real B) {
    pd_real E, nu;
    youngs_poisson(m, &E, &nu);
    pd_real G = E / (2 * (1 + nu)), lam = E * nu / ((1 + nu) * (1 - 2 * nu));
    pd_real k = G / (A - B);
    pd_ppd_material out;
    out.mu = (2.0 / 3.0) * k * m->method_params[PD_PPD_MAT_DEVIATORIC_SCALE];
    out.lambda = (2.0 / 3.0) * k;
    out.kv = prm->dilatation ? fmax(0, 4.5 * (lam - 2 * G * B / (A - B))) : 0;
    out.moment_a = A;
    out.moment_b = B;
    return out;
}

/* Fourth moments A = <n_x^4>, B = <n_x^2 n_y^2> (averaged over the axes) of the interior
 * families of material `mat`; the isotropic 1/5, 1/15 when it has none. */
static void family_moments(const pd_ppd_state* s, const uint8_t* flags, int mat, pd_real* A,
                           pd_real* B) {
    const pd_family* f = &s->fam;
    double sa = 0, sb = 0, count = 0;
    for (size_t i = 0; i < s->n; ++i) {
        if (s->material[i] != mat || s->planar[i] || (flags[i] & PD_P_SHELL))
            continue;
        double a = 0, b = 0, wv = 0;
        for (uint32_t k = f->offsets[i]; k < f->offsets[i + 1]; ++k) {
            pd_vec3 n = pd_v3_scale(f->xi[k], 1.0 / pd_v3_len(f->xi[k]));
            double c = f->w[k] * s->volume[f->j[k]];
            double x2 = n.x * n.x, y2 = n.y * n.y, z2 = n.z * n.z;
            a += c * (x2 * x2 + y2 * y2 + z2 * z2) / 3;
            b += c * (x2 * y2 + y2 * z2 + x2 * z2) / 3;
            wv += c;
        }
        if (wv < 0.95) /* near a surface */
            continue;
        sa += a / wv, sb += b / wv, count += 1;
    }
    *A = count > 0 ? sa / count : 0.2;
    *B = count > 0 ? sb / count : 1.0 / 15.0;
}

/* The state's arrays, per bond (nb) or per particle (n): one list drives allocation and
 * release. */
#define PPD_STATE_ARRAYS(X)                                                                        \
    X(a, pd_real, nb)                                                                              \
    X(c, pd_real, nb)                                                                              \
    X(len, pd_real, nb)                                                                            \
    X(kb, pd_real, nb)                                                                             \
    X(wv, pd_real, nb)                                                                             \
    X(t, pd_vec3, nb)                                                                              \
    X(kinv, pd_mat3, n)                                                                            \
    X(planar, uint8_t, n)                                                                          \
    X(diag, pd_real, n)                                                                            \
    X(ystar, pd_vec3, n)                                                                           \
    X(y, pd_vec3, n)                                                                               \
    X(ytrial, pd_vec3, n)                                                                          \
    X(yprev, pd_vec3, n)                                                                           \
    X(yold, pd_vec3, n)                                                                            \
    X(r, pd_vec3, n)                                                                               \
    X(rold, pd_vec3, n)                                                                            \
    X(g, pd_vec3, n)                                                                               \
    X(dir, pd_vec3, n)                                                                             \
    X(work, pd_vec3, n)                                                                            \
    X(blocked, pd_vec3, n)                                                                         \
    X(push, pd_real, n)                                                                            \
    X(held, uint8_t, n)                                                                            \
    X(near_skip, uint8_t, n)

#define ALLOC(field, T, count)                                                                     \
    do {                                                                                           \
        s->field = PD_NEW_ARRAY(T, (count) + 1);                                                   \
        if (!s->field)                                                                             \
            return PD_ERR_OUT_OF_MEMORY;                                                           \
    } while (0)
#define ALLOC_ITEM(field, T, count) ALLOC(field, T, count);

static pd_status allocate_state(pd_ppd_state* s) {
    size_t n = s->n, nb = s->fam.bond_count;
    PPD_STATE_ARRAYS(ALLOC_ITEM)
    for (int k = 0; k < s->prm.history; ++k) {
        ALLOC(hist_s[k], pd_vec3, n);
        ALLOC(hist_y[k], pd_vec3, n);
    }
    s->chunks = (n + 511) / 512;
    ALLOC(partial, pd_real, 2 * s->chunks);
    return PD_OK;
}

/* (X*X)^+ per family (Sec. 3); a family that spans only a plane (shell) or a line is marked
 * planar and gets the pseudo-inverse. */
static void shape_tensors(pd_ppd_state* s) {
    const pd_family* f = &s->fam;
    for (size_t i = 0; i < s->n; ++i) {
        pd_mat3 k = pd_m3_zero();
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
            pd_m3_add_outer(&k, f->w[b] * s->volume[f->j[b]], f->xi[b], f->xi[b]);
        pd_vec3 l;
        pd_mat3 q;
        pd_eigen_sym3(k, &l, &q);
        s->planar[i] = l.x <= 1e-6 * l.z;
        s->kinv[i] = pd_m3_pinv_sym(k, 1e-6);
    }
}

/* Surface correction (beyond the paper; Madenci & Oterkus 2014, Peridynamic Theory and Its
 * Applications, Sec. 4.2): a particle near a free surface misses bonds and is softer than the
 * bulk (measured: a cantilever sagged 54 % more than beam theory with 8 particles through the
 * thickness). Per particle and axis d, g_d = A / sum_j w V_j n_d^4 compares the stiffness
 * under a uniform stretch along d with the bulk's (A, the interior moment); a bond gets
 * 1 / |(n_x / g_x, n_y / g_y, n_z / g_z)| with g averaged over its two ends, so it stays
 * symmetric and interior bonds keep 1. Shells and rods (planar families) are left alone. */
static void surface_factors(const pd_ppd_state* s, pd_vec3* g) {
    const pd_family* f = &s->fam;
    for (size_t i = 0; i < s->n; ++i) {
        pd_real A = s->mat[s->material[i]].moment_a, w[3] = {0, 0, 0};
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            pd_vec3 n = pd_v3_scale(f->xi[b], 1.0 / pd_v3_len(f->xi[b]));
            pd_real c = f->w[b] * s->volume[f->j[b]];
            w[0] += c * n.x * n.x * n.x * n.x;
            w[1] += c * n.y * n.y * n.y * n.y;
            w[2] += c * n.z * n.z * n.z * n.z;
        }
        pd_real gd[3];
        for (int d = 0; d < 3; ++d) /* bounded: a corner particle must not turn rigid */
            gd[d] = s->planar[i] || w[d] <= 0 ? 1 : fmin(fmax(A / w[d], 0.5), 4.0);
        g[i] = pd_v3(gd[0], gd[1], gd[2]);
    }
}

static pd_real bond_correction(pd_vec3 gi, pd_vec3 gj, pd_vec3 xi, pd_real len) {
    pd_vec3 n = pd_v3_scale(xi, 1.0 / len), g = pd_v3_scale(pd_v3_add(gi, gj), 0.5);
    return 1.0 / pd_v3_len(pd_v3(n.x / g.x, n.y / g.y, n.z / g.z));
}

/* Bond stiffness a_ij = 2 V_i V_j w (mu + lambda/2 + kv) / |X|^2 of the quadratic form, the
 * matrix weights c_ij = a_ij + a_ji, the diagonal, and the Jacobi bound rho. */
static void stiffness(pd_ppd_state* s, const uint8_t* flags, const pd_vec3* gcorr) {
    const pd_family* f = &s->fam;
    pd_real h2 = s->dt * s->dt;
    for (size_t i = 0; i < s->n; ++i) {
        const pd_ppd_material* m = &s->mat[s->material[i]];
        pd_real k = m->mu + 0.5 * m->lambda + (s->planar[i] ? 0 : m->kv);
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            uint32_t j = f->j[b];
            s->len[b] = pd_v3_len(f->xi[b]);
            s->wv[b] = f->w[b] * s->volume[j];
            s->kb[b] = s->volume[i] * s->volume[j] * f->w[b] / pd_v3_len2(f->xi[b]);
            if (gcorr)
                s->kb[b] *= bond_correction(gcorr[i], gcorr[j], f->xi[b], s->len[b]);
            s->a[b] = 2 * s->kb[b] * k;
        }
    }
    s->rho = 0;
    for (size_t i = 0; i < s->n; ++i) {
        pd_real sum = 0;
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            s->c[b] = s->a[b] + s->a[f->rev[b]];
            sum += s->c[b];
        }
        s->diag[i] = s->mass[i] / h2 + sum;
        if (!(flags[i] & PD_P_CONSTRAINED))
            s->rho = fmax(s->rho, sum / s->diag[i]);
    }
}

/* Upper triangle of A over the free particles, in compressed columns, factored once: the
 * families and stiffness do not change during an elastic run (Sec. 4.1). */
static pd_status factor_direct(pd_ppd_state* s, const uint8_t* flags) {
    const pd_family* f = &s->fam;
    ALLOC(free_index, int32_t, s->n);
    s->free_count = 0;
    for (size_t i = 0; i < s->n; ++i)
        s->free_index[i] = flags[i] & PD_P_CONSTRAINED ? -1 : (int32_t)s->free_count++;
    ALLOC(rhs, pd_vec3, s->free_count);
    ALLOC(xsol, pd_vec3, s->free_count);
    size_t nnz_max = s->free_count + f->bond_count, nnz = 0;
    uint32_t* col = PD_NEW_ARRAY(uint32_t, s->free_count + 1);
    uint32_t* row = PD_NEW_ARRAY(uint32_t, nnz_max + 1);
    double* val = PD_NEW_ARRAY(double, nnz_max + 1);
    pd_status st = col && row && val ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == PD_OK && i < s->n; ++i) {
        int32_t fi = s->free_index[i];
        if (fi < 0)
            continue;
        col[fi] = (uint32_t)nnz;
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
            int32_t fj = s->free_index[f->j[b]];
            if (fj >= 0 && fj < fi) {
                row[nnz] = (uint32_t)fj;
                val[nnz++] = -s->c[b];
            }
        }
        row[nnz] = (uint32_t)fi;
        val[nnz++] = s->diag[i];
    }
    if (st == PD_OK) {
        col[s->free_count] = (uint32_t)nnz;
        st = s->free_count ? pd_cholmod_factor(&s->direct, s->free_count, col, row, val) : PD_OK;
    }
    PD_FREE_ARRAY(col, uint32_t, s->free_count + 1);
    PD_FREE_ARRAY(row, uint32_t, nnz_max + 1);
    PD_FREE_ARRAY(val, double, nnz_max + 1);
    return st;
}

pd_status pd_ppd_solve_direct(pd_ppd_state* s, const pd_vec3* b, pd_vec3* z) {
    for (size_t i = 0; i < s->n; ++i)
        if (s->free_index[i] >= 0)
            s->rhs[s->free_index[i]] = b[i];
    pd_status st = s->free_count ? pd_cholmod_solve3(&s->direct, s->rhs, s->xsol) : PD_OK;
    for (size_t i = 0; i < s->n; ++i) /* constrained particles do not move */
        z[i] = s->free_index[i] < 0 ? pd_v3(0, 0, 0) : s->xsol[s->free_index[i]];
    return st;
}

/* src/contact for the world's particles: pairs are bonded within the families' horizon, the
 * penalty stiffness comes from each material's Young's modulus, friction from its
 * contact_friction. */
static pd_status setup_contact(pd_ppd_state* s, const pd_world* w) {
    if (!s->prm.contact)
        return PD_OK;
    const pd_scene* sc = w->scene;
    ALLOC(contact_modulus, pd_real, sc->material_count);
    ALLOC(contact_friction, pd_real, sc->material_count);
    int any_friction = 0;
    for (int m = 0; m < sc->material_count; ++m) {
        pd_real E, nu;
        youngs_poisson(&sc->materials[m], &E, &nu);
        s->contact_modulus[m] = E;
        s->contact_friction[m] = sc->materials[m].method_params[PD_PPD_MAT_CONTACT_FRICTION];
        any_friction |= s->contact_friction[m] > 0;
    }
    pd_contact_def def = pd_default_contact_def();
    def.horizon = s->prm.horizon;
    def.stiffness = s->prm.contact_stiffness;
    def.modulus = s->contact_modulus;
    def.friction = any_friction ? s->contact_friction : NULL;
    return pd_contact_init(&s->contact, &def, &w->particles);
}

static pd_status setup(pd_ppd_state* s, pd_world* w, pd_error* err) {
    const pd_scene* sc = w->scene;
    const pd_particles* p = &w->particles;
    s->material_count = sc->material_count;
    ALLOC(mat, pd_ppd_material, sc->material_count);
    pd_status st = pd_family_build(&s->fam, &s->grid, p->rest, p->volume, p->spacing, p->body,
                                   p->count, s->prm.horizon);
    if (st != PD_OK)
        return st;
    for (size_t i = 0; i < s->n; ++i)
        if (s->fam.offsets[i + 1] - s->fam.offsets[i] < 2 && !(p->flags[i] & PD_P_CONSTRAINED))
            return pd_fail(err, PD_ERR_BAD_SCENE, "solver.horizon",
                           "particle %d of body '%s' has fewer than 2 neighbours within the "
                           "horizon; raise solver.horizon or refine the body's spacing",
                           (int)p->id[i], sc->bodies[p->body[i]].name);
    st = allocate_state(s);
    if (st != PD_OK)
        return st;
    shape_tensors(s);
    for (int m = 0; m < sc->material_count; ++m) {
        pd_real A, B;
        family_moments(s, p->flags, m, &A, &B);
        s->mat[m] = pd_ppd_map_material(&sc->materials[m], &s->prm, A, B);
    }
    pd_vec3* g = s->prm.surface_correction ? PD_NEW_ARRAY(pd_vec3, s->n) : NULL;
    if (s->prm.surface_correction && !g)
        return PD_ERR_OUT_OF_MEMORY;
    if (g)
        surface_factors(s, g);
    stiffness(s, p->flags, g);
    if (g)
        PD_FREE_ARRAY(g, pd_vec3, s->n);
    st = setup_contact(s, w);
    if (st != PD_OK)
        return st;
    if (s->prm.global_solve == PD_PPD_DIRECT) {
        st = factor_direct(s, p->flags);
        if (st != PD_OK)
            return pd_fail(err, st, "solver.global_solve",
                           "the sparse Cholesky factorisation failed (%s)", pd_status_string(st));
    }
    return PD_OK;
}

/* dst[k] = src[map[k]] for `count` items of `size` bytes; src and dst must not overlap. */
static void gather_items(void* dst, const void* src, const uint32_t* map, size_t count,
                         size_t size) {
    for (size_t k = 0; k < count; ++k)
        memcpy((char*)dst + k * size, (const char*)src + (size_t)map[k] * size, size);
}

/* Permutes an array of `count` items in place through scratch (dst[k] = a[map[k]]). */
static void permute_items(void* a, void* scratch, const uint32_t* map, size_t count, size_t size) {
    gather_items(scratch, a, map, count, size);
    memcpy(a, scratch, count * size);
}

/* The world reordered its particles (new i = old perm[i]): the families keep their bonds in
 * the same order within each family, renumbered; every per-particle and per-bond array of the
 * state follows. Per-step arrays are rebuilt by the next step. The Cholesky factor keeps its
 * rows: free_index follows the particles. */
pd_status pd_ppd_on_reorder(void* state, pd_world* w, const uint32_t* perm) {
    pd_ppd_state* s = state;
    pd_family* f = &s->fam;
    size_t n = s->n, nb = f->bond_count;
    size_t scratch_bytes = (nb > n ? nb : n) * sizeof(pd_mat3);
    uint32_t* inv = PD_NEW_ARRAY(uint32_t, n);
    uint32_t* bond_from = PD_NEW_ARRAY(uint32_t, nb + 1); /* new bond -> old bond */
    uint32_t* bond_to = PD_NEW_ARRAY(uint32_t, nb + 1);   /* old bond -> new bond */
    uint32_t* offsets = PD_NEW_ARRAY(uint32_t, n + 1);
    void* scratch = pd_alloc(scratch_bytes);
    pd_status st = inv && bond_from && bond_to && offsets && scratch ? PD_OK : PD_ERR_OUT_OF_MEMORY;
    if (st == PD_OK) {
        for (size_t i = 0; i < n; ++i)
            inv[perm[i]] = (uint32_t)i;
        offsets[0] = 0;
        for (size_t i = 0; i < n; ++i) {
            uint32_t o = f->offsets[perm[i]], deg = f->offsets[perm[i] + 1] - o;
            for (uint32_t m = 0; m < deg; ++m) {
                bond_from[offsets[i] + m] = o + m;
                bond_to[o + m] = offsets[i] + m;
            }
            offsets[i + 1] = offsets[i] + deg;
        }
        memcpy(f->offsets, offsets, (n + 1) * sizeof(uint32_t));
        uint32_t* idx = scratch;
        for (size_t b = 0; b < nb; ++b)
            idx[b] = inv[f->j[bond_from[b]]];
        memcpy(f->j, idx, nb * sizeof(uint32_t));
        for (size_t b = 0; b < nb; ++b)
            idx[b] = bond_to[f->rev[bond_from[b]]];
        memcpy(f->rev, idx, nb * sizeof(uint32_t));
        permute_items(f->xi, scratch, bond_from, nb, sizeof(pd_vec3));
        permute_items(f->w, scratch, bond_from, nb, sizeof(pd_real));
        permute_items(s->a, scratch, bond_from, nb, sizeof(pd_real));
        permute_items(s->c, scratch, bond_from, nb, sizeof(pd_real));
        permute_items(s->len, scratch, bond_from, nb, sizeof(pd_real));
        permute_items(s->kb, scratch, bond_from, nb, sizeof(pd_real));
        permute_items(s->wv, scratch, bond_from, nb, sizeof(pd_real));
        permute_items(s->kinv, scratch, perm, n, sizeof(pd_mat3));
        permute_items(s->planar, scratch, perm, n, sizeof(uint8_t));
        permute_items(s->diag, scratch, perm, n, sizeof(pd_real));
        if (s->free_index)
            permute_items(s->free_index, scratch, perm, n, sizeof(int32_t));
    }
    PD_FREE_ARRAY(inv, uint32_t, n);
    PD_FREE_ARRAY(bond_from, uint32_t, nb + 1);
    PD_FREE_ARRAY(bond_to, uint32_t, nb + 1);
    PD_FREE_ARRAY(offsets, uint32_t, n + 1);
    pd_free(scratch, scratch_bytes);
    (void)w;
    return st;
}

pd_status pd_ppd_create(pd_world* w, const void* params, void** state, pd_error* err) {
    pd_ppd_state* s = pd_calloc(1, sizeof *s);
    if (!s)
        return PD_ERR_OUT_OF_MEMORY;
    memcpy(&s->prm, params, sizeof s->prm);
    s->dt = w->def.dt;
    s->gravity = w->def.gravity;
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
    *state = s;
    return PD_OK;
}

#define FREE(field, T, count)      PD_FREE_ARRAY(s->field, T, (count) + 1)
#define FREE_ITEM(field, T, count) FREE(field, T, count);

void pd_ppd_destroy_state(pd_ppd_state* s) {
    size_t n = s->n, nb = s->fam.bond_count;
    PPD_STATE_ARRAYS(FREE_ITEM)
    for (int k = 0; k < s->prm.history; ++k) {
        FREE(hist_s[k], pd_vec3, n);
        FREE(hist_y[k], pd_vec3, n);
    }
    FREE(partial, pd_real, 2 * s->chunks);
    FREE(mat, pd_ppd_material, s->material_count);
    FREE(contact_modulus, pd_real, s->material_count);
    FREE(contact_friction, pd_real, s->material_count);
    pd_contact_free(&s->contact);
    FREE(free_index, int32_t, n);
    FREE(rhs, pd_vec3, s->free_count);
    FREE(xsol, pd_vec3, s->free_count);
    pd_cholmod_free(&s->direct);
    pd_family_free(&s->fam);
    pd_hash_grid_destroy(&s->grid);
    pd_free(s, sizeof *s);
}
