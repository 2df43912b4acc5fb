/* uform.lib: The module's functions over the hardware: capabilities, GPU devices, info, version. */
#include "binding.h"

PyTypeObject *GPUDeviceType;

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

PyStructSequence_Desc GPUDevice_desc = {
    "uform.lib.GPUDevice", "One GPU this process can drive, its position in gpu_devices() being its ordinal.",
    GPUDevice_fields, 6};

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
    return structseq_filled(result, items, 6);
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

PyMethodDef module_methods[] = {
    {"capabilities_compiled", module_capabilities_compiled, METH_NOARGS, capabilities_compiled_doc},
    {"capabilities_available", module_capabilities_available, METH_NOARGS, capabilities_available_doc},
    {"gpu_devices", module_gpu_devices, METH_NOARGS, gpu_devices_doc},
    {"version", module_version, METH_NOARGS, version_doc},
    {"info", (PyCFunction)(void (*)(void))module_info, METH_VARARGS | METH_KEYWORDS, info_doc},
    {"cpu_class_derived", module_cpu_class_derived, METH_NOARGS, cpu_class_derived_doc},
    {"default_threads", module_default_threads, METH_NOARGS, default_threads_doc},
    {"_set_wait_slice_hook", set_wait_slice_hook, METH_O, "Tests only: a callable run each time a Deferred.wait slice runs out."},
    {NULL, NULL, 0, NULL},
};

