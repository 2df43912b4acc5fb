/* Internal: the readings derived from the seam, which the seam drops when it is pointed
 * elsewhere (uform__seam_use_fixture), so a test never sees the previous machine's answers. */
#ifndef UFORM_HARDWARE_CACHES_H
#define UFORM_HARDWARE_CACHES_H

void uform__topology_forget(void);
void uform__cpu_class_forget(void);
void uform__capabilities_forget(void);

#endif
