#!/usr/bin/awk -f
# Writes a flower as an OBJ, in metres, y up: a stem (a capped cylinder on the y axis from
# y = 0 to STEM), two leaves and a head of PETALS petals round a centre, each an ellipsoid.
# The parts are separate closed surfaces that overlap where they join; each is wound
# counter-clockwise seen from outside, so the generalised winding number is 1 or more inside
# the flower and 0 outside: a body's shape (the sampling keeps lattice points where it is at
# least 1/2). For Xu et al. 2018 Fig. 1 (a heterogeneous flower), in place of their model.
# Usage: awk -f scripts/make_flower.awk > scenes/meshes/flower.obj  (defaults below)
BEGIN {
    if (SEGMENTS == "") SEGMENTS = 24
    if (RINGS == "") RINGS = 12
    if (STEM == "") STEM = 0.4          # stem height
    if (STEM_R == "") STEM_R = 0.016    # stem radius
    if (PETALS == "") PETALS = 6
    pi = atan2(0, -1)
    printf "# flower: scripts/make_flower.awk SEGMENTS=%d RINGS=%d STEM=%g STEM_R=%g PETALS=%d\n", SEGMENTS, RINGS, STEM, STEM_R, PETALS
    nv = 0
    cylinder(STEM_R, STEM + 0.01)
    # two leaves at 40 % and 55 % of the stem, opposite, rising 25 degrees from the horizontal
    leaf_y[1] = 0.40 * STEM; leaf_yaw[1] = 0
    leaf_y[2] = 0.55 * STEM; leaf_yaw[2] = pi
    for (l = 1; l <= 2; l++)
        ellipsoid(0.11, 0.011, 0.045, 25 * pi / 180, leaf_yaw[l], 0.11, leaf_y[l])
    # the head: a centre and the petals round it, tilted up by 15 degrees
    ellipsoid(0.03, 0.022, 0.03, 0, 0, 0, STEM + 0.01)
    for (p = 0; p < PETALS; p++)
        ellipsoid(0.065, 0.011, 0.026, 15 * pi / 180, 2 * pi * p / PETALS, 0.085, STEM + 0.01)
}

# A capped cylinder about the y axis, radius r, from y = 0 to y = h.
function cylinder(r, h,    j, k, b, t, c0, c1) {
    b = nv
    for (j = 0; j < SEGMENTS; j++) vertex(r * cos(2 * pi * j / SEGMENTS), 0, r * sin(2 * pi * j / SEGMENTS))
    for (j = 0; j < SEGMENTS; j++) vertex(r * cos(2 * pi * j / SEGMENTS), h, r * sin(2 * pi * j / SEGMENTS))
    vertex(0, 0, 0); c0 = nv
    vertex(0, h, 0); c1 = nv
    for (j = 0; j < SEGMENTS; j++) {
        k = (j + 1) % SEGMENTS
        printf "f %d %d %d\nf %d %d %d\n", b + 1 + j, b + 1 + SEGMENTS + j, b + 1 + SEGMENTS + k, b + 1 + j, b + 1 + SEGMENTS + k, b + 1 + k
        printf "f %d %d %d\n", c0, b + 1 + j, b + 1 + k
        printf "f %d %d %d\n", c1, b + 1 + SEGMENTS + k, b + 1 + SEGMENTS + j
    }
}

# An ellipsoid with semi-axes a (along its length), b (thickness) and c (width), its length
# axis raised by `tilt` from the horizontal and turned by `yaw` about y (x towards z), its
# centre `reach` out from the y axis along that axis, at height y.
function ellipsoid(a, b, c, tilt, yaw, reach, y,    i, j, k, th, ph, ox, oy, oz, base, r0, r1, pole0, pole1) {
    ox = reach * cos(tilt) * cos(yaw); oy = y + reach * sin(tilt); oz = reach * cos(tilt) * sin(yaw)
    base = nv
    for (i = 1; i < RINGS; i++) {
        th = pi * i / RINGS
        for (j = 0; j < SEGMENTS; j++) {
            ph = 2 * pi * j / SEGMENTS
            place(a * cos(th), b * sin(th) * cos(ph), c * sin(th) * sin(ph), tilt, yaw, ox, oy, oz)
        }
    }
    place(a, 0, 0, tilt, yaw, ox, oy, oz); pole0 = nv
    place(-a, 0, 0, tilt, yaw, ox, oy, oz); pole1 = nv
    # rings in theta (pole0 to pole1), segments in phi: (d theta) x (d phi) points outwards
    for (j = 0; j < SEGMENTS; j++) {
        k = (j + 1) % SEGMENTS
        printf "f %d %d %d\n", pole0, base + 1 + j, base + 1 + k
        for (i = 1; i < RINGS - 1; i++) {
            r0 = base + (i - 1) * SEGMENTS + 1; r1 = base + i * SEGMENTS + 1
            printf "f %d %d %d\nf %d %d %d\n", r0 + j, r1 + j, r1 + k, r0 + j, r1 + k, r0 + k
        }
        r0 = base + (RINGS - 2) * SEGMENTS + 1
        printf "f %d %d %d\n", pole1, r0 + k, r0 + j
    }
}

# Rotates (px, py, pz) by tilt about z, then yaw about y (x towards z), moves it by (ox, oy, oz).
function place(px, py, pz, tilt, yaw, ox, oy, oz,    qx, qy) {
    qx = px * cos(tilt) - py * sin(tilt); qy = px * sin(tilt) + py * cos(tilt)
    vertex(ox + qx * cos(yaw) - pz * sin(yaw), oy + qy, oz + qx * sin(yaw) + pz * cos(yaw))
}

function vertex(x, y, z) {
    printf "v %.9f %.9f %.9f\n", x, y, z
    nv++
}
