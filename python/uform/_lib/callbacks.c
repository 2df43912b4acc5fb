/* uform.lib: Trampolines calling Python callables (tasks, slices, progress) on the executor's threads. */
#include "binding.h"

#include <stdbool.h>

_Thread_local void *running_callback_of;

int interpreter_finalizing(void) {
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

/* A task's or device function's callback begins: false when it is skipped (an earlier task
 * failed, or the interpreter is finalizing), else with the GIL taken, `*gil` to give it back. */
static bool callback_begin(call_context_t *context, PyGILState_STATE *gil) {
    if (atomic_load_explicit(&context->failed, memory_order_relaxed)) return false;
    if (interpreter_finalizing()) return false;
    *gil = PyGILState_Ensure();
    return true;
}

/* ... and ends: its result released, or its exception recorded (CALLBACK_FAILED); the GIL given
 * back. */
static uform_status_t callback_end(call_context_t *context, PyObject *result, PyGILState_STATE gil) {
    uform_status_t status = UFORM_STATUS_OK;
    if (result) {
        Py_DECREF(result);
    } else {
        record_error(context);
        status = UFORM_STATUS_CALLBACK_FAILED;
    }
    PyGILState_Release(gil);
    return status;
}

static uform_status_t call_python(call_context_t *context, size_t a, size_t b, size_t c, int arguments) {
    PyGILState_STATE gil;
    if (!callback_begin(context, &gil)) return UFORM_STATUS_CALLBACK_FAILED;
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
    return callback_end(context, result, gil);
}

uform_status_t task_trampoline(void *context, size_t task, size_t thread) {
    return call_python(context, task, thread, 0, 2);
}

uform_status_t slice_trampoline(void *context, size_t first, size_t count, size_t thread) {
    return call_python(context, first, count, thread, 3);
}

uform_status_t device_trampoline(void *opaque, const uform_device_slot_t *slot) {
    call_context_t *context = opaque;
    PyGILState_STATE gil;
    if (!callback_begin(context, &gil)) return UFORM_STATUS_CALLBACK_FAILED;
    PyObject *argument = device_slot_new(slot);
    PyObject *result = NULL;
    if (argument) {
        void *outer = running_callback_of;
        device_function_scope_t scope;
        running_callback_of = context->owner;
        device_function_enter(&scope, context->owner, context->executor);
        scope.vendor = slot->vendor;
        result = PyObject_CallOneArg(context->function, argument);
        if (result) { /* the views die with the call; a failure to release one is the call's */
            device_function_leave(&scope);
            if (PyErr_Occurred()) Py_CLEAR(result);
        } else { /* keep the function's own exception, not one from releasing */
            PyObject *type, *value, *traceback;
            PyErr_Fetch(&type, &value, &traceback);
            device_function_leave(&scope);
            PyErr_Clear();
            PyErr_Restore(type, value, traceback);
        }
        running_callback_of = outer;
        Py_DECREF(argument);
    }
    return callback_end(context, result, gil);
}

void progress_trampoline(void *opaque, size_t done, size_t total) {
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

void context_clear(call_context_t *context) {
    Py_CLEAR(context->function);
    Py_CLEAR(context->progress);
    Py_CLEAR(context->error);
}

int raise_recorded(call_context_t *context) {
    if (!context->error) return 0;
    PyErr_SetObject((PyObject *)Py_TYPE(context->error), context->error);
    return 1;
}

