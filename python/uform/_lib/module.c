/* uform.lib: The module uform.lib: its types, exceptions and constants. */
#include "binding.h"

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "uform.lib", "The CPython extension over libuform; import names from `uform`.", -1,
    module_methods,        NULL,
    NULL,                  NULL,
    NULL,
};


PyMODINIT_FUNC PyInit_lib(void) {
    /* The headers this was compiled with must describe the library it runs on. */
    if (strcmp(uform_version(), UFORM_VERSION_STRING) != 0) {
        PyErr_Format(PyExc_ImportError, "uform.lib was compiled against libuform %s but runs on %s",
                     UFORM_VERSION_STRING, uform_version());
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_definition);
    if (!module) return NULL;
    static int atfork_registered;
    if (!atfork_registered) {
        atfork_registered = 1;
        pthread_atfork(NULL, NULL, deferred_atfork_child);
    }
    if (add_errors(module) < 0 || interrupt_init() < 0) goto fail;
    if (!GPUDeviceType) GPUDeviceType = PyStructSequence_NewType(&GPUDevice_desc);
    if (!MeshDescriptionType) MeshDescriptionType = PyStructSequence_NewType(&MeshDescription_desc);
    if (!DeviceSlotType) DeviceSlotType = PyStructSequence_NewType(&DeviceSlot_desc);
    if (!GPUDeviceType || !MeshDescriptionType || !DeviceSlotType) goto fail;
    if (PyModule_AddObjectRef(module, "GPUDevice", (PyObject *)GPUDeviceType) < 0 ||
        PyModule_AddObjectRef(module, "MeshDescription", (PyObject *)MeshDescriptionType) < 0 ||
        PyModule_AddObjectRef(module, "DeviceSlot", (PyObject *)DeviceSlotType) < 0)
        goto fail;
    PyTypeObject *types[] = {&ExecutorType, &DeferredType, &ArenaType, &ArenaViewType, &StagingType, &MeshOptionsType, &MeshType};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (PyModule_AddType(module, types[i]) < 0) goto fail;
    if (PyModule_AddStringConstant(module, "VERSION", uform_version()) < 0 ||
        PyModule_AddIntConstant(module, "VERSION_NUMBER", uform_version_number()) < 0 ||
        PyModule_AddIntConstant(module, "DEFERRED_LIMIT_DEFAULT", UFORM_DEFERRED_LIMIT_DEFAULT) < 0 ||
        PyModule_AddIntConstant(module, "THREADS_MAX", UFORM_THREADS_MAX) < 0)
        goto fail;
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
