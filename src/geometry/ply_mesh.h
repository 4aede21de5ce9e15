/* PLY meshes, read by our own PLY reader (io/ply.h) rather than Assimp's, which on malformed
 * files hung, aborted and asked for gigabytes (fuzzing, tests/bad_input/fuzz/mesh/). */
#ifndef PD_PLY_MESH_H
#define PD_PLY_MESH_H

#include "geometry/mesh.h"

/* Reads the first `vertex` element's x, y, z and the first `face` element's list
 * vertex_indices (or vertex_index) into out as they are in the file (no transform): a face of
 * k >= 3 indices becomes k - 2 triangles, a fan from its first corner; vertices that no face
 * uses are dropped. Every other element and property is skipped. Errors point at jpath and
 * name the file: PD_ERR_IO when it cannot be opened; PD_ERR_MESH for a header the reader does
 * not take, elements that need more bytes than the file has, a value that is not a finite
 * number, a face of fewer than 3 indices, an index outside the vertices, a file that ends
 * before its declared rows, or no triangles. */
pd_status pd_ply_mesh_read(const char* file, pd_mesh* out, const char* jpath, pd_error* err);

#endif
