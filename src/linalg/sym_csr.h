/* A symmetric matrix over points with one 3x3 block c I per coupling, the form the implicit
 * methods' global matrices take (He 2017 Eq. 12: M/h^2 + sum of bond weights; Xu 2018's
 * prefactored matrix alike): row i has diag[i] on the diagonal and -weight[k] at column
 * cols[k] for k in offsets[i] .. offsets[i+1]. Both directions of a coupling are stored. The
 * arrays belong to the method (a family's CSR serves directly). */
#ifndef PD_SYM_CSR_H
#define PD_SYM_CSR_H

#include <stddef.h>
#include <stdint.h>

#include "peridot/math.h"

typedef struct pd_sym_csr {
    size_t n;
    const uint32_t* offsets;
    const uint32_t* cols;
    /* minus the off-diagonal entry (N/m): in double, or (weight NULL) in single precision,
     * which halves what a sweep streams per coupling for a preconditioner's matrix */
    const pd_real* weight;
    const pd_real* diag; /* diagonal entry (N/m) */
    /* NULL: row i holds offsets[i] .. offsets[i+1]; else offsets[i] .. offsets[i] + counts[i]
     * (lists with room to grow, such as contact pairs) */
    const uint32_t* counts;
    const float* weight32;
} pd_sym_csr;

static inline uint32_t pd_sym_csr_end(const pd_sym_csr* a, size_t i) {
    return a->counts ? a->offsets[i] + a->counts[i] : a->offsets[i + 1];
}

static inline pd_real pd_sym_csr_weight(const pd_sym_csr* a, uint32_t k) {
    return a->weight ? a->weight[k] : (pd_real)a->weight32[k];
}

#endif
