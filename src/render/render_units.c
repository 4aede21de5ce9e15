/* The unit of a frame's PLY property, from the field registry (the world's attributes and
 * every method's), so that the legend says what the colours measure. */
#include <string.h>

#include "render/render_internal.h"
#include "solvers/solver.h"
#include "world/fields.h"

static const char* unit_in(const pd_field_info* fields, int count, const char* property) {
    for (int k = 0; k < count; ++k)
        for (int c = 0; c < fields[k].components && c < 6; ++c)
            if (fields[k].names[c] && strcmp(fields[k].names[c], property) == 0)
                return fields[k].unit;
    return NULL;
}

const char* pd_render_unit(const char* property) {
    if (strcmp(property, "speed") == 0)
        property = "vx"; /* |v| */
    int count;
    const pd_field_info* world = pd_world_field_table(&count);
    const char* unit = unit_in(world, count, property);
    const pd_solver_vtable* const* all = pd_solver_all();
    for (int m = 0; !unit && all[m]; ++m)
        unit = unit_in(all[m]->fields, all[m]->field_count, property);
    return unit;
}
