/* Changes of material at given times (bodies[i].material_changes, docs/scene-format.md): the
 * world selects the particles and switches their material and mass; the method refreshes what
 * depends on them (pd_solver_vtable.change_materials). */
#ifndef PD_MATERIAL_CHANGE_H
#define PD_MATERIAL_CHANGE_H

#include "world/world.h"

/* At creation: refuses (PD_ERR_BAD_SCENE, path bodies[i].material_changes[k].region) a region
 * that holds no sampled particle of its body (the change would do nothing), and prepares the
 * per-body cursor of the changes to come. */
pd_status pd_world_prepare_material_changes(pd_world* w, pd_error* err);

/* At the start of a step: applies every change due (t <= the step's start time, to 1e-6 of a
 * step), in list order per body, and hands the changed particles to the method. */
pd_status pd_world_apply_material_changes(pd_world* w, pd_error* err);

/* out[i] = 1 for the particles of material m at creation and those a change will make of m
 * (a method calibrates a material on them, whenever they take it). */
void pd_world_particles_of_material(const pd_world* w, int m, uint8_t* out);

/* A checkpoint's changes made on a world fresh from the scene: body b's first upto[b]
 * changes, as the steps made them (in time order, those of one time together), so that the
 * method holds what they set up (a fluid's arrays, a renewal); what they computed is then
 * overwritten by the checkpoint's state. */
pd_status pd_world_replay_material_changes(pd_world* w, const int* upto, pd_error* err);

#endif
