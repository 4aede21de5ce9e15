/* The optimiser's constraint hooks for contact (contact_hooks.h). */
#include "contact/contact_hooks.h"

void pd_contact_hooks_filter(void* hooks, pd_vec3* v, size_t n) {
    pd_contact_hooks* h = hooks;
    for (size_t i = 0; i < n; ++i)
        v[i] = pd_collider_contact_filter(h->cc, i, v[i]);
}

void pd_contact_hooks_project(void* hooks, pd_vec3* y) {
    pd_contact_hooks* h = hooks;
    pd_collider_contact_project(h->cc, y);
}

void pd_contact_hooks_search_begins(void* hooks) {
    pd_contact_hooks* h = hooks;
    if (h->contact)
        pd_contact_search_begins(h->contact);
}

int pd_contact_hooks_admissible(void* hooks) {
    pd_contact_hooks* h = hooks;
    return !h->contact || pd_contact_admissible(h->contact);
}
