/* uform.lib: the CPython face of libuform.
 *
 * Every C call that can block (constructors, verbs, drain, free, waits) runs with the GIL
 * released, so another Python thread reaching the same executor meets the C library's own
 * CONTENDED answer instead of waiting on the GIL. Python callables handed to verbs are
 * called on the executor's threads through trampolines that take the GIL for each call;
 * native callables (addresses of C functions) run without it. Each C status maps to one
 * exception class carrying `status` and `message`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "uform.h"

/* -------------------------------------------------------------------------------------------- */
/* Module state. Single-phase initialisation: one copy per process.                            */

static PyObject *UFormError;
static PyObject *status_errors[UFORM_STATUS_COUNT_];
static PyTypeObject *GPUDeviceType;
static PyTypeObject *MeshDescriptionType;

static PyTypeObject ExecutorType;
static PyTypeObject DeferredType;
static PyTypeObject MeshOptionsType;
static PyTypeObject MeshType;

/* -------------------------------------------------------------------------------------------- */
/* Errors                                                                                       */

/* Raises the exception of `status` with the calling thread's last-error detail. Call it right
 * after the failing C call, on the same thread, before anything else can fail. */
static PyObject *raise_status(uform_status_t status) {
    const char *detail = uform_last_error();
    if (!detail || !*detail) detail = uform_status_message(status);
    PyObject *type = ((int)status >= 0 && (int)status < UFORM_STATUS_COUNT_ && status_errors[status])
                         ? status_errors[status]
                         : UFormError;
    PyObject *message = PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "replace");
    if (!message) return NULL;
    PyObject *error = PyObject_CallOneArg(type, message);
    if (!error) {
        Py_DECREF(message);
        return NULL;
    }
    PyObject *number = PyLong_FromLong((long)status);
    if (!number || PyObject_SetAttrString(error, "status", number) < 0 ||
        PyObject_SetAttrString(error, "message", message) < 0) {
        Py_XDECREF(number);
        Py_DECREF(message);
        Py_DECREF(error);
        return NULL;
    }
    Py_DECREF(number);
    Py_DECREF(message);
    PyErr_SetObject((PyObject *)Py_TYPE(error), error);
    Py_DECREF(error);
    return NULL;
}

/* Raises a status the binding itself decided on (a Python-side timeout), with its own text. */
static PyObject *raise_status_text(uform_status_t status, const char *text) {
    PyObject *type = status_errors[status] ? status_errors[status] : UFormError;
    PyObject *message = PyUnicode_FromString(text);
    if (!message) return NULL;
    PyObject *error = PyObject_CallOneArg(type, message);
    if (error) {
        PyObject *number = PyLong_FromLong((long)status);
        if (number && PyObject_SetAttrString(error, "status", number) == 0 &&
            PyObject_SetAttrString(error, "message", message) == 0)
            PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_XDECREF(number);
        Py_DECREF(error);
    }
    Py_DECREF(message);
    return NULL;
}

/* -------------------------------------------------------------------------------------------- */
/* Enums live in uform/__init__.py; they are looked up when a value is built or checked, by which
 * time the package has finished importing.                                                     */

static PyObject *package_enum(const char *name) {
    PyObject *package = PyImport_ImportModule("uform");
    if (!package) return NULL;
    PyObject *type = PyObject_GetAttrString(package, name);
    Py_DECREF(package);
    return type;
}

/* The enum member for `value`, or a plain int for a number this package does not know yet. */
static PyObject *enum_member(const char *name, long value) {
    PyObject *type = package_enum(name);
    if (!type) return NULL;
    PyObject *member = PyObject_CallFunction(type, "l", value);
    Py_DECREF(type);
    if (!member && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        member = PyLong_FromLong(value);
    }
    return member;
}

/* An optional class: 0 (no class) is None. */
static PyObject *optional_enum_member(const char *name, long value) {
    if (value == 0) Py_RETURN_NONE;
    return enum_member(name, value);
}

/* Reads an enum argument: None -> 0 when allowed, a plain int or a member of `name` whose value
 * lies in [low, high]; a member of another enum (or a bool) is a TypeError. */
static int parse_enum(PyObject *object, const char *name, const char *argument, long low, long high,
                      int none_allowed, long *value) {
    if (object == Py_None && none_allowed) {
        *value = 0;
        return 0;
    }
    if (!PyLong_Check(object) || PyBool_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be a uform.%s%s, not %.100s", argument, name,
                     none_allowed ? " or None" : "", Py_TYPE(object)->tp_name);
        return -1;
    }
    if (!PyLong_CheckExact(object)) {
        PyObject *type = package_enum(name);
        if (!type) return -1;
        int is_member = PyObject_IsInstance(object, type);
        Py_DECREF(type);
        if (is_member < 0) return -1;
        if (!is_member) {
            PyErr_Format(PyExc_TypeError, "%s must be a uform.%s%s, not %.100s", argument, name,
                         none_allowed ? " or None" : "", Py_TYPE(object)->tp_name);
            return -1;
        }
    }
    int overflow = 0;
    long number = PyLong_AsLongAndOverflow(object, &overflow);
    if (number == -1 && PyErr_Occurred()) return -1;
    if (overflow || number < low || number > high) {
        PyErr_Format(PyExc_ValueError, "%s: %R is not a uform.%s value", argument, object, name);
        return -1;
    }
    *value = number;
    return 0;
}

/* A non-negative integer that fits size_t; negative is ValueError, a non-int TypeError. */
static int parse_size(PyObject *object, const char *argument, size_t *value) {
    if (!PyIndex_Check(object) || PyBool_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", argument, Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *number = PyNumber_Index(object);
    if (!number) return -1;
    int overflow = 0;
    long long small = PyLong_AsLongLongAndOverflow(number, &overflow);
    if (small == -1 && PyErr_Occurred()) {
        Py_DECREF(number);
        return -1;
    }
    if (overflow < 0 || (overflow == 0 && small < 0)) {
        Py_DECREF(number);
        PyErr_Format(PyExc_ValueError, "%s must be non-negative, not %R", argument, object);
        return -1;
    }
    size_t result = PyLong_AsSize_t(number);
    Py_DECREF(number);
    if (result == (size_t)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s is too large: %R", argument, object);
        }
        return -1;
    }
    *value = result;
    return 0;
}

/* An address (int, not bool, non-negative, pointer-sized); 0 is NULL. */
static int parse_address(PyObject *object, const char *argument, void **address) {
    size_t value = 0;
    if (parse_size(object, argument, &value) < 0) return -1;
    if (sizeof(size_t) < sizeof(uintptr_t) && value > (size_t)UINTPTR_MAX) {
        PyErr_Format(PyExc_ValueError, "%s is not an address", argument);
        return -1;
    }
    *address = (void *)(uintptr_t)value;
    return 0;
}

/* A list of int32 ids (NUMA nodes, device positions); None is the empty list. Owned by the caller
 * through PyMem_Free. */
static int parse_ids(PyObject *object, const char *argument, int32_t **ids, size_t *count) {
    *ids = NULL;
    *count = 0;
    if (object == Py_None) return 0;
    if (PyUnicode_Check(object) || PyBytes_Check(object) || PyByteArray_Check(object) || !PySequence_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of int or None, not %.100s", argument,
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *items = PySequence_Fast(object, argument);
    if (!items) return -1;
    Py_ssize_t length = PySequence_Fast_GET_SIZE(items);
    int32_t *buffer = PyMem_Malloc(sizeof(int32_t) * (size_t)(length ? length : 1));
    if (!buffer) {
        Py_DECREF(items);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < length; ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        if (!PyLong_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be an int, not %.100s", argument, i,
                         Py_TYPE(item)->tp_name);
            goto fail;
        }
        int overflow = 0;
        long value = PyLong_AsLongAndOverflow(item, &overflow);
        if (value == -1 && PyErr_Occurred()) goto fail;
        if (overflow || value < INT32_MIN || value > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] is out of range: %R", argument, i, item);
            goto fail;
        }
        buffer[i] = (int32_t)value;
    }
    Py_DECREF(items);
    *ids = buffer;
    *count = (size_t)length;
    return 0;
fail:
    Py_DECREF(items);
    PyMem_Free(buffer);
    return -1;
}

/* -------------------------------------------------------------------------------------------- */
/* Callbacks                                                                                    */

/* What a verb's trampolines share: the Python callables and the first exception they raised. */
typedef struct call_context_t {
    PyObject *function;  /* called as function(task, thread) or function(first, count, thread); NULL: native */
    PyObject *progress;  /* called as progress(done, total), or NULL */
    PyObject *error;     /* the first exception raised, guarded by the GIL */
    atomic_int failed;   /* read without the GIL so later tasks skip taking it */
    void *owner;         /* the ExecutorObject running the call */
} call_context_t;

/* The executor whose Python callback this thread is running, if any: a callback calling back
 * into its own executor would wait on itself, so that is refused with a RuntimeError. */
static _Thread_local void *running_callback_of;

static int interpreter_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

/* Keeps the first exception; later ones are dropped (their tasks were already failing). */
static void record_error(call_context_t *context) {
    PyObject *type = NULL, *value = NULL, *traceback = NULL;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value && traceback) PyException_SetTraceback(value, traceback);
    if (!context->error && value) {
        context->error = value;
        value = NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    atomic_store(&context->failed, 1);
}

static uform_status_t call_python(call_context_t *context, size_t a, size_t b, size_t c, int arguments) {
    if (atomic_load_explicit(&context->failed, memory_order_relaxed)) return UFORM_STATUS_CALLBACK_FAILED;
    if (interpreter_finalizing()) return UFORM_STATUS_CALLBACK_FAILED;
    PyGILState_STATE gil = PyGILState_Ensure();
    uform_status_t status = UFORM_STATUS_OK;
    PyObject *args[3] = {PyLong_FromSize_t(a), PyLong_FromSize_t(b), arguments == 3 ? PyLong_FromSize_t(c) : NULL};
    PyObject *result = NULL;
    void *outer = running_callback_of;
    running_callback_of = context->owner;
    if (args[0] && args[1] && (arguments == 2 || args[2]))
        result = PyObject_Vectorcall(context->function, args, (size_t)arguments, NULL);
    running_callback_of = outer;
    Py_XDECREF(args[0]);
    Py_XDECREF(args[1]);
    Py_XDECREF(args[2]);
    if (result) {
        Py_DECREF(result);
    } else {
        record_error(context);
        status = UFORM_STATUS_CALLBACK_FAILED;
    }
    PyGILState_Release(gil);
    return status;
}

static uform_status_t task_trampoline(void *context, size_t task, size_t thread) {
    return call_python(context, task, thread, 0, 2);
}

static uform_status_t slice_trampoline(void *context, size_t first, size_t count, size_t thread) {
    return call_python(context, first, count, thread, 3);
}

static void progress_trampoline(void *opaque, size_t done, size_t total) {
    call_context_t *context = opaque;
    if (atomic_load_explicit(&context->failed, memory_order_relaxed) || interpreter_finalizing()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (!context->error) {
        void *outer = running_callback_of;
        running_callback_of = context->owner;
        PyObject *result = PyObject_CallFunction(context->progress, "nn", (Py_ssize_t)done, (Py_ssize_t)total);
        running_callback_of = outer;
        if (result)
            Py_DECREF(result);
        else
            record_error(context);
    }
    PyGILState_Release(gil);
}

static void context_clear(call_context_t *context) {
    Py_CLEAR(context->function);
    Py_CLEAR(context->progress);
    Py_CLEAR(context->error);
}

/* Raises the recorded exception, if any; answers 1 when it did. */
static int raise_recorded(call_context_t *context) {
    if (!context->error) return 0;
    PyErr_SetObject((PyObject *)Py_TYPE(context->error), context->error);
    return 1;
}

/* A Deferred dropped by a callback of the executor running its call cannot wait for that call
 * (it would wait on itself): its parts are parked here, guarded by the GIL, and released by
 * reap_orphans() once the call finished, from a thread that is not that executor's. */
typedef struct orphan_t {
    struct orphan_t *next;
    uform_deferred_t *handle;
    call_context_t *context;
    PyObject *executor;
    PyObject *keep;
} orphan_t;

static orphan_t *orphans;

static void reap_orphans(void) {
    orphan_t **link = &orphans;
    while (*link) {
        orphan_t *orphan = *link;
        if (running_callback_of == (void *)orphan->executor || uform_deferred_poll(orphan->handle) != UFORM_STATUS_OK) {
            link = &orphan->next;
            continue;
        }
        *link = orphan->next;
        uform_deferred_free(orphan->handle); /* finished: does not wait */
        context_clear(orphan->context);
        PyMem_Free(orphan->context);
        Py_XDECREF(orphan->keep);
        Py_XDECREF(orphan->executor);
        PyMem_Free(orphan);
    }
}

/* -------------------------------------------------------------------------------------------- */
/* Executor                                                                                     */

typedef struct {
    PyObject_HEAD
    uform_executor_t *executor;
    Py_ssize_t busy;      /* Python threads inside a C call on it (guarded by the GIL) */
    Py_ssize_t borrowers; /* meshes borrowing it; the last one's release frees it */
    int closed;
} ExecutorObject;

static int executor_open(ExecutorObject *self) {
    if (self->closed || !self->executor) {
        PyErr_SetString(PyExc_ValueError, "the executor is closed");
        return -1;
    }
    return 0;
}

/* Before a call that may wait on the executor: open, and not from one of its own callbacks. */
static int executor_check(ExecutorObject *self) {
    if (executor_open(self) < 0) return -1;
    if (running_callback_of == (void *)self) {
        PyErr_SetString(PyExc_RuntimeError, "a callback must not use the executor running it");
        return -1;
    }
    return 0;
}

static PyObject *executor_wrap(PyTypeObject *type, uform_executor_t *executor) {
    ExecutorObject *self = (ExecutorObject *)type->tp_alloc(type, 0);
    if (!self) {
        Py_BEGIN_ALLOW_THREADS
        uform_executor_free(executor);
        Py_END_ALLOW_THREADS
        return NULL;
    }
    self->executor = executor;
    return (PyObject *)self;
}

/* Frees the C executor now, unless a mesh still borrows it. */
static uform_status_t executor_release(ExecutorObject *self) {
    uform_status_t status = UFORM_STATUS_OK;
    if (self->executor && self->borrowers == 0) {
        uform_executor_t *executor = self->executor;
        self->executor = NULL;
        Py_BEGIN_ALLOW_THREADS
        status = uform_executor_free(executor);
        Py_END_ALLOW_THREADS
    }
    return status;
}

static void Executor_dealloc(ExecutorObject *self) {
    self->borrowers = 0;
    if (self->executor && running_callback_of == (void *)self) {
        /* Dropped by one of its own callbacks: freeing would join the thread doing it. Leak it. */
        self->executor = NULL;
    }
    if (self->executor) {
        uform_status_t status = executor_release(self);
        (void)status; /* FORKED in a child: the memory is released all the same */
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The placement every RAM-side constructor takes: memory_domains, deferred_limit, cpu_class.
 * On success the caller owns *domains (PyMem_Free). */
static int parse_ram_placement(PyObject *domains_object, PyObject *limit_object, PyObject *class_object,
                               int32_t **domains, size_t *domains_count, size_t *deferred_limit, long *cpu_class) {
    *deferred_limit = 0;
    *cpu_class = 0;
    if (limit_object && parse_size(limit_object, "deferred_limit", deferred_limit) < 0) return -1;
    if (parse_enum(class_object, "CPUClass", "cpu_class", 1, UFORM_CPU_CLASS_MONOVERSIONED, 1, cpu_class) < 0)
        return -1;
    return parse_ids(domains_object, "memory_domains", domains, domains_count);
}

/* The end every constructor shares: the C status raised, or the new executor wrapped. */
static PyObject *constructed(PyTypeObject *cls, uform_status_t status, uform_executor_t *executor) {
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return executor_wrap(cls, executor);
}

PyDoc_STRVAR(Executor_for_ram_doc,
             "for_ram($cls, /, threads=0, *, memory_domains=None, deferred_limit=0, cpu_class=None)\n"
             "--\n\n"
             "Spawns host threads for RAM-resident models.\n\n"
             "Calls uform_executor_for_ram.");

static PyObject *Executor_for_ram(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"threads", "memory_domains", "deferred_limit", "cpu_class", NULL};
    PyObject *threads_object = NULL, *domains_object = Py_None, *limit_object = NULL, *class_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:for_ram", keywords, &threads_object, &domains_object,
                                     &limit_object, &class_object))
        return NULL;
    size_t threads = 0, deferred_limit = 0, domains_count = 0;
    long cpu_class = 0;
    int32_t *domains = NULL;
    if (threads_object && parse_size(threads_object, "threads", &threads) < 0) return NULL;
    if (parse_ram_placement(domains_object, limit_object, class_object, &domains, &domains_count, &deferred_limit,
                            &cpu_class) < 0)
        return NULL;
    uform_executor_t *executor = NULL;
    uform_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_for_ram(domains, domains_count, (uform_cpu_class_t)cpu_class, threads, deferred_limit,
                                    &executor);
    Py_END_ALLOW_THREADS
    PyMem_Free(domains);
    return constructed(cls, status, executor);
}

PyDoc_STRVAR(Executor_on_pool_doc,
             "on_pool($cls, pool, /, *, memory_domains=None, deferred_limit=0, cpu_class=None)\n"
             "--\n\n"
             "Borrows a ForkUnion pool; raises UnsupportedError until borrowing is designed.\n\n"
             "Calls uform_executor_on_pool.");

static PyObject *Executor_on_pool(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"", "memory_domains", "deferred_limit", "cpu_class", NULL};
    PyObject *pool_object = NULL, *domains_object = Py_None, *limit_object = NULL, *class_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOO:on_pool", keywords, &pool_object, &domains_object,
                                     &limit_object, &class_object))
        return NULL;
    void *pool = NULL;
    size_t deferred_limit = 0, domains_count = 0;
    long cpu_class = 0;
    int32_t *domains = NULL;
    if (parse_address(pool_object, "pool", &pool) < 0) return NULL;
    if (parse_ram_placement(domains_object, limit_object, class_object, &domains, &domains_count, &deferred_limit,
                            &cpu_class) < 0)
        return NULL;
    uform_executor_t *executor = NULL;
    uform_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_on_pool(domains, domains_count, (uform_cpu_class_t)cpu_class, pool, deferred_limit,
                                    &executor);
    Py_END_ALLOW_THREADS
    PyMem_Free(domains);
    return constructed(cls, status, executor);
}

PyDoc_STRVAR(Executor_for_vram_doc,
             "for_vram($cls, /, devices=None, *, scratch_limit=0, deferred_limit=0, gpu_class=None,"
             " memory_domains=None, cpu_class=None)\n"
             "--\n\n"
             "Opens one submission stream on every named device.\n\n"
             "Calls uform_executor_for_vram.");

static PyObject *Executor_for_vram(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"devices",        "scratch_limit", "deferred_limit", "gpu_class",
                               "memory_domains", "cpu_class",     NULL};
    PyObject *devices_object = Py_None, *scratch_object = NULL, *limit_object = NULL, *gpu_object = Py_None,
             *domains_object = Py_None, *class_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOOOO:for_vram", keywords, &devices_object,
                                     &scratch_object, &limit_object, &gpu_object, &domains_object, &class_object))
        return NULL;
    size_t scratch_limit = 0, deferred_limit = 0;
    long gpu_class = 0, cpu_class = 0;
    if (scratch_object && parse_size(scratch_object, "scratch_limit", &scratch_limit) < 0) return NULL;
    if (limit_object && parse_size(limit_object, "deferred_limit", &deferred_limit) < 0) return NULL;
    if (parse_enum(gpu_object, "GPUClass", "gpu_class", 1, UFORM_GPU_CLASS_APPLE_METAL10, 1, &gpu_class) < 0)
        return NULL;
    if (parse_enum(class_object, "CPUClass", "cpu_class", 1, UFORM_CPU_CLASS_MONOVERSIONED, 1, &cpu_class) < 0)
        return NULL;
    int32_t *devices = NULL, *domains = NULL;
    size_t devices_count = 0, domains_count = 0;
    if (parse_ids(devices_object, "devices", &devices, &devices_count) < 0) return NULL;
    if (parse_ids(domains_object, "memory_domains", &domains, &domains_count) < 0) {
        PyMem_Free(devices);
        return NULL;
    }
    uform_executor_t *executor = NULL;
    uform_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_for_vram(devices, devices_count, (uform_gpu_class_t)gpu_class, domains, domains_count,
                                     (uform_cpu_class_t)cpu_class, NULL, 0, scratch_limit, deferred_limit,
                                     &executor);
    Py_END_ALLOW_THREADS
    PyMem_Free(devices);
    PyMem_Free(domains);
    return constructed(cls, status, executor);
}

PyDoc_STRVAR(Executor_drain_doc,
             "drain($self, /, mood=uform.Mood.PARKED)\n"
             "--\n\n"
             "Waits for every call submitted before it, then sets the idle mood.\n\n"
             "Calls uform_executor_drain.");

static PyObject *Executor_drain(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"mood", NULL};
    PyObject *mood_object = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:drain", keywords, &mood_object)) return NULL;
    long mood = UFORM_MOOD_PARKED;
    if (mood_object && parse_enum(mood_object, "Mood", "mood", UFORM_MOOD_SPINNING, UFORM_MOOD_PARKED, 0, &mood) < 0)
        return NULL;
    if (executor_check(self) < 0) return NULL;
    uform_status_t status;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_drain(self->executor, (uform_mood_t)mood);
    Py_END_ALLOW_THREADS
    self->busy--;
    if (status != UFORM_STATUS_OK) return raise_status(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Executor_enter_doc, "__enter__($self, /)\n--\n\nReturns the executor itself.");

static PyObject *Executor_enter(ExecutorObject *self, PyObject *unused) {
    if (executor_check(self) < 0) return NULL;
    return Py_NewRef(self);
}

/* Waits until no Python thread is inside a call on it, then frees it (or leaves that to the
 * last mesh borrowing it). */
static PyObject *executor_close(ExecutorObject *self) {
    if (running_callback_of == (void *)self) {
        PyErr_SetString(PyExc_RuntimeError, "a callback must not close the executor running it");
        return NULL;
    }
    if (self->closed) Py_RETURN_NONE;
    self->closed = 1;
    if (orphans) reap_orphans();
    while (self->busy > 0 && self->executor) {
        uform_executor_t *executor = self->executor;
        Py_BEGIN_ALLOW_THREADS
        (void)uform_executor_drain(executor, uform_executor_mood(executor));
        Py_END_ALLOW_THREADS
    }
    uform_status_t status = executor_release(self);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Executor_exit_doc,
             "__exit__($self, kind, value, traceback, /)\n"
             "--\n\n"
             "Closes it once its calls finish, or leaves that to its last live GPU arena.\n\n"
             "Calls uform_executor_free.");

static PyObject *Executor_exit(ExecutorObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "__exit__ expected 3 arguments, got %zd", nargs);
        return NULL;
    }
    return executor_close(self);
}

PyDoc_STRVAR(Executor_close_doc,
             "close($self, /)\n"
             "--\n\n"
             "Closes it once its calls finish, as leaving a with block does. Closing twice does nothing.\n\n"
             "Calls uform_executor_free.");

static PyObject *Executor_close(ExecutorObject *self, PyObject *unused) { return executor_close(self); }

/* ---- verbs ------------------------------------------------------------------------------------ */

typedef enum verb_t { VERB_FOR_N, VERB_FOR_N_DYNAMIC, VERB_FOR_THREADS, VERB_FOR_SLICES } verb_t;

typedef struct {
    PyObject_HEAD
    uform_deferred_t *handle;
    call_context_t *context; /* owned, freed after the handle: the call uses it until it ends */
    PyObject *executor;      /* keeps the Python executor alive while the call may run */
    PyObject *keep;          /* objects a native call's context refers to, kept alive for it */
} DeferredObject;

static uform_status_t dispatch(verb_t verb, uform_executor_t *executor, const uform_call_t *call, size_t n,
                               void *function, void *context) {
    switch (verb) {
    case VERB_FOR_N: return uform_executor_for_n(executor, call, n, (uform_task_t)function, context);
    case VERB_FOR_N_DYNAMIC: return uform_executor_for_n_dynamic(executor, call, n, (uform_task_t)function, context);
    case VERB_FOR_THREADS: return uform_executor_for_threads(executor, call, (uform_task_t)function, context);
    case VERB_FOR_SLICES: return uform_executor_for_slices(executor, call, n, (uform_slice_t)function, context);
    }
    return UFORM_STATUS_INVALID_ARGUMENT;
}

/* Runs one verb. `python_function` is a callable (then `native` is ignored), or NULL with
 * `native`/`native_context` the C function and its context. */
static PyObject *run_verb(ExecutorObject *self, verb_t verb, size_t n, PyObject *python_function, void *native,
                          void *native_context, PyObject *keep, int deferred, PyObject *progress) {
    if (progress == Py_None) progress = NULL;
    if (progress && !PyCallable_Check(progress)) {
        PyErr_Format(PyExc_TypeError, "progress must be callable or None, not %.100s", Py_TYPE(progress)->tp_name);
        return NULL;
    }
    if (executor_check(self) < 0) return NULL;
    if (orphans) reap_orphans();
    void *function = native;
    if (python_function) function = verb == VERB_FOR_SLICES ? (void *)slice_trampoline : (void *)task_trampoline;

    uform_call_t call = UFORM_CALL_INIT;
    uform_status_t status;
    if (!deferred) {
        call_context_t context = {python_function, progress, NULL, 0, self};
        call.progress = progress ? progress_trampoline : NULL;
        call.progress_context = &context;
        void *task_context = python_function ? (void *)&context : native_context;
        self->busy++;
        Py_BEGIN_ALLOW_THREADS
        status = dispatch(verb, self->executor, progress ? &call : NULL, n, function, task_context);
        Py_END_ALLOW_THREADS
        self->busy--;
        if (context.error) {
            raise_recorded(&context);
            Py_DECREF(context.error);
            return NULL;
        }
        if (status != UFORM_STATUS_OK) return raise_status(status);
        Py_RETURN_NONE;
    }

    DeferredObject *handle = PyObject_New(DeferredObject, &DeferredType);
    if (!handle) return NULL;
    handle->handle = NULL;
    handle->executor = Py_NewRef(self);
    handle->keep = Py_XNewRef(keep);
    handle->context = PyMem_Calloc(1, sizeof(call_context_t));
    if (!handle->context) {
        Py_DECREF(handle);
        return PyErr_NoMemory();
    }
    handle->context->function = Py_XNewRef(python_function);
    handle->context->progress = Py_XNewRef(progress);
    atomic_init(&handle->context->failed, 0);
    handle->context->owner = self;
    call.deferred = &handle->handle;
    call.progress = progress ? progress_trampoline : NULL;
    call.progress_context = handle->context;
    void *task_context = python_function ? (void *)handle->context : native_context;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = dispatch(verb, self->executor, &call, n, function, task_context);
    Py_END_ALLOW_THREADS
    self->busy--;
    if (status != UFORM_STATUS_OK) {
        handle->handle = NULL; /* a refused submission leaves no handle to free */
        raise_status(status);
        Py_DECREF(handle);
        return NULL;
    }
    return (PyObject *)handle;
}

static int parse_callable(PyObject *object, const char *argument) {
    if (!PyCallable_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be callable, not %.100s", argument, Py_TYPE(object)->tp_name);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(Executor_for_n_doc,
             "for_n($self, /, n, fn, *, dynamic=False, deferred=False, progress=None)\n"
             "--\n\n"
             "Calls fn(task, thread) once for every task in range(n) on the executor's threads.\n\n"
             "Split statically (thread t takes a contiguous range), or with dynamic=True one task at a\n"
             "time from a shared counter. The callable runs holding the GIL; the first exception it\n"
             "raises stops the call and is raised again here. deferred=True returns a Deferred at once;\n"
             "progress(done, total) runs on the executor's threads as tasks finish.\n\n"
             "Calls uform_executor_for_n or uform_executor_for_n_dynamic.");

static PyObject *Executor_for_n(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", "fn", "dynamic", "deferred", "progress", NULL};
    PyObject *n_object, *function, *progress = Py_None;
    int dynamic = 0, deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$ppO:for_n", keywords, &n_object, &function, &dynamic,
                                     &deferred, &progress))
        return NULL;
    size_t n;
    if (parse_size(n_object, "n", &n) < 0 || parse_callable(function, "fn") < 0) return NULL;
    return run_verb(self, dynamic ? VERB_FOR_N_DYNAMIC : VERB_FOR_N, n, function, NULL, NULL, NULL, deferred,
                    progress);
}

PyDoc_STRVAR(Executor_for_threads_doc,
             "for_threads($self, /, fn, *, deferred=False, progress=None)\n"
             "--\n\n"
             "Calls fn(thread, thread) once on every thread of the executor.\n\n"
             "Calls uform_executor_for_threads.");

static PyObject *Executor_for_threads(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"fn", "deferred", "progress", NULL};
    PyObject *function, *progress = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$pO:for_threads", keywords, &function, &deferred, &progress))
        return NULL;
    if (parse_callable(function, "fn") < 0) return NULL;
    return run_verb(self, VERB_FOR_THREADS, 0, function, NULL, NULL, NULL, deferred, progress);
}

PyDoc_STRVAR(Executor_for_slices_doc,
             "for_slices($self, /, n, fn, *, deferred=False, progress=None)\n"
             "--\n\n"
             "Splits range(n) into one contiguous slice per thread and calls fn(first, count, thread)\n"
             "for each non-empty slice.\n\n"
             "Calls uform_executor_for_slices.");

static PyObject *Executor_for_slices(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", "fn", "deferred", "progress", NULL};
    PyObject *n_object, *function, *progress = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$pO:for_slices", keywords, &n_object, &function, &deferred,
                                     &progress))
        return NULL;
    size_t n;
    if (parse_size(n_object, "n", &n) < 0 || parse_callable(function, "fn") < 0) return NULL;
    return run_verb(self, VERB_FOR_SLICES, n, function, NULL, NULL, NULL, deferred, progress);
}

/* Native verbs: `function` is the address of a C function (a ctypes CFUNCTYPE cast to an int,
 * a symbol from a cffi or ctypes library), `context` an address handed to it unchanged. */
static int parse_native(PyObject *function_object, PyObject *context_object, void **function, void **context) {
    if (PyBool_Check(function_object) || (PyLong_Check(function_object) && !PyLong_CheckExact(function_object) &&
                                          PyObject_HasAttrString(function_object, "_value_"))) {
        PyErr_SetString(PyExc_TypeError, "function must be an address (int), not a flag or an enum member");
        return -1;
    }
    if (parse_address(function_object, "function", function) < 0) return -1;
    /* Linux never maps the lowest 64 KiB (vm.mmap_min_addr), so no code lives there: a small
     * number is a mistake (a task index, an enum value), refused rather than jumped to. */
    if ((uintptr_t)*function < 65536) {
        PyErr_Format(PyExc_ValueError, "function must be the address of a C function, not %zu",
                     (size_t)(uintptr_t)*function);
        return -1;
    }
    if (context_object && parse_address(context_object, "context", context) < 0) return -1;
    return 0;
}

PyDoc_STRVAR(Executor_for_n_native_doc,
             "for_n_native($self, /, n, function, context=0, *, dynamic=False, deferred=False, progress=None,"
             " keep=None)\n"
             "--\n\n"
             "As for_n, calling the C function at address `function`, a uform_task_t\n"
             "`uform_status_t (*)(void *context, size_t task, size_t thread)`, with `context`, without\n"
             "the GIL. A deferred call keeps `keep` alive until the Deferred is released; the memory\n"
             "`context` points to must stay valid that long.\n\n"
             "Calls uform_executor_for_n or uform_executor_for_n_dynamic.");

static PyObject *Executor_for_n_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", "function", "context", "dynamic", "deferred", "progress", "keep", NULL};
    PyObject *n_object, *function_object, *context_object = NULL, *progress = Py_None, *keep = Py_None;
    int dynamic = 0, deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$ppOO:for_n_native", keywords, &n_object, &function_object,
                                     &context_object, &dynamic, &deferred, &progress, &keep))
        return NULL;
    size_t n;
    void *function = NULL, *context = NULL;
    if (parse_size(n_object, "n", &n) < 0 || parse_native(function_object, context_object, &function, &context) < 0)
        return NULL;
    return run_verb(self, dynamic ? VERB_FOR_N_DYNAMIC : VERB_FOR_N, n, NULL, function, context, keep, deferred,
                    progress);
}

PyDoc_STRVAR(Executor_for_threads_native_doc,
             "for_threads_native($self, /, function, context=0, *, deferred=False, progress=None, keep=None)\n"
             "--\n\n"
             "As for_threads, calling the C uform_task_t at address `function` without the GIL.\n\n"
             "Calls uform_executor_for_threads.");

static PyObject *Executor_for_threads_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"function", "context", "deferred", "progress", "keep", NULL};
    PyObject *function_object, *context_object = NULL, *progress = Py_None, *keep = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$pOO:for_threads_native", keywords, &function_object,
                                     &context_object, &deferred, &progress, &keep))
        return NULL;
    void *function = NULL, *context = NULL;
    if (parse_native(function_object, context_object, &function, &context) < 0) return NULL;
    return run_verb(self, VERB_FOR_THREADS, 0, NULL, function, context, keep, deferred, progress);
}

PyDoc_STRVAR(Executor_for_slices_native_doc,
             "for_slices_native($self, /, n, function, context=0, *, deferred=False, progress=None, keep=None)\n"
             "--\n\n"
             "As for_slices, calling the C function at address `function`, a uform_slice_t\n"
             "`uform_status_t (*)(void *context, size_t first, size_t count, size_t thread)`, without\n"
             "the GIL.\n\n"
             "Calls uform_executor_for_slices.");

static PyObject *Executor_for_slices_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", "function", "context", "deferred", "progress", "keep", NULL};
    PyObject *n_object, *function_object, *context_object = NULL, *progress = Py_None, *keep = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$pOO:for_slices_native", keywords, &n_object,
                                     &function_object, &context_object, &deferred, &progress, &keep))
        return NULL;
    size_t n;
    void *function = NULL, *context = NULL;
    if (parse_size(n_object, "n", &n) < 0 || parse_native(function_object, context_object, &function, &context) < 0)
        return NULL;
    return run_verb(self, VERB_FOR_SLICES, n, NULL, function, context, keep, deferred, progress);
}

/* ---- attributes ------------------------------------------------------------------------------- */

static PyObject *Executor_get_threads(ExecutorObject *self, void *unused) {
    if (executor_open(self) < 0) return NULL;
    return PyLong_FromSize_t(uform_executor_threads(self->executor));
}

static PyObject *Executor_get_cpu_class(ExecutorObject *self, void *unused) {
    if (executor_open(self) < 0) return NULL;
    return enum_member("CPUClass", (long)uform_executor_cpu_class(self->executor));
}

static PyObject *Executor_get_mood(ExecutorObject *self, void *unused) {
    if (executor_open(self) < 0) return NULL;
    return enum_member("Mood", (long)uform_executor_mood(self->executor));
}

static PyObject *Executor_get_closed(ExecutorObject *self, void *unused) { return PyBool_FromLong(self->closed); }

static PyObject *Executor_repr(ExecutorObject *self) {
    if (self->closed || !self->executor) return PyUnicode_FromFormat("<%s closed>", Py_TYPE(self)->tp_name);
    const char *name = uform_cpu_class_name(uform_executor_cpu_class(self->executor));
    return PyUnicode_FromFormat("<%s threads=%zu cpu_class=%s>", Py_TYPE(self)->tp_name,
                                uform_executor_threads(self->executor), name ? name : "?");
}

static PyMethodDef Executor_methods[] = {
    {"for_ram", (PyCFunction)(void (*)(void))Executor_for_ram, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     Executor_for_ram_doc},
    {"on_pool", (PyCFunction)(void (*)(void))Executor_on_pool, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     Executor_on_pool_doc},
    {"for_vram", (PyCFunction)(void (*)(void))Executor_for_vram, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     Executor_for_vram_doc},
    {"drain", (PyCFunction)(void (*)(void))Executor_drain, METH_VARARGS | METH_KEYWORDS, Executor_drain_doc},
    {"for_n", (PyCFunction)(void (*)(void))Executor_for_n, METH_VARARGS | METH_KEYWORDS, Executor_for_n_doc},
    {"for_threads", (PyCFunction)(void (*)(void))Executor_for_threads, METH_VARARGS | METH_KEYWORDS,
     Executor_for_threads_doc},
    {"for_slices", (PyCFunction)(void (*)(void))Executor_for_slices, METH_VARARGS | METH_KEYWORDS,
     Executor_for_slices_doc},
    {"for_n_native", (PyCFunction)(void (*)(void))Executor_for_n_native, METH_VARARGS | METH_KEYWORDS,
     Executor_for_n_native_doc},
    {"for_threads_native", (PyCFunction)(void (*)(void))Executor_for_threads_native, METH_VARARGS | METH_KEYWORDS,
     Executor_for_threads_native_doc},
    {"for_slices_native", (PyCFunction)(void (*)(void))Executor_for_slices_native, METH_VARARGS | METH_KEYWORDS,
     Executor_for_slices_native_doc},
    {"close", (PyCFunction)Executor_close, METH_NOARGS, Executor_close_doc},
    {"__enter__", (PyCFunction)Executor_enter, METH_NOARGS, Executor_enter_doc},
    {"__exit__", (PyCFunction)(void (*)(void))Executor_exit, METH_FASTCALL, Executor_exit_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Executor_getset[] = {
    {"threads", (getter)Executor_get_threads, NULL, "Threads a call runs on.", NULL},
    {"cpu_class", (getter)Executor_get_cpu_class, NULL, "The class its calls dispatch as: the pin or the derived one.",
     NULL},
    {"mood", (getter)Executor_get_mood, NULL, "What idle workers do between calls.", NULL},
    {"closed", (getter)Executor_get_closed, NULL, "Whether it was closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Executor_doc, "The threads or streams a verb runs on, shared across models and named by on and deferred.\n\n"
                           "Made by for_ram, for_vram or on_pool; runs one call at a time.");

static PyTypeObject ExecutorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Executor",
    .tp_basicsize = sizeof(ExecutorObject),
    .tp_dealloc = (destructor)Executor_dealloc,
    .tp_repr = (reprfunc)Executor_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Executor_doc,
    .tp_methods = Executor_methods,
    .tp_getset = Executor_getset,
};

/* -------------------------------------------------------------------------------------------- */
/* Deferred                                                                                     */

static void Deferred_dealloc(DeferredObject *self) {
    if (self->handle && running_callback_of == (void *)self->executor &&
        uform_deferred_poll(self->handle) != UFORM_STATUS_OK) {
        orphan_t *orphan = PyMem_Malloc(sizeof *orphan);
        if (orphan) {
            *orphan = (orphan_t){orphans, self->handle, self->context, self->executor, self->keep};
            orphans = orphan;
            PyObject_Free(self);
            return;
        }
        /* Without memory to park it, leak the call's parts rather than wait on ourselves. */
        PyObject_Free(self);
        return;
    }
    if (self->handle) {
        uform_deferred_t *handle = self->handle;
        self->handle = NULL;
        /* An unfinished call is waited for: its callbacks need the GIL meanwhile. */
        Py_BEGIN_ALLOW_THREADS
        uform_deferred_free(handle);
        Py_END_ALLOW_THREADS
    }
    if (self->context) {
        context_clear(self->context);
        PyMem_Free(self->context);
    }
    Py_XDECREF(self->executor);
    Py_XDECREF(self->keep);
    PyObject_Free(self);
}

/* The outcome of a finished call: its first Python exception, else its status. */
static PyObject *deferred_outcome(DeferredObject *self, uform_status_t status) {
    if (raise_recorded(self->context)) return NULL;
    if (status != UFORM_STATUS_OK) return raise_status(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Deferred_done_doc, "done($self, /)\n--\n\nWhether the call finished; never blocks.\n\n"
                                "Calls uform_deferred_poll.");

static PyObject *Deferred_done(DeferredObject *self, PyObject *unused) {
    uform_status_t status = uform_deferred_poll(self->handle);
    if (status == UFORM_STATUS_OK) Py_RETURN_TRUE;
    if (status == UFORM_STATUS_TIMEOUT) Py_RETURN_FALSE;
    return raise_status(status);
}

PyDoc_STRVAR(Deferred_wait_doc,
             "wait($self, /, timeout=None)\n"
             "--\n\n"
             "Waits for the call, at most `timeout` seconds (None: as long as it takes), and raises\n"
             "its failure. Raises uform.TimeoutError (a builtin TimeoutError) if it is still running.\n\n"
             "Calls uform_deferred_wait.");

static PyObject *Deferred_wait(DeferredObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"timeout", NULL};
    PyObject *timeout_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:wait", keywords, &timeout_object)) return NULL;
    double timeout = -1.0;
    if (timeout_object != Py_None) {
        timeout = PyFloat_AsDouble(timeout_object);
        if (timeout == -1.0 && PyErr_Occurred()) return NULL;
        if (isnan(timeout) || timeout < 0) {
            PyErr_Format(PyExc_ValueError, "timeout must be a non-negative number or None, not %R", timeout_object);
            return NULL;
        }
    }
    /* Wait in short slices so Ctrl-C reaches the waiting thread. */
    const double slice = 0.05;
    double waited = 0.0;
    for (;;) {
        double step = timeout < 0 ? slice : fmin(slice, timeout - waited);
        if (step < 0) step = 0;
        uform_status_t status;
        Py_BEGIN_ALLOW_THREADS
        status = uform_deferred_wait(self->handle, step);
        Py_END_ALLOW_THREADS
        /* TIMEOUT is ambiguous: the call may have finished with TIMEOUT as its own status. */
        if (status != UFORM_STATUS_TIMEOUT || uform_deferred_poll(self->handle) == UFORM_STATUS_OK)
            return deferred_outcome(self, status);
        waited += step;
        if (PyErr_CheckSignals() < 0) return NULL;
        if (timeout >= 0 && waited >= timeout) {
            char text[128];
            snprintf(text, sizeof text, "the deferred call is still running after %g s", timeout);
            return raise_status_text(UFORM_STATUS_TIMEOUT, text);
        }
    }
}

PyDoc_STRVAR(Deferred_progress_doc, "progress($self, /)\n--\n\nTasks finished so far and in total, as (done, total).\n\n"
                                    "Calls uform_deferred_progress.");

static PyObject *Deferred_progress(DeferredObject *self, PyObject *unused) {
    size_t done = 0, total = 0;
    uform_status_t status = uform_deferred_progress(self->handle, &done, &total);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return Py_BuildValue("(nn)", (Py_ssize_t)done, (Py_ssize_t)total);
}

/* `await deferred`: waits in the running loop's default executor, so the loop never blocks. */
static PyObject *Deferred_await(DeferredObject *self) {
    PyObject *asyncio = PyImport_ImportModule("asyncio");
    if (!asyncio) return NULL;
    PyObject *loop = PyObject_CallMethod(asyncio, "get_running_loop", NULL);
    Py_DECREF(asyncio);
    if (!loop) return NULL;
    PyObject *wait = PyObject_GetAttrString((PyObject *)self, "wait");
    if (!wait) {
        Py_DECREF(loop);
        return NULL;
    }
    PyObject *future = PyObject_CallMethod(loop, "run_in_executor", "OO", Py_None, wait);
    Py_DECREF(wait);
    Py_DECREF(loop);
    if (!future) return NULL;
    PyObject *iterator = PyObject_CallMethod(future, "__await__", NULL);
    Py_DECREF(future);
    return iterator;
}

static PyMethodDef Deferred_methods[] = {
    {"done", (PyCFunction)Deferred_done, METH_NOARGS, Deferred_done_doc},
    {"wait", (PyCFunction)(void (*)(void))Deferred_wait, METH_VARARGS | METH_KEYWORDS, Deferred_wait_doc},
    {"progress", (PyCFunction)Deferred_progress, METH_NOARGS, Deferred_progress_doc},
    {NULL, NULL, 0, NULL},
};

static PyAsyncMethods Deferred_async = {.am_await = (unaryfunc)Deferred_await};

PyDoc_STRVAR(Deferred_doc, "A call running on an executor's own threads: poll it, wait for it, or await it.");

static PyTypeObject DeferredType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Deferred",
    .tp_basicsize = sizeof(DeferredObject),
    .tp_dealloc = (destructor)Deferred_dealloc,
    .tp_as_async = &Deferred_async,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Deferred_doc,
    .tp_methods = Deferred_methods,
};

/* -------------------------------------------------------------------------------------------- */
/* MeshOptions                                                                                  */

typedef struct {
    PyObject_HEAD
    Py_ssize_t host_domain_index;
    Py_ssize_t host_domain_count;
    Py_ssize_t gpus_per_multimem_domain;
    PyObject *directory; /* None, str, bytes or os.PathLike, as given */
    PyObject *job;       /* None or str */
    double timeout_seconds;
    int initialized; /* __init__ ran once: the options are immutable after */
} MeshOptionsObject;

static int parse_count(PyObject *object, const char *argument, Py_ssize_t *value) {
    size_t size = 0;
    if (parse_size(object, argument, &size) < 0) return -1;
    if (size > (size_t)PY_SSIZE_T_MAX) {
        PyErr_Format(PyExc_ValueError, "%s is too large", argument);
        return -1;
    }
    *value = (Py_ssize_t)size;
    return 0;
}

static int MeshOptions_init(MeshOptionsObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"host_domain_index", "host_domain_count", "gpus_per_multimem_domain",
                               "directory",         "job",               "timeout_seconds",
                               NULL};
    PyObject *index_object = NULL, *count_object = NULL, *multimem_object = NULL, *directory = Py_None,
             *job = Py_None, *timeout_object = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOOOO:MeshOptions", keywords, &index_object, &count_object,
                                     &multimem_object, &directory, &job, &timeout_object))
        return -1;
    if (self->initialized) {
        PyErr_SetString(PyExc_TypeError, "MeshOptions are immutable");
        return -1;
    }
    Py_ssize_t index = 0, count = 0, multimem = 0;
    double timeout = 0.0;
    if (index_object && parse_count(index_object, "host_domain_index", &index) < 0) return -1;
    if (count_object && parse_count(count_object, "host_domain_count", &count) < 0) return -1;
    if (multimem_object && parse_count(multimem_object, "gpus_per_multimem_domain", &multimem) < 0) return -1;
    if (timeout_object) {
        if (!PyFloat_Check(timeout_object) && (!PyLong_Check(timeout_object) || PyBool_Check(timeout_object))) {
            PyErr_Format(PyExc_TypeError, "timeout_seconds must be a float, not %.100s",
                         Py_TYPE(timeout_object)->tp_name);
            return -1;
        }
        timeout = PyFloat_AsDouble(timeout_object);
        if (timeout == -1.0 && PyErr_Occurred()) return -1;
        if (!isfinite(timeout) || timeout < 0) {
            PyErr_Format(PyExc_ValueError, "timeout_seconds must be finite and non-negative, not %R", timeout_object);
            return -1;
        }
    }
    if (directory != Py_None) {
        PyObject *path = PyOS_FSPath(directory);
        if (!path) return -1;
        Py_ssize_t length = 0;
        const char *text = NULL;
        PyObject *encoded = NULL;
        if (PyUnicode_Check(path)) {
            encoded = PyUnicode_EncodeFSDefault(path);
            if (!encoded) {
                Py_DECREF(path);
                return -1;
            }
        } else {
            encoded = Py_NewRef(path);
        }
        text = PyBytes_AS_STRING(encoded);
        length = PyBytes_GET_SIZE(encoded);
        int bad = (Py_ssize_t)strlen(text) != length || length == 0;
        Py_DECREF(encoded);
        Py_DECREF(path);
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "directory must be a non-empty path without NUL characters");
            return -1;
        }
    }
    if (job != Py_None) {
        if (!PyUnicode_Check(job)) {
            PyErr_Format(PyExc_TypeError, "job must be a str or None, not %.100s", Py_TYPE(job)->tp_name);
            return -1;
        }
        Py_ssize_t length = 0;
        const char *text = PyUnicode_AsUTF8AndSize(job, &length);
        if (!text) return -1;
        if ((Py_ssize_t)strlen(text) != length) {
            PyErr_SetString(PyExc_ValueError, "job must not contain NUL characters");
            return -1;
        }
    }
    self->host_domain_index = index;
    self->host_domain_count = count;
    self->gpus_per_multimem_domain = multimem;
    self->directory = directory == Py_None ? NULL : Py_NewRef(directory);
    self->job = job == Py_None ? NULL : Py_NewRef(job);
    self->timeout_seconds = timeout;
    self->initialized = 1;
    return 0;
}

/* __init__ as a method too (METH_COEXIST) so introspection sees its real signature. */
static PyObject *MeshOptions_init_method(MeshOptionsObject *self, PyObject *args, PyObject *kwargs) {
    if (MeshOptions_init(self, args, kwargs) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Validation and storage happen in __init__; a bare instance holds the defaults. */
static PyObject *MeshOptions_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return type->tp_alloc(type, 0);
}

static void MeshOptions_dealloc(MeshOptionsObject *self) {
    Py_XDECREF(self->directory);
    Py_XDECREF(self->job);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *MeshOptions_repr(MeshOptionsObject *self) {
    PyObject *timeout = PyFloat_FromDouble(self->timeout_seconds);
    if (!timeout) return NULL;
    PyObject *text = PyUnicode_FromFormat(
        "MeshOptions(host_domain_index=%zd, host_domain_count=%zd, gpus_per_multimem_domain=%zd, directory=%R, "
        "job=%R, timeout_seconds=%R)",
        self->host_domain_index, self->host_domain_count, self->gpus_per_multimem_domain,
        self->directory ? self->directory : Py_None, self->job ? self->job : Py_None, timeout);
    Py_DECREF(timeout);
    return text;
}

static PyMemberDef MeshOptions_members[] = {
    {"host_domain_index", T_PYSSIZET, offsetof(MeshOptionsObject, host_domain_index), READONLY,
     "This process's index among host_domain_count."},
    {"host_domain_count", T_PYSSIZET, offsetof(MeshOptionsObject, host_domain_count), READONLY,
     "Processes in the run; 0 means 1 (no peers)."},
    {"gpus_per_multimem_domain", T_PYSSIZET, offsetof(MeshOptionsObject, gpus_per_multimem_domain), READONLY,
     "GPUs one NVLink multicast domain spans; 0 derives it."},
    {"directory", T_OBJECT, offsetof(MeshOptionsObject, directory), READONLY,
     "The directory every host sees; required with peers."},
    {"job", T_OBJECT, offsetof(MeshOptionsObject, job), READONLY, "The run's unique plain name; required with peers."},
    {"timeout_seconds", T_DOUBLE, offsetof(MeshOptionsObject, timeout_seconds), READONLY,
     "Bound on every wait for a peer; 0 means 120."},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(MeshOptions_init_doc,
             "__init__($self, /, *, host_domain_index=0, host_domain_count=0, gpus_per_multimem_domain=0,"
             " directory=None, job=None, timeout_seconds=0.0)\n"
             "--\n\n"
             "Where this process sits among the processes training one model, and how they meet.");

static PyMethodDef MeshOptions_methods[] = {
    {"__init__", (PyCFunction)(void (*)(void))MeshOptions_init_method, METH_VARARGS | METH_KEYWORDS | METH_COEXIST,
     MeshOptions_init_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(MeshOptions_doc,
             "MeshOptions(*, host_domain_index=0, host_domain_count=0, gpus_per_multimem_domain=0,"
             " directory=None, job=None, timeout_seconds=0.0)\n"
             "--\n\n"
             "Where this process sits among the processes training one model, and how they meet.");

static PyTypeObject MeshOptionsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.MeshOptions",
    .tp_basicsize = sizeof(MeshOptionsObject),
    .tp_dealloc = (destructor)MeshOptions_dealloc,
    .tp_repr = (reprfunc)MeshOptions_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = MeshOptions_doc,
    .tp_members = MeshOptions_members,
    .tp_methods = MeshOptions_methods,
    .tp_init = (initproc)MeshOptions_init,
    .tp_new = MeshOptions_new,
};

/* -------------------------------------------------------------------------------------------- */
/* Mesh                                                                                         */

typedef struct {
    PyObject_HEAD
    uform_mesh_t *mesh;
    ExecutorObject *executor; /* borrowed by the mesh; kept open until the mesh is released */
} MeshObject;

static void Mesh_dealloc(MeshObject *self) {
    if (self->mesh) {
        uform_mesh_t *mesh = self->mesh;
        self->mesh = NULL;
        Py_BEGIN_ALLOW_THREADS
        uform_mesh_free(mesh);
        Py_END_ALLOW_THREADS
    }
    if (self->executor) {
        self->executor->borrowers--;
        /* An executor closed while borrowed is freed by its last borrower. */
        if (self->executor->closed && self->executor->borrowers == 0) (void)executor_release(self->executor);
        Py_CLEAR(self->executor);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(Mesh_bootstrap_doc, "bootstrap($cls, executor, options, /)\n"
                                 "--\n\n"
                                 "Joins this process to the run's mesh.\n\n"
                                 "Calls uform_mesh_bootstrap.");

static PyObject *Mesh_bootstrap(PyTypeObject *cls, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "bootstrap() takes exactly 2 positional arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyObject_TypeCheck(args[0], &ExecutorType)) {
        PyErr_Format(PyExc_TypeError, "executor must be a uform.Executor, not %.100s", Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    if (args[1] != Py_None && !PyObject_TypeCheck(args[1], &MeshOptionsType)) {
        PyErr_Format(PyExc_TypeError, "options must be a uform.MeshOptions or None, not %.100s",
                     Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    ExecutorObject *executor = (ExecutorObject *)args[0];
    if (executor_check(executor) < 0) return NULL;
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    PyObject *directory = NULL, *job = NULL;
    const uform_mesh_options_t *options_pointer = NULL;
    if (args[1] != Py_None) {
        MeshOptionsObject *given = (MeshOptionsObject *)args[1];
        options.host_domain_index = (size_t)given->host_domain_index;
        options.host_domain_count = (size_t)given->host_domain_count;
        options.gpus_per_multimem_domain = (size_t)given->gpus_per_multimem_domain;
        options.timeout_seconds = given->timeout_seconds;
        if (given->directory) {
            if (!PyUnicode_FSConverter(given->directory, &directory)) return NULL;
            options.directory = PyBytes_AS_STRING(directory);
        }
        if (given->job) {
            job = PyUnicode_AsUTF8String(given->job);
            if (!job) {
                Py_XDECREF(directory);
                return NULL;
            }
            options.job = PyBytes_AS_STRING(job);
        }
        options_pointer = &options;
    }
    MeshObject *self = (MeshObject *)cls->tp_alloc(cls, 0);
    if (!self) {
        Py_XDECREF(directory);
        Py_XDECREF(job);
        return NULL;
    }
    uform_mesh_t *mesh = NULL;
    uform_status_t status;
    executor->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = uform_mesh_bootstrap(executor->executor, options_pointer, &mesh);
    Py_END_ALLOW_THREADS
    executor->busy--;
    Py_XDECREF(directory);
    Py_XDECREF(job);
    if (status != UFORM_STATUS_OK) {
        raise_status(status);
        Py_DECREF(self);
        return NULL;
    }
    self->mesh = mesh;
    self->executor = (ExecutorObject *)Py_NewRef(executor);
    executor->borrowers++;
    return (PyObject *)self;
}

PyDoc_STRVAR(Mesh_describe_doc, "describe($self, /)\n"
                                "--\n\n"
                                "The mesh's shape and this process's place in it.\n\n"
                                "Calls uform_mesh_describe.");

static PyObject *Mesh_describe(MeshObject *self, PyObject *unused) {
    uform_mesh_description_t description;
    memset(&description, 0, sizeof description);
    uform_status_t status = uform_mesh_describe(self->mesh, &description);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    PyObject *result = PyStructSequence_New(MeshDescriptionType);
    if (!result) return NULL;
    PyObject *items[7] = {
        PyLong_FromSize_t(description.gpus_per_host_domain),
        PyLong_FromSize_t(description.gpus_per_multimem_domain),
        PyLong_FromSize_t(description.gpus_per_colocated_domain),
        PyLong_FromSize_t(description.host_domain_index),
        PyLong_FromSize_t(description.first_gpu_index),
        enum_member("MultimemTier", (long)description.multimem_tier),
        optional_enum_member("GPUClass", (long)description.gpu_class),
    };
    int failed = 0;
    for (int i = 0; i < 7; ++i) {
        if (!items[i]) failed = 1;
        PyStructSequence_SET_ITEM(result, i, items[i] ? items[i] : Py_NewRef(Py_None));
    }
    if (failed) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

static PyMethodDef Mesh_methods[] = {
    {"bootstrap", (PyCFunction)(void (*)(void))Mesh_bootstrap, METH_FASTCALL | METH_CLASS, Mesh_bootstrap_doc},
    {"describe", (PyCFunction)Mesh_describe, METH_NOARGS, Mesh_describe_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Mesh_doc, "One process's place among the processes of a run, borrowed by every trainer.");

static PyTypeObject MeshType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Mesh",
    .tp_basicsize = sizeof(MeshObject),
    .tp_dealloc = (destructor)Mesh_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Mesh_doc,
    .tp_methods = Mesh_methods,
};

/* -------------------------------------------------------------------------------------------- */
/* Struct sequences                                                                             */

static PyStructSequence_Field GPUDevice_fields[] = {
    {"vendor", "The vendor whose runtime drives the device."},
    {"vendor_ordinal", "The device's ordinal in its vendor's runtime, as nvidia-smi or rocm-smi list it."},
    {"gpu_class", "The class whose kernels run on it, or None."},
    {"compute_units", "Streaming multiprocessors or compute units."},
    {"memory_bytes", "Device memory in bytes."},
    {"name", "The vendor's own name for the device."},
    {NULL, NULL},
};

static PyStructSequence_Desc GPUDevice_desc = {
    "uform.lib.GPUDevice", "One GPU this process can drive, its position in gpu_devices() being its ordinal.",
    GPUDevice_fields, 6};

static PyStructSequence_Field MeshDescription_fields[] = {
    {"gpus_per_host_domain", "GPUs one process drives."},
    {"gpus_per_multimem_domain", "GPUs one NVLink domain spans."},
    {"gpus_per_colocated_domain", "GPUs in the whole run."},
    {"host_domain_index", "This process's index among the run's processes."},
    {"first_gpu_index", "The run-wide index of this process's first GPU."},
    {"multimem_tier", "How its NVLink domains reduce."},
    {"gpu_class", "The class every GPU of the run dispatches as, or None."},
    {NULL, NULL},
};

static PyStructSequence_Desc MeshDescription_desc = {
    "uform.lib.MeshDescription", "What a mesh reports about itself, as uform_mesh_description_t holds it.",
    MeshDescription_fields, 7};

/* -------------------------------------------------------------------------------------------- */
/* Module functions                                                                             */

PyDoc_STRVAR(capabilities_compiled_doc, "capabilities_compiled($module, /)\n--\n\n"
                                        "The hardware capabilities this binary was compiled with.\n\n"
                                        "Calls uform_capabilities_compiled.");

static PyObject *module_capabilities_compiled(PyObject *module, PyObject *unused) {
    return PyUnicode_FromString(uform_capabilities_compiled());
}

PyDoc_STRVAR(capabilities_available_doc, "capabilities_available($module, /)\n--\n\n"
                                         "The hardware capabilities this machine offers at runtime.\n\n"
                                         "Calls uform_capabilities_available.");

static PyObject *module_capabilities_available(PyObject *module, PyObject *unused) {
    const char *text;
    Py_BEGIN_ALLOW_THREADS
    text = uform_capabilities_available();
    Py_END_ALLOW_THREADS
    return PyUnicode_FromString(text);
}

static PyObject *gpu_device_new(const uform_gpu_device_t *device) {
    PyObject *result = PyStructSequence_New(GPUDeviceType);
    if (!result) return NULL;
    size_t name_length = strnlen(device->name, UFORM_GPU_NAME_CAPACITY);
    PyObject *items[6] = {
        enum_member("GPUVendor", (long)device->vendor),
        PyLong_FromUnsignedLong(device->vendor_ordinal),
        optional_enum_member("GPUClass", (long)device->gpu_class),
        PyLong_FromUnsignedLong(device->compute_units),
        PyLong_FromUnsignedLongLong(device->memory_bytes),
        PyUnicode_DecodeUTF8(device->name, (Py_ssize_t)name_length, "replace"),
    };
    int failed = 0;
    for (int i = 0; i < 6; ++i) {
        if (!items[i]) failed = 1;
        PyStructSequence_SET_ITEM(result, i, items[i] ? items[i] : Py_NewRef(Py_None));
    }
    if (failed) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

PyDoc_STRVAR(gpu_devices_doc, "gpu_devices($module, /)\n--\n\n"
                              "Every GPU this process can drive, a device's position being its ordinal.\n\n"
                              "Calls uform_gpu_devices.");

static PyObject *module_gpu_devices(PyObject *module, PyObject *unused) {
    uform_gpu_device_t *devices = NULL;
    size_t capacity = 0, count = 0;
    for (;;) {
        uform_status_t status;
        Py_BEGIN_ALLOW_THREADS
        status = uform_gpu_devices(devices, capacity, &count);
        Py_END_ALLOW_THREADS
        if (status != UFORM_STATUS_OK) {
            PyMem_Free(devices);
            return raise_status(status);
        }
        if (count <= capacity) break;
        PyMem_Free(devices);
        capacity = count;
        devices = PyMem_Calloc(capacity, sizeof(uform_gpu_device_t));
        if (!devices) return PyErr_NoMemory();
    }
    PyObject *result = PyTuple_New((Py_ssize_t)count);
    for (size_t i = 0; result && i < count; ++i) {
        PyObject *device = gpu_device_new(&devices[i]);
        if (!device) Py_CLEAR(result);
        else PyTuple_SET_ITEM(result, (Py_ssize_t)i, device);
    }
    PyMem_Free(devices);
    return result;
}

PyDoc_STRVAR(version_doc, "version($module, /)\n--\n\nThe C library's version at run time, e.g. \"4.0.0-rc.1\".\n\n"
                          "Calls uform_version.");

static PyObject *module_version(PyObject *module, PyObject *unused) { return PyUnicode_FromString(uform_version()); }

PyDoc_STRVAR(info_doc, "info($module, /, json=False)\n--\n\n"
                       "What `uform info` prints: version, capabilities, CPU class, NUMA domains, GPUs;\n"
                       "one JSON object with json=True.\n\n"
                       "Calls uform_info_write.");

static PyObject *module_info(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"json", NULL};
    int json = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:info", keywords, &json)) return NULL;
    uform_info_format_t format = json ? UFORM_INFO_JSON : UFORM_INFO_TEXT;
    size_t capacity = 4096, length = 0;
    for (;;) {
        char *buffer = PyMem_Malloc(capacity);
        if (!buffer) return PyErr_NoMemory();
        uform_status_t status;
        Py_BEGIN_ALLOW_THREADS
        status = uform_info_write(format, buffer, capacity, &length);
        Py_END_ALLOW_THREADS
        if (status != UFORM_STATUS_OK) {
            PyMem_Free(buffer);
            return raise_status(status);
        }
        if (length < capacity) {
            PyObject *text = PyUnicode_DecodeUTF8(buffer, (Py_ssize_t)length, "replace");
            PyMem_Free(buffer);
            return text;
        }
        PyMem_Free(buffer);
        capacity = length + 1;
    }
}

PyDoc_STRVAR(cpu_class_derived_doc, "cpu_class_derived($module, /)\n--\n\n"
                                    "The highest CPU class this CPU and OS can run.\n\n"
                                    "Calls uform_cpu_class_derived.");

static PyObject *module_cpu_class_derived(PyObject *module, PyObject *unused) {
    return enum_member("CPUClass", (long)uform_cpu_class_derived());
}

PyDoc_STRVAR(default_threads_doc, "default_threads($module, /)\n--\n\n"
                                  "The threads for_ram(0) takes: n - n/8 of the CPUs this process may use.\n\n"
                                  "Calls uform_default_threads.");

static PyObject *module_default_threads(PyObject *module, PyObject *unused) {
    size_t threads;
    Py_BEGIN_ALLOW_THREADS
    threads = uform_default_threads();
    Py_END_ALLOW_THREADS
    return PyLong_FromSize_t(threads);
}

static PyMethodDef module_methods[] = {
    {"capabilities_compiled", module_capabilities_compiled, METH_NOARGS, capabilities_compiled_doc},
    {"capabilities_available", module_capabilities_available, METH_NOARGS, capabilities_available_doc},
    {"gpu_devices", module_gpu_devices, METH_NOARGS, gpu_devices_doc},
    {"version", module_version, METH_NOARGS, version_doc},
    {"info", (PyCFunction)(void (*)(void))module_info, METH_VARARGS | METH_KEYWORDS, info_doc},
    {"cpu_class_derived", module_cpu_class_derived, METH_NOARGS, cpu_class_derived_doc},
    {"default_threads", module_default_threads, METH_NOARGS, default_threads_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "uform.lib", "The CPython extension over libuform; import names from `uform`.", -1,
    module_methods,        NULL,
    NULL,                  NULL,
    NULL,
};

/* -------------------------------------------------------------------------------------------- */
/* Exceptions                                                                                   */

typedef struct {
    uform_status_t status;
    const char *name;
    const char *builtin; /* a builtin exception it also derives from, or NULL */
    const char *doc;
} error_spec_t;

static const error_spec_t error_specs[] = {
    {UFORM_STATUS_UNSUPPORTED, "UnsupportedError", NULL, "Not supported by this build, this machine or this design."},
    {UFORM_STATUS_CONTENDED, "ContendedError", NULL,
     "Another call holds the executor, or its deferred table is full."},
    {UFORM_STATUS_INVALID_ARGUMENT, "InvalidArgumentError", "ValueError", "An argument the C library refused."},
    {UFORM_STATUS_OUT_OF_MEMORY, "OutOfMemoryError", NULL, "Memory, scratch or staging ran out."},
    {UFORM_STATUS_NOT_FOUND, "NotFoundError", NULL, "No such device, domain or entry."},
    {UFORM_STATUS_DEVICE_FAULT, "DeviceFaultError", NULL, "The device or its driver failed."},
    {UFORM_STATUS_TIMEOUT, "TimeoutError", "TimeoutError", "The wait timed out; also a builtin TimeoutError."},
    {UFORM_STATUS_MISMATCH, "MismatchError", NULL, "Peers or inputs disagree."},
    {UFORM_STATUS_IO_ERROR, "UFormIOError", "OSError", "An input/output error; also a builtin OSError."},
    {UFORM_STATUS_INTERRUPTED, "UFormInterruptedError", "InterruptedError",
     "Interrupted; also a builtin InterruptedError."},
    {UFORM_STATUS_FORKED, "ForkedError", NULL, "The object was inherited across fork() and cannot be used in the child."},
    {UFORM_STATUS_CALLBACK_FAILED, "CallbackFailedError", NULL, "A callback reported a failure."},
    {UFORM_STATUS_MALFORMED, "MalformedError", NULL, "A malformed hardware description or input text."},
};

static int add_errors(PyObject *module) {
    UFormError = PyErr_NewExceptionWithDoc(
        "uform.lib.UFormError",
        "Base of every uform error; `status` is the C uform_status_t, `message` the library's detail.",
        PyExc_Exception, NULL);
    if (!UFormError || PyModule_AddObjectRef(module, "UFormError", UFormError) < 0) return -1;
    PyObject *builtins = PyEval_GetBuiltins(); /* borrowed */
    for (size_t i = 0; i < sizeof error_specs / sizeof error_specs[0]; ++i) {
        const error_spec_t *spec = &error_specs[i];
        PyObject *bases = NULL;
        if (spec->builtin) {
            PyObject *builtin = PyDict_GetItemString(builtins, spec->builtin);
            if (!builtin) {
                PyErr_Format(PyExc_SystemError, "no builtin %s", spec->builtin);
                return -1;
            }
            bases = PyTuple_Pack(2, UFormError, builtin);
        } else {
            bases = PyTuple_Pack(1, UFormError);
        }
        if (!bases) return -1;
        PyObject *dict = Py_BuildValue("{s:i}", "status", (int)spec->status);
        if (!dict) {
            Py_DECREF(bases);
            return -1;
        }
        char qualified[96];
        snprintf(qualified, sizeof qualified, "uform.lib.%s", spec->name);
        PyObject *type = PyErr_NewExceptionWithDoc(qualified, spec->doc, bases, dict);
        Py_DECREF(bases);
        Py_DECREF(dict);
        if (!type) return -1;
        status_errors[spec->status] = type; /* the module keeps the other reference */
        if (PyModule_AddObjectRef(module, spec->name, type) < 0) return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit_lib(void) {
    /* The headers this was compiled with must describe the library it runs on. */
    if (strcmp(uform_version(), UFORM_VERSION_STRING) != 0) {
        PyErr_Format(PyExc_ImportError, "uform.lib was compiled against libuform %s but runs on %s",
                     UFORM_VERSION_STRING, uform_version());
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_definition);
    if (!module) return NULL;
    if (add_errors(module) < 0) goto fail;
    if (!GPUDeviceType) GPUDeviceType = PyStructSequence_NewType(&GPUDevice_desc);
    if (!MeshDescriptionType) MeshDescriptionType = PyStructSequence_NewType(&MeshDescription_desc);
    if (!GPUDeviceType || !MeshDescriptionType) goto fail;
    if (PyModule_AddObjectRef(module, "GPUDevice", (PyObject *)GPUDeviceType) < 0 ||
        PyModule_AddObjectRef(module, "MeshDescription", (PyObject *)MeshDescriptionType) < 0)
        goto fail;
    PyTypeObject *types[] = {&ExecutorType, &DeferredType, &MeshOptionsType, &MeshType};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (PyModule_AddType(module, types[i]) < 0) goto fail;
    if (PyModule_AddStringConstant(module, "VERSION", uform_version()) < 0 ||
        PyModule_AddIntConstant(module, "VERSION_NUMBER", uform_version_number()) < 0 ||
        PyModule_AddIntConstant(module, "DEFERRED_LIMIT_DEFAULT", UFORM_DEFERRED_LIMIT_DEFAULT) < 0 ||
        PyModule_AddIntConstant(module, "THREADS_MAX", UFORM_THREADS_MAX) < 0)
        goto fail;
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
