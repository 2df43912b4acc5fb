/**
 * @file uform/export.h
 * @brief UFORM_API marks the exported symbols; everything else in libuform is hidden.
 */
#ifndef UFORM_EXPORT_H
#define UFORM_EXPORT_H

#if defined(UFORM_STATIC_DEFINE)
#define UFORM_API
#elif defined(_WIN32)
#if defined(UFORM_BUILDING_LIBRARY)
#define UFORM_API __declspec(dllexport)
#else
#define UFORM_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define UFORM_API __attribute__((visibility("default")))
#else
#define UFORM_API
#endif

#endif /* UFORM_EXPORT_H */
