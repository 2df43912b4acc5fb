/* uform.lib: the CPython face of libuform. What the extension's files share; nothing here is API.
 *
 * Every C call that can block (constructors, verbs, drain, free, waits) runs with the GIL
 * released, so another Python thread reaching the same executor meets the C library's own
 * CONTENDED answer instead of waiting on the GIL. Python callables handed to verbs are
 * called on the executor's threads through trampolines that take the GIL for each call;
 * native callables (addresses of C functions) run without it. Each C status maps to one
 * exception class carrying `status` and `message`.
 *
 * One file per concern: errors.c (exceptions), arguments.c (argument parsing, enums),
 * callbacks.c (trampolines), executor.c, deferred.c, vram.c (the Executor's GPU verbs),
 * arena.c (uform.Arena), mesh.c, hardware.c (module functions), module.c (the module).
 * Single-phase initialisation: one copy of this state per process.
 */
#ifndef UFORM_PYTHON_BINDING_H
#define UFORM_PYTHON_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "uform.h"

/* ---- errors.c ------------------------------------------------------------------------------ */

extern PyObject *UFormError;
extern PyObject *status_errors[UFORM_STATUS_COUNT_];

/* Raises the exception of `status` with the calling thread's last-error detail. Call it right
 * after the failing C call, on the same thread, before anything else can fail. */
PyObject *raise_status(uform_status_t status);
/* Raises a status the binding itself decided on (a Python-side timeout), with its own text. */
PyObject *raise_status_text(uform_status_t status, const char *text);
/* Creates UFormError and one subclass per status, and adds them to the module. */
int add_errors(PyObject *module);

/* ---- arguments.c --------------------------------------------------------------------------- */

PyObject *package_enum(const char *name);
PyObject *enum_member(const char *name, long value);
PyObject *optional_enum_member(const char *name, long value);
/** Fills a new struct sequence with `count` new references and returns it; if any item is NULL
 *  (its conversion raised), releases everything and returns NULL with that error set. */
PyObject *structseq_filled(PyObject *result, PyObject **items, int count);
int parse_enum(PyObject *object, const char *name, const char *argument, long low, long high, int none_allowed,
               long *value);
int parse_size(PyObject *object, const char *argument, size_t *value);
int parse_address(PyObject *object, const char *argument, void **address);
int parse_ids(PyObject *object, const char *argument, int32_t **ids, size_t *count);
/* A callable (TypeError otherwise). */
int parse_callable(PyObject *object, const char *argument);
/* The address of a C function (an int, never a small number, a bool or an enum member; or a
 * ctypes function or cffi function pointer) and, when `context_object` is given, an address
 * handed to it unchanged (an int, a ctypes object or pointer, a cffi pointer); and in *held a new
 * reference to what a deferred call keeps alive: `keep`, plus the ctypes or cffi objects given (a
 * CFUNCTYPE callback freed under a running call would be a jump into freed memory). */
int parse_native(PyObject *function_object, PyObject *context_object, PyObject *keep, void **function, void **context,
                 PyObject **held);
/* The arguments of a verb taking only (fn, *, deferred=False, progress=None), `format` being
 * "O|$pO:<verb>"; fn must be callable. */
int parse_callable_verb(PyObject *args, PyObject *kwargs, const char *format, PyObject **function, int *deferred,
                        PyObject **progress);
/* The arguments of a native verb taking only (function, context=0, *, deferred=False,
 * progress=None, keep=None), `format` being "O|O$pOO:<verb>"; parse_native reads them. */
int parse_native_verb(PyObject *args, PyObject *kwargs, const char *format, PyObject **function_object,
                      PyObject **context_object, int *deferred, PyObject **progress, PyObject **keep);

/* ---- callbacks.c --------------------------------------------------------------------------- */

/* What a verb's trampolines share: the Python callables and the first exception they raised. */
typedef struct call_context_t {
    PyObject *function; /* called as function(task, thread) or function(first, count, thread); NULL: native */
    PyObject *progress; /* called as progress(done, total), or NULL */
    PyObject *error;    /* the first exception raised, guarded by the GIL */
    atomic_int failed;  /* read without the GIL so later tasks skip taking it */
    void *owner;        /* the ExecutorObject running the call */
    uform_executor_t *executor; /* its C executor, for device functions asking for scratch or staging
                                   while a close is under way; NULL for host verbs */
} call_context_t;

/* The executor whose Python callback this thread is running, if any: a callback calling back
 * into its own executor would wait on itself, so that is refused with a RuntimeError. */
extern _Thread_local void *running_callback_of;

uform_status_t task_trampoline(void *context, size_t task, size_t thread);
uform_status_t slice_trampoline(void *context, size_t first, size_t count, size_t thread);
void progress_trampoline(void *opaque, size_t done, size_t total);
/* Calls context->function(slot) with a uform.DeviceSlot; staging views made during it are
 * released when it returns. */
uform_status_t device_trampoline(void *context, const uform_device_slot_t *slot);
void context_clear(call_context_t *context);
/* Raises the recorded exception, if any; answers 1 when it did. */
int raise_recorded(call_context_t *context);

/* ---- interrupt.c --------------------------------------------------------------------------- */

/* A synchronous call's cancel flag, set by Ctrl-C while the call runs on the main thread. */
typedef struct interrupt_scope_t {
    volatile int flag; /* uform_call_t.cancel points here */
    volatile int *outer;
    int installed;
} interrupt_scope_t;

/* Learns the main thread; at import. */
int interrupt_init(void);
/* Around a synchronous call, holding the GIL: SIGINT then sets scope->flag (on the main thread). */
void interrupt_enter(interrupt_scope_t *scope);
void interrupt_leave(interrupt_scope_t *scope);
/* The exception of a call that answered `status` (not OK) after Ctrl-C cancelled it:
 * KeyboardInterrupt from Python's handler, else the status's own. NULL. */
PyObject *interrupted(interrupt_scope_t *scope, uform_status_t status);

/* ---- executor.c ---------------------------------------------------------------------------- */

/* A close in progress: uform_executor_free runs on its own thread so that the closing Python
 * thread can answer Ctrl-C; a later close() waits for the same thread again. */
typedef struct closer_t closer_t;

typedef struct {
    PyObject_HEAD
    uform_executor_t *executor;
    closer_t *closer;     /* a close begun and not yet seen to end, or NULL */
    PyObject *weakreflist;
    Py_ssize_t busy;      /* Python threads inside a C call on it (guarded by the GIL) */
    Py_ssize_t lent_staging; /* staging views whose exports outlived their device function (vram.c) */
    /* A device executor's devices in DLPack's terms (DL_CUDA or DL_ROCM, and the native ordinal),
     * learnt by for_vram right after creation, while no call can be queued ahead of it; NULL when
     * not learnt (a RAM executor, or the learning call failed: arena_view.c then asks itself). */
    int32_t *dl_device_types, *dl_device_ids;
    size_t dl_devices;
    int closed;
} ExecutorObject;

/* Fills each device's DLPack device type and native ordinal with one for_devices call (no GIL
 * needed; it waits for the executor's earlier calls). */
uform_status_t device_kinds_ask(uform_executor_t *executor, int32_t *types, int32_t *ids);

extern PyTypeObject ExecutorType;

int executor_open(ExecutorObject *self);
/* Before a call that may wait on the executor: open, and not from one of its own callbacks. */
int executor_check(ExecutorObject *self);
/* Frees the C executor now: a live device arena or mesh holds a reference of its own, and the
 * last of them closes it. */
uform_status_t executor_release(ExecutorObject *self);
/* Starts a detached thread that frees `executor` (without the GIL); -1 if none could start. */
int executor_free_detached(uform_executor_t *executor);
/* Runs `body(argument)` on a new thread with every signal blocked there, so that signals keep
 * reaching the main thread. Answers pthread_create's result. */
int start_quiet_thread(pthread_t *thread, void *(*body)(void *), void *argument);
int interpreter_finalizing(void);
/* A verb's submission to the C executor, made with the GIL released: `context` is the
 * trampolines' (the caller's stack for a synchronous call, the Deferred's for a deferred one). */
typedef uform_status_t (*verb_submit_t)(uform_executor_t *executor, const uform_call_t *call, call_context_t *context,
                                        void *request);
/* Runs one verb through `submit`, for the host verbs (executor.c) and the GPU ones (vram.c):
 * synchronously, where Ctrl-C cancels it and a callback's first exception is raised, or with
 * `deferred` as a new Deferred named `verb` keeping `keep` alive. `progress` is a callable or
 * None; `device_verb` hands device functions the C executor through the context. */
PyObject *verb_run(ExecutorObject *self, verb_submit_t submit, void *request, PyObject *python_function,
                   PyObject *progress, PyObject *keep, int deferred, const char *verb, int device_verb);

/* ---- deferred.c ---------------------------------------------------------------------------- */

/* What one deferred call keeps alive until it ends: the trampolines' context, the executor
 * and the objects a native call's context refers to. A Deferred owns its record; one dropped
 * before its call ends hands the record to the reaper thread, which releases it once the call
 * has finished, so that dropping never blocks and never waits on the executor's own threads. */
typedef struct deferred_call_t {
    struct deferred_call_t *next; /* in the reaper's list */
    uform_deferred_t *handle;     /* NULL until the submission succeeded */
    call_context_t context;
    PyObject *executor;           /* the ExecutorObject, strong */
    PyObject *keep;               /* strong, or NULL */
    const char *verb;             /* "for_n", ... for repr and warnings */
    int retrieved;                /* its failure was raised to Python at least once */
} deferred_call_t;

typedef struct {
    PyObject_HEAD
    deferred_call_t *call;
    PyObject *weakreflist;
} DeferredObject;

extern PyTypeObject DeferredType;

/* A new Deferred owning a fresh record for `executor`, or NULL with an exception set. */
DeferredObject *deferred_new(PyObject *executor, PyObject *function, PyObject *progress, PyObject *keep,
                             const char *verb);
/* Forgets what a Deferred of a refused submission refers to, so that dropping it is quiet. */
void deferred_discard(DeferredObject *self);
/* uform.lib._set_wait_slice_hook(callable or None), for tests: see deferred.c. */
PyObject *set_wait_slice_hook(PyObject *module, PyObject *hook);
/* Resets the reaper in a fork()ed child, where its thread does not exist. */
void deferred_atfork_child(void);

/* ---- vram.c -------------------------------------------------------------------------------- */

extern PyTypeObject *DeviceSlotType;
extern PyTypeObject StagingType;
extern PyStructSequence_Desc DeviceSlot_desc;

/* A new uform.DeviceSlot for `slot`, or NULL with an exception set. */
PyObject *device_slot_new(const uform_device_slot_t *slot);
/* What a device function's thread keeps while it runs: the C executor and the staging views it
 * made; device_function_leave releases those views. */
typedef struct device_function_scope_t {
    void *owner;
    uform_executor_t *executor;
    PyObject *staging_views; /* a list of Staging objects and memoryviews over them, or NULL */
    size_t staging_bytes;    /* the largest staging request so far: a larger one may replace it */
    uint32_t vendor;         /* the device's uform_gpu_vendor_t */
    struct device_function_scope_t *outer;
} device_function_scope_t;
void device_function_enter(device_function_scope_t *scope, void *owner, uform_executor_t *executor);
void device_function_leave(device_function_scope_t *scope);
/* BufferError (-1) while staging exports outlive their device function: `what` would free them. */
int executor_staging_check(ExecutorObject *self, const char *what);

/* The Executor's GPU methods and attribute, listed in executor.c's tables. */
PyObject *Executor_for_devices(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_for_devices_native(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_copy_to_device(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_copy_to_host(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_device_scratch(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_staging(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_staging_tensor(ExecutorObject *self, PyObject *args, PyObject *kwargs);
PyObject *Executor_get_devices(ExecutorObject *self, void *unused);
PyObject *Executor_get_gpu_class(ExecutorObject *self, void *unused);
extern const char Executor_for_devices_doc[], Executor_for_devices_native_doc[], Executor_copy_to_device_doc[],
    Executor_copy_to_host_doc[], Executor_device_scratch_doc[], Executor_staging_doc[],
    Executor_staging_tensor_doc[];

#define EXECUTOR_VRAM_METHOD_(name)                                                                      \
    {#name, (PyCFunction)(void (*)(void))Executor_##name, METH_VARARGS | METH_KEYWORDS, Executor_##name##_doc}
#define EXECUTOR_VRAM_METHODS                                                                            \
    EXECUTOR_VRAM_METHOD_(for_devices), EXECUTOR_VRAM_METHOD_(for_devices_native),                     \
        EXECUTOR_VRAM_METHOD_(copy_to_device), EXECUTOR_VRAM_METHOD_(copy_to_host),                    \
        EXECUTOR_VRAM_METHOD_(device_scratch), EXECUTOR_VRAM_METHOD_(staging), EXECUTOR_VRAM_METHOD_(staging_tensor)

/* ---- dlpack.c ------------------------------------------------------------------------------ */

/* DLDeviceType values (dlpack.h). */
enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_ROCM = 10, DL_ROCM_HOST = 11 };

/* What one DLPack export borrows from its lender. */
typedef struct lend_t {
    void *data;
    size_t bytes;
    int32_t device_type, device_id;
    PyObject *owner;                  /* kept alive by every export */
    void (*hold)(PyObject *owner);    /* counts one more live export (GIL held) */
    void (*release)(PyObject *owner); /* counts one fewer (GIL held) */
    /* For device memory: makes the consumer's `stream` (a CUstream / hipStream_t, NULL the
     * default one) wait on the device for the executor's earlier work on `device`; -1 with an
     * exception set when it cannot. NULL: nothing to order. */
    int (*synchronize)(PyObject *owner, size_t device, void *stream);
    size_t device; /* the executor's device the memory is on, for `synchronize` */
} lend_t;

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) over `lend`. */
PyObject *dlpack_export(const lend_t *lend, PyObject *args, PyObject *kwargs);
/* __dlpack_device__(): (device_type, device_id). */
PyObject *dlpack_device_tuple(const lend_t *lend);

/* ---- arena.c, arena_view.c ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    uform_arena_t *arena; /* NULL once closed */
    PyObject *executor;   /* the ExecutorObject a device arena holds, else NULL */
    char *base;           /* a host arena's first byte, else NULL */
    char *device_base;    /* a device arena's first byte on device 0, else NULL */
    size_t capacity;
    size_t devices;
    int32_t *dl_device_types; /* per device: DL_CUDA or DL_ROCM, 0 until learnt */
    int32_t *dl_device_ids;   /* per device: the CUdevice or HIP device id */
    Py_ssize_t exports; /* live buffers, views' buffers and DLPack tensors taken from it */
    PyObject *weakreflist;
} ArenaObject;

extern PyTypeObject ArenaType;
extern PyTypeObject ArenaViewType;

int arena_open(ArenaObject *self);
void arena_hold(PyObject *arena);
void arena_let_go(PyObject *arena);
/* Learns each device's DLPack device (a call on the executor); 0, or -1 with an exception set. */
int arena_learn_devices(ArenaObject *self);
/* The arena's __dlpack__, __dlpack_device__, view and device_view, listed in arena.c's table. */
PyObject *Arena_dlpack(ArenaObject *self, PyObject *args, PyObject *kwargs);
PyObject *Arena_dlpack_device(ArenaObject *self, PyObject *unused);
PyObject *Arena_view(ArenaObject *self, PyObject *args, PyObject *kwargs);
PyObject *Arena_device_view(ArenaObject *self, PyObject *args, PyObject *kwargs);
extern const char Arena_dlpack_doc[], Arena_dlpack_device_doc[], Arena_view_doc[], Arena_device_view_doc[];

/* ---- mesh.c -------------------------------------------------------------------------------- */

extern PyTypeObject MeshOptionsType;
extern PyTypeObject MeshType;
extern PyTypeObject *MeshDescriptionType;
extern PyStructSequence_Desc MeshDescription_desc;

/* ---- hardware.c ---------------------------------------------------------------------------- */

extern PyTypeObject *GPUDeviceType;
extern PyStructSequence_Desc GPUDevice_desc;
/* The module's functions: capabilities, devices, version, info. */
extern PyMethodDef module_methods[];

#endif /* UFORM_PYTHON_BINDING_H */
