/**
 * @file uform/version.h
 * @brief Compile-time version of the uform headers; compare with uform_version() at run time.
 */
#ifndef UFORM_VERSION_H
#define UFORM_VERSION_H

#define UFORM_VERSION_MAJOR 4
#define UFORM_VERSION_MINOR 0
#define UFORM_VERSION_PATCH 0
/** Pre-release tag, empty for a release. */
#define UFORM_VERSION_SUFFIX "rc.1"
#define UFORM_VERSION_STRING "4.0.0-rc.1"
/** One comparable number: major * 10000 + minor * 100 + patch. */
#define UFORM_VERSION_NUMBER (UFORM_VERSION_MAJOR * 10000 + UFORM_VERSION_MINOR * 100 + UFORM_VERSION_PATCH)

#endif /* UFORM_VERSION_H */
