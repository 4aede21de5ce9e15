/* q / p at the onset of yield in triaxial compression, friction angle phi (degrees), as each
 * method's own test reads it from its yield function (plasticity.c, sbpd_sand.c); triaxial.c
 * compares them with Mohr-Coulomb for every method with Drucker-Prager. */
#ifndef PD_TEST_TRIAXIAL_H
#define PD_TEST_TRIAXIAL_H

double pd_test_ppd_triaxial_ratio(double phi);  /* plasticity.c, the compression cone */
double pd_test_sbpd_triaxial_ratio(double phi); /* sbpd_sand.c */
double pd_test_mpm_triaxial_ratio(double phi);  /* mpm.c */
double pd_test_xpbi_triaxial_ratio(double phi); /* xpbi.c */

/* The probe for a return on the Hencky strain (mpm's and xpbi's, src/constitutive/
 * hencky_plasticity.h): the stretches of a confining strain of 1e-3 and a growing isochoric
 * axial one, the onset of flow by bisection, q / p of the Hencky StVK stress (mu, lambda) there
 * (triaxial.c). */
struct pd_hencky_yield;
double pd_test_hencky_triaxial_ratio(const struct pd_hencky_yield* yield, double mu, double lambda);

#endif
