/* Helpers for tests that run uform's NCCL layer against the NCCL test double
 * (tests/doubles/nccl_emulated): a host emulation of NCCL's ABI, never a real GPU. Communicator
 * tests build VRAM executors over the CUDA driver test double too (tests/vram/vram_double.h). */
#ifndef UFORM_TEST_NCCL_DOUBLE_H
#define UFORM_TEST_NCCL_DOUBLE_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hardware/fixture.h" /* has_token */
#include "mesh/mesh_internal.h"
#include "mesh/nccl/nccl_loader.h"
#include "test.h"

/** Points uform at the NCCL double configured by `config`, logging to a fresh file whose path is
 *  written to `log_path` (`capacity` bytes; NULL: no log). Call before uform's first NCCL query:
 *  the library and the double read these once. */
static inline void use_nccl_double(const char *config, char *log_path, size_t capacity) {
    setenv("UFORM_NCCL_LIBRARY", UFORM_TEST_NCCL_DOUBLE, 1);
    setenv("UFORM_NCCL_DOUBLE_CONFIG", config, 1);
    if (log_path) {
        snprintf(log_path, capacity, "%s/nccl_double_log_%ld.txt", UFORM_TEST_BINARY_DIR, (long)getpid());
        unlink(log_path);
        setenv("UFORM_NCCL_DOUBLE_LOG", log_path, 1);
    }
}

/** Opens the NCCL double configured by `config` directly (not through uform's loader) and binds
 *  every entry point uform binds, the optional ones included. */
static inline uform__nccl_api_t nccl_double_open(const char *config) {
    setenv("UFORM_NCCL_DOUBLE_CONFIG", config, 1);
    void *library = dlopen(UFORM_TEST_NCCL_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(library != NULL);
    uform__nccl_api_t api;
#define NCCL_DOUBLE_BIND_(field, symbol, type)                                                     \
    api.field = (type)dlsym(library, symbol);                                                      \
    CHECK(api.field != NULL);
    UFORM_NCCL_ENTRY_POINTS(NCCL_DOUBLE_BIND_)
    UFORM_NCCL_OPTIONAL_ENTRY_POINTS(NCCL_DOUBLE_BIND_)
#undef NCCL_DOUBLE_BIND_
    return api;
}

/** A non-blocking configuration (blocking = 0), every other field NCCL's default. */
static inline uform_ncclConfig nccl_nonblocking_config(void) {
    uform_ncclConfig config = {sizeof config, UFORM_NCCL_CONFIG_MAGIC, UFORM_NCCL_CONFIG_VERSION_KNOWN, 0,
                               UFORM_NCCL_CONFIG_UNDEF_INT, UFORM_NCCL_CONFIG_UNDEF_INT, UFORM_NCCL_CONFIG_UNDEF_INT,
                               NULL};
    return config;
}

/** Polls `comm`'s ncclCommGetAsyncError while it answers ncclInProgress (at most `seconds`):
 *  the state it settled on, ncclInProgress if it never did. `*polls` counts the in-progress answers. */
static inline uform_ncclResult nccl_poll(const uform__nccl_api_t *api, uform_ncclComm comm, double seconds,
                                         int *polls) {
    uform_ncclResult state = UFORM_NCCL_IN_PROGRESS;
    for (long waited_us = 0; waited_us <= (long)(seconds * 1e6); waited_us += 1000) {
        CHECK_EQ_INT(api->ncclCommGetAsyncError(comm, &state), UFORM_NCCL_SUCCESS);
        if (state != UFORM_NCCL_IN_PROGRESS) break;
        if (polls) ++*polls;
        usleep(1000);
    }
    return state;
}

/** One line of the double's log. */
typedef struct nccl_log_line_t {
    char kind[16]; /* "init" or "destroy" */
    long pid;
    int rank, nranks; /* nranks: init lines only */
    char id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1];
    int aborted;      /* destroy lines from ncclCommAbort */
} nccl_log_line_t;

/** Reads the log into `lines` (up to `capacity`); every line must parse. Answers the count. */
static inline size_t nccl_log_read(const char *path, nccl_log_line_t *lines, size_t capacity) {
    FILE *file = fopen(path, "r");
    if (!file) return 0; /* nothing logged yet */
    char text[512];
    size_t count = 0;
    while (fgets(text, sizeof text, file)) {
        CHECK(count < capacity);
        nccl_log_line_t *line = &lines[count++];
        memset(line, 0, sizeof *line);
        if (strncmp(text, "init ", 5) == 0) {
            snprintf(line->kind, sizeof line->kind, "init");
            CHECK_EQ_INT(sscanf(text, "init pid=%ld rank=%d nranks=%d id=%256s", &line->pid, &line->rank,
                                &line->nranks, line->id),
                         4);
            CHECK_EQ_INT(strlen(line->id), 2 * UFORM_NCCL_UNIQUE_ID_BYTES);
        } else {
            snprintf(line->kind, sizeof line->kind, "destroy");
            CHECK_EQ_INT(sscanf(text, "destroy pid=%ld rank=%d", &line->pid, &line->rank), 2);
            line->aborted = strstr(text, " abort\n") != NULL;
        }
    }
    fclose(file);
    return count;
}

/** The id's bytes as the log spells them. */
static inline void nccl_id_hex(const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES], char *out) {
    for (size_t i = 0; i < UFORM_NCCL_UNIQUE_ID_BYTES; i++) sprintf(out + 2 * i, "%02x", id[i]);
}

#endif
