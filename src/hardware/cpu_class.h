/* Internal: CPU class checks that do not touch uform_last_error, for callers (capabilities,
 * dispatch) whose own success must leave it unchanged. */
#ifndef UFORM_HARDWARE_CPU_CLASS_H
#define UFORM_HARDWARE_CPU_CLASS_H

#include <stdbool.h>
#include <stddef.h>

#include "uform/hardware.h"

/** Whether this CPU (through the seam) runs `cpu_class`; NONE is true, a non-class false. */
bool uform__cpu_class_runs(uform_cpu_class_t cpu_class);

/** Writes what `cpu_class` lacks here ("avx512fp16 amx-tile") into `buffer`; empty if none. */
void uform__cpu_class_missing(uform_cpu_class_t cpu_class, char *buffer, size_t capacity);

/** Whether every feature `inner` requires is one `outer` requires too (same ISA); SERIAL is
 *  within every class. The kernels of `inner` then run wherever `outer` runs. */
bool uform__cpu_class_within(uform_cpu_class_t inner, uform_cpu_class_t outer);

#endif
