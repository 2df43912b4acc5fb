/* The hipError_t names the HIP runtime test double knows: hipGetErrorName answers them and the
 * configuration accepts them. A subset of ROCm 6's hip_runtime_api.h; add rows as tests need them. */
#ifndef UFORM_HIP_EMULATED_ERRORS_H
#define UFORM_HIP_EMULATED_ERRORS_H

#define HIP_DOUBLE_ERRORS(X)                                                                      \
    X(hipSuccess, 0)                                                                               \
    X(hipErrorInvalidValue, 1)                                                                     \
    X(hipErrorOutOfMemory, 2)                                                                      \
    X(hipErrorNotInitialized, 3)                                                                   \
    X(hipErrorInvalidDevicePointer, 17)                                                            \
    X(hipErrorInvalidMemcpyDirection, 21)                                                          \
    X(hipErrorInsufficientDriver, 35)                                                              \
    X(hipErrorNoDevice, 100)                                                                       \
    X(hipErrorInvalidDevice, 101)                                                                  \
    X(hipErrorInvalidContext, 201)                                                                 \
    X(hipErrorECCNotCorrectable, 214)                                                              \
    X(hipErrorOperatingSystem, 304)                                                                \
    X(hipErrorInvalidHandle, 400)                                                                  \
    X(hipErrorNotFound, 500)                                                                       \
    X(hipErrorNotReady, 600)                                                                       \
    X(hipErrorIllegalAddress, 700)                                                                 \
    X(hipErrorLaunchFailure, 719)                                                                  \
    X(hipErrorNotSupported, 801)                                                                   \
    X(hipErrorUnknown, 999)                                                                        \
    X(hipErrorRuntimeOther, 1053)

#endif
