/* uform.lib: Exceptions: UFormError and one subclass per C status, each carrying `status` and `message`. */
#include "binding.h"

PyObject *UFormError;
PyObject *status_errors[UFORM_STATUS_COUNT_];

/* -------------------------------------------------------------------------------------------- */
/* Errors                                                                                       */

PyObject *raise_status(uform_status_t status) {
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

PyObject *raise_status_text(uform_status_t status, const char *text) {
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

/* UFormError.__init__(self, *args): the base classes' __init__, then `message`, the first
 * argument as text ("" without one), so that an error raised by Python code reads like one the
 * library raised. `status` is a class attribute: each subclass's C status, -1 on the base. */
static PyObject *UFormError_init(PyObject *unused, PyObject *args, PyObject *kwargs) {
    Py_ssize_t count = PyTuple_GET_SIZE(args);
    if (count < 1) {
        PyErr_SetString(PyExc_TypeError, "UFormError.__init__ needs self");
        return NULL;
    }
    PyObject *self = PyTuple_GET_ITEM(args, 0);
    PyObject *rest = PyTuple_GetSlice(args, 1, count);
    if (!rest) return NULL;
    PyObject *super = PyObject_CallFunctionObjArgs((PyObject *)&PySuper_Type, UFormError, self, NULL);
    PyObject *init = super ? PyObject_GetAttrString(super, "__init__") : NULL;
    Py_XDECREF(super);
    PyObject *result = init ? PyObject_Call(init, rest, kwargs) : NULL;
    Py_XDECREF(init);
    if (!result) {
        Py_DECREF(rest);
        return NULL;
    }
    Py_DECREF(result);
    PyObject *message = count > 1 ? PyObject_Str(PyTuple_GET_ITEM(rest, 0)) : PyUnicode_FromString("");
    Py_DECREF(rest);
    if (!message) return NULL;
    int failed = PyObject_SetAttrString(self, "message", message);
    Py_DECREF(message);
    if (failed < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef UFormError_init_def = {"__init__", (PyCFunction)(void (*)(void))UFormError_init,
                                          METH_VARARGS | METH_KEYWORDS, "Keeps the first argument as `message`."};

int add_errors(PyObject *module) {
    PyObject *function = PyCFunction_New(&UFormError_init_def, NULL);
    PyObject *method = function ? PyInstanceMethod_New(function) : NULL;
    Py_XDECREF(function);
    PyObject *base_dict = method ? Py_BuildValue("{s:i,s:O}", "status", -1, "__init__", method) : NULL;
    Py_XDECREF(method);
    if (!base_dict) return -1;
    UFormError = PyErr_NewExceptionWithDoc(
        "uform.lib.UFormError",
        "Base of every uform error; `status` is the C uform_status_t (-1 on an error raised without one),\n"
        "`message` the library's detail (the first argument).",
        PyExc_Exception, base_dict);
    Py_DECREF(base_dict);
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
