/* Internal: how the library declares the thread-locals a call touches on its way (the calling
 * thread's bias slot, its membership chain, its error serial; and the NULL executor's scratch,
 * which a callback may ask for on every task). */
#ifndef UFORM_CORE_THREAD_LOCAL_H
#define UFORM_CORE_THREAD_LOCAL_H

/* Hidden, and initial-exec where the binary format is ELF. With the default model, a shared
 * libuform (and the Python extension, which compiles the library into itself) reaches each
 * thread-local through a call to __tls_get_addr: 27% of a 1-thread call's samples in `perf`,
 * which took 18-19 ns through the shared library against 14-15 ns through the static one
 * (bench/RESULTS.md, "Issue 20, eleventh session"). Initial-exec reads them at a fixed offset from
 * the thread pointer, as a program linked with the static library already does (its linker
 * relaxes the default model to that). The price, mimalloc's too: a libuform loaded by dlopen
 * takes its whole TLS block from the few hundred bytes glibc keeps aside for such libraries,
 * so the block is kept small (status.c keeps the last error's text on the heap) and a test
 * (test_thread_local_block) holds it under UFORM_TLS_BLOCK_LIMIT_ bytes. glibc only: musl's
 * dynamic linker refuses to dlopen a library with an initial-exec thread-local of its own ("initial-exec
 * TLS resolves to dynamic definition"), so there, and everywhere else, the model stays the
 * default, which a program linked with the static library still gets relaxed to initial-exec.
 * The shared library is also linked -z nodelete (CMakeLists.txt): its thread-specific data
 * destructors must outlive a dlclose, and glibc cannot reuse a dlclosed library's static TLS. */
#include <limits.h> /* through glibc's <features.h>: __GLIBC__, where the C library is glibc */

#if defined(__ELF__) && defined(__GLIBC__) && (defined(__GNUC__) || defined(__clang__))
#define UFORM_HOT_THREAD_LOCAL_ __attribute__((visibility("hidden"), tls_model("initial-exec"))) _Thread_local
#elif defined(__GNUC__) || defined(__clang__)
#define UFORM_HOT_THREAD_LOCAL_ __attribute__((visibility("hidden"))) _Thread_local
#else
#define UFORM_HOT_THREAD_LOCAL_ _Thread_local
#endif

/** The most bytes of thread-local storage the library may have, all of it together. */
#define UFORM_TLS_BLOCK_LIMIT_ 128

#endif
