/* Contact with colliders inside an implicit solve, shared by every implicit method: the state
 * of each particle's collider contact over one step and what it does to the merit, the
 * residual, the search directions and the trial points.
 *
 * A method minimising a merit over the end-of-step positions y (optim/descent.h) uses it so:
 * - pd_collider_contact_begin_step when the step starts: nothing is held, no friction; the
 *   particles whose prediction lies farther than three spacings from every collider are not
 *   projected during the step (the projection cost a quarter of the step's time otherwise);
 * - pd_collider_contact_project on every start point and line-search trial: out of the
 *   colliders ("project particles out of the solids", He 2017 Sec. 8), no_slip contacts at
 *   their anchors; a particle so projected is held;
 * - pd_collider_contact_apply on each particle's residual at every evaluation: Coulomb
 *   friction as a potential (boundary/friction.h) and, for a held particle whose residual
 *   pushes into the collider, the normal blocked (KKT: the contact takes r.n >= 0): the
 *   residual loses its part along n and pd_collider_contact_filter removes it from every
 *   search direction; in a corner (a floor and a wall, two faces of a container) a second
 *   surface the rest of the residual pushes into is blocked too; no_slip contacts are also
 *   held on their normal line;
 * - pd_collider_contact_renew_friction to take friction's lagged normal forces (lambda) from
 *   an iterate;
 * - pd_collider_contact_sweeps to hand the constraints and friction's tangential stiffness to
 *   Chebyshev-Jacobi sweeps (linalg/chebyshev.h).
 * Every array has one entry per particle; per-particle calls may run in parallel. */
#ifndef PD_COLLIDER_CONTACT_H
#define PD_COLLIDER_CONTACT_H

#include "boundary/collider.h"

struct pd_chebyshev_def;

typedef struct pd_collider_contact {
    size_t n;
    const pd_colliders* colliders;
    const pd_real* spacing; /* per particle (m): the length of the corner probe */
    const pd_real* hold;    /* per particle (m): a no_slip collider holds it within this distance
                             * when the step starts; NULL: half a spacing (set by the method) */
    pd_real dt;
    pd_real stick_speed; /* friction's smoothing speed (m/s): eps = stick_speed dt (friction.h);
                          * PD_FRICTION_STICK_SPEED unless the method sets its own */
    uint8_t* skip;       /* 1: not projected during this step */
    uint8_t* held;       /* 1: touching a collider at the current iterate */
    pd_vec3* blocked;    /* outward normal of a contact the particle pushes into, else 0 */
    pd_vec3* blocked2;   /* a second one, orthogonal to the first (a corner), else 0; NULL
                          * where the colliders make no corner */
    pd_real* push;       /* force the blocked contact takes, r . n (N) */
    /* Coulomb friction (boundary/friction.h), set when lambda is renewed */
    pd_vec3* anchor; /* start position carried by the collider's surface over the step (m) */
    pd_vec3* normal; /* the contact's normal, held through the step */
    pd_real* limit;  /* mu lambda (N); infinite: no_slip; 0: no friction */
    /* at the current iterate */
    pd_real* ktan;   /* friction's tangential stiffness (N/m) */
    uint8_t* active; /* 1: blocked, blocked2, line or ktan set (pd_collider_contact_sweeps) */
    uint8_t* stuck;  /* 1: a no_slip contact, held on its normal line (NULL: none is no_slip) */
    pd_vec3* line;   /* normal where stuck, else 0 (NULL: none is no_slip) */
    const pd_vec3* start; /* the step's start positions x (begin_step's; unchanged in a step) */
    /* the collider nearest each particle's step-start position x (pd_colliders_nearest), found
     * once a step by pd_collider_contact_begin_step for the particles not skipped: the renewal
     * and its check after every iteration read them (neither x nor the colliders' poses change
     * within a step; a mesh's closest-point query at every check cost a quarter of a run);
     * NULL unless a collider is a mesh (an analytic one's query is found again when read) */
    int32_t* start_collider; /* its index; -1: none (or skipped) */
    pd_real* start_dist;     /* signed distance of x to it (m) */
    pd_vec3* start_normal;   /* its outward normal at x */
} pd_collider_contact;

/* What of the contact's state colliders may need beyond every contact's: a second normal where
 * they may make a corner (more than a lone plane), the stuck flags and lines where one is
 * no_slip, the start queries (start_collider, start_dist, start_normal) where one is a mesh.
 * Of count definitions `stride` bytes apart (a pd_collider_def array's or a pd_colliders'
 * items). */
enum { PD_CC_CORNERS = 1, PD_CC_STICKS = 2, PD_CC_MESH = 4 };
unsigned pd_collider_contact_features(const pd_collider_def* defs, int count, size_t stride);
/* Bytes a particle the contact holds for those features (for memory estimates). */
size_t pd_collider_contact_bytes(unsigned features);

/* The arrays for n particles; blocked2 only where the colliders may make a corner (more than a
 * lone plane), stuck and line only where one is no_slip, the start queries only where one is
 * a mesh: NULL otherwise (colliders NULL: all).
 * The colliders the steps pass must not make more of them. */
pd_status pd_collider_contact_init(pd_collider_contact* c, size_t n, const pd_colliders* colliders);
void pd_collider_contact_free(pd_collider_contact* c);

/* The step begins: nothing held, no friction. A particle is skipped for the step when
 * skip_always[i] (may be NULL) or when its predicted position lies farther than three of its
 * spacings from every collider; of every other one the collider nearest its start position
 * (start: the step's x, which the renewal calls below must be given) is kept. The colliders
 * must be posed for the step. */
void pd_collider_contact_begin_step(pd_collider_contact* c, const pd_colliders* colliders,
                                    const pd_vec3* start, const pd_vec3* predicted,
                                    const pd_real* spacing, const uint8_t* skip_always, pd_real dt);

/* A start point or trial y: no_slip contacts put at their anchors, then projected out of the
 * colliders (held gets the particles that touch). */
void pd_collider_contact_project(pd_collider_contact* c, pd_vec3* y);

/* Particle i at y with the residual r of the rest of the merit: adds friction's force, blocks
 * a pushing contact's normal; returns friction's potential (J; infinite: a no_slip contact
 * off its anchor). */
pd_real pd_collider_contact_apply(pd_collider_contact* c, size_t i, pd_vec3 y, pd_vec3* r);

/* v without what particle i may not do: its blocked normal, and its tangential part when it
 * is a no_slip contact. */
pd_vec3 pd_collider_contact_filter(const pd_collider_contact* c, size_t i, pd_vec3 v);

/* Friction's limits mu lambda from an iterate y with residual r: every particle touching a
 * collider at the step's start position x (begin_step's start; or held at y) gets its anchor,
 * normal and limit,
 * lambda = the push of its blocked contact, or r . n. Returns 1 when a contact came or went
 * or the limits moved by more than 1 % of their sum. */
int pd_collider_contact_renew_friction(pd_collider_contact* c, const pd_vec3* x, const pd_vec3* y,
                                       const pd_vec3* r);

/* How far a renewal at the iterate y (residual r) would move friction's limits: the 2-norm over
 * the particles of mu lambda renewed - mu lambda lagged (N), which bounds the change of the
 * residual at y that the renewal makes; infinite when a no_slip contact would come or go.
 * Changes nothing. */
pd_real pd_collider_contact_friction_change(const pd_collider_contact* c, const pd_vec3* y,
                                            const pd_vec3* r);

/* Friction's limits lagged from the last step's solution instead of the start guess: a
 * particle touching a Coulomb (slip) collider at the step's start position x (begin_step's)
 * gets mu fn[i], fn[i] the normal force its contact took at the end of the last step (cc.push
 * then), or keeps the guess where fn[i] is NaN (no last step); one that does not touch at x
 * gets none (a
 * contact that begins during the step: a renewal at an iterate gives it its force). The guess
 * from x + h v (optim/implicit_step.c) holds the touching particles alone where the projection
 * put them, so that a body still moving into the floor counts the elastic force of its bottom
 * layer lifted against the next (implicit_step.h's step 3 holds for a body at rest). */
void pd_collider_contact_lag_friction(pd_collider_contact* c, const pd_real* fn);

/* Points the sweeps' constraint arrays (blocked, line) and tangential stiffness at c, and
 * marks the particles that have any of them in c->active (the sweeps skip the rest). */
void pd_collider_contact_sweeps(pd_collider_contact* c, struct pd_chebyshev_def* def);

#endif
