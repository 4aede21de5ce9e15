/* Each method's capabilities (src/solvers/solver.h): it declares only the PD_CAP_DECLARED bits,
 * and pd_solver_capabilities derives the others from what its vtable already states, so that
 * nothing is declared twice (a declared Prony bit on a method whose materials refuse the
 * block would be a claim the scene refuses). Every bit has a name and a meaning for
 * docs/methods.md. */
#include <string.h>

#include "solvers/solver.h"
#include "test.h"

PD_TEST(methods_declare_only_what_is_not_derived) {
    for (const pd_solver_vtable* const* m = pd_solver_all(); *m; ++m) {
        unsigned declared = (*m)->capabilities, all = pd_solver_capabilities(*m);
        printf("  %s: declares 0x%x, has 0x%x\n", (*m)->name, declared, all);
        PD_CHECK((declared & ~(unsigned)PD_CAP_DECLARED) == 0);
        PD_CHECK((all & declared) == declared);
        /* derived from the material support and the vtable's entries */
        unsigned plastic = (*m)->materials ? (*m)->materials->plasticity : 0;
        unsigned visco = (*m)->materials ? (*m)->materials->viscoelasticity : 0;
        PD_CHECK(!(all & PD_CAP_DRUCKER_PRAGER) ==
                 !(plastic & (1u << PD_PLASTICITY_DRUCKER_PRAGER)));
        PD_CHECK(!(all & PD_CAP_VON_MISES) == !(plastic & (1u << PD_PLASTICITY_VON_MISES)));
        PD_CHECK(!(all & PD_CAP_PRONY) == !(visco & (1u << PD_VISCO_PRONY)));
        PD_CHECK(!(all & PD_CAP_MAXWELL) == !(visco & (1u << PD_VISCO_HENCKY_MAXWELL)));
        PD_CHECK(!(all & PD_CAP_MATERIAL_CHANGES) == !(*m)->change_materials);
        PD_CHECK(!(all & PD_CAP_PIN_RELEASE) == !(*m)->releases_pins);
        PD_CHECK(!(all & PD_CAP_CHECKPOINTS) == !(*m)->persistent);
        PD_CHECK(!(all & PD_CAP_EMITTERS) == !(*m)->on_emit);
        PD_CHECK(all & PD_CAP_ELASTIC); /* every method today simulates elastic solids */
    }
}

PD_TEST(every_capability_has_a_name_and_a_meaning) {
    for (int k = 0; k < PD_CAP_COUNT; ++k) {
        const char *name = pd_capability_name(1u << k), *doc = pd_capability_doc(1u << k);
        PD_CHECK(name && doc && *name && *doc);
        for (int j = 0; name && j < k; ++j)
            PD_CHECK(strcmp(name, pd_capability_name(1u << j)) != 0);
    }
    PD_CHECK(pd_capability_name(0) == NULL && pd_capability_name(3) == NULL);
    PD_CHECK(pd_capability_name(1u << PD_CAP_COUNT) == NULL);
}
