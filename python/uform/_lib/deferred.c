/* uform.lib: uform.Deferred: a call running on an executor's own threads, polled, waited on or awaited. */
#include "binding.h"

orphan_t *orphans;

void reap_orphans(void) {
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

PyTypeObject DeferredType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Deferred",
    .tp_basicsize = sizeof(DeferredObject),
    .tp_dealloc = (destructor)Deferred_dealloc,
    .tp_as_async = &Deferred_async,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Deferred_doc,
    .tp_methods = Deferred_methods,
};

