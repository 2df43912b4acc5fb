/* uform.lib: uform.MeshOptions, uform.Mesh and uform.MeshDescription. */
#include "binding.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>

PyTypeObject *MeshDescriptionType;

/* -------------------------------------------------------------------------------------------- */
/* MeshOptions                                                                                  */

typedef struct {
    PyObject_HEAD
    Py_ssize_t host_domain_index;
    Py_ssize_t host_domain_count;
    Py_ssize_t gpus_per_multimem_domain;
    PyObject *directory; /* None, str, bytes or os.PathLike, as given */
    PyObject *job;       /* None or str */
    double timeout_seconds;
    int initialized; /* __init__ ran once: the options are immutable after */
} MeshOptionsObject;

static int parse_count(PyObject *object, const char *argument, Py_ssize_t *value) {
    size_t size = 0;
    if (parse_size(object, argument, &size) < 0) return -1;
    if (size > (size_t)PY_SSIZE_T_MAX) {
        PyErr_Format(PyExc_ValueError, "%s is too large", argument);
        return -1;
    }
    *value = (Py_ssize_t)size;
    return 0;
}

static int MeshOptions_init(MeshOptionsObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"host_domain_index", "host_domain_count", "gpus_per_multimem_domain",
                               "directory",         "job",               "timeout_seconds",
                               NULL};
    PyObject *index_object = NULL, *count_object = NULL, *multimem_object = NULL, *directory = Py_None,
             *job = Py_None, *timeout_object = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOOOO:MeshOptions", keywords, &index_object, &count_object,
                                     &multimem_object, &directory, &job, &timeout_object))
        return -1;
    if (self->initialized) {
        PyErr_SetString(PyExc_TypeError, "MeshOptions are immutable");
        return -1;
    }
    Py_ssize_t index = 0, count = 0, multimem = 0;
    double timeout = 0.0;
    if (index_object && parse_count(index_object, "host_domain_index", &index) < 0) return -1;
    if (count_object && parse_count(count_object, "host_domain_count", &count) < 0) return -1;
    if (multimem_object && parse_count(multimem_object, "gpus_per_multimem_domain", &multimem) < 0) return -1;
    if (timeout_object) {
        if (!PyFloat_Check(timeout_object) && (!PyLong_Check(timeout_object) || PyBool_Check(timeout_object))) {
            PyErr_Format(PyExc_TypeError, "timeout_seconds must be a float, not %.100s",
                         Py_TYPE(timeout_object)->tp_name);
            return -1;
        }
        timeout = PyFloat_AsDouble(timeout_object);
        if (timeout == -1.0 && PyErr_Occurred()) return -1;
        if (!isfinite(timeout) || timeout < 0) {
            PyErr_Format(PyExc_ValueError, "timeout_seconds must be finite and non-negative, not %R", timeout_object);
            return -1;
        }
    }
    if (directory != Py_None) {
        PyObject *path = PyOS_FSPath(directory);
        if (!path) return -1;
        Py_ssize_t length = 0;
        const char *text = NULL;
        PyObject *encoded = NULL;
        if (PyUnicode_Check(path)) {
            encoded = PyUnicode_EncodeFSDefault(path);
            if (!encoded) {
                Py_DECREF(path);
                return -1;
            }
        } else {
            encoded = Py_NewRef(path);
        }
        text = PyBytes_AS_STRING(encoded);
        length = PyBytes_GET_SIZE(encoded);
        int bad = (Py_ssize_t)strlen(text) != length || length == 0;
        Py_DECREF(encoded);
        Py_DECREF(path);
        if (bad) {
            PyErr_SetString(PyExc_ValueError, "directory must be a non-empty path without NUL characters");
            return -1;
        }
    }
    if (job != Py_None) {
        if (!PyUnicode_Check(job)) {
            PyErr_Format(PyExc_TypeError, "job must be a str or None, not %.100s", Py_TYPE(job)->tp_name);
            return -1;
        }
        Py_ssize_t length = 0;
        const char *text = PyUnicode_AsUTF8AndSize(job, &length);
        if (!text) return -1;
        if ((Py_ssize_t)strlen(text) != length) {
            PyErr_SetString(PyExc_ValueError, "job must not contain NUL characters");
            return -1;
        }
    }
    self->host_domain_index = index;
    self->host_domain_count = count;
    self->gpus_per_multimem_domain = multimem;
    self->directory = directory == Py_None ? NULL : Py_NewRef(directory);
    self->job = job == Py_None ? NULL : Py_NewRef(job);
    self->timeout_seconds = timeout;
    self->initialized = 1;
    return 0;
}

/* __init__ as a method too (METH_COEXIST) so introspection sees its real signature. */
static PyObject *MeshOptions_init_method(MeshOptionsObject *self, PyObject *args, PyObject *kwargs) {
    if (MeshOptions_init(self, args, kwargs) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Validation and storage happen in __init__; a bare instance holds the defaults. */
static PyObject *MeshOptions_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    return type->tp_alloc(type, 0);
}

static void MeshOptions_dealloc(MeshOptionsObject *self) {
    Py_XDECREF(self->directory);
    Py_XDECREF(self->job);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *MeshOptions_repr(MeshOptionsObject *self) {
    PyObject *timeout = PyFloat_FromDouble(self->timeout_seconds);
    if (!timeout) return NULL;
    PyObject *text = PyUnicode_FromFormat(
        "MeshOptions(host_domain_index=%zd, host_domain_count=%zd, gpus_per_multimem_domain=%zd, directory=%R, "
        "job=%R, timeout_seconds=%R)",
        self->host_domain_index, self->host_domain_count, self->gpus_per_multimem_domain,
        self->directory ? self->directory : Py_None, self->job ? self->job : Py_None, timeout);
    Py_DECREF(timeout);
    return text;
}

static PyMemberDef MeshOptions_members[] = {
    {"host_domain_index", T_PYSSIZET, offsetof(MeshOptionsObject, host_domain_index), READONLY,
     "This process's index among host_domain_count."},
    {"host_domain_count", T_PYSSIZET, offsetof(MeshOptionsObject, host_domain_count), READONLY,
     "Processes in the run; 0 means 1 (no peers)."},
    {"gpus_per_multimem_domain", T_PYSSIZET, offsetof(MeshOptionsObject, gpus_per_multimem_domain), READONLY,
     "GPUs one NVLink multicast domain spans; 0 derives it."},
    {"directory", T_OBJECT, offsetof(MeshOptionsObject, directory), READONLY,
     "The directory every host sees; required with peers."},
    {"job", T_OBJECT, offsetof(MeshOptionsObject, job), READONLY, "The run's unique plain name; required with peers."},
    {"timeout_seconds", T_DOUBLE, offsetof(MeshOptionsObject, timeout_seconds), READONLY,
     "Bound on every wait for a peer; 0 means 120."},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(MeshOptions_init_doc,
             "__init__($self, /, *, host_domain_index=0, host_domain_count=0, gpus_per_multimem_domain=0,"
             " directory=None, job=None, timeout_seconds=0.0)\n"
             "--\n\n"
             "Where this process sits among the processes training one model, and how they meet.");

static PyMethodDef MeshOptions_methods[] = {
    {"__init__", (PyCFunction)(void (*)(void))MeshOptions_init_method, METH_VARARGS | METH_KEYWORDS | METH_COEXIST,
     MeshOptions_init_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(MeshOptions_doc,
             "MeshOptions(*, host_domain_index=0, host_domain_count=0, gpus_per_multimem_domain=0,"
             " directory=None, job=None, timeout_seconds=0.0)\n"
             "--\n\n"
             "Where this process sits among the processes training one model, and how they meet.");

PyTypeObject MeshOptionsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.MeshOptions",
    .tp_basicsize = sizeof(MeshOptionsObject),
    .tp_dealloc = (destructor)MeshOptions_dealloc,
    .tp_repr = (reprfunc)MeshOptions_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = MeshOptions_doc,
    .tp_members = MeshOptions_members,
    .tp_methods = MeshOptions_methods,
    .tp_init = (initproc)MeshOptions_init,
    .tp_new = MeshOptions_new,
};

/* -------------------------------------------------------------------------------------------- */
/* Mesh                                                                                         */

/* The C mesh holds a reference on its executor, like a device arena: closing the Executor while
 * a mesh lives frees the caller's reference only (uform_executor_free answers OK at once, the
 * executor's threads and streams stay), and uform_mesh_free, dropping the last reference, closes
 * it. The MeshObject also holds the ExecutorObject, so that `mesh` alone keeps both alive. */
typedef struct {
    PyObject_HEAD
    uform_mesh_t *mesh;
    PyObject *executor; /* the ExecutorObject the mesh was bootstrapped over, strong */
} MeshObject;

static void Mesh_dealloc(MeshObject *self) {
    if (self->mesh) {
        uform_mesh_t *mesh = self->mesh;
        self->mesh = NULL;
        /* It may close the executor (joining its threads). Never from one of that executor's
         * own callbacks: a callback runs inside a call, which an executor free waits for, so the
         * executor still holds its owner's reference then and this release is not the last. */
        Py_BEGIN_ALLOW_THREADS
        uform_mesh_free(mesh);
        Py_END_ALLOW_THREADS
    }
    Py_CLEAR(self->executor); /* after the mesh: it may be the executor's last holder */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(Mesh_bootstrap_doc, "bootstrap($cls, executor, options, /)\n"
                                 "--\n\n"
                                 "Joins this process to the run's mesh.\n\n"
                                 "Every process of the run gets the same answer. Ctrl-C while it waits\n"
                                 "raises KeyboardInterrupt in that process; every other process of the run\n"
                                 "raises UFormInterruptedError, whose message names the one interrupted.\n\n"
                                 "Calls uform_mesh_bootstrap.");


/* Ctrl-C during a bootstrap. The wait runs without the GIL, where Python's own SIGINT handler
 * only trips a flag for later: a C handler, installed for the wait, also sets the bootstrap's
 * cancel flag (the mesh looks at it every 50 ms), then chains to the handler it replaced, so
 * Python raises KeyboardInterrupt once the bootstrap returns. Installed while any bootstrap
 * waits (counted under the GIL), never when SIGINT is ignored. */
static volatile int interrupt_requested;
static struct sigaction interrupt_previous;
static int interrupt_waiters;

static void interrupt_handler(int signum, siginfo_t *info, void *context) {
    interrupt_requested = 1;
    if (interrupt_previous.sa_flags & SA_SIGINFO) {
        if (interrupt_previous.sa_sigaction) interrupt_previous.sa_sigaction(signum, info, context);
    } else if (interrupt_previous.sa_handler != SIG_DFL && interrupt_previous.sa_handler != SIG_IGN) {
        interrupt_previous.sa_handler(signum);
    }
}

static bool interrupt_handler_install(void) {
    if (interrupt_waiters++ > 0) return true;
    interrupt_requested = 0;
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = interrupt_handler;
    ours.sa_flags = SA_SIGINFO;
    sigemptyset(&ours.sa_mask);
    if (sigaction(SIGINT, NULL, &interrupt_previous) != 0 || interrupt_previous.sa_handler == SIG_IGN ||
        sigaction(SIGINT, &ours, NULL) != 0) {
        interrupt_waiters--;
        return false;
    }
    return true;
}

/* Puts the replaced handler back, unless someone installed another one meanwhile (the main
 * thread's signal.signal while a bootstrap waits on another thread): that one stays. */
static void interrupt_handler_remove(void) {
    if (--interrupt_waiters > 0) return;
    struct sigaction current;
    if (sigaction(SIGINT, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == interrupt_handler)
        sigaction(SIGINT, &interrupt_previous, NULL);
}

static PyObject *Mesh_bootstrap(PyTypeObject *cls, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "bootstrap() takes exactly 2 positional arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyObject_TypeCheck(args[0], &ExecutorType)) {
        PyErr_Format(PyExc_TypeError, "executor must be a uform.Executor, not %.100s", Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    if (args[1] != Py_None && !PyObject_TypeCheck(args[1], &MeshOptionsType)) {
        PyErr_Format(PyExc_TypeError, "options must be a uform.MeshOptions or None, not %.100s",
                     Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    ExecutorObject *executor = (ExecutorObject *)args[0];
    if (executor_check(executor) < 0) return NULL;
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    PyObject *directory = NULL, *job = NULL;
    const uform_mesh_options_t *options_pointer = NULL;
    if (args[1] != Py_None) {
        MeshOptionsObject *given = (MeshOptionsObject *)args[1];
        options.host_domain_index = (size_t)given->host_domain_index;
        options.host_domain_count = (size_t)given->host_domain_count;
        options.gpus_per_multimem_domain = (size_t)given->gpus_per_multimem_domain;
        options.timeout_seconds = given->timeout_seconds;
        if (given->directory) {
            if (!PyUnicode_FSConverter(given->directory, &directory)) return NULL;
            options.directory = PyBytes_AS_STRING(directory);
        }
        if (given->job) {
            job = PyUnicode_AsUTF8String(given->job);
            if (!job) {
                Py_XDECREF(directory);
                return NULL;
            }
            options.job = PyBytes_AS_STRING(job);
        }
        options_pointer = &options;
    }
    MeshObject *self = (MeshObject *)cls->tp_alloc(cls, 0);
    if (!self) {
        Py_XDECREF(directory);
        Py_XDECREF(job);
        return NULL;
    }
    uform_mesh_t *mesh = NULL;
    uform_status_t status;
    executor->busy++;
    options.cancel = &interrupt_requested;
    bool handling = options_pointer && interrupt_handler_install();
    Py_BEGIN_ALLOW_THREADS
    status = uform_mesh_bootstrap(executor->executor, options_pointer, &mesh);
    Py_END_ALLOW_THREADS
    /* Read before the removal: the next install clears it. */
    bool interrupted_here = handling && interrupt_requested;
    if (handling) interrupt_handler_remove();
    executor->busy--;
    if (status == UFORM_STATUS_INTERRUPTED && interrupted_here) {
        /* Ctrl-C in this process. Python's own handler, chained, has tripped its flag:
         * KeyboardInterrupt, as for any Ctrl-C; where it was not Python's, raise it here. A peer's
         * interruption, with no Ctrl-C here, is UFormInterruptedError naming the peer, below. */
        Py_XDECREF(directory);
        Py_XDECREF(job);
        Py_DECREF(self);
        if (PyErr_CheckSignals() == 0) PyErr_SetNone(PyExc_KeyboardInterrupt);
        return NULL;
    }
    Py_XDECREF(directory);
    Py_XDECREF(job);
    if (status != UFORM_STATUS_OK) {
        raise_status(status);
        Py_DECREF(self);
        return NULL;
    }
    self->mesh = mesh;
    self->executor = Py_NewRef((PyObject *)executor);
    return (PyObject *)self;
}

PyDoc_STRVAR(Mesh_describe_doc, "describe($self, /)\n"
                                "--\n\n"
                                "The mesh's shape and this process's place in it.\n\n"
                                "Calls uform_mesh_describe.");

static PyObject *Mesh_describe(MeshObject *self, PyObject *unused) {
    uform_mesh_description_t description;
    memset(&description, 0, sizeof description);
    uform_status_t status = uform_mesh_describe(self->mesh, &description);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    PyObject *result = PyStructSequence_New(MeshDescriptionType);
    if (!result) return NULL;
    PyObject *items[7] = {
        PyLong_FromSize_t(description.gpus_per_host_domain),
        PyLong_FromSize_t(description.gpus_per_multimem_domain),
        PyLong_FromSize_t(description.gpus_per_colocated_domain),
        PyLong_FromSize_t(description.host_domain_index),
        PyLong_FromSize_t(description.first_gpu_index),
        enum_member("MultimemTier", (long)description.multimem_tier),
        optional_enum_member("GPUClass", (long)description.gpu_class),
    };
    return structseq_filled(result, items, 7);
}

PyDoc_STRVAR(Mesh_communicator_doc,
             "communicator($self, device, /)\n"
             "--\n\n"
             "The NCCL communicator (the ncclComm_t's address) of this process's device `device`.\n\n"
             "`device` indexes the executor's devices; the communicator spans every GPU of the run,\n"
             "its rank first_gpu_index + device, its size gpus_per_colocated_domain. Hand the address\n"
             "to an NCCL wrapper (torch, cupy); it is the mesh's, destroyed when the mesh is, so use it\n"
             "only while the mesh lives, and never destroy it yourself. Raises NotFoundError (\"no\n"
             "data plane\", saying why) when the mesh formed without NCCL, InvalidArgumentError for a\n"
             "device out of range.\n\n"
             "Calls uform_mesh_communicator.");

static PyObject *Mesh_communicator(MeshObject *self, PyObject *device_object) {
    size_t device = 0;
    if (parse_size(device_object, "device", &device) < 0) return NULL;
    void *communicator = NULL;
    uform_status_t status = uform_mesh_communicator(self->mesh, device, &communicator);
    if (status != UFORM_STATUS_OK) return raise_status(status);
    return PyLong_FromVoidPtr(communicator);
}

static PyObject *Mesh_repr(MeshObject *self) {
    uform_mesh_description_t description;
    memset(&description, 0, sizeof description);
    if (!self->mesh || uform_mesh_describe(self->mesh, &description) != UFORM_STATUS_OK)
        return PyUnicode_FromString("<uform.Mesh>");
    return PyUnicode_FromFormat("<uform.Mesh host_domain_index=%zu gpus_per_host_domain=%zu first_gpu_index=%zu "
                                "gpus_per_colocated_domain=%zu>",
                                description.host_domain_index, description.gpus_per_host_domain,
                                description.first_gpu_index, description.gpus_per_colocated_domain);
}

static PyMethodDef Mesh_methods[] = {
    {"bootstrap", (PyCFunction)(void (*)(void))Mesh_bootstrap, METH_FASTCALL | METH_CLASS, Mesh_bootstrap_doc},
    {"describe", (PyCFunction)Mesh_describe, METH_NOARGS, Mesh_describe_doc},
    {"communicator", (PyCFunction)Mesh_communicator, METH_O, Mesh_communicator_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Mesh_doc, "One process's place among the processes of a run, borrowed by every trainer.");

PyTypeObject MeshType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "uform.lib.Mesh",
    .tp_basicsize = sizeof(MeshObject),
    .tp_dealloc = (destructor)Mesh_dealloc,
    .tp_repr = (reprfunc)Mesh_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Mesh_doc,
    .tp_methods = Mesh_methods,
};

static PyStructSequence_Field MeshDescription_fields[] = {
    {"gpus_per_host_domain", "GPUs one process drives."},
    {"gpus_per_multimem_domain", "GPUs one NVLink domain spans."},
    {"gpus_per_colocated_domain", "GPUs in the whole run."},
    {"host_domain_index", "This process's index among the run's processes."},
    {"first_gpu_index", "The run-wide index of this process's first GPU."},
    {"multimem_tier", "How its NVLink domains reduce."},
    {"gpu_class", "The class every GPU of the run dispatches as, or None."},
    {NULL, NULL},
};

PyStructSequence_Desc MeshDescription_desc = {
    "uform.lib.MeshDescription", "What a mesh reports about itself, as uform_mesh_description_t holds it.",
    MeshDescription_fields, 7};

