/* Two processes of one run, as the mesh makes them: index 0 takes an id and publishes it (here
 * through a pipe), each process creates communicators for its two devices (ranks 0..1 and 2..3
 * of 4), then destroys them. The shared log shows every rank once, all with the published id
 * and the same count, from two pids, and every communicator destroyed. The parent never loads
 * NCCL, so its children are not forks of a process that did. */
#include <sys/wait.h>

#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[32];

#define CHILD_CHECK(condition)                                                                     \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            fprintf(stderr, "child %d: %s failed: %s\n", index, #condition, uform_last_error());   \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

static void run(int index, int id_pipe[2], int ready_pipe[2], int go_pipe[2]) {
    alarm(60); /* a child left waiting by a failed peer ends rather than lingers */
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    if (index == 0) {
        CHILD_CHECK(uform__nccl_unique_id(id) == UFORM_STATUS_OK);
        CHILD_CHECK(write(id_pipe[1], id, sizeof id) == (ssize_t)sizeof id);
    } else {
        CHILD_CHECK(read(id_pipe[0], id, sizeof id) == (ssize_t)sizeof id);
    }
    uform_executor_t *executor = NULL;
    CHILD_CHECK(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                        &executor) == UFORM_STATUS_OK);
    uform__nccl_communicators_t communicators;
    CHILD_CHECK(uform__nccl_communicators_create(executor, id, (size_t)index * 2, 4, &communicators) == UFORM_STATUS_OK);
    CHILD_CHECK(communicators.count == 2);
    /* Both processes hold their communicators at once before either destroys them. */
    char byte = 1;
    CHILD_CHECK(write(ready_pipe[1], &byte, 1) == 1);
    CHILD_CHECK(read(go_pipe[0], &byte, 1) == 1);
    uform__nccl_communicators_destroy(&communicators);
    CHILD_CHECK(uform_executor_free(executor) == UFORM_STATUS_OK);
    _exit(0);
}

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("", log_path, sizeof log_path);
    alarm(90); /* likewise the parent, below ctest's timeout */
    int id_pipe[2], ready_pipe[2], go_pipe[2];
    CHECK(pipe(id_pipe) == 0 && pipe(ready_pipe) == 0 && pipe(go_pipe) == 0);
    pid_t children[2];
    for (int index = 0; index < 2; index++) {
        children[index] = fork();
        CHECK(children[index] >= 0);
        if (children[index] == 0) run(index, id_pipe, ready_pipe, go_pipe);
    }
    /* Each child writes one byte when its communicators exist, and goes on once both did. */
    char bytes[2];
    CHECK(read(ready_pipe[0], &bytes[0], 1) == 1 && read(ready_pipe[0], &bytes[1], 1) == 1);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 32), 4);
    CHECK(write(go_pipe[1], bytes, 2) == 2);
    for (int index = 0; index < 2; index++) {
        int status = 0;
        CHECK(waitpid(children[index], &status, 0) == children[index]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    size_t count = nccl_log_read(log_path, lines, 32);
    CHECK_EQ_INT(count, 8);
    int inits[4] = {0}, destroys[4] = {0};
    for (size_t i = 0; i < count; i++) {
        CHECK(lines[i].pid == children[0] || lines[i].pid == children[1]);
        CHECK(lines[i].rank >= 0 && lines[i].rank < 4);
        /* Ranks 0..1 are index 0's, 2..3 index 1's. */
        CHECK_EQ_INT(lines[i].pid, children[lines[i].rank / 2]);
        if (strcmp(lines[i].kind, "init") == 0) {
            inits[lines[i].rank]++;
            CHECK_EQ_INT(lines[i].nranks, 4);
            CHECK_EQ_STR(lines[i].id, lines[0].id);
        } else {
            destroys[lines[i].rank]++;
        }
    }
    for (int r = 0; r < 4; r++) CHECK(inits[r] == 1 && destroys[r] == 1);
    unlink(log_path);
    TEST_DONE();
}
