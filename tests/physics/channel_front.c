/* The runout measures of runout.h on a deposit of known shape (issues 32 and 37), no
 * simulation: the deposit a low column of cohesionless sand leaves when it comes to rest without
 * inertia. A Coulomb material of friction angle phi cannot rest on a surface steeper than phi, so
 * a column of height H = a L0 that slumps quasi-statically keeps a plateau of height H behind a
 * straight flank at phi; the flank's triangle holds the mass the plateau lost (the area H dL
 * the flank takes from the column's corner is the area H dL it adds beyond it), so the flank
 * spans 2 dL = H cot phi: dL / L0 = a cot(phi) / 2. At a = 0.5 and phi = 30 that is 0.433, below
 * Lube et al. 2005's band (0.45..0.90 around 1.2 a = 0.60, whose mean flank is at atan(1 / 2.4)
 * = 22.6 degrees): a collapse enters the band only when its flow carries the sand past its
 * angle of repose. (The Drucker-Prager sand of the methods, whose return keeps the volume, stops
 * flowing at atan(3 b) = 26.3 degrees on the extension cone, below phi: its own deposit at rest
 * runs out a / (6 b) = 0.505; docs/methods/mpm.md.) Lube's front is the deposit's edge; the measure
 * VALIDATION.md first asked for, two grains thick, cuts it where the flank is two spacings high, 2
 * s cot(phi) short of it: 0.22 L0 at the suite's 5 mm, half of the shape's front. */
#include <math.h>

#include "runout.h"
#include "test.h"

#define L0     0.08
#define ASPECT 0.5
#define PHI    (30.0 * PD_PI / 180.0)
#define DEEP   4 /* grains across the channel */

/* The deposit's height at x: the plateau, then the flank at phi (runout a cot(phi) / 2). */
static double deposit_height(double x) {
    double h = ASPECT * L0, dl = 0.5 * h / tan(PHI);
    return x < L0 - dl ? h : fmax(0, (L0 + dl - x) * tan(PHI));
}

/* The deposit sampled by grains of equal mass on a lattice of spacing s: a grain wherever its
 * centre lies under the surface. */
static int fill_deposit(pd_particles* p, double s) {
    int across = (int)ceil(2 * L0 / s);
    int up = (int)ceil(ASPECT * L0 / s);
    if (pd_particles_reserve(p, (size_t)across * (size_t)up * DEEP) != PD_OK)
        return 0;
    for (int i = 0; i < across; ++i)
        for (int j = 0; j < up; ++j)
            for (int k = 0; k < DEEP; ++k) {
                pd_vec3 x = pd_v3((i + 0.5) * s, (j + 0.5) * s, (k + 0.5) * s);
                if (x.y < deposit_height(x.x))
                    p->mass[pd_particles_push(p, x)] = 1;
            }
    return 1;
}

/* Issue 37's front reads the shape's runout within one of its slices at 5, 2.5 and 1.25 mm,
 * where the two-grains-thick rule moves by about 2 s cot(phi) / L0 with the spacing. Fails for
 * a threshold tied to the grains (the two-grains-thick rule reads 0.25 at 5 mm) and for a front
 * that stops short of the flank's toe. */
PD_TEST(channel_front_reads_a_deposit_alike_at_every_spacing) {
    double want = 0.5 * ASPECT / tan(PHI);
    printf("  a quasi-static deposit at phi 30, a = %.1f: dL/L0 = a cot(phi) / 2 = %.3f (Lube "
           "2005's band from 0.45)\n",
           ASPECT, want);
    for (double s = 0.005; s > 0.001; s /= 2) {
        pd_particles p = {0};
        PD_REQUIRE(fill_deposit(&p, s));
        double front = pd_channel_front(&p, L0), thick = pd_channel_runout(&p, s, L0);
        printf("  spacing %.2f mm, %zu grains: front %.4f, two grains thick %.4f (the shape "
               "less 2 s cot(phi) / L0: %.4f)\n",
               1e3 * s, p.count, front, thick, want - 2 * s / tan(PHI) / L0);
        PD_CHECK_NEAR(front, want, 1.0 / PD_FRONT_SLICES);
        pd_particles_free(&p);
    }
}

/* Past the deposit, a slice holding less than 1 % of the column's mass per L0 length does not
 * move the front; one holding that does. Fails for a threshold on grains rather than on mass. */
PD_TEST(channel_front_counts_a_slice_from_one_percent) {
    pd_particles p = {0};
    PD_REQUIRE(fill_deposit(&p, 0.005));
    double before = pd_channel_front(&p, L0), total = (double)p.count;
    double share = PD_FRONT_SHARE * total / PD_FRONT_SLICES; /* the threshold's mass */
    PD_REQUIRE(pd_particles_reserve(&p, p.count + 1) == PD_OK);
    size_t ahead = pd_particles_push(&p, pd_v3(2 * L0 + 0.0025, 0.0025, 0.0025));
    p.mass[ahead] = 0.9 * share;
    PD_CHECK_NEAR(pd_channel_front(&p, L0), before, 1e-12);
    p.mass[ahead] = 1.1 * share;
    PD_CHECK_NEAR(pd_channel_front(&p, L0), 1 + 1.0 / PD_FRONT_SLICES, 1e-12);
    pd_particles_free(&p);
}
