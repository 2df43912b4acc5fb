/* The first GPU query races from many threads (one of them loads the driver, the others wait
 * and read the same snapshot); a child forked afterwards answers the parent's list. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_double.h"

#define THREADS 8

static void *list_devices(void *argument) {
    uform_gpu_device_t devices[3];
    size_t count = 0;
    uform_status_t status = uform_gpu_devices(devices, 3, &count);
    return (void *)(uintptr_t)(status == UFORM_STATUS_OK && count == 3 && strcmp(devices[2].name, "third") == 0);
}

int main(void) {
    use_cuda_double("device pci=0000:01:00.0 name=first;device pci=0000:02:00.0 name=second;"
                    "device pci=0000:03:00.0 name=third");
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, list_devices, NULL) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *ok = NULL;
        pthread_join(threads[i], &ok);
        CHECK(ok == (void *)1);
    }
    /* CUDA forbids a child from using a driver its parent initialised: the child must answer
     * from the snapshot. Pointing the variable elsewhere shows no reload happens. */
    setenv("UFORM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) _exit(list_devices(NULL) == (void *)1 ? 0 : 1);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
    CHECK(list_devices(NULL) == (void *)1);
    TEST_DONE();
}
