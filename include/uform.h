/**
 * @file uform.h
 * @brief The whole public interface of libuform: include this one header.
 *
 * Every function that can fail answers a uform_status_t and, on failure, leaves the detail
 * in uform_last_error(). Outputs are written only on success unless documented otherwise.
 * Nothing outside this header and the uform/ headers it includes is API.
 */
#ifndef UFORM_H
#define UFORM_H

#include "uform/export.h"
#include "uform/version.h"
#include "uform/status.h"
#include "uform/hardware.h"
#include "uform/executor.h"
#include "uform/mesh.h"
#include "uform/vram.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The library's version at run time, e.g. "4.0.0-rc.1"; compare with UFORM_VERSION_STRING. */
UFORM_API const char *uform_version(void);

/** UFORM_VERSION_NUMBER of the library actually loaded. */
UFORM_API int uform_version_number(void);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_H */
