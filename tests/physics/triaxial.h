/* q / p at the onset of yield in triaxial compression, friction angle phi (degrees), as each
 * method's own test reads it from its yield function (plasticity.c, sbpd_sand.c); triaxial.c
 * compares them with Mohr-Coulomb for every method with Drucker-Prager. */
#ifndef PD_TEST_TRIAXIAL_H
#define PD_TEST_TRIAXIAL_H

double pd_test_ppd_triaxial_ratio(double phi);  /* plasticity.c, the compression cone */
double pd_test_sbpd_triaxial_ratio(double phi); /* sbpd_sand.c */
double pd_test_mpm_triaxial_ratio(double phi);  /* mpm.c */
double pd_test_xpbi_triaxial_ratio(double phi); /* xpbi.c */

#endif
