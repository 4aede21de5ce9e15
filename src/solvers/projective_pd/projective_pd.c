/* Projective peridynamics: He, Wang, Wu 2017, "Projective Peridynamics for Modeling Versatile
 * Elastoplastic Materials", IEEE TVCG 24(9). Sec. 3-4: elasticity.
 *
 * Each step solves the implicit Euler system of Eq. 12 as the paper reads it in Sec. 4.2: a
 * preconditioned descent on the energy of Eq. 12 with the system matrix as preconditioner.
 * The local step computes F, the directions dir(F xi) (Eq. 10) and dir(Y) (Eq. 11), the energy
 * and its exact gradient (Eq. 9, the derivative Eq. 10 drops kept); the global step applies
 * the constant matrix to the residual (Chebyshev-Jacobi sweeps or the Cholesky factor); Eq. 13
 * takes the step with a backtracking line search (Armijo). L-BFGS pairs on top (beyond the
 * paper) and contacts blocked along collider normals. docs/methods/projective_pd.md has the
 * derivations and the measurements behind each choice. */
#include "solvers/projective_pd/projective_pd_data.h"

#include <math.h>
#include <string.h>

#include "boundary/collider.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/timer.h"
#include "math/svd3.h"
#include "parallel/parallel.h"
#include "solvers/projective_pd/projective_pd_internal.h"
#include "solvers/solver.h"
#include "world/world.h"

#define PPD_GRAIN 512
/* det F below which a particle counts as inverted for the fix of Sec. 4.1 (see local_particle) */
#define PPD_INVERTED 0.05
/* Closest a contact pair may come, in contact distances, in a line-search trial (unless it
 * already was closer): a particle slipping between four particles of another body's lattice
 * face passes at 0.71 d_c, so 0.75 keeps bodies from passing through each other. */
#define PPD_CONTACT_FLOOR 0.75

/* ---------------------------------------------------------------- local step (Eq. 8-11) */

/* F = (Y*X)(X*X)^+ over i's family (Sec. 3). */
static pd_mat3 deformation_gradient(const pd_ppd_state* s, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_mat3 yx = pd_m3_zero();
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        pd_m3_add_outer(&yx, s->wv[b], pd_v3_sub(y[f->j[b]], y[i]), f->xi[b]);
    return pd_m3_mul(yx, s->kinv[i]);
}

/* dir(F xi) and dir(Y) of one bond (Eq. 10, 11); a vanishing one borrows the other, or X's. */
static void directions(pd_vec3 fx, pd_real lfx, pd_vec3 Y, pd_real ly, pd_vec3 X, pd_real len,
                       pd_vec3* dfx, pd_vec3* dy) {
    const pd_real tiny = 1e-12 * len;
    if (lfx > tiny && ly > tiny) {
        *dfx = pd_v3_scale(fx, 1.0 / lfx);
        *dy = pd_v3_scale(Y, 1.0 / ly);
    } else if (lfx > tiny) {
        *dfx = *dy = pd_v3_scale(fx, 1.0 / lfx);
    } else if (ly > tiny) {
        *dfx = *dy = pd_v3_scale(Y, 1.0 / ly);
    } else {
        *dfx = *dy = pd_v3_scale(X, 1.0 / len);
    }
}

/* The vector with its first two components exchanged: F' xi when F' is F with its first two
 * rows permuted (the inversion fix). */
static pd_vec3 swap01(pd_vec3 v) {
    return pd_v3(v.y, v.x, v.z);
}

static pd_mat3 cofactor(pd_mat3 a) {
    pd_mat3 c;
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            int r1 = (r + 1) % 3, r2 = (r + 2) % 3, k1 = (k + 1) % 3, k2 = (k + 2) % 3;
            c.m[r][k] = a.m[r1][k1] * a.m[r2][k2] - a.m[r1][k2] * a.m[r2][k1];
        }
    return c;
}

/* The inverted particle's bond forces a (Y - p) of the paper's local/global step, p from the
 * row-permuted F' (see local_particle); Jt = det F' > 0. */
static void inverted_forces(pd_ppd_state* s, const pd_ppd_material* m, pd_mat3 F, pd_real kv,
                            pd_real Jt, const pd_vec3* y, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_real jscale = kv > 0 ? 1.0 / cbrt(fmax(Jt, 1e-3)) : 1;
    pd_real inv = 1.0 / (m->mu + 0.5 * m->lambda + kv);
    pd_real wdev = m->mu * inv, wiso = 0.5 * m->lambda * inv, wvol = kv * jscale * inv;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = f->xi[b], Y = pd_v3_sub(y[f->j[b]], y[i]), fx = pd_m3_mulv(F, X);
        pd_real len = s->len[b], lfx = pd_v3_len(fx), ly = pd_v3_len(Y);
        pd_vec3 dfx, diso;
        directions(fx, lfx, Y, ly, X, len, &dfx, &diso);
        pd_vec3 ddev = lfx > 1e-12 * len ? swap01(dfx) : dfx; /* a borrowed one is not turned */
        pd_vec3 p = pd_v3_madd(pd_v3_scale(swap01(fx), wvol), wdev * len, ddev);
        p = pd_v3_madd(p, wiso * len, diso);
        s->t[b] = pd_v3_scale(pd_v3_sub(Y, p), s->a[b]);
    }
}

/* Particle i's part of the energy (J), with k = V_i V_j w / |X|^2 per bond:
 *   Eq. 8:        sum k (mu |Y - |X| dir(F xi)|^2 + lambda/2 (|Y| - |X|)^2)
 *   dilatation:   kv/9 (J - 1)^2 sum k |X|^2      (beyond the paper; 0 when off)
 * The deviatoric term is Eq. 8's (|F xi| - |X|)^2 with the paper's approximation Y* ~ Y taken
 * in the energy: its gradient with the derivative of dir(F xi) dropped is Eq. 10, and unlike
 * (|F xi| - |X|)^2 it resists a bond leaving the plane its family's F fits (one-layer shells
 * bend through mu only so, Fig. 5). Per bond, t = dE_i/dY: the parts in Y directly, the parts
 * in F (the dropped derivative kept) through dE/dF (X*X)^+ w V_j xi.
 * Inversion (Sec. 4.1): a clearly inverted particle (det F < -PPD_INVERTED) takes instead the
 * force of the paper's local step, a (Y - p), with the projection p built from F' (F with its
 * first two rows permuted): |X| dir(F' xi) (Eq. 10, weight mu), |X| dir(Y) (Eq. 11, weight
 * lambda/2), J'^(-1/3) F' xi (dilatation, weight kv); this force steers a mirrored family
 * back. The energy keeps F itself: with F' in it the energy would jump where det F crosses
 * the threshold, and the dilatation term must see the true J (with the permuted one a
 * mirrored body was an equilibrium: measured, an inverted block came back mirrored). Near-zero
 * determinants are left alone: the permutation turns targets by 90 degrees about z, and at
 * the momentary near-zero determinants of an impact it set a dropped ball spinning (measured).
 * Returns the energy; *inverted is set when the fix acted. */
static pd_real local_particle(pd_ppd_state* s, const pd_vec3* y, uint32_t i, int* inverted) {
    const pd_family* f = &s->fam;
    const pd_ppd_material* m = &s->mat[s->material[i]];
    pd_mat3 F = deformation_gradient(s, y, i);
    pd_real kv = s->planar[i] ? 0 : m->kv, J = pd_m3_det(F);
    int fix = s->prm.inversion_fix && !s->planar[i] && J < -PPD_INVERTED;
    pd_mat3 dEdF = pd_m3_zero();
    pd_real e = 0, sum_kl2 = 0;
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b) {
        pd_vec3 X = f->xi[b], Y = pd_v3_sub(y[f->j[b]], y[i]), fx = pd_m3_mulv(F, X);
        pd_real len = s->len[b], k = s->kb[b], lfx = pd_v3_len(fx), ly = pd_v3_len(Y);
        pd_vec3 dfx, diso; /* Eq. 10 and 11 */
        directions(fx, lfx, Y, ly, X, len, &dfx, &diso);
        pd_vec3 off = pd_v3_madd(Y, -len, dfx); /* Y - |X| dir(F xi) */
        e += k * (m->mu * pd_v3_len2(off) + 0.5 * m->lambda * (ly - len) * (ly - len));
        if (lfx > 1e-12 * len) /* d dir(F xi) / dF, through |X|/|F xi| (I - d d^T) */
            pd_m3_add_outer(&dEdF, -2 * k * m->mu * len / lfx,
                            pd_v3_madd(Y, -pd_v3_dot(dfx, Y), dfx), X);
        sum_kl2 += k * len * len;
        s->t[b] = pd_v3_madd(pd_v3_scale(off, 2 * k * m->mu), k * m->lambda * (ly - len), diso);
    }
    if (kv > 0) { /* dJ/dF = cof F */
        e += kv / 9 * (J - 1) * (J - 1) * sum_kl2;
        dEdF = pd_m3_add(dEdF, pd_m3_scale(cofactor(F), 2 * kv / 9 * (J - 1) * sum_kl2));
    }
    if (fix) {
        *inverted = 1;
        inverted_forces(s, m, F, kv, -J, y, i);
        return e;
    }
    pd_mat3 H = pd_m3_mul(dEdF, s->kinv[i]);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        s->t[b] = pd_v3_madd(s->t[b], s->wv[b], pd_m3_mulv(H, f->xi[b]));
    return e;
}

/* g_i = dE/dy_i = sum_j (t_ji - t_ij), per particle, without atomics; plus the gradient of
 * the contact energy (src/contact) when contact is on. */
static pd_vec3 gather_gradient(const pd_ppd_state* s, uint32_t i) {
    const pd_family* f = &s->fam;
    pd_vec3 g = s->prm.contact ? s->contact.grad[i] : pd_v3(0, 0, 0);
    for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
        g = pd_v3_add(g, pd_v3_sub(s->t[f->rev[b]], s->t[b]));
    return g;
}

typedef struct ppd_ctx {
    pd_ppd_state* s;
    const pd_vec3* y;
    const uint8_t* flags;
    pd_real alpha;
    const pd_vec3* from;
    const pd_vec3* dir;
    pd_vec3* out;
    pd_real omega;
    const pd_vec3* a; /* dot products: a . b */
    const pd_vec3* b;
} ppd_ctx;

/* Pinned particles and fixed bodies keep their place. */
static int is_free(const ppd_ctx* c, size_t i) {
    return !(c->flags[i] & PD_P_CONSTRAINED);
}

/* Outward normal of the collider a touching particle rests on (the nearest one). */
static pd_vec3 contact_normal(const pd_ppd_state* s, pd_vec3 y) {
    pd_vec3 best = pd_v3(0, 0, 0), n;
    pd_real dmin = INFINITY;
    for (int k = 0; k < s->colliders->count; ++k) {
        pd_real d = pd_collider_sdf(&s->colliders->items[k], y, &n);
        if (d < dmin)
            dmin = d, best = n;
    }
    return best;
}

/* v without its part along the particle's blocked contact normal (S v; identity off contact). */
static pd_vec3 filter(const pd_ppd_state* s, size_t i, pd_vec3 v) {
    pd_vec3 n = s->blocked[i];
    return pd_v3_madd(v, -pd_v3_dot(v, n), n);
}

static pd_real sum_partials(const pd_ppd_state* s) {
    pd_real sum = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        sum += s->partial[k];
    return sum;
}

static void local_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_real e = 0;
    int inverted = 0;
    for (size_t i = begin; i < end; ++i)
        e += local_particle(c->s, c->y, (uint32_t)i, &inverted);
    c->s->partial[begin / PPD_GRAIN] = e;
    c->s->partial[c->s->chunks + begin / PPD_GRAIN] = inverted;
}

/* Gathers g, then the residual of Eq. 12 with the exact forces, r = M (y - y*)/h^2 + g, and
 * the inertia energy. A particle touching a collider whose residual pushes into it is blocked
 * along the collider's normal n (KKT: the contact takes r.n n >= 0): r and every search
 * direction lose their part along n. Partial sums of |r|^2 (first half) and inertia. */
static void gather_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    pd_real r2 = 0, inertia = 0, ih2 = 1.0 / (s->dt * s->dt);
    for (size_t i = begin; i < end; ++i) {
        s->g[i] = gather_gradient(s, (uint32_t)i);
        pd_vec3 r = pd_v3(0, 0, 0);
        s->blocked[i] = pd_v3(0, 0, 0);
        s->push[i] = 0;
        if (is_free(c, i)) {
            pd_vec3 d = pd_v3_sub(c->y[i], s->ystar[i]);
            r = pd_v3_madd(s->g[i], s->mass[i] * ih2, d);
            inertia += 0.5 * s->mass[i] * ih2 * pd_v3_len2(d);
        }
        if (s->held[i]) {
            pd_vec3 n = contact_normal(s, c->y[i]);
            if (pd_v3_dot(r, n) > 0) {
                s->blocked[i] = n;
                s->push[i] = pd_v3_dot(r, n);
                r = filter(s, i, r);
            }
        }
        s->r[i] = r;
        r2 += pd_v3_len2(r);
    }
    s->partial[begin / PPD_GRAIN] = r2;
    s->partial[s->chunks + begin / PPD_GRAIN] = inertia;
}

/* Gershgorin bound of the Jacobi iteration matrix with the contact springs added to A (see
 * jacobi_kernel): a particle's off-diagonal sum grows by its pair stiffnesses K_i, its
 * diagonal too, so (sum c + K) / (diag + K) may exceed the constant bound s->rho. */
static pd_real contact_jacobi_bound(const pd_ppd_state* s) {
    pd_real rho = s->rho, ih2 = 1.0 / (s->dt * s->dt);
    const pd_contact* c = &s->contact;
    for (size_t i = 0; i < s->n; ++i) {
        pd_real K = c->diag[i];
        if (K > 0 && !(s->contact.p->flags[i] & PD_P_CONSTRAINED))
            rho = fmax(rho, (s->diag[i] - s->mass[i] * ih2 + K) / (s->diag[i] + K));
    }
    return rho;
}

/* The contact energy between bodies at y (src/contact): its gradient and diagonal stay in
 * s->contact for gather_gradient and the Jacobi sweeps. */
static pd_real contact_energy(pd_ppd_state* s, const pd_vec3* y) {
    if (!s->prm.contact)
        return 0;
    pd_real e;
    pd_status st = pd_contact_evaluate(&s->contact, y, &e);
    if (st != PD_OK)
        s->contact_status = st;
    s->rho_contact = contact_jacobi_bound(s);
    return e;
}

/* Everything at y: energy, gradient, residual, blocked contacts. Returns the merit of Eq. 12
 * (inertia + elastic energy + contact energy, J); *r_norm gets |r| (N). */
static pd_real local_step(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags,
                          pd_real* r_norm) {
    double t0 = pd_now();
    ppd_ctx c = {.s = s, .y = y, .flags = flags};
    pd_parallel_for(s->n, PPD_GRAIN, local_kernel, &c);
    pd_real energy = sum_partials(s);
    s->inverted = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        s->inverted |= s->partial[s->chunks + k] != 0;
    energy += contact_energy(s, y);
    pd_parallel_for(s->n, PPD_GRAIN, gather_kernel, &c);
    pd_real r2 = sum_partials(s), inertia = 0;
    for (size_t k = 0; k < s->chunks; ++k)
        inertia += s->partial[s->chunks + k];
    *r_norm = sqrt(r2);
    s->t_local += pd_now() - t0;
    return energy + inertia;
}

/* ---------------------------------------------------------------- vector helpers */

static void dot_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_real sum = 0;
    for (size_t i = begin; i < end; ++i)
        sum += pd_v3_dot(c->a[i], c->b[i]);
    c->s->partial[begin / PPD_GRAIN] = sum;
}

/* a . b over all particles, summed in a fixed order (same bits on any thread count). */
static pd_real dot(pd_ppd_state* s, const pd_vec3* a, const pd_vec3* b) {
    ppd_ctx c = {.s = s, .a = a, .b = b};
    pd_parallel_for(s->n, PPD_GRAIN, dot_kernel, &c);
    return sum_partials(s);
}

/* out += alpha dir */
static void axpy(size_t n, pd_vec3* out, pd_real alpha, const pd_vec3* dir) {
    for (size_t i = 0; i < n; ++i)
        out[i] = pd_v3_madd(out[i], alpha, dir[i]);
}

/* ---------------------------------------------------------------- global step */

/* The Jacobi sweeps run on A plus the Laplacian of the contact pairs at the current iterate,
 * each pair a spring of its penalty stiffness k_ij (isotropic: the penalty's Hessian is
 * k_ij n n^T plus a smaller tangential part), so that the preconditioner couples bodies in
 * contact as A couples the particles of one body; it stays symmetric positive definite. The
 * Cholesky factor keeps A alone. Friction's stiffness goes onto the diagonal only. */
static pd_real jacobi_diagonal(const pd_ppd_state* s, size_t i) {
    return s->prm.contact ? s->diag[i] + s->contact.diag[i] : s->diag[i];
}

/* acc + sum_j k_ij z_j over i's contact pairs. */
static pd_vec3 contact_coupling(const pd_ppd_state* s, const pd_vec3* z, size_t i, pd_vec3 acc) {
    if (!s->prm.contact)
        return acc;
    const pd_contact* c = &s->contact;
    uint32_t first = c->near.offsets[i];
    for (uint32_t m = first; m < first + c->pair_count[i]; ++m)
        acc = pd_v3_madd(acc, c->pair_k[m], z[c->pair_j[m]]);
    return acc;
}

/* One Jacobi sweep on A z = b (A = diag - c off the diagonal, b in s->work) with Chebyshev
 * weight omega (Wang 2015): out = omega (J(z) - prev) + prev; omega = 1 is plain Jacobi.
 * Constrained particles do not move; blocked ones move only along their contact plane. */
static void jacobi_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    const pd_family* f = &s->fam;
    for (size_t i = begin; i < end; ++i) {
        if (c->flags[i] & PD_P_CONSTRAINED) {
            c->out[i] = pd_v3(0, 0, 0);
            continue;
        }
        pd_vec3 acc = s->work[i];
        for (uint32_t b = f->offsets[i]; b < f->offsets[i + 1]; ++b)
            acc = pd_v3_madd(acc, s->c[b], c->y[f->j[b]]);
        acc = contact_coupling(s, c->y, i, acc);
        pd_vec3 jac = filter(s, i, pd_v3_scale(acc, 1.0 / jacobi_diagonal(s, i)));
        c->out[i] = pd_v3_madd(c->from[i], c->omega, pd_v3_sub(jac, c->from[i]));
    }
}

/* z = P b: `sweeps` Chebyshev-accelerated Jacobi sweeps on A z = b from z = 0 (Golub-Varga
 * weights, Jacobi spectrum in [-rho, rho]). From zero, P is a fixed symmetric positive definite
 * polynomial in A (rho bounds the spectrum), so -P r is a descent direction. */
static void solve_chebyshev(pd_ppd_state* s, const uint8_t* flags, int sweeps, pd_vec3* z) {
    pd_vec3 *cur = s->ytrial, *prev = s->yprev, *next = z;
    memset(cur, 0, s->n * sizeof(pd_vec3));
    memset(prev, 0, s->n * sizeof(pd_vec3));
    pd_real rho = s->prm.contact ? s->rho_contact : s->rho;
    pd_real omega = 1, rho2 = rho * rho;
    for (int k = 0; k < sweeps; ++k) {
        omega = k == 0 ? 1 : (k == 1 ? 2 / (2 - rho2) : 4 / (4 - rho2 * omega));
        ppd_ctx c = {.s = s, .y = cur, .flags = flags, .from = prev, .out = next, .omega = omega};
        pd_parallel_for(s->n, PPD_GRAIN, jacobi_kernel, &c);
        pd_vec3* t = prev;
        prev = cur;
        cur = next;
        next = t;
    }
    if (cur != z)
        memcpy(z, cur, s->n * sizeof(pd_vec3));
}

static pd_status solve_global(pd_ppd_state* s, const uint8_t* flags, pd_vec3* z);

/* z = S A^-1 S b: the global step of Eq. 12 applied to b (in s->work), by the method chosen. */
static pd_status apply_global(pd_ppd_state* s, const uint8_t* flags, pd_vec3* z) {
    double t0 = pd_now();
    pd_status st = solve_global(s, flags, z);
    s->t_global += pd_now() - t0;
    return st;
}

static pd_status solve_global(pd_ppd_state* s, const uint8_t* flags, pd_vec3* z) {
    for (size_t i = 0; i < s->n; ++i)
        s->work[i] = filter(s, i, s->work[i]);
    switch (s->prm.global_solve) {
        case PD_PPD_DIRECT: {
            pd_status st = pd_ppd_solve_direct(s, s->work, z);
            for (size_t i = 0; i < s->n; ++i)
                z[i] = filter(s, i, z[i]);
            return st;
        }
        case PD_PPD_POSITION_BASED:
            /* Fig. 7's position-based solve: one plain Jacobi sweep, each particle moving to
             * the average of what its neighbourhood suggests. */
            solve_chebyshev(s, flags, 1, z);
            return PD_OK;
        default:
            solve_chebyshev(s, flags, s->prm.linear_iterations, z);
            return PD_OK;
    }
}

/* ---------------------------------------------------------------- search direction */

static void history_clear(pd_ppd_state* s) {
    s->hist_count = 0;
}

/* d = -H r, H the L-BFGS inverse Hessian (Nocedal & Wright, Alg. 7.4) over the last pairs
 * (s_k, y_k) with the global step S A^-1 S as its initial matrix (Liu, Bouaziz, Kavan 2017:
 * projective dynamics is this method without history). With no history (history = 0, the
 * paper's scheme) it is the preconditioned descent of Sec. 4.2. Returns r . d. */
static pd_real search_direction(pd_ppd_state* s, const uint8_t* flags, pd_status* st) {
    int m = s->hist_count;
    pd_real alpha[PD_PPD_MAX_HISTORY];
    memcpy(s->work, s->r, s->n * sizeof(pd_vec3));
    for (int k = m - 1; k >= 0; --k) {
        int h = (s->hist_head + k) % s->prm.history;
        alpha[k] = s->hist_rho[h] * dot(s, s->hist_s[h], s->work);
        axpy(s->n, s->work, -alpha[k], s->hist_y[h]);
    }
    *st = apply_global(s, flags, s->dir);
    for (int k = 0; k < m; ++k) {
        int h = (s->hist_head + k) % s->prm.history;
        pd_real beta = s->hist_rho[h] * dot(s, s->hist_y[h], s->dir);
        axpy(s->n, s->dir, alpha[k] - beta, s->hist_s[h]);
    }
    for (size_t i = 0; i < s->n; ++i)
        s->dir[i] = pd_v3_scale(filter(s, i, s->dir[i]), -1);
    return dot(s, s->r, s->dir);
}

/* Keeps the pair (y_new - y_old, r_new - r_old) when it has positive curvature. */
static void history_push(pd_ppd_state* s, const pd_vec3* y_old, const pd_vec3* r_old) {
    if (s->prm.history == 0)
        return;
    int h = (s->hist_head + s->hist_count) % s->prm.history;
    for (size_t i = 0; i < s->n; ++i) {
        s->hist_s[h][i] = pd_v3_sub(s->y[i], y_old[i]);
        s->hist_y[h][i] = pd_v3_sub(s->r[i], r_old[i]);
    }
    pd_real sy = dot(s, s->hist_s[h], s->hist_y[h]);
    pd_real ss = dot(s, s->hist_s[h], s->hist_s[h]), yy = dot(s, s->hist_y[h], s->hist_y[h]);
    if (!(sy > 1e-10 * sqrt(ss * yy)))
        return;
    s->hist_rho[h] = 1 / sy;
    if (s->hist_count < s->prm.history)
        s->hist_count++;
    else
        s->hist_head = (s->hist_head + 1) % s->prm.history;
}

/* ---------------------------------------------------------------- line search (Eq. 13) */

static void project_contacts(pd_ppd_state* s, pd_vec3* y);

static void slope_kernel(void* vctx, size_t begin, size_t end, int thread) {
    ppd_ctx* c = vctx;
    pd_ppd_state* s = c->s;
    pd_real sum = 0;
    for (size_t i = begin; i < end; ++i)
        sum += pd_v3_dot(s->rold[i], pd_v3_sub(s->ytrial[i], s->y[i]));
    s->partial[begin / PPD_GRAIN] = sum;
}

/* r . (y_trial - y), with r of the line search's start (rold: each trial overwrites s->r) */
static pd_real projected_slope(pd_ppd_state* s) {
    ppd_ctx c = {.s = s};
    pd_parallel_for(s->n, PPD_GRAIN, slope_kernel, &c);
    return sum_partials(s);
}

/* The closest a contact pair may come in a trial from the current iterate: the floor, or
 * where the iterate already is when it is closer (bodies that start overlapping). */
static pd_real contact_floor(const pd_ppd_state* s) {
    return s->prm.contact ? fmin(PPD_CONTACT_FLOOR, s->contact.closest) : 0;
}

/* The trial just evaluated keeps every contact pair at least `floor` d_c apart. */
static int contact_feasible(const pd_ppd_state* s, pd_real floor) {
    return !s->prm.contact || s->contact.closest >= floor;
}

/* Eq. 13: y <- y + alpha d, alpha halved from 1 until the Armijo condition holds on the merit
 * (at most 12 times; then no move). Each trial is projected out of the colliders. On return
 * the state (gradient, residual, contacts) is that of s->y; returns 0 if no move was made. */
static int line_search(pd_ppd_state* s, const uint8_t* flags, pd_real slope, pd_real* merit,
                       pd_real* r_norm) {
    pd_real alpha = 1, floor = contact_floor(s);
    for (int k = 0; k <= 12; ++k, alpha *= 0.5) {
        for (size_t i = 0; i < s->n; ++i)
            s->ytrial[i] = pd_v3_madd(s->y[i], alpha, s->dir[i]);
        project_contacts(s, s->ytrial);
        /* the slope along the move actually made: projection may cancel part of alpha d */
        pd_real moved = projected_slope(s);
        pd_real r_trial, m = local_step(s, s->ytrial, flags, &r_trial);
        if (!contact_feasible(s, floor))
            continue;
        if (!s->prm.line_search || (moved < 0 && m <= *merit + s->prm.armijo * moved)) {
            pd_vec3* t = s->y;
            s->y = s->ytrial;
            s->ytrial = t;
            *merit = m;
            *r_norm = r_trial;
            s->shortest_step = fmin(s->shortest_step, alpha);
            return 1;
        }
    }
    (void)slope;
    memcpy(s->ytrial, s->y, s->n * sizeof(pd_vec3));
    project_contacts(s, s->ytrial); /* the contact set of y */
    *merit = local_step(s, s->y, flags, r_norm);
    return 0;
}

/* One iteration: direction, line search, history. The L-BFGS history is dropped while a
 * particle is inverted (its force is no gradient) and when its direction fails; then the plain
 * preconditioned direction is tried. It is kept when contacts come and go: dropping it then
 * left the history empty at every iteration of a body resting on the floor (measured: residual
 * 0.39 after 20 iterations, 0.05 when kept). Returns 1 if y moved. */
static int iterate(pd_ppd_state* s, const uint8_t* flags, pd_real* merit, pd_real* r,
                   pd_status* st) {
    if (s->inverted)
        history_clear(s);
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (attempt == 1 && s->hist_count == 0)
            return 0;
        if (attempt == 1)
            history_clear(s), s->history_resets++;
        pd_real slope = search_direction(s, flags, st);
        if (*st != PD_OK)
            return 0;
        if (!(slope < 0))
            continue;
        memcpy(s->yold, s->y, s->n * sizeof(pd_vec3));
        memcpy(s->rold, s->r, s->n * sizeof(pd_vec3));
        if (line_search(s, flags, slope, merit, r)) {
            if (!s->inverted)
                history_push(s, s->yold, s->rold);
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- one time step */

static void predict(pd_ppd_state* s, const pd_particles* p) {
    pd_real h = s->dt;
    for (size_t i = 0; i < s->n; ++i) {
        int constrained = p->flags[i] & PD_P_CONSTRAINED;
        s->ystar[i] = constrained
                          ? p->pos[i]
                          : pd_v3_madd(pd_v3_madd(p->pos[i], h, p->vel[i]), h * h, s->gravity);
    }
}

/* Sec. 8: slip boundaries "project particles out of the solids". The prediction y* and every
 * line-search trial are projected, and particles touching a collider whose residual pushes
 * into it are blocked along its normal in the search direction (gather_kernel): handled only
 * after the solve, contact acts as a spring of stiffness m/h^2, far too soft at h = 1/30 s (a
 * resting ball sank to half its height). Friction acts on velocities after the step (world). */
static void project_contacts(pd_ppd_state* s, pd_vec3* y) {
    if (s->colliders && s->colliders->count)
        pd_colliders_project(s->colliders, s->n, y, NULL, s->near_skip, s->held, s->dt);
}

/* Only particles that start the step within three spacings of a collider are projected
 * during the iterations (the projection was a quarter of the step's time otherwise). */
static void mark_near_colliders(pd_ppd_state* s, const struct pd_world* w) {
    for (size_t i = 0; i < s->n; ++i) {
        int near = 0;
        for (int k = 0; k < w->colliders.count && !near; ++k)
            near = pd_collider_sdf(&w->colliders.items[k], s->ystar[i], NULL) <
                   3 * w->particles.spacing[i];
        s->near_skip[i] = (uint8_t)(!near || w->contact_skip[i]);
    }
}

static void project_prediction(pd_ppd_state* s, const struct pd_world* w) {
    memset(s->held, 0, s->n);
    s->colliders = &w->colliders;
    if (w->colliders.count) {
        pd_colliders_project(&w->colliders, s->n, s->ystar, NULL, w->contact_skip, s->held, s->dt);
        mark_near_colliders(s, w);
    }
    memcpy(s->y, s->ystar, s->n * sizeof(pd_vec3));
}

/* The force the step has to produce anyway, sqrt(sum (m (|g| + |v|/h))^2): the residual is
 * measured against max(|r(y*)|, this), so that a body in free flight, whose starting residual
 * is round-off, does not chase round-off. */
static pd_real force_scale(const pd_ppd_state* s, const pd_particles* p) {
    pd_real sum = 0, g = pd_v3_len(s->gravity);
    for (size_t i = 0; i < s->n; ++i) {
        pd_real f = p->mass[i] * (g + pd_v3_len(p->vel[i]) / s->dt);
        sum += f * f;
    }
    return sqrt(sum);
}

static void finish(pd_ppd_state* s, pd_particles* p) {
    for (size_t i = 0; i < s->n; ++i) {
        if (p->flags[i] & PD_P_CONSTRAINED) {
            p->force[i] = pd_v3_scale(s->g[i], -1); /* for the pin's reaction */
            continue;
        }
        p->vel[i] = pd_v3_scale(pd_v3_sub(s->y[i], p->pos[i]), 1.0 / s->dt);
        /* Hand the collider's normal impulse (push h) back to the velocity, as if the particle
         * were still arriving: the world's contact pass then removes it again and takes
         * Coulomb friction from it. Projected inside the solve, a resting particle otherwise
         * arrives with no normal velocity, and friction never acts (measured: the demo slid
         * and turned the same with friction 0.5 and 0). */
        p->vel[i] = pd_v3_madd(p->vel[i], -s->push[i] * s->dt / p->mass[i], s->blocked[i]);
        p->pos[i] = s->y[i];
    }
}

/* Where the iterations start: the inertial prediction y* or, if its merit is lower, x + h v
 * (y* without gravity's h^2 g). For a body resting on the floor the second is nearly the
 * answer, while y* sinks it by g h^2 (11 mm at h = 1/30 s) and the iterations spend the step
 * lifting it back (measured: the demo at h = 1/30 s ended every resting step at a relative
 * residual of 0.0067 and kept turning). s->r_star gets |r(y*)|, the residual's yardstick.
 * Returns the merit at the start; the state is that of s->y. */
static pd_real start_point(pd_ppd_state* s, const pd_particles* p, const uint8_t* flags,
                           pd_real* r) {
    for (size_t i = 0; i < s->n; ++i)
        s->y[i] =
            p->flags[i] & PD_P_CONSTRAINED ? s->ystar[i] : pd_v3_madd(p->pos[i], s->dt, p->vel[i]);
    project_contacts(s, s->y);
    pd_real r_alt, m_alt = local_step(s, s->y, flags, &r_alt);
    memcpy(s->ytrial, s->y, s->n * sizeof(pd_vec3));
    memcpy(s->y, s->ystar, s->n * sizeof(pd_vec3));
    pd_real m_star = local_step(s, s->y, flags, &s->r_star);
    *r = s->r_star;
    if (m_star <= m_alt)
        return m_star;
    pd_vec3* t = s->y;
    s->y = s->ytrial;
    s->ytrial = t;
    project_contacts(s, s->ytrial); /* held[] for y */
    return local_step(s, s->y, flags, r);
}

/* Contact between bodies for this step: friction pairs lagged at the step's start positions
 * (src/contact). */
static pd_status begin_contact(pd_ppd_state* s, const pd_particles* p) {
    s->contact_status = PD_OK;
    return s->prm.contact ? pd_contact_begin_step(&s->contact, p->pos, s->dt) : PD_OK;
}

/* With contact, a start where some pair is closer than PPD_CONTACT_FLOOR d_c (a fast
 * impact puts y* inside the other body) is replaced by the step's start positions x, which
 * the last step left apart: the line search then keeps pairs apart (contact_feasible), as a
 * continuous collision check would. Returns the merit at the start; the state is that of
 * s->y. */
static pd_real contact_start(pd_ppd_state* s, const pd_particles* p, const uint8_t* flags,
                             pd_real merit, pd_real* r) {
    if (!s->prm.contact || s->contact.closest >= PPD_CONTACT_FLOOR)
        return merit;
    pd_real closest = s->contact.closest;
    for (size_t i = 0; i < s->n; ++i)
        s->yold[i] = p->flags[i] & PD_P_CONSTRAINED ? s->ystar[i] : p->pos[i];
    project_contacts(s, s->yold);
    pd_real r_x, m_x = local_step(s, s->yold, flags, &r_x);
    if (s->contact.closest > closest) {
        pd_vec3* t = s->y;
        s->y = s->yold;
        s->yold = t;
        *r = r_x;
        return m_x;
    }
    memcpy(s->ytrial, s->y, s->n * sizeof(pd_vec3));
    project_contacts(s, s->ytrial); /* held[] for y */
    return local_step(s, s->y, flags, r);
}

static pd_status ppd_step(void* state, struct pd_world* w, pd_step_stats* stats) {
    pd_ppd_state* s = state;
    pd_particles* p = &w->particles;
    const uint8_t* flags = p->flags;
    pd_status st = PD_OK;
    double t0 = pd_now();
    s->t_local = s->t_global = 0;
    predict(s, p);
    project_prediction(s, w);
    st = begin_contact(s, p);
    if (st != PD_OK)
        return st;
    pd_real r, merit = start_point(s, p, flags, &r);
    merit = contact_start(s, p, flags, merit, &r);
    pd_real r0 = fmax(s->r_star, force_scale(s, p));
    s->line_search_failures = s->residual_increases = s->history_resets = s->merit_increases = 0;
    s->shortest_step = 1;
    history_clear(s);
    int it = 0;
    while (it < s->prm.iterations && r > s->prm.tolerance * r0) {
        pd_real before = r, merit_before = merit;
        int moved = iterate(s, flags, &merit, &r, &st);
        if (st == PD_OK)
            st = s->contact_status;
        if (st != PD_OK)
            return st;
        ++it;
        if (!moved) {
            s->line_search_failures++;
            break;
        }
        s->residual_increases += r > before;
        s->merit_increases += merit > merit_before;
    }
    if (s->contact_status != PD_OK)
        return s->contact_status;
    finish(s, p);
    s->last_iterations = it;
    s->last_residual = r / r0;
    s->last_force_scale = r0;
    s->last_merit = merit;
    stats->iterations = it;
    stats->residual = s->last_residual;
    stats->t_global = s->t_global;
    stats->t_local = s->t_local;
    (void)t0;
    return PD_OK;
}

static void ppd_destroy(void* state) {
    pd_ppd_destroy_state(state);
}

static size_t ppd_bytes_per_particle(const void* params) {
    const pd_ppd_params* prm = params;
    /* about 33 bonds of j, rev; xi, t; w, a, c, len, kb, wv; per particle kinv, 11 vectors
     * (ystar, y, ytrial, yprev, yold, r, rold, g, dir, work, blocked), 2 per L-BFGS pair, diag
     * and push, flags */
    size_t bonds = (size_t)(4.2 * prm->horizon * prm->horizon * prm->horizon) + 1;
    size_t per_bond = 2 * sizeof(uint32_t) + 2 * sizeof(pd_vec3) + 6 * sizeof(pd_real);
    size_t per_particle = sizeof(pd_mat3) + (11 + 2 * (size_t)prm->history) * sizeof(pd_vec3) +
                          2 * sizeof(pd_real) + 16;
    size_t direct = prm->global_solve == PD_PPD_DIRECT ? bonds * 40 : 0; /* factor fill-in */
    /* src/contact: gradient, diagonal, its grid, and about 20 candidates within one spacing,
     * each with a pair slot (index + stiffness) */
    size_t contact = prm->contact ? 2 * sizeof(pd_vec3) + sizeof(pd_real) + 7 * sizeof(uint32_t) +
                                        20 * (2 * sizeof(uint32_t) + sizeof(pd_real))
                                  : 0;
    return bonds * per_bond + per_particle + direct + contact;
}

const pd_solver_vtable pd_projective_pd_solver = {
    .name = "projective_pd",
    .paper = "He, Wang, Wu 2017, Projective Peridynamics",
    .params = &pd_ppd_param_table,
    .material_params = &pd_ppd_material_table,
    .check_material = pd_ppd_check_material,
    .create = pd_ppd_create,
    .destroy = ppd_destroy,
    .step = ppd_step,
    .on_reorder = pd_ppd_on_reorder,
    .bytes_per_particle = ppd_bytes_per_particle,
};

/* For tests: the elastic energy (+ dilatation, + contact between bodies when on) at y, its
 * exact gradient in s->g (without the inversion fix, whose force is no gradient). */
pd_real pd_ppd_elastic_energy(pd_ppd_state* s, const pd_vec3* y, const uint8_t* flags) {
    memcpy(s->ystar, y, s->n * sizeof(pd_vec3));
    int fix = s->prm.inversion_fix;
    s->prm.inversion_fix = 0;
    pd_real r, e = local_step(s, y, flags, &r);
    s->prm.inversion_fix = fix;
    return e;
}
