/* uform.lib: DLPack exports: the capsule a consumer (numpy.from_dlpack, torch.from_dlpack) takes.
 *
 * The structs are written here from the DLPack 1.x specification (dlpack.h): the legacy
 * DLManagedTensor in a "dltensor" capsule, and DLManagedTensorVersioned in a
 * "dltensor_versioned" capsule for a consumer passing max_version >= (1, 0). Every export is one
 * 1-D uint8 tensor over a lender's memory; the lender (an Arena, a staging view) counts it as a
 * live export until the consumer calls the deleter, which may happen on any thread, with or
 * without the GIL. */
#include "binding.h"

/* ---- the DLPack ABI (dlpack.h v1.0) ---------------------------------------------------------- */

typedef struct {
    int32_t device_type; /* DLDeviceType: an int-sized C enum */
    int32_t device_id;
} dl_device_t;

typedef struct {
    uint8_t code; /* DLDataTypeCode: kDLUInt = 1 */
    uint8_t bits;
    uint16_t lanes;
} dl_data_type_t;

typedef struct {
    void *data;
    dl_device_t device;
    int32_t ndim;
    dl_data_type_t dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: compact, row-major */
    uint64_t byte_offset;
} dl_tensor_t;

typedef struct dl_managed_tensor_t {
    dl_tensor_t dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor_t *self);
} dl_managed_tensor_t;

typedef struct {
    uint32_t major;
    uint32_t minor;
} dl_version_t;

typedef struct dl_managed_tensor_versioned_t {
    dl_version_t version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor_versioned_t *self);
    uint64_t flags;
    dl_tensor_t dl_tensor;
} dl_managed_tensor_versioned_t;

#define DL_FLAG_IS_COPIED ((uint64_t)1 << 1)
#define DL_UINT 1

/* The layout dlpack.h has on LP64 targets: a consumer reads these offsets. */
_Static_assert(sizeof(void *) != 8 || sizeof(dl_tensor_t) == 48, "DLTensor is 48 bytes on LP64");
_Static_assert(sizeof(void *) != 8 || offsetof(dl_tensor_t, byte_offset) == 40, "DLTensor.byte_offset");
_Static_assert(sizeof(void *) != 8 || sizeof(dl_managed_tensor_t) == 64, "DLManagedTensor is 64 bytes");
_Static_assert(sizeof(void *) != 8 || offsetof(dl_managed_tensor_versioned_t, dl_tensor) == 32,
               "DLManagedTensorVersioned.dl_tensor");
_Static_assert(sizeof(void *) != 8 || sizeof(dl_managed_tensor_versioned_t) == 80,
               "DLManagedTensorVersioned is 80 bytes");

/* ---- one export ------------------------------------------------------------------------------- */

typedef struct export_t {
    union {
        dl_managed_tensor_t legacy;
        dl_managed_tensor_versioned_t versioned;
    } tensor;
    int versioned;
    int64_t shape[1];
    PyObject *owner;                   /* strong; NULL for a copy, which owns only `copy` */
    void (*release)(PyObject *owner);  /* ends the owner's count of live exports, holding the GIL */
    void *copy;                        /* copy=True: the bytes, PyMem_Raw */
} export_t;

static void export_free(export_t *export) {
    if (export->owner) {
        if (interpreter_finalizing()) {
            /* Nothing may touch Python objects now: the owner (and its memory) stays. */
        } else {
            PyGILState_STATE gil = PyGILState_Ensure();
            export->release(export->owner);
            Py_DECREF(export->owner);
            PyGILState_Release(gil);
        }
    }
    PyMem_RawFree(export->copy);
    PyMem_RawFree(export);
}

static void legacy_deleter(dl_managed_tensor_t *self) { export_free(self->manager_ctx); }

static void versioned_deleter(dl_managed_tensor_versioned_t *self) { export_free(self->manager_ctx); }

/* A capsule nobody consumed (still named "dltensor"/"dltensor_versioned") ends its export; a
 * consumer renames it "used_..." and calls the deleter itself. */
static void capsule_destructor(PyObject *capsule) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        dl_managed_tensor_t *managed = PyCapsule_GetPointer(capsule, "dltensor");
        if (managed && managed->deleter) managed->deleter(managed);
    } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        dl_managed_tensor_versioned_t *managed = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (managed && managed->deleter) managed->deleter(managed);
    }
    PyErr_Restore(type, value, traceback);
}

/* ---- the keywords of the array API standard's __dlpack__ ---------------------------------------- */

static int has_streams(int32_t device_type) { return device_type == DL_CUDA || device_type == DL_ROCM; }

/* Reads a (device_type, device_id) pair. */
static int parse_dl_device(PyObject *object, const char *argument, dl_device_t *device) {
    if (!PyTuple_Check(object) || PyTuple_GET_SIZE(object) != 2) {
        PyErr_Format(PyExc_TypeError, "%s must be a (device_type, device_id) tuple, not %R", argument, object);
        return -1;
    }
    long values[2];
    for (int i = 0; i < 2; ++i) {
        values[i] = PyLong_AsLong(PyTuple_GET_ITEM(object, i));
        if (values[i] == -1 && PyErr_Occurred()) return -1;
        if (values[i] < INT32_MIN || values[i] > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s is out of range: %R", argument, object);
            return -1;
        }
    }
    device->device_type = (int32_t)values[0];
    device->device_id = (int32_t)values[1];
    return 0;
}

PyObject *dlpack_device_tuple(const lend_t *lend) {
    return Py_BuildValue("(ii)", (int)lend->device_type, (int)lend->device_id);
}

PyObject *dlpack_export(const lend_t *lend, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device_object = Py_None, *copy_object = Py_None;
    if (args && PyTuple_GET_SIZE(args) > 0) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__ takes keyword arguments only");
        return NULL;
    }
    PyObject *empty = PyTuple_New(0);
    if (!empty) return NULL;
    int parsed = PyArg_ParseTupleAndKeywords(empty, kwargs, "|$OOOO:__dlpack__", keywords, &stream, &max_version,
                                             &dl_device_object, &copy_object);
    Py_DECREF(empty);
    if (!parsed) return NULL;

    /* max_version: a consumer that can read DLPack 1.x says so; the legacy capsule otherwise. */
    int versioned = 0;
    if (max_version != Py_None) {
        if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) != 2) {
            PyErr_Format(PyExc_TypeError, "max_version must be a (major, minor) tuple or None, not %R", max_version);
            return NULL;
        }
        long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
        if (major == -1 && PyErr_Occurred()) return NULL;
        versioned = major >= 1;
    }
    int copy = -1; /* None: no copy needed, none made */
    if (copy_object != Py_None) {
        if (!PyBool_Check(copy_object)) {
            PyErr_Format(PyExc_TypeError, "copy must be True, False or None, not %R", copy_object);
            return NULL;
        }
        copy = copy_object == Py_True;
    }
    dl_device_t device = {lend->device_type, lend->device_id};
    if (dl_device_object != Py_None) {
        dl_device_t wanted;
        if (parse_dl_device(dl_device_object, "dl_device", &wanted) < 0) return NULL;
        /* Pinned host memory is the CPU's as well, with no copy. */
        int same = wanted.device_type == device.device_type && wanted.device_id == device.device_id;
        int pinned_as_cpu = (device.device_type == DL_CUDA_HOST || device.device_type == DL_ROCM_HOST) &&
                            wanted.device_type == DL_CPU && wanted.device_id == 0;
        if (!same && !pinned_as_cpu) {
            PyErr_Format(PyExc_BufferError,
                         "cannot export memory on DLPack device (%d, %d) to (%d, %d): uform makes no cross-device "
                         "copies here (Executor.copy_to_host copies device memory into a host array)",
                         (int)device.device_type, (int)device.device_id, (int)wanted.device_type,
                         (int)wanted.device_id);
            return NULL;
        }
        device = wanted;
    }
    if (copy == 1) {
        if (has_streams(lend->device_type)) {
            PyErr_SetString(PyExc_BufferError, "copy=True: uform makes no device copies; Executor.copy_to_host "
                                               "copies device memory into a host array");
            return NULL;
        }
        device.device_type = DL_CPU; /* the copy is plain host memory */
        device.device_id = 0;
    }
    /* stream: only the stream-ordered devices take one; -1 asks for no synchronisation. The
     * array API standard's values: CUDA None or 1 the legacy default stream, 2 the per-thread
     * default stream (cuda.h's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD handles are those
     * numbers), ROCm None or 0 the default stream (NULL), anything above 2 a stream handle. */
    void *native_stream = NULL;
    int order = 1;
    if (!has_streams(device.device_type)) {
        if (stream != Py_None) {
            PyErr_Format(PyExc_BufferError, "stream must be None for DLPack device type %d, not %R",
                         (int)device.device_type, stream);
            return NULL;
        }
    } else if (stream != Py_None) {
        if (!PyLong_Check(stream) || PyBool_Check(stream)) {
            PyErr_Format(PyExc_TypeError, "stream must be an int or None, not %.100s", Py_TYPE(stream)->tp_name);
            return NULL;
        }
        long long value = PyLong_AsLongLong(stream);
        if (value == -1 && PyErr_Occurred()) return NULL;
        if (value < -1 || (value == 0 && device.device_type == DL_CUDA) ||
            ((value == 1 || value == 2) && device.device_type == DL_ROCM)) {
            PyErr_Format(PyExc_ValueError, "stream %R is not valid for DLPack device type %d", stream,
                         (int)device.device_type);
            return NULL;
        }
        if (value == -1) order = 0;
        else if ((unsigned long long)value > UINTPTR_MAX) {
            PyErr_Format(PyExc_ValueError, "stream %R is no stream handle", stream);
            return NULL;
        } else
            native_stream = (void *)(uintptr_t)value;
    }
    if (has_streams(device.device_type) && lend->synchronize && order)
        if (lend->synchronize(lend->owner, lend->device, native_stream) < 0) return NULL;

    export_t *export = PyMem_RawCalloc(1, sizeof *export);
    if (!export) return PyErr_NoMemory();
    void *data = lend->data;
    if (copy == 1) {
        export->copy = PyMem_RawMalloc(lend->bytes ? lend->bytes : 1);
        if (!export->copy) {
            PyMem_RawFree(export);
            return PyErr_NoMemory();
        }
        memcpy(export->copy, lend->data, lend->bytes);
        data = export->copy;
    }
    export->versioned = versioned;
    export->shape[0] = (int64_t)lend->bytes;
    dl_tensor_t tensor = {
        .data = data,
        .device = device,
        .ndim = 1,
        .dtype = {DL_UINT, 8, 1},
        .shape = export->shape,
        .strides = NULL,
        .byte_offset = 0,
    };
    if (versioned) {
        export->tensor.versioned.version = (dl_version_t){1, 0};
        export->tensor.versioned.manager_ctx = export;
        export->tensor.versioned.deleter = versioned_deleter;
        export->tensor.versioned.flags = copy == 1 ? DL_FLAG_IS_COPIED : 0;
        export->tensor.versioned.dl_tensor = tensor;
    } else {
        export->tensor.legacy.dl_tensor = tensor;
        export->tensor.legacy.manager_ctx = export;
        export->tensor.legacy.deleter = legacy_deleter;
    }
    PyObject *capsule = PyCapsule_New(&export->tensor, versioned ? "dltensor_versioned" : "dltensor",
                                      capsule_destructor);
    if (!capsule) {
        PyMem_RawFree(export->copy);
        PyMem_RawFree(export);
        return NULL;
    }
    if (copy != 1) { /* a copy lends nothing: the lender may close under it */
        export->owner = Py_NewRef(lend->owner);
        export->release = lend->release;
        lend->hold(lend->owner);
    }
    return capsule;
}
