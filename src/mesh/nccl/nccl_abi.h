/* Internal: the small part of NCCL's ABI uform uses, declared here so the project builds
 * without NCCL's headers (libnccl.so.2 is dlopen'ed at run time by nccl_loader.c). Values and
 * signatures follow the nccl.h of NCCL 2.2x (NVIDIA/nccl, src/nccl.h.in); every one used here
 * has had this value and signature since NCCL 2.14 (ncclInProgress's release; ncclCommAbort and
 * ncclCommGetAsyncError date from 2.4). Checked by hand against NCCL 2.28.9's installed nccl.h:
 * every value below but ncclTimeout (which 2.28 lacks), and every signature (ncclUniqueId is
 * an anonymous struct there, of the same 128-byte layout). A result value uform does not name
 * is reported through ncclGetErrorString, never interpreted. Names carry a `uform_nccl`
 * prefix so this header and the real nccl.h can be included together. */
#ifndef UFORM_MESH_NCCL_ABI_H
#define UFORM_MESH_NCCL_ABI_H

#include <stddef.h>

/* ncclResult_t. NCCL's enums hold no negative value: GCC and Clang give them unsigned int. */
typedef unsigned int uform_ncclResult;
enum {
    UFORM_NCCL_SUCCESS = 0,                /* ncclSuccess */
    UFORM_NCCL_UNHANDLED_CUDA_ERROR = 1,   /* ncclUnhandledCudaError */
    UFORM_NCCL_SYSTEM_ERROR = 2,           /* ncclSystemError: sockets, shared memory, ... */
    UFORM_NCCL_INTERNAL_ERROR = 3,         /* ncclInternalError */
    UFORM_NCCL_INVALID_ARGUMENT = 4,       /* ncclInvalidArgument */
    UFORM_NCCL_INVALID_USAGE = 5,          /* ncclInvalidUsage */
    UFORM_NCCL_REMOTE_ERROR = 6,           /* ncclRemoteError: a peer exited, a network error */
    UFORM_NCCL_IN_PROGRESS = 7,            /* ncclInProgress: non-blocking communicators only */
    UFORM_NCCL_TIMEOUT = 8                 /* ncclTimeout (newer releases only) */
};

/* NCCL_UNIQUE_ID_BYTES and ncclUniqueId: 128 opaque bytes, passed by value. */
#define UFORM_NCCL_ID_BYTES 128
typedef struct uform_ncclUniqueId {
    char internal[UFORM_NCCL_ID_BYTES];
} uform_ncclUniqueId;

/* ncclComm_t is a pointer to NCCL's own incomplete struct tag. */
typedef struct ncclComm *uform_ncclComm;

/* ncclDataType_t and ncclRedOp_t: the values an all-reduce of floats uses, and their kin. */
typedef unsigned int uform_ncclDataType;
enum {
    UFORM_NCCL_INT8 = 0,
    UFORM_NCCL_UINT8 = 1,
    UFORM_NCCL_INT32 = 2,
    UFORM_NCCL_UINT32 = 3,
    UFORM_NCCL_INT64 = 4,
    UFORM_NCCL_UINT64 = 5,
    UFORM_NCCL_FLOAT16 = 6,
    UFORM_NCCL_FLOAT32 = 7,
    UFORM_NCCL_FLOAT64 = 8,
    UFORM_NCCL_BFLOAT16 = 9
};
typedef unsigned int uform_ncclRedOp;
enum { UFORM_NCCL_SUM = 0, UFORM_NCCL_PROD = 1, UFORM_NCCL_MAX = 2, UFORM_NCCL_MIN = 3, UFORM_NCCL_AVG = 4 };

/* cudaStream_t is CUstream (struct CUstream_st *): the runtime and driver share the type. */
typedef struct CUstream_st *uform_ncclStream;

/* ncclConfig_t as nccl.h declares it since NCCL 2.17 (ncclConfig_v21700); 2.14 to 2.16 read the
 * same leading fields. `version` tells NCCL how many fields the caller knows: uform writes the
 * library's own version code, at most 2.17's, so NCCL reads no field past `netName`. Every
 * field uform does not set is NCCL_CONFIG_UNDEF_INT (INT_MIN) or NULL: NCCL's default. */
#define UFORM_NCCL_CONFIG_MAGIC 0xcafebeefu
#define UFORM_NCCL_CONFIG_UNDEF_INT (-2147483647 - 1)
#define UFORM_NCCL_CONFIG_VERSION_KNOWN 21700
typedef struct uform_ncclConfig {
    size_t size;         /* sizeof(ncclConfig_t) */
    unsigned int magic;  /* UFORM_NCCL_CONFIG_MAGIC */
    unsigned int version; /* NCCL_VERSION_CODE of the fields known */
    int blocking;        /* 0: every call returns at once, ncclInProgress while it runs */
    int cgaClusterSize;
    int minCTAs;
    int maxCTAs;
    const char *netName;
} uform_ncclConfig;

/* Entry points, by nccl.h's signatures. */
typedef uform_ncclResult (*uform_ncclGetVersion_t)(int *version);
typedef uform_ncclResult (*uform_ncclGetUniqueId_t)(uform_ncclUniqueId *id);
/* rank in [0, nranks); the rank's CUDA device must be current on the calling thread. Blocks
 * until every rank joined unless called between ncclGroupStart and ncclGroupEnd. */
typedef uform_ncclResult (*uform_ncclCommInitRank_t)(uform_ncclComm *comm, int nranks, uform_ncclUniqueId id,
                                                     int rank);
/* NCCL 2.14 and newer. With config->blocking 0 it returns ncclInProgress (or ncclSuccess) at
 * once, and inside a group the outermost ncclGroupEnd does: the initialisation runs in NCCL's
 * threads, ncclCommGetAsyncError answers ncclInProgress until it ends, and ncclCommAbort stops
 * it. NCCL never notices a peer that dies meanwhile: the caller bounds the wait. */
typedef uform_ncclResult (*uform_ncclCommInitRankConfig_t)(uform_ncclComm *comm, int nranks, uform_ncclUniqueId id,
                                                           int rank, uform_ncclConfig *config);
typedef uform_ncclResult (*uform_ncclCommDestroy_t)(uform_ncclComm comm);
/* Frees a communicator in any state, a failed initialisation's included. */
typedef uform_ncclResult (*uform_ncclCommAbort_t)(uform_ncclComm comm);
typedef uform_ncclResult (*uform_ncclCommCount_t)(const uform_ncclComm comm, int *count);
typedef uform_ncclResult (*uform_ncclCommUserRank_t)(const uform_ncclComm comm, int *rank);
typedef uform_ncclResult (*uform_ncclCommGetAsyncError_t)(uform_ncclComm comm, uform_ncclResult *error);
/* Group calls nest; only the outermost ncclGroupEnd runs what the group collected. */
typedef uform_ncclResult (*uform_ncclGroupStart_t)(void);
typedef uform_ncclResult (*uform_ncclGroupEnd_t)(void);
typedef const char *(*uform_ncclGetErrorString_t)(uform_ncclResult result);
typedef uform_ncclResult (*uform_ncclAllReduce_t)(const void *send, void *receive, size_t count,
                                                  uform_ncclDataType type, uform_ncclRedOp op, uform_ncclComm comm,
                                                  uform_ncclStream stream);

/* X(field, symbol, type): every entry point the loader binds, listed once. ncclGetErrorString
 * comes first so that later failures can be named. */
#define UFORM_NCCL_ENTRY_POINTS(X)                                                                 \
    X(ncclGetErrorString, "ncclGetErrorString", uform_ncclGetErrorString_t)                        \
    X(ncclGetVersion, "ncclGetVersion", uform_ncclGetVersion_t)                                    \
    X(ncclGetUniqueId, "ncclGetUniqueId", uform_ncclGetUniqueId_t)                                 \
    X(ncclCommInitRank, "ncclCommInitRank", uform_ncclCommInitRank_t)                              \
    X(ncclCommDestroy, "ncclCommDestroy", uform_ncclCommDestroy_t)                                 \
    X(ncclCommAbort, "ncclCommAbort", uform_ncclCommAbort_t)                                       \
    X(ncclCommCount, "ncclCommCount", uform_ncclCommCount_t)                                       \
    X(ncclCommUserRank, "ncclCommUserRank", uform_ncclCommUserRank_t)                              \
    X(ncclCommGetAsyncError, "ncclCommGetAsyncError", uform_ncclCommGetAsyncError_t)               \
    X(ncclGroupStart, "ncclGroupStart", uform_ncclGroupStart_t)                                    \
    X(ncclGroupEnd, "ncclGroupEnd", uform_ncclGroupEnd_t)                                          \
    X(ncclAllReduce, "ncclAllReduce", uform_ncclAllReduce_t)

/* X(field, symbol, type): entry points of newer releases only; NULL where the library lacks them
 * (then uform takes the older path). */
#define UFORM_NCCL_OPTIONAL_ENTRY_POINTS(X)                                                        \
    X(ncclCommInitRankConfig, "ncclCommInitRankConfig", uform_ncclCommInitRankConfig_t)

#endif
