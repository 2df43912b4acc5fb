/* uform.lib: Argument parsing: sizes, addresses, id lists, and the enums of uform/__init__.py. */
#include "binding.h"

/* -------------------------------------------------------------------------------------------- */
/* Enums live in uform/__init__.py; they are looked up when a value is built or checked, by which
 * time the package has finished importing.                                                     */

PyObject *package_enum(const char *name) {
    PyObject *package = PyImport_ImportModule("uform");
    if (!package) return NULL;
    PyObject *type = PyObject_GetAttrString(package, name);
    Py_DECREF(package);
    return type;
}

/* The enum member for `value`, or a plain int for a number this package does not know yet. */
PyObject *enum_member(const char *name, long value) {
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
PyObject *optional_enum_member(const char *name, long value) {
    if (value == 0) Py_RETURN_NONE;
    return enum_member(name, value);
}

PyObject *structseq_filled(PyObject *result, PyObject **items, int count) {
    int failed = 0;
    for (int i = 0; i < count; ++i) {
        if (!items[i]) failed = 1;
        PyStructSequence_SET_ITEM(result, i, items[i] ? items[i] : Py_NewRef(Py_None));
    }
    if (failed) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* Reads an enum argument: None -> 0 when allowed, a plain int or a member of `name` whose value
 * lies in [low, high]; a member of another enum (or a bool) is a TypeError. */
int parse_enum(PyObject *object, const char *name, const char *argument, long low, long high,
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
int parse_size(PyObject *object, const char *argument, size_t *value) {
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
int parse_address(PyObject *object, const char *argument, void **address) {
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
int parse_ids(PyObject *object, const char *argument, int32_t **ids, size_t *count) {
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

int parse_callable(PyObject *object, const char *argument) {
    if (!PyCallable_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be callable, not %.100s", argument, Py_TYPE(object)->tp_name);
        return -1;
    }
    return 0;
}

/* Native verbs: `function` is the address of a C function (a ctypes CFUNCTYPE cast to an int,
 * a symbol from a cffi or ctypes library), `context` an address handed to it unchanged. */
/* The address of a ctypes or cffi object, through uform._native_address; NULL with TypeError. */
static PyObject *foreign_address(PyObject *object, const char *role) {
    PyObject *package = PyImport_ImportModule("uform");
    if (!package) return NULL;
    PyObject *address = PyObject_CallMethod(package, "_native_address", "Os", object, role);
    Py_DECREF(package);
    return address;
}

static int parse_addresses(PyObject *function_object, PyObject *context_object, void **function, void **context) {
    if (PyBool_Check(function_object) || (PyLong_Check(function_object) && !PyLong_CheckExact(function_object) &&
                                          PyObject_HasAttrString(function_object, "_value_"))) {
        PyErr_SetString(PyExc_TypeError, "function must be an address (int), not a flag or an enum member");
        return -1;
    }
    if (!PyLong_Check(function_object)) {
        PyObject *address = foreign_address(function_object, "function");
        if (!address) return -1;
        int parsed = parse_address(address, "function", function);
        Py_DECREF(address);
        if (parsed < 0) return -1;
    } else if (parse_address(function_object, "function", function) < 0) {
        return -1;
    }
    /* Linux never maps the lowest 64 KiB (vm.mmap_min_addr), so no code lives there: a small
     * number is a mistake (a task index, an enum value), refused rather than jumped to. */
    if ((uintptr_t)*function < 65536) {
        PyErr_Format(PyExc_ValueError, "function must be the address of a C function, not %zu",
                     (size_t)(uintptr_t)*function);
        return -1;
    }
    if (context_object && !PyLong_Check(context_object) && context_object != Py_None &&
        !PyFloat_Check(context_object) && !PyUnicode_Check(context_object)) {
        PyObject *address = foreign_address(context_object, "context");
        if (!address) return -1;
        int parsed = parse_address(address, "context", context);
        Py_DECREF(address);
        return parsed;
    }
    if (context_object && parse_address(context_object, "context", context) < 0) return -1;
    return 0;
}

/* What a deferred native call keeps alive: `keep`, plus the ctypes or cffi objects it was given
 * (a CFUNCTYPE callback freed under a running call would be a jump into freed memory). New. */
static PyObject *native_keep(PyObject *keep, PyObject *function_object, PyObject *context_object) {
    int foreign_function = !PyLong_Check(function_object);
    int foreign_context = context_object && !PyLong_Check(context_object);
    if (!foreign_function && !foreign_context) return Py_NewRef(keep);
    return PyTuple_Pack(3, keep, function_object, context_object ? context_object : Py_None);
}

int parse_native(PyObject *function_object, PyObject *context_object, PyObject *keep, void **function, void **context,
                 PyObject **held) {
    *held = NULL;
    if (parse_addresses(function_object, context_object, function, context) < 0) return -1;
    *held = native_keep(keep, function_object, context_object);
    return *held ? 0 : -1;
}

int parse_callable_verb(PyObject *args, PyObject *kwargs, const char *format, PyObject **function, int *deferred,
                        PyObject **progress) {
    static char *keywords[] = {"fn", "deferred", "progress", NULL};
    *deferred = 0;
    *progress = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, function, deferred, progress)) return -1;
    return parse_callable(*function, "fn");
}

int parse_native_verb(PyObject *args, PyObject *kwargs, const char *format, PyObject **function_object,
                      PyObject **context_object, int *deferred, PyObject **progress, PyObject **keep) {
    static char *keywords[] = {"function", "context", "deferred", "progress", "keep", NULL};
    *context_object = NULL;
    *deferred = 0;
    *progress = Py_None;
    *keep = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, function_object, context_object, deferred,
                                     progress, keep))
        return -1;
    return 0;
}
