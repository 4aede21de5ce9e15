/* Default setup structs (include/peridot/types.h). A scene key that is left out takes the value
 * given here; docs/scene-format.md lists the same values. */
#include <string.h>

#include "peridot/types.h"

pd_shape_def pd_default_shape_def(void) {
    pd_shape_def s;
    memset(&s, 0, sizeof s);
    s.type = PD_SHAPE_BOX;
    s.max = pd_v3(1, 1, 1);
    s.radius = 0.5;
    s.axis = pd_v3(0, 1, 0);
    s.height = 1;
    s.scale = 1;
    s.rotate_axis = pd_v3(0, 1, 0);
    s.rotate_degrees = 0;
    return s;
}

pd_material_def pd_default_material_def(void) {
    pd_material_def m;
    memset(&m, 0, sizeof m);
    m.density = 1000;
    m.youngs_modulus = 1e5;
    m.poisson_ratio = 0.25;
    /* The Lame constants of the default E, nu (pd_elastic_from_e_nu gives both exactly), so
     * that both descriptions agree. */
    m.lame_lambda = 4e4;
    m.lame_mu = 4e4;
    m.plasticity = PD_PLASTICITY_NONE;
    m.friction_angle = 30;
    m.cohesion = 0;
    m.volume_correction = -1; /* not given: the method's (on where it is implemented) */
    m.yield_stress = 0;       /* no default: von_mises and herschel_bulkley require it */
    m.hb_viscosity = 0;       /* herschel_bulkley without it: perfect von Mises */
    m.hb_exponent = 1;        /* herschel_bulkley: Bingham */
    /* cam_clay: Yu 2024 Table 2's snow (Fig. 12) */
    m.cc_tension_ratio = 0.05;
    m.cc_hardening = 30;
    m.cc_log_plastic_volume = -0.0005;
    /* drucker_prager's mu(I): Jop, Forterre & Pouliquen 2006's glass beads (d 0.5 mm, I_0
     * 0.279, solid fraction 0.6; mu_2 - mu_s = tan 32.76 - tan 20.9 where mu_2 is not given) */
    m.rate_dependence = 0;
    m.mui_mu_2 = 0;
    m.mui_i0 = 0.279;
    m.mui_grain_diameter = 0.5e-3;
    m.mui_solid_fraction = 0.6;
    return m;
}

pd_body_def pd_default_body_def(void) {
    pd_body_def b;
    memset(&b, 0, sizeof b);
    b.material = 0;
    b.spacing = 0.01;
    b.shape = pd_default_shape_def();
    b.sampling = PD_SAMPLING_GRID;
    b.kind = PD_BODY_DYNAMIC;
    return b;
}

pd_emitter_def pd_default_emitter_def(void) {
    pd_emitter_def e;
    memset(&e, 0, sizeof e);
    e.direction = pd_v3(0, -1, 0);
    e.start = 0;
    e.stop = INFINITY;
    return e;
}

pd_collider_def pd_default_collider_def(void) {
    pd_collider_def c;
    memset(&c, 0, sizeof c);
    c.type = PD_COLLIDER_PLANE;
    c.normal = pd_v3(0, 1, 0);
    c.shape = pd_default_shape_def();
    c.inside = 0;
    c.boundary = PD_BOUNDARY_SLIP;
    c.friction = 0;
    return c;
}

pd_output_def pd_default_output_def(void) {
    pd_output_def o;
    memset(&o, 0, sizeof o);
    strcpy(o.dir, "out");
    o.every = 1;
    o.formats = PD_FORMAT_PLY;
    o.attributes = PD_ATTR_VELOCITY;
    return o;
}

pd_world_def pd_default_world_def(void) {
    pd_world_def w;
    memset(&w, 0, sizeof w);
    w.dt = 0.004;
    w.fps = 30;
    w.frames = 90;
    w.gravity = pd_v3(0, -9.81, 0);
    w.seed = 1;
    w.threads = 0;
    w.memory_limit_bytes = 0;
    return w;
}
