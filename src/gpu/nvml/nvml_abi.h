/* Internal: the small part of NVML's ABI uform uses (libnvidia-ml.so.1, shipped with every
 * NVIDIA driver), declared here so the project builds without NVML's headers. Values and
 * signatures follow nvml.h's documentation: the _v2 entry points named below have had these
 * signatures since NVML 9 (CUDA 9.x drivers), and nvmlPciInfo_t the v2 layout with the 32-byte
 * busId since then. Names carry a `uform_nvml` prefix so this header and the real nvml.h can be
 * included together. A return value uform does not name is reported through nvmlErrorString. */
#ifndef UFORM_GPU_NVML_ABI_H
#define UFORM_GPU_NVML_ABI_H

/* nvmlReturn_t: an enum of non-negative values (GCC and Clang give it unsigned int). */
typedef unsigned int uform_nvmlReturn;
enum {
    UFORM_NVML_SUCCESS = 0,                /* NVML_SUCCESS */
    UFORM_NVML_ERROR_UNINITIALIZED = 1,    /* NVML_ERROR_UNINITIALIZED: nvmlInit_v2 not called */
    UFORM_NVML_ERROR_INVALID_ARGUMENT = 2, /* NVML_ERROR_INVALID_ARGUMENT: a bad handle or link */
    UFORM_NVML_ERROR_NOT_SUPPORTED = 3,    /* NVML_ERROR_NOT_SUPPORTED: no NVLink on this device */
    UFORM_NVML_ERROR_NOT_FOUND = 6,        /* NVML_ERROR_NOT_FOUND: no GPU at that bus id */
    UFORM_NVML_ERROR_DRIVER_NOT_LOADED = 9 /* NVML_ERROR_DRIVER_NOT_LOADED: nvmlInit_v2 without a driver */
};

/* nvmlEnableState_t. */
typedef unsigned int uform_nvmlEnableState;
enum { UFORM_NVML_FEATURE_DISABLED = 0, UFORM_NVML_FEATURE_ENABLED = 1 };

/* NVML_NVLINK_MAX_LINKS: the link indices nvmlDeviceGetNvLink* take are 0 .. 17. */
#define UFORM_NVML_NVLINK_MAX_LINKS 18

/* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE and ..._V2_SIZE (busIdLegacy). */
#define UFORM_NVML_PCI_BUS_ID_BYTES 32
#define UFORM_NVML_PCI_BUS_ID_LEGACY_BYTES 16

/* nvmlPciInfo_t (the v2 layout nvmlDeviceGetNvLinkRemotePciInfo_v2 writes). busId spells
 * "domain:bus:device.function" in hexadecimal ("00000000:1B:00.0"). */
typedef struct uform_nvmlPciInfo {
    char busIdLegacy[UFORM_NVML_PCI_BUS_ID_LEGACY_BYTES];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId; /* device id in the upper 16 bits, vendor id in the lower */
    unsigned int pciSubSystemId;
    char busId[UFORM_NVML_PCI_BUS_ID_BYTES];
} uform_nvmlPciInfo;

/* nvmlIntNvLinkDeviceType_t: what a link's far end is. On NVSwitch systems (HGX boards) every
 * link of a GPU ends at a switch, whose PCI address is what the remote PCI query then answers. */
typedef unsigned int uform_nvmlIntNvLinkDeviceType;
enum {
    UFORM_NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
    UFORM_NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
    UFORM_NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
    UFORM_NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF
};

/* nvmlDevice_t is a pointer to NVML's own incomplete struct tag. */
typedef struct nvmlDevice_st *uform_nvmlDevice;

typedef uform_nvmlReturn (*uform_nvmlInit_v2_t)(void);
typedef uform_nvmlReturn (*uform_nvmlShutdown_t)(void);
typedef const char *(*uform_nvmlErrorString_t)(uform_nvmlReturn result);
/* Accepts "domain:bus:device.function", "domain:bus:device" and "bus:device.function", hex. */
typedef uform_nvmlReturn (*uform_nvmlDeviceGetHandleByPciBusId_v2_t)(const char *pci_bus_id, uform_nvmlDevice *device);
typedef uform_nvmlReturn (*uform_nvmlDeviceGetNvLinkState_t)(uform_nvmlDevice device, unsigned int link,
                                                             uform_nvmlEnableState *is_active);
typedef uform_nvmlReturn (*uform_nvmlDeviceGetNvLinkRemotePciInfo_v2_t)(uform_nvmlDevice device, unsigned int link,
                                                                        uform_nvmlPciInfo *pci);
typedef uform_nvmlReturn (*uform_nvmlDeviceGetNvLinkRemoteDeviceType_t)(uform_nvmlDevice device, unsigned int link,
                                                                        uform_nvmlIntNvLinkDeviceType *type);

/* X(field, exported symbol, type, optional): the first six date from NVML 9 and are required; the
 * remote device type (NVML 10, R410 drivers) is optional: without it every link's far end is
 * taken for a GPU, as before NVSwitches. */
#define UFORM_NVML_ENTRY_POINTS(X)                                                                                    \
    X(nvmlInit_v2, "nvmlInit_v2", uform_nvmlInit_v2_t, false)                                                         \
    X(nvmlShutdown, "nvmlShutdown", uform_nvmlShutdown_t, false)                                                      \
    X(nvmlErrorString, "nvmlErrorString", uform_nvmlErrorString_t, false)                                             \
    X(nvmlDeviceGetHandleByPciBusId_v2, "nvmlDeviceGetHandleByPciBusId_v2", uform_nvmlDeviceGetHandleByPciBusId_v2_t, \
      false)                                                                                                          \
    X(nvmlDeviceGetNvLinkState, "nvmlDeviceGetNvLinkState", uform_nvmlDeviceGetNvLinkState_t, false)                  \
    X(nvmlDeviceGetNvLinkRemotePciInfo_v2, "nvmlDeviceGetNvLinkRemotePciInfo_v2",                                     \
      uform_nvmlDeviceGetNvLinkRemotePciInfo_v2_t, false)                                                             \
    X(nvmlDeviceGetNvLinkRemoteDeviceType, "nvmlDeviceGetNvLinkRemoteDeviceType",                                     \
      uform_nvmlDeviceGetNvLinkRemoteDeviceType_t, true)

#endif
