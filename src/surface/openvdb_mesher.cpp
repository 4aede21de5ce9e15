// Particles to a closed triangle mesh with OpenVDB (the pipeline of Houdini's "VDB from
// Particles" + "VDB Reshape SDF" + "Convert VDB"): spheres to a narrow-band level set, erosion,
// smoothing, then the zero level meshed. See peridot/surface.h for why each step.
#include "openvdb_mesher.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <vector>

#include <openvdb/openvdb.h>
#include <openvdb/tools/LevelSetFilter.h>
#include <openvdb/tools/ParticlesToLevelSet.h>
#include <openvdb/tools/VolumeToMesh.h>

extern "C" {
#include "core/alloc.h"
}

namespace {

// ParticlesToLevelSet's particle interface: positions only, one radius for all.
struct ParticleList {
    using PosType = openvdb::Vec3R;
    std::vector<openvdb::Vec3R> pos;
    size_t size() const { return pos.size(); }
    void getPos(size_t i, openvdb::Vec3R& xyz) const { xyz = pos[i]; }
};

ParticleList finite_particles(size_t n, const float* x, const float* y, const float* z) {
    ParticleList list;
    list.pos.reserve(n);
    for (size_t i = 0; i < n; ++i)
        if (std::isfinite(x[i]) && std::isfinite(y[i]) && std::isfinite(z[i]))
            list.pos.emplace_back(x[i], y[i], z[i]);
    return list;
}

// The eroded, smoothed level set. The band is wide enough that the erosion (radius - h/2)
// never runs out of it: OpenVDB's offset advances half a voxel per step and rebuilds the band.
struct Def {
    double spacing, radius, voxel;
    int smooth;
};

openvdb::FloatGrid::Ptr level_set(const Def& def, const ParticleList& list) {
    const float half_width = 3.0f;
    openvdb::FloatGrid::Ptr grid =
        openvdb::createLevelSet<openvdb::FloatGrid>(def.voxel, half_width);
    openvdb::tools::ParticlesToLevelSet<openvdb::FloatGrid> raster(*grid);
    raster.setRmin(1.0); // radius >= 1.5 voxels is checked by the caller
    raster.rasterizeSpheres(list, def.radius);
    raster.finalize(true);
    openvdb::tools::LevelSetFilter<openvdb::FloatGrid> filter(*grid);
    filter.offset(float(def.radius - 0.5 * def.spacing)); // > 0 erodes: phi + d
    for (int k = 0; k < def.smooth; ++k)
        filter.gaussian(1);
    return grid;
}

// volumeToMesh gives quads and triangles; each quad becomes two triangles. OpenVDB orders a
// level set's polygons clockwise seen from outside (negative inside), so each is reversed.
int copy_mesh(const std::vector<openvdb::Vec3s>& points, const std::vector<openvdb::Vec3I>& tris,
              const std::vector<openvdb::Vec4I>& quads, pd_openvdb_mesh* out) {
    out->vertex_count = points.size();
    out->triangle_count = tris.size() + 2 * quads.size();
    out->vertices = PD_NEW_ARRAY(float, 3 * out->vertex_count);
    out->triangles = PD_NEW_ARRAY(uint32_t, 3 * out->triangle_count);
    if ((out->vertex_count && !out->vertices) || (out->triangle_count && !out->triangles)) {
        PD_FREE_ARRAY(out->vertices, float, 3 * out->vertex_count);
        PD_FREE_ARRAY(out->triangles, uint32_t, 3 * out->triangle_count);
        *out = pd_openvdb_mesh{};
        return PD_OPENVDB_NO_MEMORY;
    }
    for (size_t i = 0; i < points.size(); ++i)
        for (int c = 0; c < 3; ++c)
            out->vertices[3 * i + c] = points[i][c];
    uint32_t* t = out->triangles;
    for (const openvdb::Vec3I& p : tris) {
        *t++ = p[2], *t++ = p[1], *t++ = p[0];
    }
    for (const openvdb::Vec4I& q : quads) {
        *t++ = q[2], *t++ = q[1], *t++ = q[0];
        *t++ = q[3], *t++ = q[2], *t++ = q[0];
    }
    return PD_OPENVDB_OK;
}

} // namespace

extern "C" int pd_openvdb_mesh_points(double spacing, double radius, double voxel, int smooth,
                                      size_t n, const float* x, const float* y, const float* z,
                                      pd_openvdb_mesh* out, char* why, size_t why_cap) {
    *out = pd_openvdb_mesh{};
    try {
        openvdb::initialize();
        ParticleList list = finite_particles(n, x, y, z);
        if (list.size() == 0)
            return PD_OPENVDB_OK;
        openvdb::FloatGrid::Ptr grid = level_set(Def{spacing, radius, voxel, smooth}, list);
        std::vector<openvdb::Vec3s> points;
        std::vector<openvdb::Vec3I> tris;
        std::vector<openvdb::Vec4I> quads;
        openvdb::tools::volumeToMesh(*grid, points, tris, quads, 0.0, 0.0, true);
        return copy_mesh(points, tris, quads, out);
    } catch (const std::bad_alloc&) {
        return PD_OPENVDB_NO_MEMORY;
    } catch (const std::exception& e) {
        std::snprintf(why, why_cap, "OpenVDB: %s", e.what());
        return PD_OPENVDB_FAILED;
    }
}
