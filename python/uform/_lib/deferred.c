/* uform.lib: uform.Deferred: a call running on an executor's own threads, polled, waited on or awaited. */
#include "binding.h"

/* ---- the record a call keeps alive -------------------------------------------------------- */

/* Whether the call ended (or never started). */
static int call_finished(const deferred_call_t *call) {
    return !call->handle || uform_deferred_poll(call->handle) == UFORM_STATUS_OK;
}

/* Whether a finished call failed: a Python exception, or a status other than OK. */
static int call_failed(deferred_call_t *call) {
    if (call->context.error) return 1;
    return call->handle && uform_deferred_wait(call->handle, 0) != UFORM_STATUS_OK;
}

/* Warns, as asyncio does for a task exception never retrieved, about a finished call whose failure
 * nobody saw. Called holding the GIL; keeps any exception already set. */
static void warn_unretrieved(deferred_call_t *call, PyObject *source) {
    if (call->retrieved || !call_failed(call)) return;
    call->retrieved = 1; /* once */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    int failed;
    if (call->context.error)
        failed = PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                                  "a deferred %s call failed and its failure was never retrieved: %R", call->verb,
                                  call->context.error);
    else
        failed = PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                                  "a deferred %s call failed and its failure was never retrieved: %s", call->verb,
                                  uform_status_message(uform_deferred_wait(call->handle, 0)));
    if (failed < 0) PyErr_WriteUnraisable(source ? source : Py_None);
    PyErr_Restore(type, value, traceback);
}

/* Releases a finished call's record: its handle (which no longer waits) and its references.
 * Holding the GIL. The executor goes last: it may be its last reference. */
static void call_release(deferred_call_t *call) {
    if (call->handle) uform_deferred_free(call->handle);
    context_clear(&call->context);
    Py_CLEAR(call->keep);
    PyObject *executor = call->executor;
    PyMem_RawFree(call);
    Py_XDECREF(executor);
}

/* ---- the reaper: releases the records of calls whose Deferred was dropped before they ended --- */

static pthread_mutex_t reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static deferred_call_t *reaper_calls; /* guarded by reaper_lock */
static int reaper_running;            /* guarded by reaper_lock */

static void *reaper_main(void *unused) {
    for (;;) {
        pthread_mutex_lock(&reaper_lock);
        deferred_call_t *calls = reaper_calls;
        reaper_calls = NULL;
        if (!calls) reaper_running = 0;
        pthread_mutex_unlock(&reaper_lock);
        if (!calls) return NULL;
        /* Sleep on the oldest call, briefly, then take every call that has ended. */
        (void)uform_deferred_wait(calls->handle, 0.01);
        deferred_call_t *finished = NULL, *pending = NULL, **pending_tail = &pending;
        while (calls) {
            deferred_call_t *call = calls;
            calls = call->next;
            call->next = NULL;
            if (call_finished(call)) {
                call->next = finished;
                finished = call;
            } else {
                *pending_tail = call;
                pending_tail = &call->next;
            }
        }
        if (finished && !interpreter_finalizing()) {
            PyGILState_STATE gil = PyGILState_Ensure();
            while (finished) {
                deferred_call_t *call = finished;
                finished = call->next;
                warn_unretrieved(call, NULL);
                call_release(call);
            }
            PyGILState_Release(gil);
        } /* else the interpreter is going away: leave the records be */
        if (!pending) continue;
        if (!finished) { /* nothing ended: a call that answers at once (FORKED) must not make this spin */
            struct timespec pause = {0, 5 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&reaper_lock);
        *pending_tail = reaper_calls;
        reaper_calls = pending;
        pthread_mutex_unlock(&reaper_lock);
    }
}

/* Hands an unfinished call's record to the reaper; never blocks. */
static void reaper_adopt(deferred_call_t *call) {
    pthread_mutex_lock(&reaper_lock);
    call->next = reaper_calls;
    reaper_calls = call;
    int start = !reaper_running;
    reaper_running = 1;
    pthread_mutex_unlock(&reaper_lock);
    if (!start) return;
    pthread_t thread;
    if (start_quiet_thread(&thread, reaper_main, NULL) == 0) {
        pthread_detach(thread);
    } else { /* no thread now: the record waits for the next call dropped unfinished */
        pthread_mutex_lock(&reaper_lock);
        reaper_running = 0;
        pthread_mutex_unlock(&reaper_lock);
    }
}

void deferred_atfork_child(void) {
    /* The reaper thread is not in the child; its records answer FORKED there. Leak them. */
    pthread_mutex_init(&reaper_lock, NULL);
    reaper_calls = NULL;
    reaper_running = 0;
}

/* ---- Deferred ----------------------------------------------------------------------------- */

/* Tests only: called (holding the GIL) each time a wait slice runs out, before the poll that
 * tells a finished call from a running one, so a test can finish the call inside that window. */
static PyObject *wait_slice_hook;

PyObject *set_wait_slice_hook(PyObject *module, PyObject *hook) {
    Py_XSETREF(wait_slice_hook, hook == Py_None ? NULL : Py_NewRef(hook));
    Py_RETURN_NONE;
}

DeferredObject *deferred_new(PyObject *executor, PyObject *function, PyObject *progress, PyObject *keep,
                             const char *verb) {
    deferred_call_t *call = PyMem_RawCalloc(1, sizeof *call);
    if (!call) return (DeferredObject *)PyErr_NoMemory();
    DeferredObject *self = PyObject_GC_New(DeferredObject, &DeferredType);
    if (!self) {
        PyMem_RawFree(call);
        return NULL;
    }
    call->context.function = Py_XNewRef(function);
    call->context.progress = Py_XNewRef(progress);
    atomic_init(&call->context.failed, 0);
    call->context.owner = executor;
    call->executor = Py_NewRef(executor);
    call->keep = Py_XNewRef(keep);
    call->verb = verb;
    self->call = call;
    self->weakreflist = NULL;
    return self; /* the caller tracks it once the submission succeeded */
}

void deferred_discard(DeferredObject *self) {
    if (self->call) self->call->handle = NULL; /* a refused submission leaves no handle to free */
}

/* A running call's references are the call's own, not the handle's: the collector must neither
 * count nor clear them. Once it ended they are the handle's, so cycles through them collect. */
static int Deferred_traverse(DeferredObject *self, visitproc visit, void *arg) {
    deferred_call_t *call = self->call;
    if (!call || !call_finished(call)) return 0;
    Py_VISIT(call->context.function);
    Py_VISIT(call->context.progress);
    Py_VISIT(call->context.error);
    Py_VISIT(call->keep);
    Py_VISIT(call->executor);
    return 0;
}

static int Deferred_clear(DeferredObject *self) {
    deferred_call_t *call = self->call;
    if (!call || !call_finished(call)) return 0;
    Py_CLEAR(call->context.function);
    Py_CLEAR(call->context.progress);
    Py_CLEAR(call->context.error);
    Py_CLEAR(call->keep);
    Py_CLEAR(call->executor);
    return 0;
}

/* Runs once, before the handle goes (by reference count or by the collector). */
static void Deferred_finalize(DeferredObject *self) {
    if (self->call && call_finished(self->call)) warn_unretrieved(self->call, (PyObject *)self);
}

static void Deferred_dealloc(DeferredObject *self) {
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0) return; /* resurrected */
    PyObject_GC_UnTrack(self);
    if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
    deferred_call_t *call = self->call;
    self->call = NULL;
    if (call) {
        /* Never wait here: a running call keeps its record (and through it the executor) until
         * it ends, then the reaper lets them go. */
        if (call_finished(call))
            call_release(call);
        else
            reaper_adopt(call);
    }
    PyObject_GC_Del(self);
}

/* The outcome of a finished call: its first Python exception, else its status. */
static PyObject *deferred_outcome(DeferredObject *self, uform_status_t status) {
    if (status != UFORM_STATUS_OK || self->call->context.error) self->call->retrieved = 1;
    if (raise_recorded(&self->call->context)) return NULL;
    if (status != UFORM_STATUS_OK) return raise_status(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Deferred_done_doc, "done($self, /)\n"
    "--\n"
    "\n"
    "Whether the call finished, whatever its outcome; never blocks.\n"
    "\n"
    "Raises:\n"
    "  ForkedError: in a child process, for a call of the parent's.\n"
    "\n"
    "Example:\n"
    "    pending = executor.for_n(1000, work, deferred=True)\n"
    "    while not pending.done():\n"
    "        do_something_else()\n"
    "\n"
    "Calls uform_deferred_poll.");

static PyObject *Deferred_done(DeferredObject *self, PyObject *unused) {
    uform_status_t status = uform_deferred_poll(self->call->handle);
    if (status == UFORM_STATUS_OK) Py_RETURN_TRUE;
    if (status == UFORM_STATUS_TIMEOUT) Py_RETURN_FALSE;
    return raise_status(status);
}

PyDoc_STRVAR(Deferred_wait_doc,
             "wait($self, /, timeout=None)\n"
    "--\n"
    "\n"
    "Waits for the call and raises its failure.\n"
    "\n"
    "Arguments:\n"
    "  timeout: seconds to wait at most; None (the default) waits as long as it takes, in\n"
    "    slices that let Ctrl-C through (KeyboardInterrupt leaves the call running).\n"
    "\n"
    "Raises:\n"
    "  uform.TimeoutError (a builtin TimeoutError too): still running after `timeout`. The\n"
    "  call's failure: the first exception its callables raised, or its status's exception\n"
    "  (UFormInterruptedError once cancelled). ValueError: a negative or NaN timeout.\n"
    "  KeyboardInterrupt.\n"
    "\n"
    "Example:\n"
    "    pending = executor.for_n(1000, work, deferred=True)\n"
    "    try:\n"
    "        pending.wait(timeout=5.0)\n"
    "    except uform.TimeoutError:\n"
    "        pending.cancel()\n"
    "\n"
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
        status = uform_deferred_wait(self->call->handle, step);
        Py_END_ALLOW_THREADS
        if (status == UFORM_STATUS_TIMEOUT && wait_slice_hook) {
            PyObject *result = PyObject_CallNoArgs(wait_slice_hook);
            if (!result) return NULL;
            Py_DECREF(result);
        }
        /* TIMEOUT is ambiguous: the slice ran out, or the call finished with TIMEOUT as its own
         * status. A call that finished since the slice ran out answers its own status now. */
        if (status == UFORM_STATUS_TIMEOUT && uform_deferred_poll(self->call->handle) == UFORM_STATUS_OK)
            status = uform_deferred_wait(self->call->handle, 0);
        if (status != UFORM_STATUS_TIMEOUT || uform_deferred_poll(self->call->handle) == UFORM_STATUS_OK)
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

PyDoc_STRVAR(Deferred_cancel_doc,
             "cancel($self, /)\n"
    "--\n"
    "\n"
    "Cancels the call: tasks not yet started never start, running ones finish, and wait() or\n"
    "await then raise uform.UFormInterruptedError (an InterruptedError). A call still queued\n"
    "behind others ends at once with progress (0, total). Never blocks; cancelling a finished\n"
    "call does nothing (its outcome stands), and so does cancelling twice. Once the call has\n"
    "begun, each thread's first task still starts, so tasks that wait for each other (a\n"
    "barrier in for_threads) never wait for one the cancel skipped. Cancelling the\n"
    "asyncio task awaiting a Deferred cancels the call too.\n"
    "\n"
    "Raises:\n"
    "  ForkedError: in a child process, for a call of the parent's.\n"
    "\n"
    "Example:\n"
    "    pending = executor.for_n(10_000, work, deferred=True)\n"
    "    pending.cancel()\n"
    "    done, total = pending.progress()   # what ran\n"
    "\n"
    "Calls uform_deferred_cancel.");

static PyObject *Deferred_cancel(DeferredObject *self, PyObject *unused) {
    if (!self->call->handle) Py_RETURN_NONE;
    uform_status_t status = uform_deferred_cancel(self->call->handle);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Deferred_progress_doc, "progress($self, /)\n"
    "--\n"
    "\n"
    "Tasks finished so far and in total, as (done, total): devices for for_devices, bytes for\n"
    "copies.\n"
    "\n"
    "Raises:\n"
    "  Never raises for a live Deferred.\n"
    "\n"
    "Example:\n"
    "    done, total = pending.progress()\n"
    "    print(f\"{done / total:.0%}\")\n"
    "\n"
    "Calls uform_deferred_progress.");

static PyObject *Deferred_progress(DeferredObject *self, PyObject *unused) {
    size_t done = 0, total = 0;
    uform_status_t status = uform_deferred_progress(self->call->handle, &done, &total);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return Py_BuildValue("(nn)", (Py_ssize_t)done, (Py_ssize_t)total);
}

/* `await deferred`: a daemon thread waits and settles a future of the running loop, so the loop
 * never blocks, and an interrupted asyncio.run() does not wait for the call to end on exit. */
static PyObject *Deferred_await(DeferredObject *self) {
    PyObject *package = PyImport_ImportModule("uform");
    if (!package) return NULL;
    PyObject *iterator = PyObject_CallMethod(package, "_await_deferred", "O", (PyObject *)self);
    Py_DECREF(package);
    return iterator;
}

static PyObject *Deferred_repr(DeferredObject *self) {
    deferred_call_t *call = self->call;
    size_t done = 0, total = 0;
    (void)uform_deferred_progress(call->handle, &done, &total);
    const char *state = !call_finished(call) ? "running" : call_failed(call) ? "failed" : "done";
    return PyUnicode_FromFormat("<uform.Deferred %s %s %zu/%zu>", call->verb, state, done, total);
}

static PyMethodDef Deferred_methods[] = {
    {"done", (PyCFunction)Deferred_done, METH_NOARGS, Deferred_done_doc},
    {"wait", (PyCFunction)(void (*)(void))Deferred_wait, METH_VARARGS | METH_KEYWORDS, Deferred_wait_doc},
    {"progress", (PyCFunction)Deferred_progress, METH_NOARGS, Deferred_progress_doc},
    {"cancel", (PyCFunction)Deferred_cancel, METH_NOARGS, Deferred_cancel_doc},
    {NULL, NULL, 0, NULL},
};

static PyAsyncMethods Deferred_async = {.am_await = (unaryfunc)Deferred_await};

PyDoc_STRVAR(Deferred_doc, "A call running on an executor's own threads: poll it, wait for it, or await it.");

PyTypeObject DeferredType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Deferred",
    .tp_basicsize = sizeof(DeferredObject),
    .tp_dealloc = (destructor)Deferred_dealloc,
    .tp_repr = (reprfunc)Deferred_repr,
    .tp_as_async = &Deferred_async,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)Deferred_traverse,
    .tp_clear = (inquiry)Deferred_clear,
    .tp_finalize = (destructor)Deferred_finalize,
    .tp_weaklistoffset = offsetof(DeferredObject, weakreflist),
    .tp_doc = Deferred_doc,
    .tp_methods = Deferred_methods,
};

