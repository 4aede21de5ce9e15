#!/usr/bin/awk -f
# Writes a skirt as an OBJ: a conical tube (a frustum of a cone with a wall), closed, about the
# y axis, in metres. Its waist (the top, y = TOP) has outer radius R_TOP, its hem (the bottom,
# y = TOP - HEIGHT) outer radius R_HEM; the wall is THICK thick, measured horizontally. Four
# rings of SEGMENTS vertices (outer top, outer hem, inner top, inner hem); the outer and inner
# walls and the two annuli at waist and hem, wound counter-clockwise seen from outside the
# material, so the winding number is 1 inside the wall: a body's shape (the sampling keeps
# the lattice points inside).
# Usage: awk -f scripts/make_skirt.awk > scenes/meshes/skirt.obj  (defaults below)
BEGIN {
    if (SEGMENTS == "") SEGMENTS = 96
    if (R_TOP == "") R_TOP = 0.09
    if (R_HEM == "") R_HEM = 0.15
    if (HEIGHT == "") HEIGHT = 0.24
    if (TOP == "") TOP = 0.5
    if (THICK == "") THICK = 0.021
    pi = atan2(0, -1)
    printf "# skirt: conical tube about the y axis, scripts/make_skirt.awk SEGMENTS=%d R_TOP=%g R_HEM=%g HEIGHT=%g TOP=%g THICK=%g\n", SEGMENTS, R_TOP, R_HEM, HEIGHT, TOP, THICK
    split(R_TOP " " R_HEM " " (R_TOP - THICK) " " (R_HEM - THICK), r, " ")
    split(TOP " " (TOP - HEIGHT) " " TOP " " (TOP - HEIGHT), y, " ")
    for (ring = 1; ring <= 4; ring++)
        for (j = 0; j < SEGMENTS; j++) {
            phi = 2 * pi * j / SEGMENTS
            printf "v %.12f %.12f %.12f\n", r[ring] * cos(phi), y[ring], r[ring] * sin(phi)
        }
    # vertex index (1-based) of ring (1..4), segment j (wraps around)
    for (j = 0; j < SEGMENTS; j++) {
        k = (j + 1) % SEGMENTS
        ot0 = 1 + j; ot1 = 1 + k                                 # outer, waist
        oh0 = 1 + SEGMENTS + j; oh1 = 1 + SEGMENTS + k           # outer, hem
        it0 = 1 + 2 * SEGMENTS + j; it1 = 1 + 2 * SEGMENTS + k   # inner, waist
        ih0 = 1 + 3 * SEGMENTS + j; ih1 = 1 + 3 * SEGMENTS + k   # inner, hem
        # outer wall, facing away from the axis (phi grows counter-clockwise seen from above)
        printf "f %d %d %d\nf %d %d %d\n", ot0, ot1, oh1, ot0, oh1, oh0
        # inner wall, facing the axis
        printf "f %d %d %d\nf %d %d %d\n", it0, ih0, ih1, it0, ih1, it1
        # waist annulus, facing up; hem annulus, facing down
        printf "f %d %d %d\nf %d %d %d\n", ot0, it0, it1, ot0, it1, ot1
        printf "f %d %d %d\nf %d %d %d\n", oh0, oh1, ih1, oh0, ih1, ih0
    }
}
