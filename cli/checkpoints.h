/* peridot run's checkpoints (cli/checkpoints.c). */
#ifndef PD_CLI_CHECKPOINTS_H
#define PD_CLI_CHECKPOINTS_H

#include "common.h"

/* Writes checkpoint_<frame>.pdck into the output folder when frame is a multiple of
 * output.checkpoint_every; 0, or 1 on a failed write (err filled). */
int pd_cli_write_checkpoint(const pd_world* w, const pd_scene* scene, int frame, pd_error* err);

/* --resume: reads the newest checkpoint of the output folder into w (fresh from the scene),
 * removes the frames and checkpoints after its frame, and finds the bytes of stats.csv to keep.
 * 0 with *frame its frame, or the exit code after the message (2: no or another scene's
 * checkpoint, nothing to resume). */
int pd_cli_resume(pd_world* w, const pd_scene* scene, int* frame, long long* stats_keep);

#endif
