/* uform.lib: An arena's memory as arrays: the arena's own DLPack export (a host arena's whole
 * capacity) and uform.ArenaView, a range of it (one allocation, say) on the host or on one
 * device of a device arena, exported by DLPack and, on the host, by the buffer protocol.
 *
 * Every export is counted in the arena's `exports`, so close() refuses (BufferError) while a
 * consumer still reads the memory, whichever thread lets it go last. */
#include "binding.h"

void arena_hold(PyObject *arena) { ((ArenaObject *)arena)->exports++; }

void arena_let_go(PyObject *arena) { ((ArenaObject *)arena)->exports--; }

/* ---- what each device of a device arena is, in DLPack's terms ---------------------------------- */

int arena_learn_devices(ArenaObject *self) {
    if (self->dl_device_types[0] != 0) return 0;
    ExecutorObject *executor = (ExecutorObject *)self->executor;
    if (executor_check(executor) < 0) return -1;
    if (executor->dl_device_types && executor->dl_devices >= self->devices) {
        /* Learnt when the executor was made: no call, so nothing queued is waited for. */
        memcpy(self->dl_device_types, executor->dl_device_types, self->devices * sizeof(int32_t));
        memcpy(self->dl_device_ids, executor->dl_device_ids, self->devices * sizeof(int32_t));
        return 0;
    }
    uform_status_t status;
    executor->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = device_kinds_ask(executor->executor, self->dl_device_types, self->dl_device_ids);
    Py_END_ALLOW_THREADS
    executor->busy--;
    if (status != UFORM_STATUS_OK) {
        self->dl_device_types[0] = 0;
        return raise_status(status), -1;
    }
    return 0;
}

/* Makes the consumer's stream wait, on the device, for the executor's earlier calls (a deferred
 * copy still writing): uform_executor_order_stream, which waits on the host only for what those
 * calls have not yet queued on the device. Inside one of the executor's own device functions
 * the consumer orders with slot.stream itself. */
static int device_order(PyObject *owner, size_t device, void *stream) {
    ArenaObject *arena = (ArenaObject *)owner;
    ExecutorObject *executor = (ExecutorObject *)arena->executor;
    if (!executor || executor->closed || !executor->executor) return 0; /* close() waited for its calls */
    if (running_callback_of == (void *)executor) return 0;
    uform_status_t status;
    executor->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = uform_executor_order_stream(executor->executor, device, stream);
    Py_END_ALLOW_THREADS
    executor->busy--;
    if (status != UFORM_STATUS_OK) return raise_status(status), -1;
    return 0;
}

/* ---- ArenaView ---------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    ArenaObject *arena; /* strong */
    Py_ssize_t device;  /* -1: host memory */
    char *data;
    size_t bytes;
    int32_t device_type, device_id;
} ArenaViewObject;

static void ArenaView_dealloc(ArenaViewObject *self) {
    Py_CLEAR(self->arena);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static lend_t view_lend(ArenaViewObject *self) {
    lend_t lend = {self->data,
                   self->bytes,
                   self->device_type,
                   self->device_id,
                   (PyObject *)self->arena,
                   arena_hold,
                   arena_let_go,
                   self->device >= 0 ? device_order : NULL,
                   self->device >= 0 ? (size_t)self->device : 0};
    return lend;
}

static PyObject *ArenaView_dlpack(ArenaViewObject *self, PyObject *args, PyObject *kwargs) {
    if (arena_open(self->arena) < 0) return NULL;
    lend_t lend = view_lend(self);
    return dlpack_export(&lend, args, kwargs);
}

static PyObject *ArenaView_dlpack_device(ArenaViewObject *self, PyObject *unused) {
    lend_t lend = view_lend(self);
    return dlpack_device_tuple(&lend);
}

static int ArenaView_getbuffer(ArenaViewObject *self, Py_buffer *view, int flags) {
    view->obj = NULL;
    if (arena_open(self->arena) < 0) return -1;
    if (self->device >= 0) {
        PyErr_SetString(PyExc_BufferError, "a device view's memory lives on its GPU and has no host buffer; "
                                           "take it by DLPack (torch.from_dlpack) or copy it with copy_to_host");
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->data, (Py_ssize_t)self->bytes, 0, flags) < 0) return -1;
    self->arena->exports++;
    return 0;
}

static void ArenaView_releasebuffer(ArenaViewObject *self, Py_buffer *view) { self->arena->exports--; }

static PyBufferProcs ArenaView_buffer = {
    .bf_getbuffer = (getbufferproc)ArenaView_getbuffer,
    .bf_releasebuffer = (releasebufferproc)ArenaView_releasebuffer,
};

static PyObject *ArenaView_get_address(ArenaViewObject *self, void *unused) {
    return PyLong_FromSize_t((size_t)(uintptr_t)self->data);
}
static PyObject *ArenaView_get_nbytes(ArenaViewObject *self, void *unused) { return PyLong_FromSize_t(self->bytes); }
static PyObject *ArenaView_get_device(ArenaViewObject *self, void *unused) {
    if (self->device < 0) Py_RETURN_NONE;
    return PyLong_FromSsize_t(self->device);
}
static PyObject *ArenaView_get_arena(ArenaViewObject *self, void *unused) { return Py_NewRef(self->arena); }

static PyObject *ArenaView_repr(ArenaViewObject *self) {
    if (self->device < 0)
        return PyUnicode_FromFormat("<uform.ArenaView host address=%p nbytes=%zu>", (void *)self->data, self->bytes);
    return PyUnicode_FromFormat("<uform.ArenaView device=%zd address=%p nbytes=%zu>", self->device, (void *)self->data,
                                self->bytes);
}

static const char ArenaView_dlpack_doc[] = "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
    "--\n"
    "\n"
    "A DLPack capsule of the view: a 1-D uint8 tensor over its bytes, zero copy.\n"
    "\n"
    "Arguments:\n"
    "  stream: host views: None (the default). Device views: the consumer's stream, as the\n"
    "    array API standard says: CUDA None or 1 (the legacy default stream), 2 (the per-thread\n"
    "    default stream) or a CUstream handle; ROCm None or 0 (the default stream) or a handle;\n"
    "    -1 asks for no ordering. The stream waits, on the device, for the executor's calls\n"
    "    submitted before (an event and cuStreamWaitEvent / hipStreamWaitEvent): the host waits\n"
    "    only for what those calls have not yet queued on the device (a deferred call still\n"
    "    waiting for its turn).\n"
    "  max_version, dl_device, copy: as Arena.__dlpack__ (a device view refuses copy=True and\n"
    "    any other dl_device with BufferError).\n"
    "\n"
    "Raises:\n"
    "  BufferError, ValueError (a closed arena, an invalid stream), TypeError.\n"
    "\n"
    "Example:\n"
    "    tensor = torch.from_dlpack(arena.view(p, 4096))";
static const char ArenaView_dlpack_device_doc[] = "__dlpack_device__($self, /)\n"
    "--\n"
    "\n"
    "(device_type, device_id): (1, 0) on the host, (2, CUDA ordinal) for CUDA, (10, HIP device\n"
    "id) for ROCm.\n"
    "\n"
    "Raises:\n"
    "  Never raises.\n"
    "\n"
    "Example:\n"
    "    kind, ordinal = arena.device_view(0).__dlpack_device__()";

static PyMethodDef ArenaView_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))ArenaView_dlpack, METH_VARARGS | METH_KEYWORDS, ArenaView_dlpack_doc},
    {"__dlpack_device__", (PyCFunction)ArenaView_dlpack_device, METH_NOARGS, ArenaView_dlpack_device_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ArenaView_getset[] = {
    {"address", (getter)ArenaView_get_address, NULL, "Its first byte's address (on its device, for a device view).",
     NULL},
    {"nbytes", (getter)ArenaView_get_nbytes, NULL, "Bytes it spans.", NULL},
    {"device", (getter)ArenaView_get_device, NULL, "The executor's device it lies on, or None on the host.", NULL},
    {"arena", (getter)ArenaView_get_arena, NULL, "The arena it lies in.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ArenaViewType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.ArenaView",
    .tp_basicsize = sizeof(ArenaViewObject),
    .tp_dealloc = (destructor)ArenaView_dealloc,
    .tp_repr = (reprfunc)ArenaView_repr,
    .tp_as_buffer = &ArenaView_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A range of an arena (one allocation, or all of it) as an array: DLPack (numpy.from_dlpack,\n"
              "torch.from_dlpack) and, on the host, the buffer protocol. Made by Arena.view or\n"
              "Arena.device_view; every export counts against closing the arena.",
    .tp_methods = ArenaView_methods,
    .tp_getset = ArenaView_getset,
};

/* The range [address, address + nbytes) inside [base, base + capacity); None picks the whole
 * arena from `address` on. */
static int parse_range(ArenaObject *self, char *base, PyObject *address_object, PyObject *bytes_object, char **data,
                       size_t *bytes) {
    void *address = base;
    if (address_object != Py_None && parse_address(address_object, "address", &address) < 0) return -1;
    char *first = address;
    if (first < base || first > base + self->capacity) {
        PyErr_Format(PyExc_ValueError, "address %p lies outside the arena [%p, %p)", (void *)first, (void *)base,
                     (void *)(base + self->capacity));
        return -1;
    }
    size_t left = self->capacity - (size_t)(first - base);
    size_t count = left;
    if (bytes_object != Py_None && parse_size(bytes_object, "nbytes", &count) < 0) return -1;
    if (count > left) {
        PyErr_Format(PyExc_ValueError, "%zu bytes from %p run past the arena's end (%zu bytes left)", count,
                     (void *)first, left);
        return -1;
    }
    *data = first;
    *bytes = count;
    return 0;
}

static PyObject *view_new(ArenaObject *arena, Py_ssize_t device, char *data, size_t bytes, int32_t type,
                          int32_t id) {
    if (!(ArenaViewType.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&ArenaViewType) < 0) return NULL;
    ArenaViewObject *view = PyObject_New(ArenaViewObject, &ArenaViewType);
    if (!view) return NULL;
    view->arena = (ArenaObject *)Py_NewRef(arena);
    view->device = device;
    view->data = data;
    view->bytes = bytes;
    view->device_type = type;
    view->device_id = id;
    return (PyObject *)view;
}

const char Arena_view_doc[] =
    "view($self, /, address=None, nbytes=None)\n"
    "--\n"
    "\n"
    "A uform.ArenaView over `nbytes` of a host arena from `address`: a buffer and a DLPack\n"
    "producer, zero copy, the way to an array over one allocation.\n"
    "\n"
    "Arguments:\n"
    "  address: an address allocate() answered, or any inside the arena; None (the default)\n"
    "    is the arena's first byte.\n"
    "  nbytes: the bytes it spans; None (the default) runs to the arena's end.\n"
    "\n"
    "Raises:\n"
    "  ValueError: a range outside the arena, or a closed arena. BufferError: a device arena\n"
    "  (use device_view).\n"
    "\n"
    "Example:\n"
    "    p = arena.allocate(4096)\n"
    "    floats = numpy.from_dlpack(arena.view(p, 4096)).view(numpy.float32)";

PyObject *Arena_view(ArenaObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"address", "nbytes", NULL};
    PyObject *address_object = Py_None, *bytes_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:view", keywords, &address_object, &bytes_object))
        return NULL;
    if (arena_open(self) < 0) return NULL;
    if (self->devices) {
        PyErr_SetString(PyExc_BufferError, "a device arena has one view per device: arena.device_view(device, ...)");
        return NULL;
    }
    char *data;
    size_t bytes;
    if (parse_range(self, self->base, address_object, bytes_object, &data, &bytes) < 0) return NULL;
    return view_new(self, -1, data, bytes, DL_CPU, 0);
}

const char Arena_device_view_doc[] =
    "device_view($self, /, device, address=None, nbytes=None)\n"
    "--\n"
    "\n"
    "A uform.ArenaView over the twin on the executor's device `device` of a range of a device\n"
    "arena. Its DLPack device is (kDLCUDA=2, CUDA ordinal) or (kDLROCM=10, HIP device id).\n"
    "__dlpack__(stream=s) makes the consumer's stream s wait, on the device, for the executor's\n"
    "calls submitted before (a deferred copy still writing), unless s is -1; the host waits only\n"
    "for what those calls have not yet queued. Inside the executor's own device function it\n"
    "orders nothing (order with slot.stream).\n"
    "\n"
    "Arguments:\n"
    "  device: the index among the executor's devices.\n"
    "  address: device 0's address, as allocate() answers it; None (the default) is the\n"
    "    arena's first byte.\n"
    "  nbytes: the bytes it spans; None (the default) runs to the arena's end.\n"
    "\n"
    "Raises:\n"
    "  ValueError: a range outside the arena, or a closed arena. BufferError: a host arena.\n"
    "  InvalidArgumentError: a device out of range. ValueError for a closed executor. The\n"
    "  executor learns each device's DLPack device when it is made; where it could not, the\n"
    "  arena's first device view asks with a call on the executor (after its earlier calls):\n"
    "  RuntimeError from one of its own callbacks, ContendedError while another thread's call\n"
    "  holds it.\n"
    "\n"
    "Example:\n"
    "    p = arena.allocate(1 << 20)\n"
    "    gpus.copy_to_device(1, arena.device_pointer(1, p), data, deferred=True)\n"
    "    tensor = torch.from_dlpack(arena.device_view(1, p, 1 << 20))";

PyObject *Arena_device_view(ArenaObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"device", "address", "nbytes", NULL};
    PyObject *device_object, *address_object = Py_None, *bytes_object = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:device_view", keywords, &device_object, &address_object,
                                     &bytes_object))
        return NULL;
    size_t device;
    if (parse_size(device_object, "device", &device) < 0) return NULL;
    if (arena_open(self) < 0) return NULL;
    if (!self->devices) {
        PyErr_SetString(PyExc_BufferError, "a host arena has no devices: arena.view(...)");
        return NULL;
    }
    char *data;
    size_t bytes;
    if (parse_range(self, self->device_base, address_object, bytes_object, &data, &bytes) < 0) return NULL;
    void *twin = NULL;
    uform_status_t status = uform_arena_device_pointer(self->arena, device, data, &twin);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    if (arena_learn_devices(self) < 0) return NULL;
    return view_new(self, (Py_ssize_t)device, twin, bytes, self->dl_device_types[device], self->dl_device_ids[device]);
}

/* ---- the arena itself: a host arena's whole capacity ---------------------------------------------- */

static int host_only(ArenaObject *self) {
    if (arena_open(self) < 0) return -1;
    if (self->devices) {
        PyErr_SetString(PyExc_BufferError, "a device arena has one tensor per device: "
                                           "torch.from_dlpack(arena.device_view(device))");
        return -1;
    }
    return 0;
}

const char Arena_dlpack_doc[] =
    "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n"
    "--\n"
    "\n"
    "A DLPack capsule of a host arena: a 1-D uint8 tensor over its whole capacity on kDLCPU,\n"
    "zero copy, so writes show both ways. While a tensor from it lives, close() raises\n"
    "BufferError. Consumers call it: numpy.from_dlpack(arena), torch.from_dlpack(arena).\n"
    "\n"
    "Arguments:\n"
    "  stream: must be None (the default): host memory has no stream.\n"
    "  max_version: the consumer's highest DLPack version; (1, 0) or above answers a versioned\n"
    "    \"dltensor_versioned\" capsule, None (the default) the legacy \"dltensor\" one.\n"
    "  dl_device: None (the default) or (1, 0); another device raises BufferError.\n"
    "  copy: None (the default) or False never copy; True answers a private copy, flagged\n"
    "    IS_COPIED, that holds nothing of the arena.\n"
    "\n"
    "Raises:\n"
    "  BufferError: another dl_device, a stream, a device arena (use device_view).\n"
    "  ValueError: a closed arena. TypeError: malformed keywords.\n"
    "\n"
    "Example:\n"
    "    array = numpy.from_dlpack(arena)\n"
    "    array_view = torch.from_dlpack(arena)   # the same bytes";

PyObject *Arena_dlpack(ArenaObject *self, PyObject *args, PyObject *kwargs) {
    if (host_only(self) < 0) return NULL;
    lend_t lend = {self->base, self->capacity, DL_CPU, 0, (PyObject *)self, arena_hold, arena_let_go, NULL};
    return dlpack_export(&lend, args, kwargs);
}

const char Arena_dlpack_device_doc[] = "__dlpack_device__($self, /)\n"
    "--\n"
    "\n"
    "(1, 0), kDLCPU, for a host arena.\n"
    "\n"
    "Raises:\n"
    "  BufferError: a device arena (use device_view). ValueError: a closed arena.\n"
    "\n"
    "Example:\n"
    "    assert arena.__dlpack_device__() == (1, 0)";

PyObject *Arena_dlpack_device(ArenaObject *self, PyObject *unused) {
    if (host_only(self) < 0) return NULL;
    return Py_BuildValue("(ii)", DL_CPU, 0);
}
