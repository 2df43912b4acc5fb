/* uform.lib: uform.Arena: memory placed where an executor computes, bump-allocated and freed whole.
 *
 * A host arena (RAM or no executor) exposes its whole capacity through the buffer protocol, and
 * refuses to close while a buffer or a DLPack tensor taken from it lives. A device arena (VRAM
 * executor) spans every device of its executor symmetrically, exposes no buffer but a DLPack
 * tensor per device (arena_view.c), and holds its Executor: the C library leaves closing an
 * executor freed meanwhile to its last device arena. */
#include "binding.h"

int arena_open(ArenaObject *self) {
    if (!self->arena) {
        PyErr_SetString(PyExc_ValueError, "the arena is closed");
        return -1;
    }
    return 0;
}

static void *arena_free_main(void *arena) {
    uform_arena_free(arena);
    return NULL;
}

/* Frees the C arena. A device arena's free may close its executor (joining its threads), so it
 * runs without the GIL, and never on one of that executor's own threads. */
static void arena_release(ArenaObject *self) {
    uform_arena_t *arena = self->arena;
    self->arena = NULL;
    self->base = NULL;
    if (!arena) return;
    if (self->executor && running_callback_of == (void *)self->executor) {
        pthread_t thread;
        if (start_quiet_thread(&thread, arena_free_main, arena) == 0) pthread_detach(thread);
        /* else it leaks: freeing here would wait on the thread doing it */
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    uform_arena_free(arena);
    Py_END_ALLOW_THREADS
}

static void Arena_dealloc(ArenaObject *self) {
    if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
    arena_release(self);
    Py_CLEAR(self->executor); /* after the arena: it may be the executor's last holder */
    PyMem_Free(self->dl_device_types);
    PyMem_Free(self->dl_device_ids);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(Arena_new_in_doc,
             "new_in($cls, /, executor, capacity)\n"
    "--\n"
    "\n"
    "Reserves `capacity` bytes where `executor` computes: host memory bound to its NUMA nodes\n"
    "for a RAM executor or None (huge pages from 2 MiB up), or device memory on every device of\n"
    "a VRAM executor, at the same offsets on each. A host arena may outlive its executor; a\n"
    "device arena keeps it, and closes it when the executor was closed first.\n"
    "\n"
    "Arguments:\n"
    "  executor: a uform.Executor, or None for plain host memory.\n"
    "  capacity: the bytes to reserve (on each device, for a device arena).\n"
    "\n"
    "Raises:\n"
    "  OutOfMemoryError: the memory is not there. TypeError: an executor that is not one.\n"
    "  ValueError: a closed executor, a negative capacity. OverflowError: a host capacity\n"
    "  beyond a buffer's reach.\n"
    "\n"
    "Example:\n"
    "    with uform.Arena.new_in(executor, 1 << 20) as arena:\n"
    "        pointer = arena.allocate(4096)\n"
    "\n"
    "Calls uform_arena_new_in.");

static PyObject *Arena_new_in(PyTypeObject *cls, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"executor", "capacity", NULL};
    PyObject *executor_object, *capacity_object;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:new_in", keywords, &executor_object, &capacity_object))
        return NULL;
    ExecutorObject *executor = NULL;
    if (executor_object != Py_None) {
        if (!PyObject_TypeCheck(executor_object, &ExecutorType)) {
            PyErr_Format(PyExc_TypeError, "executor must be a uform.Executor or None, not %.100s",
                         Py_TYPE(executor_object)->tp_name);
            return NULL;
        }
        executor = (ExecutorObject *)executor_object;
        if (executor_open(executor) < 0) return NULL;
    }
    size_t capacity;
    if (parse_size(capacity_object, "capacity", &capacity) < 0) return NULL;
    uform_executor_t *c_executor = executor ? executor->executor : NULL;
    uform_arena_t *arena = NULL;
    uform_status_t status;
    if (executor) executor->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = uform_arena_new_in(c_executor, capacity, &arena);
    Py_END_ALLOW_THREADS
    if (executor) executor->busy--;
    if (status != UFORM_STATUS_OK) return raise_status(status);

    size_t devices = uform_arena_devices(arena);
    char *base = NULL;
    {
        /* The first byte (device 0's for a device arena): nothing taken yet, so 0 bytes at
         * alignment 1 answer the base itself. */
        void *first = NULL;
        status = uform_arena_allocate(arena, 0, 1, &first);
        if (status != UFORM_STATUS_OK || capacity > (size_t)PY_SSIZE_T_MAX) {
            if (status != UFORM_STATUS_OK)
                raise_status(status);
            else
                PyErr_Format(PyExc_OverflowError, "capacity %zu does not fit a buffer", capacity);
            uform_arena_free(arena);
            return NULL;
        }
        base = first;
    }
    ArenaObject *self = (ArenaObject *)cls->tp_alloc(cls, 0);
    if (!self) {
        Py_BEGIN_ALLOW_THREADS
        uform_arena_free(arena);
        Py_END_ALLOW_THREADS
        return NULL;
    }
    self->arena = arena;
    self->base = devices ? NULL : base;
    self->device_base = devices ? base : NULL;
    self->capacity = capacity;
    self->devices = devices;
    if (devices) {
        self->executor = Py_NewRef(executor_object);
        self->dl_device_types = PyMem_Calloc(devices, sizeof(int32_t));
        self->dl_device_ids = PyMem_Calloc(devices, sizeof(int32_t));
        if (!self->dl_device_types || !self->dl_device_ids) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
        /* device_view() takes each device's DLPack device from the executor on first use (or
         * learns it with a call, where the executor could not say when it was made). */
    }
    return (PyObject *)self;
}

PyDoc_STRVAR(Arena_allocate_doc,
             "allocate($self, /, nbytes, alignment=64)\n"
    "--\n"
    "\n"
    "Takes `nbytes` from the arena and answers the address: device 0's for a device arena\n"
    "(device_pointer() gives another device's twin). view() or device_view() turn it into an\n"
    "array, with no arithmetic.\n"
    "\n"
    "Arguments:\n"
    "  nbytes: the bytes to take.\n"
    "  alignment: a power of two (default 64).\n"
    "\n"
    "Raises:\n"
    "  OutOfMemoryError: it does not fit. InvalidArgumentError: an alignment that is not a\n"
    "  power of two. ValueError: a closed arena.\n"
    "\n"
    "Example:\n"
    "    pointer = arena.allocate(1024, alignment=4096)\n"
    "    floats = numpy.from_dlpack(arena.view(pointer, 1024)).view(numpy.float32)\n"
    "\n"
    "Calls uform_arena_allocate.");

static PyObject *Arena_allocate(ArenaObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"nbytes", "alignment", NULL};
    PyObject *bytes_object, *alignment_object = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:allocate", keywords, &bytes_object, &alignment_object))
        return NULL;
    size_t bytes, alignment = 64;
    if (parse_size(bytes_object, "nbytes", &bytes) < 0) return NULL;
    if (alignment_object && parse_size(alignment_object, "alignment", &alignment) < 0) return NULL;
    if (arena_open(self) < 0) return NULL;
    void *pointer = NULL;
    uform_status_t status = uform_arena_allocate(self->arena, bytes, alignment, &pointer);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return PyLong_FromSize_t((size_t)(uintptr_t)pointer);
}

PyDoc_STRVAR(Arena_device_pointer_doc,
             "device_pointer($self, /, device, pointer)\n"
    "--\n"
    "\n"
    "The twin on the executor's device `device` of `pointer`, an address inside device 0's\n"
    "reservation of a device arena.\n"
    "\n"
    "Arguments:\n"
    "  device: the index among the executor's devices.\n"
    "  pointer: an address allocate() answered, or any inside device 0's reservation.\n"
    "\n"
    "Raises:\n"
    "  InvalidArgumentError: a host arena, a device out of range, a pointer outside.\n"
    "  ValueError: a closed arena.\n"
    "\n"
    "Example:\n"
    "    twin = arena.device_pointer(1, arena.allocate(4096))\n"
    "    gpus.copy_to_device(1, twin, data)\n"
    "\n"
    "Calls uform_arena_device_pointer.");

static PyObject *Arena_device_pointer(ArenaObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"device", "pointer", NULL};
    PyObject *device_object, *pointer_object;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:device_pointer", keywords, &device_object, &pointer_object))
        return NULL;
    size_t device;
    void *pointer = NULL, *twin = NULL;
    if (parse_size(device_object, "device", &device) < 0 || parse_address(pointer_object, "pointer", &pointer) < 0)
        return NULL;
    if (arena_open(self) < 0) return NULL;
    uform_status_t status = uform_arena_device_pointer(self->arena, device, pointer, &twin);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return PyLong_FromSize_t((size_t)(uintptr_t)twin);
}

static PyObject *arena_close(ArenaObject *self) {
    if (self->exports > 0) {
        PyErr_Format(PyExc_BufferError,
                     "cannot close the arena: %zd buffer%s taken from it still live (memoryviews, arrays over it, "
                     "DLPack tensors); drop them first",
                     self->exports, self->exports == 1 ? "" : "s");
        return NULL;
    }
    if (self->arena && self->executor && running_callback_of == (void *)self->executor) {
        PyErr_SetString(PyExc_RuntimeError, "a callback must not close a device arena of the executor running it");
        return NULL;
    }
    arena_release(self);
    Py_CLEAR(self->executor);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(Arena_close_doc,
             "close($self, /)\n"
    "--\n"
    "\n"
    "Frees the arena whole; every address it gave becomes invalid. Closing twice does nothing.\n"
    "The last device arena of a closed executor closes it.\n"
    "\n"
    "Raises:\n"
    "  BufferError: a buffer, array, ArenaView export or DLPack tensor taken from it still\n"
    "  lives (drop it first). RuntimeError: a device arena closed from a callback of its own\n"
    "  executor.\n"
    "\n"
    "Example:\n"
    "    arena = uform.Arena.new_in(None, 4096)\n"
    "    array = numpy.from_dlpack(arena)\n"
    "    del array                     # else close() raises BufferError\n"
    "    arena.close()\n"
    "\n"
    "Calls uform_arena_free.");

static PyObject *Arena_close(ArenaObject *self, PyObject *unused) { return arena_close(self); }

static PyObject *Arena_enter(ArenaObject *self, PyObject *unused) {
    if (arena_open(self) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *Arena_exit(ArenaObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "__exit__ expected 3 arguments, got %zd", nargs);
        return NULL;
    }
    return arena_close(self);
}

/* ---- buffer protocol: a host arena's whole capacity ----------------------------------------------- */

static int Arena_getbuffer(ArenaObject *self, Py_buffer *view, int flags) {
    if (arena_open(self) < 0) {
        view->obj = NULL;
        return -1;
    }
    if (self->devices) {
        PyErr_SetString(PyExc_BufferError, "a device arena's memory lives on its GPUs and has no host buffer; "
                                           "copy it with Executor.copy_to_host");
        view->obj = NULL;
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->base, (Py_ssize_t)self->capacity, 0, flags) < 0) return -1;
    self->exports++;
    return 0;
}

static void Arena_releasebuffer(ArenaObject *self, Py_buffer *view) { self->exports--; }

static PyBufferProcs Arena_buffer = {
    .bf_getbuffer = (getbufferproc)Arena_getbuffer,
    .bf_releasebuffer = (releasebufferproc)Arena_releasebuffer,
};

/* ---- attributes --------------------------------------------------------------------------------- */

static PyObject *Arena_get_used(ArenaObject *self, void *unused) {
    if (arena_open(self) < 0) return NULL;
    size_t used = 0;
    uform_status_t status = uform_arena_usage(self->arena, &used, NULL);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return PyLong_FromSize_t(used);
}

static PyObject *Arena_get_capacity(ArenaObject *self, void *unused) { return PyLong_FromSize_t(self->capacity); }

static PyObject *Arena_get_devices(ArenaObject *self, void *unused) { return PyLong_FromSize_t(self->devices); }

static PyObject *Arena_get_closed(ArenaObject *self, void *unused) { return PyBool_FromLong(self->arena == NULL); }

static PyObject *Arena_repr(ArenaObject *self) {
    const char *name = Py_TYPE(self)->tp_name;
    if (!self->arena) return PyUnicode_FromFormat("<%s closed>", name);
    size_t used = 0;
    (void)uform_arena_usage(self->arena, &used, NULL);
    if (self->devices)
        return PyUnicode_FromFormat("<%s devices=%zu used=%zu capacity=%zu>", name, self->devices, used,
                                    self->capacity);
    return PyUnicode_FromFormat("<%s host used=%zu capacity=%zu>", name, used, self->capacity);
}

PyDoc_STRVAR(Arena_enter_doc,
             "__enter__($self, /)\n"
             "--\n\n"
             "Answers the arena itself, for a with block that closes it on exit.\n\n"
             "Raises:\n"
             "  ValueError: a closed arena.\n\n"
             "Example:\n"
             "    with uform.Arena.new_in(None, 4096) as arena:\n"
             "        memoryview(arena)[:4] = b\"data\"");

PyDoc_STRVAR(Arena_exit_doc,
             "__exit__($self, kind, value, traceback, /)\n"
             "--\n\n"
             "Closes it, as close() does; the exception leaving the block (kind, value, traceback,\n"
             "or None) is not suppressed.\n\n"
             "Raises:\n"
             "  As close(): BufferError while an export of it lives.\n\n"
             "Example:\n"
             "    with uform.Arena.new_in(executor, 1 << 20) as arena:\n"
             "        pointer = arena.allocate(256)");

static PyMethodDef Arena_methods[] = {
    {"new_in", (PyCFunction)(void (*)(void))Arena_new_in, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     Arena_new_in_doc},
    {"allocate", (PyCFunction)(void (*)(void))Arena_allocate, METH_VARARGS | METH_KEYWORDS, Arena_allocate_doc},
    {"device_pointer", (PyCFunction)(void (*)(void))Arena_device_pointer, METH_VARARGS | METH_KEYWORDS,
     Arena_device_pointer_doc},
    {"close", (PyCFunction)Arena_close, METH_NOARGS, Arena_close_doc},
    {"__dlpack__", (PyCFunction)(void (*)(void))Arena_dlpack, METH_VARARGS | METH_KEYWORDS, Arena_dlpack_doc},
    {"__dlpack_device__", (PyCFunction)Arena_dlpack_device, METH_NOARGS, Arena_dlpack_device_doc},
    {"view", (PyCFunction)(void (*)(void))Arena_view, METH_VARARGS | METH_KEYWORDS, Arena_view_doc},
    {"device_view", (PyCFunction)(void (*)(void))Arena_device_view, METH_VARARGS | METH_KEYWORDS,
     Arena_device_view_doc},
    {"__enter__", (PyCFunction)Arena_enter, METH_NOARGS, Arena_enter_doc},
    {"__exit__", (PyCFunction)(void (*)(void))Arena_exit, METH_FASTCALL,
     Arena_exit_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Arena_getset[] = {
    {"used", (getter)Arena_get_used, NULL, "Bytes taken so far, alignment padding included. Calls uform_arena_usage.",
     NULL},
    {"capacity", (getter)Arena_get_capacity, NULL, "Bytes it holds (on each device, for a device arena).", NULL},
    {"devices", (getter)Arena_get_devices, NULL, "Devices it spans: 0 for a host arena. Calls uform_arena_devices.",
     NULL},
    {"closed", (getter)Arena_get_closed, NULL, "Whether it was closed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Arena_doc, "Memory placed where an executor computes, bump-allocated and freed whole.\n\n"
                        "Made by Arena.new_in. A host arena is a writable buffer over its whole capacity\n"
                        "(memoryview(arena), numpy.frombuffer(arena)); a device arena has no host buffer.");

PyTypeObject ArenaType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Arena",
    .tp_basicsize = sizeof(ArenaObject),
    .tp_dealloc = (destructor)Arena_dealloc,
    .tp_repr = (reprfunc)Arena_repr,
    .tp_as_buffer = &Arena_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_weaklistoffset = offsetof(ArenaObject, weakreflist),
    .tp_doc = Arena_doc,
    .tp_methods = Arena_methods,
    .tp_getset = Arena_getset,
};
