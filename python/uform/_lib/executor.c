/* uform.lib: uform.Executor: constructors, verbs, drain and close. */
#include "binding.h"

#include <stdbool.h>

#include <signal.h>
#include <time.h>

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
    if (self->executor) {
        uform_executor_t *executor = self->executor;
        self->executor = NULL;
        Py_BEGIN_ALLOW_THREADS
        status = uform_executor_free(executor);
        Py_END_ALLOW_THREADS
    }
    return status;
}

int start_quiet_thread(pthread_t *thread, void *(*body)(void *), void *argument) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int result = pthread_create(thread, NULL, body, argument);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return result;
}

/* ---- closing on a thread of its own ------------------------------------------------------- */

struct closer_t {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t ended;
    uform_executor_t *executor;
    uform_status_t status;      /* uform_executor_free's answer */
    char message[256];          /* and its detail, from that thread's last error */
    int done;                   /* guarded by lock */
    int abandoned;              /* guarded by lock: nobody will join; the thread frees this */
};

static void closer_destroy(closer_t *closer) {
    pthread_mutex_destroy(&closer->lock);
    pthread_cond_destroy(&closer->ended);
    PyMem_RawFree(closer);
}

static void *closer_main(void *opaque) {
    closer_t *closer = opaque;
    uform_status_t status = uform_executor_free(closer->executor);
    const char *detail = status == UFORM_STATUS_OK ? "" : uform_last_error();
    pthread_mutex_lock(&closer->lock);
    closer->status = status;
    snprintf(closer->message, sizeof closer->message, "%s",
             detail && *detail ? detail : uform_status_message(status));
    closer->done = 1;
    int abandoned = closer->abandoned;
    pthread_cond_broadcast(&closer->ended);
    pthread_mutex_unlock(&closer->lock);
    if (abandoned) closer_destroy(closer);
    return NULL;
}

/* Starts freeing `executor` on a new thread; NULL (nothing started) if no thread could start. */
static closer_t *closer_start(uform_executor_t *executor) {
    closer_t *closer = PyMem_RawCalloc(1, sizeof *closer);
    if (!closer) return NULL;
    pthread_mutex_init(&closer->lock, NULL);
    pthread_cond_init(&closer->ended, NULL);
    closer->executor = executor;
    if (start_quiet_thread(&closer->thread, closer_main, closer) != 0) {
        closer_destroy(closer);
        return NULL;
    }
    return closer;
}

/* Nobody will wait for this close: the thread finishes it and frees what it used. */
static void closer_abandon(closer_t *closer) {
    pthread_mutex_lock(&closer->lock);
    pthread_t thread = closer->thread;
    int done = closer->done;
    if (!done) closer->abandoned = 1;
    pthread_mutex_unlock(&closer->lock); /* from here an abandoned closer may be gone */
    if (done) {
        pthread_join(thread, NULL);
        closer_destroy(closer);
    } else {
        pthread_detach(thread);
    }
}

int executor_free_detached(uform_executor_t *executor) {
    closer_t *closer = closer_start(executor);
    if (!closer) return -1;
    closer_abandon(closer);
    return 0;
}

/* Waits for the close in progress, in short slices that let Ctrl-C through; a KeyboardInterrupt
 * leaves it running, for a later close() to wait for again. 0 when it ended OK, else -1 with an
 * exception set. */
static int closer_wait(ExecutorObject *self) {
    closer_t *closer = self->closer;
    for (;;) {
        int done;
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&closer->lock);
        if (!closer->done) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 20 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec += 1;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&closer->ended, &closer->lock, &until);
        }
        done = closer->done;
        pthread_mutex_unlock(&closer->lock);
        Py_END_ALLOW_THREADS
        if (done) break;
        if (PyErr_CheckSignals() < 0) return -1;
    }
    self->closer = NULL;
    pthread_join(closer->thread, NULL);
    uform_status_t status = closer->status;
    char message[sizeof closer->message];
    memcpy(message, closer->message, sizeof message);
    closer_destroy(closer);
    if (status != UFORM_STATUS_OK) {
        raise_status_text(status, message);
        return -1;
    }
    return 0;
}

/* An executor collected without close() says so, as an unclosed file does. */
static void Executor_finalize(ExecutorObject *self) {
    if (self->closed || !self->executor) return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    /* No source object: a recorded warning holding it would resurrect it, and a type without
     * the collector would be finalized (and warn) again. */
    if (PyErr_ResourceWarning(NULL, 1, "unclosed executor %R; close it or use a with block",
                              (PyObject *)self) < 0)
        PyErr_WriteUnraisable(NULL); /* not self: that too would resurrect it */
    PyErr_Restore(type, value, traceback);
}

static void Executor_dealloc(ExecutorObject *self) {
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0) return; /* resurrected */
    if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
    if (self->closer) { /* a close interrupted by Ctrl-C: let it end on its own */
        closer_abandon(self->closer);
        self->closer = NULL;
    }
    if (self->executor && running_callback_of == (void *)self) {
        /* Dropped by one of its own callbacks: freeing here would join the thread doing it, so
         * another thread frees it once the call ends (or, without threads, it leaks). */
        (void)executor_free_detached(self->executor);
        self->executor = NULL;
    }
    if (self->executor) {
        /* No deferred call is left running: each keeps the executor alive until it ends. */
        uform_status_t status = executor_release(self);
        (void)status; /* FORKED in a child: the memory is released all the same */
    }
    PyMem_RawFree(self->dl_device_types);
    PyMem_RawFree(self->dl_device_ids);
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

/* for_ram and on_pool past their first argument: the placement parsed, then the executor made
 * with the GIL released, on *pool when `pool` is given (on_pool), else with `threads`. */
static PyObject *construct_on_ram(PyTypeObject *cls, void *const *pool, size_t threads, PyObject *domains_object,
                                  PyObject *limit_object, PyObject *class_object) {
    size_t deferred_limit = 0, domains_count = 0;
    long cpu_class = 0;
    int32_t *domains = NULL;
    if (parse_ram_placement(domains_object, limit_object, class_object, &domains, &domains_count, &deferred_limit,
                            &cpu_class) < 0)
        return NULL;
    uform_executor_t *executor = NULL;
    uform_status_t status;
    Py_BEGIN_ALLOW_THREADS
    if (pool)
        status = uform_executor_on_pool(domains, domains_count, (uform_cpu_class_t)cpu_class, *pool, deferred_limit,
                                        &executor);
    else
        status = uform_executor_for_ram(domains, domains_count, (uform_cpu_class_t)cpu_class, threads,
                                        deferred_limit, &executor);
    Py_END_ALLOW_THREADS
    PyMem_Free(domains);
    return constructed(cls, status, executor);
}

PyDoc_STRVAR(Executor_for_ram_doc,
             "for_ram($cls, /, threads=0, *, memory_domains=None, deferred_limit=0, cpu_class=None)\n"
    "--\n"
    "\n"
    "Spawns host threads for RAM-resident models.\n"
    "\n"
    "Arguments:\n"
    "  threads: threads a call runs on; 0 (the default) takes default_threads(), n - n/8 of\n"
    "    the cores of the domains. More threads than cores are allowed.\n"
    "  memory_domains: NUMA node ids whose cores run the threads; None (the default) or []\n"
    "    means every node this process may use. Threads are named uform:ram:N.\n"
    "  deferred_limit: deferred calls that may be in flight at once; 0 (the default) takes\n"
    "    DEFERRED_LIMIT_DEFAULT.\n"
    "  cpu_class: a uform.CPUClass to dispatch as; None (the default) derives the CPU's own.\n"
    "\n"
    "Raises:\n"
    "  InvalidArgumentError: a duplicate domain, threads above THREADS_MAX, deferred_limit\n"
    "    above 65536. NotFoundError: an unknown or CPU-less node. UnsupportedError: a class\n"
    "    this CPU cannot run. OutOfMemoryError, UFormIOError (no thread could start).\n"
    "  TypeError, ValueError: arguments of the wrong type or sign.\n"
    "\n"
    "Example:\n"
    "    with uform.Executor.for_ram(4) as executor:\n"
    "        executor.for_n(100, lambda task, thread: print(task, thread))\n"
    "\n"
    "Calls uform_executor_for_ram.");

static PyObject *Executor_for_ram(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"threads", "memory_domains", "deferred_limit", "cpu_class", NULL};
    PyObject *threads_object = NULL, *domains_object = Py_None, *limit_object = NULL, *class_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:for_ram", keywords, &threads_object, &domains_object,
                                     &limit_object, &class_object))
        return NULL;
    size_t threads = 0;
    if (threads_object && parse_size(threads_object, "threads", &threads) < 0) return NULL;
    return construct_on_ram(cls, NULL, threads, domains_object, limit_object, class_object);
}

PyDoc_STRVAR(Executor_on_pool_doc,
             "on_pool($cls, pool, /, *, memory_domains=None, deferred_limit=0, cpu_class=None)\n"
    "--\n"
    "\n"
    "Borrows a ForkUnion pool; raises UnsupportedError until borrowing is designed.\n"
    "\n"
    "Arguments:\n"
    "  pool: the address of a ForkUnion fu_pool_t (not 0).\n"
    "  memory_domains, deferred_limit, cpu_class: as for_ram.\n"
    "\n"
    "Raises:\n"
    "  UnsupportedError: always, once the arguments are valid. InvalidArgumentError,\n"
    "    NotFoundError, TypeError, ValueError: bad arguments, as for_ram.\n"
    "\n"
    "Example:\n"
    "    try:\n"
    "        uform.Executor.on_pool(pool_address)\n"
    "    except uform.UnsupportedError:\n"
    "        executor = uform.Executor.for_ram()\n"
    "\n"
    "Calls uform_executor_on_pool.");

static PyObject *Executor_on_pool(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"", "memory_domains", "deferred_limit", "cpu_class", NULL};
    PyObject *pool_object = NULL, *domains_object = Py_None, *limit_object = NULL, *class_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOO:on_pool", keywords, &pool_object, &domains_object,
                                     &limit_object, &class_object))
        return NULL;
    void *pool = NULL;
    if (parse_address(pool_object, "pool", &pool) < 0) return NULL;
    return construct_on_ram(cls, &pool, 0, domains_object, limit_object, class_object);
}

PyDoc_STRVAR(Executor_for_vram_doc,
             "for_vram($cls, /, devices=None, *, scratch_limit=0, deferred_limit=0, gpu_class=None, memory_domains=None, cpu_class=None)\n"
    "--\n"
    "\n"
    "Opens one submission stream on every named device.\n"
    "\n"
    "Arguments:\n"
    "  devices: positions in uform.gpu_devices(); None (the default) or [] means all of them.\n"
    "  scratch_limit: bytes of device_scratch() per device; 0 (the default) is unbounded.\n"
    "  deferred_limit: as for_ram.\n"
    "  gpu_class: a uform.GPUClass to dispatch as; None derives the devices' own.\n"
    "  memory_domains, cpu_class: the host threads' placement, as for_ram (None: the nodes\n"
    "    nearest the devices).\n"
    "\n"
    "Raises:\n"
    "  NotFoundError: no GPU, or a position out of range. InvalidArgumentError: a duplicate\n"
    "  device. UnsupportedError: a class pin a device cannot run, or a driver lacking an entry\n"
    "  point (named). DeviceFaultError, OutOfMemoryError: a device failed to open.\n"
    "\n"
    "Example:\n"
    "    with uform.Executor.for_vram([0, 1]) as gpus:\n"
    "        gpus.for_devices(lambda slot: print(slot.device, slot.stream))\n"
    "\n"
    "Calls uform_executor_for_vram.");

typedef struct {
    int32_t *types, *ids;
} device_kinds_t;

static uform_status_t learn_device_kind(void *context, const uform_device_slot_t *slot) {
    device_kinds_t *kinds = context;
    kinds->types[slot->device] = slot->vendor == UFORM_GPU_VENDOR_AMD ? DL_ROCM : DL_CUDA;
    kinds->ids[slot->device] = slot->native_device;
    return UFORM_STATUS_OK;
}

uform_status_t device_kinds_ask(uform_executor_t *executor, int32_t *types, int32_t *ids) {
    device_kinds_t kinds = {types, ids};
    return uform_executor_for_devices(executor, NULL, learn_device_kind, &kinds);
}

/* A new device executor's devices in DLPack's terms, asked while nothing can be queued ahead of
 * the call (nobody else holds the executor yet), so that an arena's first device_view() never
 * waits behind deferred calls. Without the GIL; false (nothing kept) when the call fails: the
 * arena then asks on first use. */
static bool learn_device_kinds(uform_executor_t *executor, int32_t **types, int32_t **ids, size_t *count) {
    size_t devices = uform_executor_devices(executor);
    *types = *ids = NULL;
    *count = 0;
    if (!devices) return false;
    device_kinds_t kinds = {PyMem_RawCalloc(devices, sizeof(int32_t)), PyMem_RawCalloc(devices, sizeof(int32_t))};
    if (kinds.types && kinds.ids && device_kinds_ask(executor, kinds.types, kinds.ids) == UFORM_STATUS_OK) {
        *types = kinds.types, *ids = kinds.ids, *count = devices;
        return true;
    }
    PyMem_RawFree(kinds.types);
    PyMem_RawFree(kinds.ids);
    return false;
}

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
    int32_t *kind_types = NULL, *kind_ids = NULL;
    size_t kinds = 0;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_for_vram(devices, devices_count, (uform_gpu_class_t)gpu_class, domains, domains_count,
                                     (uform_cpu_class_t)cpu_class, NULL, 0, scratch_limit, deferred_limit,
                                     &executor);
    if (status == UFORM_STATUS_OK) (void)learn_device_kinds(executor, &kind_types, &kind_ids, &kinds);
    Py_END_ALLOW_THREADS
    PyMem_Free(devices);
    PyMem_Free(domains);
    PyObject *wrapped = constructed(cls, status, executor);
    if (!wrapped) {
        PyMem_RawFree(kind_types);
        PyMem_RawFree(kind_ids);
        return NULL;
    }
    ExecutorObject *self = (ExecutorObject *)wrapped;
    self->dl_device_types = kind_types, self->dl_device_ids = kind_ids, self->dl_devices = kinds;
    return wrapped;
}

PyDoc_STRVAR(Executor_drain_doc,
             "drain($self, /, mood=uform.Mood.PARKED)\n"
    "--\n"
    "\n"
    "Waits for every call submitted before it, then sets the idle mood.\n"
    "\n"
    "Arguments:\n"
    "  mood: what idle threads do afterwards: uform.Mood.PARKED (the default: sleep after a\n"
    "    short spin) or uform.Mood.SPINNING (busy-poll, the lowest latency).\n"
    "\n"
    "Raises:\n"
    "  ValueError: the executor is closed, or a mood that is not a Mood. RuntimeError: called\n"
    "  from one of its own callbacks. ForkedError: in a child process. DeviceFaultError: its\n"
    "  devices faulted. A drained call's own failure is not raised here.\n"
    "\n"
    "Example:\n"
    "    executor.for_n(1000, work, deferred=True)\n"
    "    executor.drain(uform.Mood.SPINNING)   # all done; now spin for the next burst\n"
    "\n"
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

PyDoc_STRVAR(Executor_enter_doc, "__enter__($self, /)\n"
    "--\n"
    "\n"
    "Returns the executor itself, for a with block that closes it on exit.\n"
    "\n"
    "Raises:\n"
    "  ValueError: the executor is closed. RuntimeError: from one of its own callbacks.\n"
    "\n"
    "Example:\n"
    "    with uform.Executor.for_ram() as executor:\n"
    "        ...");

static PyObject *Executor_enter(ExecutorObject *self, PyObject *unused) {
    if (executor_check(self) < 0) return NULL;
    return Py_NewRef(self);
}

/* Waits until no Python thread is inside a call on it, then frees it: the C library leaves
 * closing it to the last live device arena or mesh holding it. Every wait answers Ctrl-C; a close interrupted that way has begun
 * (calls are refused) and the next close() finishes it. */
static PyObject *executor_close(ExecutorObject *self) {
    if (running_callback_of == (void *)self) {
        PyErr_SetString(PyExc_RuntimeError, "a callback must not close the executor running it");
        return NULL;
    }
    if (!self->closed && executor_staging_check(self, "close()") < 0) return NULL;
    self->closed = 1;
    if (!self->closer) {
        while (self->busy > 0 && self->executor) {
            Py_BEGIN_ALLOW_THREADS
            struct timespec pause = {0, 2 * 1000 * 1000};
            nanosleep(&pause, NULL);
            Py_END_ALLOW_THREADS
            if (PyErr_CheckSignals() < 0) return NULL;
        }
        if (!self->executor) Py_RETURN_NONE;
        self->closer = closer_start(self->executor);
        if (!self->closer) { /* no thread to free it on: free it here, uninterruptibly */
            uform_status_t status = executor_release(self);
            if (status != UFORM_STATUS_OK) return raise_status(status);
            Py_RETURN_NONE;
        }
        self->executor = NULL; /* the closer owns it now */
    }
    if (closer_wait(self) < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Executor_exit_doc,
             "__exit__($self, kind, value, traceback, /)\n"
    "--\n"
    "\n"
    "Closes it once its calls finish, or leaves that to its last live GPU arena.\n"
    "\n"
    "Arguments:\n"
    "  kind, value, traceback: the exception leaving the with block, or None; it is not\n"
    "    suppressed.\n"
    "\n"
    "Raises:\n"
    "  As close().\n"
    "\n"
    "Example:\n"
    "    with uform.Executor.for_ram() as executor:\n"
    "        pending = executor.for_n(10, work, deferred=True)\n"
    "    # here pending has finished and the threads are gone\n"
    "\n"
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
    "--\n"
    "\n"
    "Closes it once its calls finish, as leaving a with block does. Closing twice does nothing.\n"
    "\n"
    "Deferred calls still queued run, in order, before it closes: cancel them first\n"
    "(Deferred.cancel) to have them end without running. The wait answers Ctrl-C: a close\n"
    "interrupted that way has begun (new calls are refused) and the next close() finishes it.\n"
    "A VRAM executor with live device arenas closes when the last of them does.\n"
    "\n"
    "Raises:\n"
    "  RuntimeError: from one of its own callbacks. BufferError: a staging export outlived its\n"
    "  device function (see staging). KeyboardInterrupt: Ctrl-C while waiting. ForkedError: an\n"
    "  executor inherited across fork() (its memory is released all the same).\n"
    "\n"
    "Example:\n"
    "    executor = uform.Executor.for_ram()\n"
    "    try:\n"
    "        executor.for_n(10, work)\n"
    "    finally:\n"
    "        executor.close()\n"
    "\n"
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

PyObject *verb_run(ExecutorObject *self, verb_submit_t submit, void *request, PyObject *python_function,
                   PyObject *progress, PyObject *keep, int deferred, const char *verb, int device_verb) {
    if (progress == Py_None) progress = NULL;
    if (progress && !PyCallable_Check(progress)) {
        PyErr_Format(PyExc_TypeError, "progress must be callable or None, not %.100s", Py_TYPE(progress)->tp_name);
        return NULL;
    }
    if (executor_check(self) < 0) return NULL;
    uform_executor_t *device_executor = device_verb ? self->executor : NULL;

    uform_call_t call = UFORM_CALL_INIT;
    uform_status_t status;
    if (!deferred) {
        call_context_t context = {python_function, progress, NULL, 0, self, device_executor};
        interrupt_scope_t interrupt;
        call.progress = progress ? progress_trampoline : NULL;
        call.progress_context = &context;
        call.cancel = &interrupt.flag;
        self->busy++;
        interrupt_enter(&interrupt);
        Py_BEGIN_ALLOW_THREADS
        status = submit(self->executor, &call, &context, request);
        Py_END_ALLOW_THREADS
        interrupt_leave(&interrupt);
        self->busy--;
        if (context.error) {
            raise_recorded(&context);
            Py_DECREF(context.error);
            return NULL;
        }
        if (status != UFORM_STATUS_OK && interrupt.flag) return interrupted(&interrupt, status);
        if (status != UFORM_STATUS_OK) return raise_status(status);
        Py_RETURN_NONE;
    }

    DeferredObject *handle = deferred_new((PyObject *)self, python_function, progress, keep, verb);
    if (!handle) return NULL;
    call_context_t *context = &handle->call->context;
    if (device_verb) context->executor = device_executor;
    call.deferred = &handle->call->handle;
    call.progress = progress ? progress_trampoline : NULL;
    call.progress_context = context;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = submit(self->executor, &call, context, request);
    Py_END_ALLOW_THREADS
    self->busy--;
    if (status != UFORM_STATUS_OK) {
        deferred_discard(handle);
        raise_status(status);
        Py_DECREF(handle);
        return NULL;
    }
    /* Tracked once its handle is set: the collector reads it to tell a running call. */
    PyObject_GC_Track(handle);
    return (PyObject *)handle;
}

/* A host verb as verb_run submits it: the C function and context, or the trampoline over the
 * Python callable with the trampolines' context. */
typedef struct host_request_t {
    verb_t verb;
    size_t n;
    void *function;
    void *native_context;
    int python; /* the context is the trampolines' */
} host_request_t;

static uform_status_t host_submit(uform_executor_t *executor, const uform_call_t *call, call_context_t *context,
                                  void *opaque) {
    const host_request_t *request = opaque;
    return dispatch(request->verb, executor, call, request->n, request->function,
                    request->python ? (void *)context : request->native_context);
}

/* Runs one verb. `python_function` is a callable (then `native` is ignored), or NULL with
 * `native`/`native_context` the C function and its context. */
static PyObject *run_verb(ExecutorObject *self, verb_t verb, size_t n, PyObject *python_function, void *native,
                          void *native_context, PyObject *keep, int deferred, PyObject *progress) {
    static const char *const verb_names[2][4] = {
        {"for_n_native", "for_n_native", "for_threads_native", "for_slices_native"},
        {"for_n", "for_n", "for_threads", "for_slices"},
    };
    host_request_t request = {verb, n, native, native_context, python_function != NULL};
    if (python_function) request.function = verb == VERB_FOR_SLICES ? (void *)slice_trampoline : (void *)task_trampoline;
    return verb_run(self, host_submit, &request, python_function, progress, keep, deferred,
                    verb_names[python_function != NULL][verb], 0);
}

/* Runs one verb with a C function (parse_native's function_object and context_object), keeping
 * what a deferred call needs alive. */
static PyObject *run_native(ExecutorObject *self, verb_t verb, size_t n, PyObject *function_object,
                            PyObject *context_object, PyObject *keep, int deferred, PyObject *progress) {
    void *function = NULL, *context = NULL;
    PyObject *held = NULL;
    if (parse_native(function_object, context_object, keep, &function, &context, &held) < 0) return NULL;
    PyObject *result = run_verb(self, verb, n, NULL, function, context, held, deferred, progress);
    Py_DECREF(held);
    return result;
}

PyDoc_STRVAR(Executor_for_n_doc,
             "for_n($self, /, n, fn, *, dynamic=False, deferred=False, progress=None)\n"
    "--\n"
    "\n"
    "Calls fn(task, thread) once for every task in range(n) on the executor's threads.\n"
    "\n"
    "Arguments:\n"
    "  n: the number of tasks.\n"
    "  fn: a callable taking (task, thread); it runs holding the GIL.\n"
    "  dynamic: False (the default) splits statically (thread t takes a contiguous range);\n"
    "    True hands out tasks one at a time, each thread's own range first, then the others'\n"
    "    tasks not yet started, for tasks of uneven cost.\n"
    "  deferred: False (the default) returns once every task ran; True returns a Deferred at\n"
    "    once, which can be waited on, awaited or cancelled.\n"
    "  progress: None, or a callable progress(done, total) run on the executor's threads as\n"
    "    tasks finish.\n"
    "\n"
    "The first exception fn raises stops the call and is raised again here (or by the\n"
    "Deferred). Ctrl-C during a synchronous call on the main thread stops handing out tasks and\n"
    "raises KeyboardInterrupt once the running ones return.\n"
    "\n"
    "Raises:\n"
    "  What fn raised. ContendedError: another thread's call holds the executor (or the\n"
    "  deferred table is full). ValueError: a closed executor. RuntimeError: from one of its\n"
    "  own callbacks. TypeError: fn or progress not callable. KeyboardInterrupt: Ctrl-C.\n"
    "\n"
    "Example:\n"
    "    squares = [0] * 100\n"
    "    executor.for_n(100, lambda task, thread: squares.__setitem__(task, task * task))\n"
    "\n"
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
    "--\n"
    "\n"
    "Calls fn(thread, thread) once on every thread of the executor.\n"
    "\n"
    "Arguments:\n"
    "  fn: a callable taking (thread, thread); it runs holding the GIL.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  As for_n.\n"
    "\n"
    "Example:\n"
    "    seen = set()\n"
    "    executor.for_threads(lambda thread, _: seen.add(thread))\n"
    "    assert seen == set(range(executor.threads))\n"
    "\n"
    "Calls uform_executor_for_threads.");

static PyObject *Executor_for_threads(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *function, *progress;
    int deferred;
    if (parse_callable_verb(args, kwargs, "O|$pO:for_threads", &function, &deferred, &progress) < 0) return NULL;
    return run_verb(self, VERB_FOR_THREADS, 0, function, NULL, NULL, NULL, deferred, progress);
}

PyDoc_STRVAR(Executor_for_slices_doc,
             "for_slices($self, /, n, fn, *, deferred=False, progress=None)\n"
    "--\n"
    "\n"
    "Splits range(n) into one contiguous slice per thread and calls fn(first, count, thread)\n"
    "for each non-empty slice.\n"
    "\n"
    "Arguments:\n"
    "  n: the number of items to split.\n"
    "  fn: a callable taking (first, count, thread); it runs holding the GIL.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  As for_n.\n"
    "\n"
    "Example:\n"
    "    data = list(range(1000))\n"
    "    sums = [0] * executor.threads\n"
    "    executor.for_slices(len(data), lambda first, count, thread:\n"
    "                        sums.__setitem__(thread, sum(data[first:first + count])))\n"
    "\n"
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

PyDoc_STRVAR(Executor_for_n_native_doc,
             "for_n_native($self, /, n, function, context=0, *, dynamic=False, deferred=False, progress=None, keep=None)\n"
    "--\n"
    "\n"
    "As for_n, calling a C uform_task_t\n"
    "`uform_status_t (*)(void *context, size_t task, size_t thread)` without the GIL.\n"
    "\n"
    "Arguments:\n"
    "  n, dynamic, deferred, progress: as for_n.\n"
    "  function: the C function: its address (an int), a ctypes function object (a CFUNCTYPE\n"
    "    callback, a library's symbol) or a cffi function pointer.\n"
    "  context: handed to it unchanged: an address (int, default 0), a ctypes object (its\n"
    "    address) or pointer, or a cffi pointer.\n"
    "  keep: any object a deferred call keeps alive until the Deferred is released (the memory\n"
    "    context points to must stay valid that long); ctypes and cffi objects given as\n"
    "    function or context are kept the same way.\n"
    "\n"
    "A status other than OK from a task stops the call and raises its exception. Ctrl-C stops\n"
    "handing out tasks and raises KeyboardInterrupt once running ones return.\n"
    "\n"
    "Raises:\n"
    "  The exception of the status a task returned (uform.MismatchError for 8, ...). TypeError:\n"
    "  a function that is not an address, ctypes or cffi function. ValueError: an address\n"
    "  below 64 KiB. ContendedError, KeyboardInterrupt: as for_n.\n"
    "\n"
    "Example:\n"
    "    library = ctypes.CDLL(\"./tasks.so\")        # exports int my_task(void *, size_t, size_t)\n"
    "    executor.for_n_native(1000, library.my_task, ctypes.pointer(state))\n"
    "\n"
    "Calls uform_executor_for_n or uform_executor_for_n_dynamic.");

static PyObject *Executor_for_n_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", "function", "context", "dynamic", "deferred", "progress", "keep", NULL};
    PyObject *n_object, *function_object, *context_object = NULL, *progress = Py_None, *keep = Py_None;
    int dynamic = 0, deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$ppOO:for_n_native", keywords, &n_object, &function_object,
                                     &context_object, &dynamic, &deferred, &progress, &keep))
        return NULL;
    size_t n;
    if (parse_size(n_object, "n", &n) < 0) return NULL;
    return run_native(self, dynamic ? VERB_FOR_N_DYNAMIC : VERB_FOR_N, n, function_object, context_object, keep,
                      deferred, progress);
}

PyDoc_STRVAR(Executor_for_threads_native_doc,
             "for_threads_native($self, /, function, context=0, *, deferred=False, progress=None, keep=None)\n"
    "--\n"
    "\n"
    "As for_threads, calling the C uform_task_t `function` with (context, thread, thread)\n"
    "without the GIL.\n"
    "\n"
    "Arguments:\n"
    "  function, context (default 0), keep (default None): as for_n_native.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  As for_n_native.\n"
    "\n"
    "Example:\n"
    "    executor.for_threads_native(library.warm_up, 0)\n"
    "\n"
    "Calls uform_executor_for_threads.");

static PyObject *Executor_for_threads_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *function_object, *context_object, *progress, *keep;
    int deferred;
    if (parse_native_verb(args, kwargs, "O|O$pOO:for_threads_native", &function_object, &context_object, &deferred,
                          &progress, &keep) < 0)
        return NULL;
    return run_native(self, VERB_FOR_THREADS, 0, function_object, context_object, keep, deferred, progress);
}

PyDoc_STRVAR(Executor_for_slices_native_doc,
             "for_slices_native($self, /, n, function, context=0, *, deferred=False, progress=None, keep=None)\n"
    "--\n"
    "\n"
    "As for_slices, calling the C function `function`, a uform_slice_t\n"
    "`uform_status_t (*)(void *context, size_t first, size_t count, size_t thread)`, without\n"
    "the GIL.\n"
    "\n"
    "Arguments:\n"
    "  n, deferred (default False), progress (default None): as for_slices.\n"
    "  function, context (default 0), keep (default None): as for_n_native.\n"
    "\n"
    "Raises:\n"
    "  As for_n_native.\n"
    "\n"
    "Example:\n"
    "    executor.for_slices_native(len(values), library.sum_slice, ctypes.pointer(totals))\n"
    "\n"
    "Calls uform_executor_for_slices.");

static PyObject *Executor_for_slices_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"n", "function", "context", "deferred", "progress", "keep", NULL};
    PyObject *n_object, *function_object, *context_object = NULL, *progress = Py_None, *keep = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$pOO:for_slices_native", keywords, &n_object,
                                     &function_object, &context_object, &deferred, &progress, &keep))
        return NULL;
    size_t n;
    if (parse_size(n_object, "n", &n) < 0) return NULL;
    return run_native(self, VERB_FOR_SLICES, n, function_object, context_object, keep, deferred, progress);
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
    size_t devices = uform_executor_devices(self->executor);
    if (devices)
        return PyUnicode_FromFormat("<%s devices=%zu threads=%zu cpu_class=%s>", Py_TYPE(self)->tp_name, devices,
                                    uform_executor_threads(self->executor), name ? name : "?");
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
    EXECUTOR_VRAM_METHODS,
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
    {"devices", (getter)Executor_get_devices, NULL,
     "Devices it drives: 0 for a RAM executor. Calls uform_executor_devices.", NULL},
    {"gpu_class", (getter)Executor_get_gpu_class, NULL,
     "The class its device calls dispatch as: the pin or the devices' common one; None for a RAM executor or "
     "devices without one. Calls uform_executor_gpu_class.",
     NULL},
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
    .tp_finalize = (destructor)Executor_finalize,
    .tp_weaklistoffset = offsetof(ExecutorObject, weakreflist),
    .tp_doc = Executor_doc,
    .tp_methods = Executor_methods,
    .tp_getset = Executor_getset,
};

