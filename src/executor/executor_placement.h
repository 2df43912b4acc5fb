/* Internal: process-wide placement of pinned threads (executor_placement.c). */
#ifndef UFORM_EXECUTOR_PLACEMENT_H
#define UFORM_EXECUTOR_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "uform.h"

/** Orders `executor->cpus` so the cores no other live executor pins come first, and records
 *  the executor; sets `sharing` on every executor whose cores now overlap. */
void uform__placement_join(uform_executor_t *executor);
/** Forgets the executor's cores; executors left alone on theirs stop `sharing`. */
void uform__placement_leave(uform_executor_t *executor);
/** Tests only: how many live executors reserve `cpu` (slot 0 or a pinned worker). */
size_t uform__placement_users(int32_t cpu);

#endif
