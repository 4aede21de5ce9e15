#!/usr/bin/awk -f
# Writes a hemispherical bowl as an OBJ: the lower half (y <= 0) of the unit sphere about the
# origin, an open surface with its rim at y = 0 and its bottom at y = -1. Rings of constant
# polar angle from the bottom pole (RINGS of them, the last one the rim) times SEGMENTS around;
# triangles wound counter-clockwise seen from outside the sphere, so their normals point away
# from the centre: a mesh collider with "inside": true keeps particles in the bowl.
# Usage: awk -v RINGS=24 -v SEGMENTS=64 -f scripts/make_bowl.awk > scenes/meshes/bowl.obj
BEGIN {
    if (RINGS == "") RINGS = 24
    if (SEGMENTS == "") SEGMENTS = 64
    pi = atan2(0, -1)
    printf "# hemispherical bowl, unit radius, rim at y = 0: scripts/make_bowl.awk RINGS=%d SEGMENTS=%d\n", RINGS, SEGMENTS
    print "v 0 -1 0"
    for (i = 1; i <= RINGS; i++) {
        theta = i * (pi / 2) / RINGS
        r = sin(theta); y = -cos(theta)
        if (i == RINGS) y = 0
        for (j = 0; j < SEGMENTS; j++) {
            phi = 2 * pi * j / SEGMENTS
            printf "v %.12f %.12f %.12f\n", r * cos(phi), y, r * sin(phi)
        }
    }
    # vertex index (1-based) of ring i (1..RINGS), segment j (wraps around)
    for (j = 0; j < SEGMENTS; j++)
        printf "f 1 %d %d\n", 2 + j, 2 + (j + 1) % SEGMENTS
    for (i = 1; i < RINGS; i++)
        for (j = 0; j < SEGMENTS; j++) {
            a0 = 2 + (i - 1) * SEGMENTS + j; a1 = 2 + (i - 1) * SEGMENTS + (j + 1) % SEGMENTS
            b0 = a0 + SEGMENTS; b1 = a1 + SEGMENTS
            printf "f %d %d %d\n", a1, a0, b0
            printf "f %d %d %d\n", a1, b0, b1
        }
}
