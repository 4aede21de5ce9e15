/* Unit tests of a contact pair as a hard velocity constraint (contact/contact_velocity.h): the
 * candidates of an approaching pair brought exactly to the contact distance, the tangential
 * change held to mu times the normal one (Coulomb) or stopping the slip below it, a second
 * update at the corrected state giving nothing more, a pair pulled apart taking back what it
 * gave (it only pushes), and a pair apart left alone. */
#include "test.h"

#include "contact/contact_velocity.h"

#define DT 1e-3
#define DC 0.01

/* The pair 0.009 m apart along x at its candidates (1 mm deep), closing at 1 m/s and slipping
 * at 0.5 m/s along y. */
static const pd_vec3 k_d = {0.009, 0, 0};
static const pd_vec3 k_u = {-1, 0.5, 0};

PD_TEST(pair_reaches_the_contact_distance_and_stays) {
    pd_contact_pair_sum sum = {0, {0, 0, 0}};
    pd_vec3 du = pd_contact_pair_velocity(k_d, pd_v3(0, 0, 0), DC, k_u, 0, DT, &sum);
    pd_vec3 d = pd_v3_madd(k_d, DT, du), u = pd_v3_add(k_u, du);
    printf("  frictionless: du = (%g, %g, %g), candidates %.6g m apart (d_c %g)\n", du.x, du.y,
           du.z, pd_v3_len(d), DC);
    PD_CHECK_NEAR(pd_v3_len(d), DC, 1e-15);
    PD_CHECK_NEAR(du.y, 0, 0); /* no friction: the slip is left */
    PD_CHECK_NEAR(sum.normal, 1, 1e-12);
    pd_vec3 again = pd_contact_pair_velocity(d, pd_v3(0, 0, 0), DC, u, 0, DT, &sum);
    PD_CHECK_NEAR(pd_v3_len(again), 0, 1e-12);
}

PD_TEST(pair_friction_is_coulomb) {
    /* mu 0.2: the normal change is 1 m/s, the slip 0.5 m/s: friction takes 0.2 of it */
    pd_contact_pair_sum sum = {0, {0, 0, 0}};
    pd_vec3 du = pd_contact_pair_velocity(k_d, pd_v3(0, 0, 0), DC, k_u, 0.2, DT, &sum);
    printf("  mu 0.2: du = (%g, %g, %g)\n", du.x, du.y, du.z);
    PD_CHECK_NEAR(du.y, -0.2, 1e-12);
    PD_CHECK_NEAR(du.x, 1, 1e-12);
    /* mu 1 allows 1 m/s: the slip of 0.5 stops */
    sum = (pd_contact_pair_sum){0, {0, 0, 0}};
    du = pd_contact_pair_velocity(k_d, pd_v3(0, 0, 0), DC, k_u, 1, DT, &sum);
    printf("  mu 1: du = (%g, %g, %g)\n", du.x, du.y, du.z);
    PD_CHECK_NEAR(du.y, -0.5, 1e-12);
    PD_CHECK_NEAR(pd_v3_len(pd_v3_sub(sum.tangent, pd_v3(0, -0.5, 0))), 0, 1e-12);
}

PD_TEST(pair_only_pushes) {
    pd_contact_pair_sum sum = {0, {0, 0, 0}};
    pd_vec3 du = pd_contact_pair_velocity(k_d, pd_v3(0, 0, 0), DC, k_u, 0.2, DT, &sum);
    /* the rest of a sweep pulled them 2 mm apart at the candidates: what the pair gave, normal
     * and friction, is taken back, and no more (no pull) */
    pd_vec3 d = pd_v3(0.012, 0, 0), u = pd_v3_add(pd_v3_add(k_u, du), pd_v3(2, 0, 0));
    pd_vec3 back = pd_contact_pair_velocity(d, pd_v3(0, 0, 0), DC, u, 0.2, DT, &sum);
    printf("  pulled apart: du = (%g, %g, %g), sums %g / %g\n", back.x, back.y, back.z, sum.normal,
           pd_v3_len(sum.tangent));
    PD_CHECK_NEAR(back.x, -1, 1e-12);
    PD_CHECK_NEAR(back.y, 0.2, 1e-12);
    PD_CHECK(sum.normal == 0 && pd_v3_len(sum.tangent) == 0);
    /* a pair apart that gave nothing is left alone */
    pd_contact_pair_sum none = {0, {0, 0, 0}};
    pd_vec3 zero = pd_contact_pair_velocity(d, pd_v3(0, 0, 0), DC, k_u, 0.2, DT, &none);
    PD_CHECK(pd_v3_len(zero) == 0 && none.normal == 0);
}
