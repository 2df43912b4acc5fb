/* The CUresult names the CUDA driver test double knows: cuGetErrorName answers them and the
 * configuration accepts them. A subset of the toolkit's list; add rows as tests need them. */
#ifndef UFORM_CUDA_EMULATED_ERRORS_H
#define UFORM_CUDA_EMULATED_ERRORS_H

#define EMULATED_CUDA_ERRORS(X)                                                                   \
    X(CUDA_SUCCESS, 0)                                                                             \
    X(CUDA_ERROR_INVALID_VALUE, 1)                                                                 \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                                                 \
    X(CUDA_ERROR_NOT_INITIALIZED, 3)                                                               \
    X(CUDA_ERROR_DEINITIALIZED, 4)                                                                 \
    X(CUDA_ERROR_STUB_LIBRARY, 34)                                                                 \
    X(CUDA_ERROR_INSUFFICIENT_DRIVER, 35)                                                          \
    X(CUDA_ERROR_NO_DEVICE, 100)                                                                   \
    X(CUDA_ERROR_INVALID_DEVICE, 101)                                                              \
    X(CUDA_ERROR_INVALID_CONTEXT, 201)                                                             \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)                                                           \
    X(CUDA_ERROR_CONTAINED, 226)                                                                   \
    X(CUDA_ERROR_OPERATING_SYSTEM, 304)                                                            \
    X(CUDA_ERROR_INVALID_HANDLE, 400)                                                              \
    X(CUDA_ERROR_ILLEGAL_STATE, 401)                                                               \
    X(CUDA_ERROR_NOT_FOUND, 500)                                                                   \
    X(CUDA_ERROR_NOT_READY, 600)                                                                   \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                                             \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                                                              \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                                                        \
    X(CUDA_ERROR_ASSERT, 710)                                                                      \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712)                                              \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713)                                                  \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                                                        \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                                                         \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)                                                          \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                                                       \
    X(CUDA_ERROR_INVALID_PC, 718)                                                                  \
    X(CUDA_ERROR_LAUNCH_FAILED, 719)                                                               \
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK, 721)                                                          \
    X(CUDA_ERROR_NOT_PERMITTED, 800)                                                               \
    X(CUDA_ERROR_NOT_SUPPORTED, 801)                                                               \
    X(CUDA_ERROR_SYSTEM_NOT_READY, 802)                                                            \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                                                      \
    X(CUDA_ERROR_MPS_CLIENT_TERMINATED, 810)                                                       \
    X(CUDA_ERROR_EXTERNAL_DEVICE, 911)                                                             \
    X(CUDA_ERROR_UNKNOWN, 999)

#endif
