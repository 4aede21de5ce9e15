/* Peridot's tiny test harness: PD_TEST registers a test at load time (constructor), the
 * checks count failures and print the measured values, and test_main.c runs the tests of
 * one source file (argv[1] = file stem) or all of them. */
#ifndef PD_TEST_H
#define PD_TEST_H

#include <math.h>
#include <stdio.h>

typedef void (*pd_test_fn)(void);
void pd_test_register(const char* file, const char* name, pd_test_fn fn);
extern int pd_test_failures;

#define PD_TEST(name)                                                                              \
    static void name(void);                                                                        \
    __attribute__((constructor)) static void name##_register(void) {                               \
        pd_test_register(__FILE__, #name, name);                                                   \
    }                                                                                              \
    static void name(void)

#define PD_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                               \
            pd_test_failures++;                                                                    \
        }                                                                                          \
    } while (0)

/* |a - b| <= tol, printing both numbers either way so a log shows what was measured. */
#define PD_CHECK_NEAR(a, b, tol)                                                                   \
    do {                                                                                           \
        double pd_a_ = (double)(a), pd_b_ = (double)(b), pd_t_ = (double)(tol);                    \
        int pd_ok_ = fabs(pd_a_ - pd_b_) <= pd_t_;                                                 \
        printf("  %s %s = %.6g, expected %.6g +- %.3g\n", pd_ok_ ? "ok  " : "FAIL", #a, pd_a_,     \
               pd_b_, pd_t_);                                                                      \
        if (!pd_ok_)                                                                               \
            pd_test_failures++;                                                                    \
    } while (0)

/* |a - b| <= rel * |b| */
#define PD_CHECK_REL(a, b, rel)                                                                    \
    do {                                                                                           \
        double pd_a_ = (double)(a), pd_b_ = (double)(b), pd_r_ = (double)(rel);                    \
        int pd_ok_ = fabs(pd_a_ - pd_b_) <= pd_r_ * fabs(pd_b_);                                   \
        printf("  %s %s = %.6g, expected %.6g within %.3g%%\n", pd_ok_ ? "ok  " : "FAIL", #a,      \
               pd_a_, pd_b_, 100.0 * pd_r_);                                                       \
        if (!pd_ok_)                                                                               \
            pd_test_failures++;                                                                    \
    } while (0)

/* Stops the current test when a precondition fails (the rest would only crash). */
#define PD_REQUIRE(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("  FAIL %s:%d: required %s\n", __FILE__, __LINE__, #cond);                      \
            pd_test_failures++;                                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#endif
