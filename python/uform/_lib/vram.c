/* uform.lib: The Executor's GPU verbs: device functions, staged copies, device scratch and staging. */
#include "binding.h"

PyTypeObject *DeviceSlotType;

static PyStructSequence_Field DeviceSlot_fields[] = {
    {"device", "Its index among the executor's devices."},
    {"ordinal", "Its position in uform.gpu_devices()."},
    {"vendor", "The vendor whose runtime the handles below belong to."},
    {"native_device", "The CUdevice, or the HIP device id."},
    {"native_context", "CUDA: the primary CUcontext, current on this thread; HIP: 0."},
    {"stream", "The executor's CUstream or hipStream_t on this device, as an int."},
    {"thread", "The host thread (logical slot) running the function."},
    {NULL, NULL},
};

PyStructSequence_Desc DeviceSlot_desc = {
    "uform.lib.DeviceSlot", "One device of a VRAM executor, as a device function is given it; valid during the call.",
    DeviceSlot_fields, 7};

PyObject *device_slot_new(const uform_device_slot_t *slot) {
    PyObject *result = PyStructSequence_New(DeviceSlotType);
    if (!result) return NULL;
    PyObject *items[7] = {
        PyLong_FromSize_t(slot->device),
        PyLong_FromLong((long)slot->ordinal),
        enum_member("GPUVendor", (long)slot->vendor),
        PyLong_FromLong((long)slot->native_device),
        PyLong_FromSize_t((size_t)(uintptr_t)slot->native_context),
        PyLong_FromSize_t((size_t)(uintptr_t)slot->stream),
        PyLong_FromSize_t(slot->thread),
    };
    return structseq_filled(result, items, 7);
}

/* ---- the device function a thread is running ------------------------------------------------ */

/* Innermost first: a device function may run another executor's call whose device function runs
 * on this same thread. */
static _Thread_local device_function_scope_t *device_functions;

void device_function_enter(device_function_scope_t *scope, void *owner, uform_executor_t *executor) {
    scope->owner = owner;
    scope->executor = executor;
    scope->staging_views = NULL;
    scope->staging_bytes = 0;
    scope->vendor = 0;
    scope->outer = device_functions;
    device_functions = scope;
}

/* ---- staging views: lent to one device function ----------------------------------------------
 *
 * A Staging object lends a range of a device's pinned staging: a buffer and a DLPack producer
 * (kDLCUDAHost, kDLROCMHost) while its device function runs. When that function returns, or asks
 * for more staging than before (the C library then frees the old buffer), every earlier view is
 * invalidated and its memoryviews released. An export that cannot be revoked (a numpy array, a
 * DLPack tensor) fails the call with BufferError; it also leaves the executor "lending": until
 * the last such export is dropped, staged copies, larger staging requests and close() raise
 * BufferError rather than free or overwrite memory a consumer still reads. */

typedef struct {
    PyObject_HEAD
    ExecutorObject *executor; /* strong: a lent view keeps it from being freed */
    char *memory;
    Py_ssize_t bytes;
    Py_ssize_t exports;  /* buffers and DLPack tensors taken from it */
    int32_t device_type; /* DL_CUDA_HOST or DL_ROCM_HOST */
    int valid;           /* cleared when its device function returns or grows its staging */
    int lent;            /* counted in executor->lent_staging: exports outlived the function */
} StagingObject;

static void staging_let_go(PyObject *opaque) {
    StagingObject *self = (StagingObject *)opaque;
    if (--self->exports == 0 && self->lent) {
        self->lent = 0;
        self->executor->lent_staging--;
    }
}

static void staging_hold(PyObject *opaque) { ((StagingObject *)opaque)->exports++; }

static int staging_check(StagingObject *self) {
    if (!self->valid) {
        PyErr_SetString(PyExc_BufferError, "staging memory is only valid inside the device function that asked for "
                                           "it, until a larger staging request");
        return -1;
    }
    return 0;
}

static int Staging_getbuffer(StagingObject *self, Py_buffer *view, int flags) {
    view->obj = NULL;
    if (staging_check(self) < 0) return -1;
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->memory, self->bytes, 0, flags) < 0) return -1;
    self->exports++;
    return 0;
}

static void Staging_releasebuffer(StagingObject *self, Py_buffer *view) { staging_let_go((PyObject *)self); }

static PyBufferProcs Staging_buffer = {
    .bf_getbuffer = (getbufferproc)Staging_getbuffer,
    .bf_releasebuffer = (releasebufferproc)Staging_releasebuffer,
};

static lend_t staging_lend(StagingObject *self) {
    lend_t lend = {self->memory, (size_t)self->bytes, self->device_type, 0, (PyObject *)self, staging_hold,
                   staging_let_go, NULL};
    return lend;
}

static PyObject *Staging_dlpack(StagingObject *self, PyObject *args, PyObject *kwargs) {
    if (staging_check(self) < 0) return NULL;
    lend_t lend = staging_lend(self);
    return dlpack_export(&lend, args, kwargs);
}

static PyObject *Staging_dlpack_device(StagingObject *self, PyObject *unused) {
    lend_t lend = staging_lend(self);
    return dlpack_device_tuple(&lend);
}

static void Staging_dealloc(StagingObject *self) {
    Py_CLEAR(self->executor);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Staging_get_nbytes(StagingObject *self, void *unused) { return PyLong_FromSsize_t(self->bytes); }
static PyObject *Staging_get_valid(StagingObject *self, void *unused) { return PyBool_FromLong(self->valid); }

PyDoc_STRVAR(Staging_dlpack_doc,
             "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
             "--\n\n"
             "A DLPack capsule of the staging: a 1-D uint8 tensor on kDLCUDAHost (kDLROCMHost on AMD),\n"
             "zero copy, valid inside its device function only.\n\n"
             "Arguments:\n"
             "  stream: must be None (the default).\n"
             "  max_version, copy: as Arena.__dlpack__ (None by default).\n"
             "  dl_device: None (the default), its own device, or (1, 0): pinned memory is the CPU's\n"
             "    too, answered without a copy (torch 1.13 reads only that).\n\n"
             "Raises:\n"
             "  BufferError: its device function returned or grew its staging, another dl_device.\n\n"
             "Example:\n"
             "    pinned = torch.from_dlpack(staging.__dlpack__(dl_device=(1, 0)))");

PyDoc_STRVAR(Staging_dlpack_device_doc,
             "__dlpack_device__($self, /)\n"
             "--\n\n"
             "(3, 0) for CUDA pinned memory, (11, 0) for ROCm's.\n\n"
             "Raises:\n"
             "  Never raises.\n\n"
             "Example:\n"
             "    assert staging.__dlpack_device__() == (3, 0)");

static PyMethodDef Staging_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))Staging_dlpack, METH_VARARGS | METH_KEYWORDS, Staging_dlpack_doc},
    {"__dlpack_device__", (PyCFunction)Staging_dlpack_device, METH_NOARGS, Staging_dlpack_device_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Staging_getset[] = {
    {"nbytes", (getter)Staging_get_nbytes, NULL, "Bytes it spans.", NULL},
    {"valid", (getter)Staging_get_valid, NULL, "Whether its device function still runs and has not grown it.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject StagingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Staging",
    .tp_basicsize = sizeof(StagingObject),
    .tp_dealloc = (destructor)Staging_dealloc,
    .tp_as_buffer = &Staging_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Pinned staging memory lent to one device function: a buffer and a DLPack producer\n"
              "(numpy.from_dlpack, torch.from_dlpack) until that function returns or grows its staging.",
    .tp_methods = Staging_methods,
    .tp_getset = Staging_getset,
};

/* A Staging of `bytes` at `memory`, recorded in `scope` to end with it; `as_memoryview` wraps it
 * in a memoryview, which is recorded and released with it. */
static PyObject *staging_view(ExecutorObject *executor, device_function_scope_t *scope, void *memory, size_t bytes,
                              int as_memoryview) {
    if (!(StagingType.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&StagingType) < 0) return NULL;
    if (!scope->staging_views && !(scope->staging_views = PyList_New(0))) return NULL;
    StagingObject *staging = PyObject_New(StagingObject, &StagingType);
    if (!staging) return NULL;
    staging->executor = (ExecutorObject *)Py_NewRef(executor);
    staging->memory = memory;
    staging->bytes = (Py_ssize_t)bytes;
    staging->exports = 0;
    staging->device_type = scope->vendor == UFORM_GPU_VENDOR_AMD ? DL_ROCM_HOST : DL_CUDA_HOST;
    staging->valid = 1;
    staging->lent = 0;
    if (PyList_Append(scope->staging_views, (PyObject *)staging) < 0) {
        Py_DECREF(staging);
        return NULL;
    }
    if (!as_memoryview) return (PyObject *)staging;
    PyObject *view = PyMemoryView_FromObject((PyObject *)staging);
    Py_DECREF(staging); /* the list and the view hold it */
    if (view && PyList_Append(scope->staging_views, view) < 0) Py_CLEAR(view);
    return view;
}

/* Invalidates every view `scope` handed out: memoryviews are released (a later access raises
 * ValueError), Staging objects stop exporting. Answers how many still have exports that cannot
 * be revoked; each of those makes its executor lending until they are dropped. */
static Py_ssize_t staging_views_end(device_function_scope_t *scope) {
    PyObject *views = scope->staging_views;
    scope->staging_views = NULL;
    if (!views) return 0;
    Py_ssize_t leaked = 0;
    /* memoryviews first: releasing one drops its export of its Staging */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(views); ++i) {
        PyObject *view = PyList_GET_ITEM(views, i);
        if (!PyMemoryView_Check(view)) continue;
        PyObject *result = PyObject_CallMethod(view, "release", NULL);
        if (result)
            Py_DECREF(result);
        else
            PyErr_Clear(); /* exported further (a slice, an array): counted below */
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(views); ++i) {
        PyObject *item = PyList_GET_ITEM(views, i);
        if (PyMemoryView_Check(item)) continue;
        StagingObject *staging = (StagingObject *)item;
        staging->valid = 0;
        if (staging->exports > 0 && !staging->lent) {
            staging->lent = 1;
            staging->executor->lent_staging++;
            leaked++;
        }
    }
    Py_DECREF(views);
    return leaked;
}

/* BufferError when a staging export outlived its device function: what would free or overwrite
 * the staging (a staged copy, more staging, close) waits until it is dropped. */
int executor_staging_check(ExecutorObject *self, const char *what) {
    if (self->lent_staging == 0) return 0;
    PyErr_Format(PyExc_BufferError,
                 "%s would free or overwrite pinned staging that %zd export%s (an array or DLPack tensor taken "
                 "from Executor.staging) still read%s after %s device function returned; drop %s first",
                 what, self->lent_staging, self->lent_staging == 1 ? "" : "s", self->lent_staging == 1 ? "s" : "",
                 self->lent_staging == 1 ? "its" : "their", self->lent_staging == 1 ? "it" : "them");
    return -1;
}

void device_function_leave(device_function_scope_t *scope) {
    device_functions = scope->outer;
    Py_ssize_t leaked = staging_views_end(scope);
    if (leaked)
        PyErr_Format(PyExc_BufferError,
                     "%zd staging view%s outlived the device function that asked for %s; copy what is needed "
                     "before returning",
                     leaked, leaked == 1 ? "" : "s", leaked == 1 ? "it" : "them");
}

/* The C executor of the device function this thread is running for `owner`, else NULL. */
static uform_executor_t *running_device_executor(void *owner) {
    for (device_function_scope_t *scope = device_functions; scope; scope = scope->outer)
        if (scope->owner == owner) return scope->executor;
    return NULL;
}

/* The C executor for scratch and staging: the one whose device function is running on this
 * thread (a close may be under way then), else an open one. */
static uform_executor_t *scope_executor(ExecutorObject *self) {
    uform_executor_t *executor = running_device_executor(self);
    if (executor) return executor;
    if (executor_open(self) < 0) return NULL;
    return self->executor;
}

/* ---- one call, synchronous or deferred --------------------------------------------------------- */

typedef enum gpu_verb_t { GPU_FOR_DEVICES, GPU_COPY_TO_DEVICE, GPU_COPY_TO_HOST } gpu_verb_t;

typedef struct gpu_request_t {
    gpu_verb_t verb;
    uform_device_function_t function; /* for_devices */
    void *context;
    size_t device; /* copies */
    void *device_pointer;
    void *host;
    size_t bytes;
    int python; /* function is the trampoline: context becomes the trampolines' */
} gpu_request_t;

static uform_status_t gpu_dispatch(uform_executor_t *executor, const uform_call_t *call, const gpu_request_t *r) {
    switch (r->verb) {
    case GPU_FOR_DEVICES: return uform_executor_for_devices(executor, call, r->function, r->context);
    case GPU_COPY_TO_DEVICE:
        return uform_executor_copy_to_device(executor, call, r->device, r->device_pointer, r->host, r->bytes);
    case GPU_COPY_TO_HOST:
        return uform_executor_copy_to_host(executor, call, r->host, r->device, r->device_pointer, r->bytes);
    }
    return UFORM_STATUS_INVALID_ARGUMENT;
}

/* A GPU verb as verb_run submits it: a Python device function gets the trampolines' context. */
static uform_status_t gpu_submit(uform_executor_t *executor, const uform_call_t *call, call_context_t *context,
                                 void *opaque) {
    gpu_request_t *request = opaque;
    if (request->python) request->context = context;
    return gpu_dispatch(executor, call, request);
}

/* Runs one GPU verb. `python_function` (for_devices with a callable) replaces request->function
 * and request->context by the trampoline and its context; `keep` stays alive until a deferred call
 * ends (a copy's buffer, a native context's owner). */
static PyObject *gpu_run(ExecutorObject *self, gpu_request_t *request, PyObject *python_function, PyObject *keep,
                         int deferred, PyObject *progress, const char *verb) {
    if (keep == Py_None) keep = NULL;
    if (python_function) {
        request->function = device_trampoline;
        request->python = 1;
    }
    return verb_run(self, gpu_submit, request, python_function, progress, keep, deferred, verb, 1);
}

/* ---- device functions ------------------------------------------------------------------------ */

const char Executor_for_devices_doc[] =
    "for_devices($self, /, fn, *, deferred=False, progress=None)\n"
    "--\n"
    "\n"
    "Calls fn(slot) once for every device of a VRAM executor, in parallel on its host threads,\n"
    "with slot a uform.DeviceSlot and that device's context current.\n"
    "\n"
    "fn may enqueue work on slot.stream (its own kernels, a framework's external stream) and ask\n"
    "for device_scratch() and staging(); the call ends once every fn returned and every stream\n"
    "drained. fn runs holding the GIL; the first exception it raises fails the call and is raised\n"
    "again here. Progress counts devices finished.\n"
    "\n"
    "Arguments:\n"
    "  fn: a callable taking a uform.DeviceSlot.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  What fn raised. DeviceFaultError: a stream faulted (sticky). InvalidArgumentError: a RAM\n"
    "  executor. ContendedError, ForkedError, KeyboardInterrupt: as for_n.\n"
    "\n"
    "Example:\n"
    "    def on_device(slot):\n"
    "        torch_stream = torch.cuda.ExternalStream(slot.stream)\n"
    "        ...\n"
    "    gpus.for_devices(on_device)\n"
    "\n"
    "Calls uform_executor_for_devices.";

PyObject *Executor_for_devices(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *function, *progress;
    int deferred;
    if (parse_callable_verb(args, kwargs, "O|$pO:for_devices", &function, &deferred, &progress) < 0) return NULL;
    gpu_request_t request = {.verb = GPU_FOR_DEVICES};
    return gpu_run(self, &request, function, NULL, deferred, progress, "for_devices");
}

const char Executor_for_devices_native_doc[] =
    "for_devices_native($self, /, function, context=0, *, deferred=False, progress=None, keep=None)\n"
    "--\n"
    "\n"
    "As for_devices, calling the C function `function`, a uform_device_function_t\n"
    "`uform_status_t (*)(void *context, const uform_device_slot_t *device)`, without the GIL.\n"
    "\n"
    "Arguments:\n"
    "  function, context (default 0), keep (default None): as for_n_native.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  As for_devices and for_n_native.\n"
    "\n"
    "Example:\n"
    "    gpus.for_devices_native(library.launch, ctypes.pointer(arguments))\n"
    "\n"
    "Calls uform_executor_for_devices.";

PyObject *Executor_for_devices_native(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *function_object, *context_object, *progress, *keep;
    int deferred;
    if (parse_native_verb(args, kwargs, "O|O$pOO:for_devices_native", &function_object, &context_object, &deferred,
                          &progress, &keep) < 0)
        return NULL;
    void *function = NULL, *context = NULL;
    PyObject *held = NULL;
    if (parse_native(function_object, context_object, keep, &function, &context, &held) < 0) return NULL;
    gpu_request_t request = {.verb = GPU_FOR_DEVICES, .function = (uform_device_function_t)function,
                             .context = context};
    PyObject *result = gpu_run(self, &request, NULL, held, deferred, progress, "for_devices_native");
    Py_DECREF(held);
    return result;
}

/* ---- staged copies --------------------------------------------------------------------------- */

/* A memoryview holding `object`'s buffer exported (so a bytearray cannot resize and an arena
 * cannot close) for as long as the copy may touch it. */
static PyObject *copy_buffer(PyObject *object, const char *argument, int writable) {
    if (!PyObject_CheckBuffer(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be a %sbuffer (bytes%s, a numpy array, ...), not %.100s", argument,
                     writable ? "writable " : "", writable ? "array, bytearray" : ", bytearray",
                     Py_TYPE(object)->tp_name);
        return NULL;
    }
    PyObject *view = PyMemoryView_FromObject(object);
    if (!view) return NULL;
    Py_buffer *buffer = PyMemoryView_GET_BUFFER(view);
    if (writable && buffer->readonly) {
        PyErr_Format(PyExc_TypeError, "%s must be a writable buffer, not a read-only %.100s", argument,
                     Py_TYPE(object)->tp_name);
        Py_DECREF(view);
        return NULL;
    }
    if (!PyBuffer_IsContiguous(buffer, 'C')) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous", argument);
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

static PyObject *run_copy(ExecutorObject *self, gpu_verb_t verb, PyObject *buffer_object, PyObject *device_object,
                          PyObject *pointer_object, int deferred, PyObject *progress) {
    const char *name = verb == GPU_COPY_TO_DEVICE ? "copy_to_device" : "copy_to_host";
    if (executor_staging_check(self, name) < 0) return NULL;
    gpu_request_t request = {.verb = verb};
    if (parse_size(device_object, "device", &request.device) < 0 ||
        parse_address(pointer_object, "device_pointer", &request.device_pointer) < 0)
        return NULL;
    PyObject *view = copy_buffer(buffer_object, verb == GPU_COPY_TO_DEVICE ? "source" : "destination",
                                 verb == GPU_COPY_TO_HOST);
    if (!view) return NULL;
    Py_buffer *buffer = PyMemoryView_GET_BUFFER(view);
    request.host = buffer->buf;
    request.bytes = (size_t)buffer->len;
    PyObject *result = gpu_run(self, &request, NULL, view, deferred, progress, name);
    Py_DECREF(view); /* a deferred call holds its own reference until it ends */
    return result;
}

const char Executor_copy_to_device_doc[] =
    "copy_to_device($self, /, device, device_pointer, source, *, deferred=False, progress=None)\n"
    "--\n"
    "\n"
    "Copies the bytes of `source`, any C-contiguous buffer (bytes, bytearray, a numpy array, a\n"
    "host Arena), to `device_pointer` on the executor's device `device`.\n"
    "\n"
    "Pageable memory is staged through pinned buffers, double-buffered. The GIL is released while\n"
    "it runs; a deferred call keeps `source` exported (a bytearray cannot resize, an arena cannot\n"
    "close) until the Deferred is released. Progress counts bytes.\n"
    "\n"
    "Arguments:\n"
    "  device: the index among the executor's devices.\n"
    "  device_pointer: the destination on that device (Arena.device_pointer answers one).\n"
    "  source: the bytes to copy.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  InvalidArgumentError: a device out of range, a range the driver refuses. TypeError: a\n"
    "  source without the buffer protocol. ValueError: a non-contiguous source. BufferError: a\n"
    "  staging export outlived its device function. OutOfMemoryError, DeviceFaultError,\n"
    "  ContendedError, KeyboardInterrupt.\n"
    "\n"
    "Example:\n"
    "    pointer = weights.allocate(len(blob))\n"
    "    gpus.copy_to_device(1, weights.device_pointer(1, pointer), blob)\n"
    "\n"
    "Calls uform_executor_copy_to_device.";

PyObject *Executor_copy_to_device(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"device", "device_pointer", "source", "deferred", "progress", NULL};
    PyObject *device_object, *pointer_object, *source, *progress = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$pO:copy_to_device", keywords, &device_object,
                                     &pointer_object, &source, &deferred, &progress))
        return NULL;
    return run_copy(self, GPU_COPY_TO_DEVICE, source, device_object, pointer_object, deferred, progress);
}

const char Executor_copy_to_host_doc[] =
    "copy_to_host($self, /, destination, device, device_pointer, *, deferred=False, progress=None)\n"
    "--\n"
    "\n"
    "Copies len(destination) bytes from `device_pointer` on the executor's device `device` into\n"
    "`destination`, a writable C-contiguous buffer (bytearray, a numpy array, a host Arena).\n"
    "\n"
    "The GIL is released while it runs; a deferred call keeps `destination` exported until the\n"
    "Deferred is released, and its bytes are only complete once it finished. Progress counts\n"
    "bytes.\n"
    "\n"
    "Arguments:\n"
    "  destination: where the bytes go; its length is the copy's.\n"
    "  device, device_pointer: as copy_to_device, the source.\n"
    "  deferred (default False), progress (default None): as for_n.\n"
    "\n"
    "Raises:\n"
    "  As copy_to_device; TypeError for a read-only destination.\n"
    "\n"
    "Example:\n"
    "    back = bytearray(4096)\n"
    "    gpus.copy_to_host(back, 0, pointer)\n"
    "\n"
    "Calls uform_executor_copy_to_host.";

PyObject *Executor_copy_to_host(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"destination", "device", "device_pointer", "deferred", "progress", NULL};
    PyObject *destination, *device_object, *pointer_object, *progress = Py_None;
    int deferred = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$pO:copy_to_host", keywords, &destination, &device_object,
                                     &pointer_object, &deferred, &progress))
        return NULL;
    return run_copy(self, GPU_COPY_TO_HOST, destination, device_object, pointer_object, deferred, progress);
}

/* ---- scratch and staging, from inside a device function ----------------------------------------- */

static int parse_device_bytes(PyObject *args, PyObject *kwargs, const char *format, size_t *device, size_t *bytes) {
    static char *keywords[] = {"device", "nbytes", NULL};
    PyObject *device_object, *bytes_object;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &device_object, &bytes_object)) return -1;
    if (parse_size(device_object, "device", device) < 0 || parse_size(bytes_object, "nbytes", bytes) < 0) return -1;
    return 0;
}

const char Executor_device_scratch_doc[] =
    "device_scratch($self, /, device, nbytes)\n"
    "--\n"
    "\n"
    "The address of at least `nbytes` of device memory on `device`, 256-byte aligned, grown to a\n"
    "high-water mark and kept until the executor closes. Call it from the device function given\n"
    "slot.device == device; growing replaces the buffer, so an address from an earlier, smaller\n"
    "request is then invalid.\n"
    "\n"
    "Arguments:\n"
    "  device: slot.device of the running device function.\n"
    "  nbytes: the bytes needed.\n"
    "\n"
    "Raises:\n"
    "  OutOfMemoryError: past the executor's scratch_limit, or the device is full (the old\n"
    "  buffer stays valid then). InvalidArgumentError: outside a device function of `device`.\n"
    "\n"
    "Example:\n"
    "    def on_device(slot):\n"
    "        workspace = gpus.device_scratch(slot.device, 1 << 20)\n"
    "\n"
    "Calls uform_executor_device_scratch.";

PyObject *Executor_device_scratch(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    size_t device, bytes;
    if (parse_device_bytes(args, kwargs, "OO:device_scratch", &device, &bytes) < 0) return NULL;
    uform_executor_t *executor = scope_executor(self);
    if (!executor) return NULL;
    void *scratch = NULL;
    uform_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_device_scratch(executor, device, bytes, &scratch);
    Py_END_ALLOW_THREADS
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return PyLong_FromSize_t((size_t)(uintptr_t)scratch);
}

const char Executor_staging_doc[] =
    "staging($self, /, device, nbytes)\n"
    "--\n"
    "\n"
    "A writable memoryview of `nbytes` of the pinned host staging of `device`, grown to a\n"
    "high-water mark. Call it from the device function given slot.device == device.\n"
    "\n"
    "The memory is lent to that function only. When it returns, and when it asks for more\n"
    "staging than before (which may free the old buffer), earlier views are released: using\n"
    "one raises ValueError. A slice or an array over a view still alive then cannot be revoked:\n"
    "the call fails with BufferError, and until it is dropped staged copies, larger staging\n"
    "requests and close() raise BufferError instead of freeing memory it reads.\n"
    "\n"
    "Arguments:\n"
    "  device: slot.device of the running device function.\n"
    "  nbytes: the bytes needed.\n"
    "\n"
    "Raises:\n"
    "  RuntimeError: outside a device function of this executor. InvalidArgumentError: another\n"
    "  device. BufferError: as above. OutOfMemoryError: no pinned memory.\n"
    "\n"
    "Example:\n"
    "    def on_device(slot):\n"
    "        gpus.staging(slot.device, 4096)[:4] = b\"data\"\n"
    "\n"
    "Calls uform_executor_staging.";

const char Executor_staging_tensor_doc[] =
    "staging_tensor($self, /, device, nbytes)\n"
    "--\n"
    "\n"
    "As staging(), a uform.lib.Staging object instead of a memoryview: a buffer and a DLPack\n"
    "producer on kDLCUDAHost (kDLROCMHost on AMD), lent on the same terms.\n"
    "\n"
    "Arguments:\n"
    "  device, nbytes: as staging.\n"
    "\n"
    "Raises:\n"
    "  As staging.\n"
    "\n"
    "Example:\n"
    "    def on_device(slot):\n"
    "        pinned = numpy.from_dlpack(gpus.staging_tensor(slot.device, 4096))\n"
    "        pinned[:] = 0\n"
    "        del pinned                 # before returning\n"
    "\n"
    "Calls uform_executor_staging.";

static PyObject *staging_request(ExecutorObject *self, PyObject *args, PyObject *kwargs, const char *format,
                                 int as_memoryview) {
    size_t device, bytes;
    if (parse_device_bytes(args, kwargs, format, &device, &bytes) < 0) return NULL;
    if (bytes > (size_t)PY_SSIZE_T_MAX) {
        PyErr_Format(PyExc_ValueError, "nbytes is too large: %zu", bytes);
        return NULL;
    }
    uform_executor_t *executor = scope_executor(self);
    if (!executor) return NULL;
    /* The C library answers staging only to the device function of `device` on this thread. */
    device_function_scope_t *scope = device_functions;
    while (scope && scope->owner != (void *)self) scope = scope->outer;
    if (scope && bytes > scope->staging_bytes) {
        /* More than before may replace the buffer under the earlier views. */
        if (executor_staging_check(self, "a larger staging request") < 0) return NULL;
        if (staging_views_end(scope) > 0) {
            PyErr_SetString(PyExc_BufferError,
                            "a larger staging request would free memory that an array or DLPack tensor over an "
                            "earlier staging view still reads; drop it first");
            return NULL;
        }
    }
    void *staging = NULL;
    uform_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_staging(executor, device, bytes, &staging);
    Py_END_ALLOW_THREADS
    if (status != UFORM_STATUS_OK) return raise_status(status);
    if (!scope) {
        PyErr_SetString(PyExc_RuntimeError, "staging() is only valid inside a device function of this executor");
        return NULL;
    }
    if (bytes > scope->staging_bytes) scope->staging_bytes = bytes;
    return staging_view(self, scope, staging ? staging : (void *)"", bytes, as_memoryview);
}

PyObject *Executor_staging(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    return staging_request(self, args, kwargs, "OO:staging", 1);
}

PyObject *Executor_staging_tensor(ExecutorObject *self, PyObject *args, PyObject *kwargs) {
    return staging_request(self, args, kwargs, "OO:staging_tensor", 0);
}

PyObject *Executor_get_gpu_class(ExecutorObject *self, void *unused) {
    if (executor_open(self) < 0) return NULL;
    return optional_enum_member("GPUClass", (long)uform_executor_gpu_class(self->executor));
}

PyObject *Executor_get_devices(ExecutorObject *self, void *unused) {
    if (executor_open(self) < 0) return NULL;
    return PyLong_FromSize_t(uform_executor_devices(self->executor));
}
