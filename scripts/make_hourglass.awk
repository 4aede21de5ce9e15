#!/usr/bin/awk -f
# Writes an hourglass as an OBJ: a closed surface of revolution about the y axis, in metres,
# symmetric about y = 0. From the neck outwards: a neck of radius NECK and length 2 NECK_LEN
# about y = 0, a cone widening to the bulb radius R over CONE (height), a cylinder of height
# BULB, a flat cap. With PART=top only the upper chamber, closed by a flat disc at y = 0 (the
# sand a body fills the hourglass with: its shape). Rings of SEGMENTS vertices at the profile's
# corners, a centre vertex per cap, triangles wound counter-clockwise seen from outside, so the
# mesh is closed and manifold with outward normals: as a collider with "inside": true it keeps
# particles in the glass; as a body's shape it is filled. CENTRES lists the x of each glass
# (default "0"): several glasses side by side in one mesh make one container whose inside is
# theirs together (two containers would each push the other's sand into itself). Each straight piece of the profile is
# cut into rings about as far apart as the segments around (near-square triangles keep the
# distance queries' bounding boxes small).
# Usage: awk -v PART=all -f scripts/make_hourglass.awk > scenes/meshes/hourglass.obj
#        awk -v PART=all -v CENTRES="-0.1 0.1" -f scripts/make_hourglass.awk > two.obj
#        awk -v PART=top -f scripts/make_hourglass.awk > scenes/meshes/hourglass_sand.obj
BEGIN {
    if (SEGMENTS == "") SEGMENTS = 64
    if (R == "") R = 0.06
    if (NECK == "") NECK = 0.025
    if (NECK_LEN == "") NECK_LEN = 0.005
    if (CONE == "") CONE = 0.05
    if (BULB == "") BULB = 0.12
    if (PART == "") PART = "all"
    if (CENTRES == "") CENTRES = "0"
    glasses = split(CENTRES, centre, " ")
    pi = atan2(0, -1)
    printf "# hourglass (%s): scripts/make_hourglass.awk SEGMENTS=%d R=%g NECK=%g NECK_LEN=%g CONE=%g BULB=%g CENTRES=%s\n", PART, SEGMENTS, R, NECK, NECK_LEN, CONE, BULB, CENTRES
    # profile corners (radius, height) from the bottom up
    top = NECK_LEN + CONE + BULB
    rings = 0
    if (PART == "all") {
        add(R, -top); add(R, -NECK_LEN - CONE); add(NECK, -NECK_LEN)
        add(NECK, NECK_LEN)
        add(R, NECK_LEN + CONE); add(R, top)
        bottom = -top
    } else if (PART == "top") {
        add(NECK, 0); add(NECK, NECK_LEN)
        add(R, NECK_LEN + CONE); add(R, top)
        bottom = 0
    } else {
        print "PART must be all or top" > "/dev/stderr"
        exit 2
    }
    per_glass = rings * SEGMENTS + 2
    for (g = 1; g <= glasses; g++)
        write_glass(centre[g], (g - 1) * per_glass)
}
# one glass about x = cx: its vertices (numbered after `first` earlier ones), walls and caps
function write_glass(cx, first,    i, j, phi, lower, upper, a0, a1, b0, b1) {
    for (i = 1; i <= rings; i++)
        for (j = 0; j < SEGMENTS; j++) {
            phi = 2 * pi * j / SEGMENTS
            printf "v %.12f %.12f %.12f\n", cx + pr[i] * cos(phi), py[i], pr[i] * sin(phi)
        }
    lower = first + rings * SEGMENTS + 1; upper = lower + 1
    printf "v %.12f %.12f 0\n", cx, bottom
    printf "v %.12f %.12f 0\n", cx, top
    # side walls: ring i to ring i + 1; seen from outside, phi runs clockwise looking down y
    for (i = 1; i < rings; i++)
        for (j = 0; j < SEGMENTS; j++) {
            a0 = first + vid(i, j); a1 = first + vid(i, j + 1)
            b0 = first + vid(i + 1, j); b1 = first + vid(i + 1, j + 1)
            printf "f %d %d %d\n", a0, b0, a1
            printf "f %d %d %d\n", a1, b0, b1
        }
    # caps: the bottom seen from below, the top from above
    for (j = 0; j < SEGMENTS; j++) {
        printf "f %d %d %d\n", lower, first + vid(1, j), first + vid(1, j + 1)
        printf "f %d %d %d\n", upper, first + vid(rings, j + 1), first + vid(rings, j)
    }
}
# the next profile corner, with rings between it and the last one
function add(r, y,    pieces, k, len) {
    if (rings > 0) {
        len = sqrt((r - pr[rings]) ^ 2 + (y - py[rings]) ^ 2)
        pieces = int(len / (2 * pi * R / SEGMENTS)) + 1
        for (k = 1; k < pieces; k++) {
            rings++
            pr[rings] = pr[rings - 1] + (r - pr[rings - 1]) / (pieces - k + 1)
            py[rings] = py[rings - 1] + (y - py[rings - 1]) / (pieces - k + 1)
        }
    }
    rings++; pr[rings] = r; py[rings] = y
}
function vid(i, j) { return (i - 1) * SEGMENTS + (j % SEGMENTS) + 1 }
