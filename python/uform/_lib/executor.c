/* uform.lib: uform.Executor: constructors, verbs, drain and close. */
#include "binding.h"

/* -------------------------------------------------------------------------------------------- */
/* Executor                                                                                     */

int executor_open(ExecutorObject *self) {
    if (self->closed || !self->executor) {
        PyErr_SetString(PyExc_ValueError, "the executor is closed");
        return -1;
    }
    return 0;
}

int executor_check(ExecutorObject *self) {
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

uform_status_t executor_release(ExecutorObject *self) {
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

PyTypeObject ExecutorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Executor",
    .tp_basicsize = sizeof(ExecutorObject),
    .tp_dealloc = (destructor)Executor_dealloc,
    .tp_repr = (reprfunc)Executor_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Executor_doc,
    .tp_methods = Executor_methods,
    .tp_getset = Executor_getset,
};

