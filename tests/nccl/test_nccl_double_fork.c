/* A fork()ed child never calls NCCL: the parent loaded it and made communicators; in the child
 * every NCCL call answers FORKED and destroying the inherited communicators frees only the
 * child's copy of the array. The log holds no line of the child's; the parent's communicators
 * still work and are destroyed by the parent. */
#include <sys/wait.h>

#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

#define CHILD_CHECK(condition)                                                                     \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            fprintf(stderr, "child: %s failed: %s\n", #condition, uform_last_error());             \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    CHECK_OK(uform__nccl_communicators_create(executor, id, 0, 2, &communicators));
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 2);

    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        uint8_t other[UFORM_NCCL_UNIQUE_ID_BYTES];
        CHILD_CHECK(uform__nccl_available(NULL) == UFORM_STATUS_FORKED);
        CHILD_CHECK(strstr(uform_last_error(), "fork") != NULL);
        CHILD_CHECK(uform__nccl_unique_id(other) == UFORM_STATUS_FORKED);
        uform__nccl_communicators_t mine;
        CHILD_CHECK(uform__nccl_communicators_create(executor, id, 0, 2, &mine) == UFORM_STATUS_FORKED);
        CHILD_CHECK(uform__nccl_all_reduce_check(executor, &communicators) == UFORM_STATUS_FORKED);
        uform__nccl_communicators_destroy(&communicators);
        CHILD_CHECK(communicators.communicators == NULL);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 2); /* nothing from the child */
    CHECK_OK(uform__nccl_all_reduce_check(executor, &communicators));
    uform__nccl_communicators_destroy(&communicators);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(lines[i].pid, getpid());
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
