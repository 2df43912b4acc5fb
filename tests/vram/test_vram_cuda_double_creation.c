/* VRAM executors against the CUDA driver test double: creation, its arguments and refusals,
 * what the executor reports (devices, class, host threads), and that free gives the contexts
 * and streams back to the driver. */
#include "vram_double.h"

static const char config[] =
    "device pci=0000:1B:00.0 cc=9.0 sms=132 memory=1G name=NVIDIA H100 80GB HBM3\n"
    "device pci=0000:52:00.0 cc=8.0 sms=108 memory=1G name=NVIDIA A100-SXM4-40GB\n"
    "device pci=0000:61:00.0 cc=7.0 sms=80 memory=1G name=Tesla V100-SXM2-32GB\n";

static uform_status_t create(const int32_t *devices, size_t count, uform_gpu_class_t gpu_class, void *const *streams,
                             size_t streams_count, uform_executor_t **executor) {
    return uform_executor_for_vram(devices, count, gpu_class, NULL, 0, UFORM_CPU_CLASS_NONE, streams, streams_count, 0,
                                   0, executor);
}

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    (void)cu;
    uform_executor_t *executor = (uform_executor_t *)1;

    /* Bad input: a status and a message, the output NULL, nothing created. */
    const int32_t twice[] = {0, 1, 0};
    CHECK_STATUS(create(twice, 3, UFORM_GPU_CLASS_NONE, NULL, 0, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(executor == NULL);
    CHECK_ERROR_NAMES("listed twice");
    const int32_t beyond[] = {0, 3};
    CHECK_STATUS(create(beyond, 2, UFORM_GPU_CLASS_NONE, NULL, 0, &executor), UFORM_STATUS_NOT_FOUND);
    CHECK_ERROR_NAMES("does not exist (3 GPUs)");
    const int32_t negative[] = {-1};
    CHECK_STATUS(create(negative, 1, UFORM_GPU_CLASS_NONE, NULL, 0, &executor), UFORM_STATUS_NOT_FOUND);
    CHECK_STATUS(create(NULL, 2, UFORM_GPU_CLASS_NONE, NULL, 0, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(create(NULL, 0, (uform_gpu_class_t)99, NULL, 0, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(create(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    void *streams[1] = {(void *)0x1234};
    CHECK_STATUS(create(NULL, 0, UFORM_GPU_CLASS_NONE, streams, 1, &executor), UFORM_STATUS_UNSUPPORTED);
    CHECK_ERROR_NAMES("borrowed streams");
    const int32_t domain[] = {7777};
    CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, domain, 1, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                         &executor),
                 UFORM_STATUS_NOT_FOUND);

    /* A class the devices cannot run: Hopper code on an A100, anything on a V100 (class none). */
    const int32_t hopper_and_ampere[] = {0, 1};
    CHECK_STATUS(create(hopper_and_ampere, 2, UFORM_GPU_CLASS_NVIDIA_HOPPER, NULL, 0, &executor),
                 UFORM_STATUS_UNSUPPORTED);
    CHECK_ERROR_NAMES("cannot run GPU class nvidia_hopper");
    CHECK_STATUS(create(NULL, 0, UFORM_GPU_CLASS_AMD_CDNA3, NULL, 0, &executor), UFORM_STATUS_UNSUPPORTED);
    const int32_t volta[] = {2};
    CHECK_STATUS(create(volta, 1, UFORM_GPU_CLASS_NVIDIA_AMPERE, NULL, 0, &executor), UFORM_STATUS_UNSUPPORTED);

    /* The Ampere floor runs on both; the derived class of a mix is that floor. */
    CHECK_OK(create(hopper_and_ampere, 2, UFORM_GPU_CLASS_NVIDIA_AMPERE, NULL, 0, &executor));
    CHECK_EQ_INT(uform_executor_gpu_class(executor), UFORM_GPU_CLASS_NVIDIA_AMPERE);
    CHECK_OK(uform_executor_free(executor));
    CHECK_OK(create(hopper_and_ampere, 2, UFORM_GPU_CLASS_NONE, NULL, 0, &executor));
    CHECK_EQ_INT(uform_executor_gpu_class(executor), UFORM_GPU_CLASS_NVIDIA_AMPERE);
    CHECK_EQ_INT(uform_executor_devices(executor), 2);
    CHECK(uform_executor_threads(executor) >= 1);
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));
    CHECK_EQ_INT(uform_executor_mood(executor), UFORM_MOOD_SPINNING);
    CHECK_OK(uform_executor_free(executor));

    const int32_t hopper[] = {0};
    CHECK_OK(create(hopper, 1, UFORM_GPU_CLASS_NONE, NULL, 0, &executor));
    CHECK_EQ_INT(uform_executor_gpu_class(executor), UFORM_GPU_CLASS_NVIDIA_HOPPER);
    CHECK_EQ_INT(uform_executor_devices(executor), 1);
    /* Host verbs run on the host threads as on any RAM executor. */
    CHECK_OK(uform_executor_free(executor));

    /* Every device (the V100 has no class: none in common). */
    CHECK_OK(create(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, &executor));
    CHECK_EQ_INT(uform_executor_devices(executor), 3);
    CHECK_EQ_INT(uform_executor_gpu_class(executor), UFORM_GPU_CLASS_NONE);
    CHECK_OK(uform_executor_free(executor));

    /* RAM and NULL executors have no devices. */
    uform_executor_t *ram = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &ram));
    CHECK_EQ_INT(uform_executor_devices(ram), 0);
    CHECK_EQ_INT(uform_executor_gpu_class(ram), UFORM_GPU_CLASS_NONE);
    CHECK_OK(uform_executor_free(ram));
    CHECK_EQ_INT(uform_executor_devices(NULL), 0);

    /* Nothing of the executors stays on the devices. */
    for (int device = 0; device < 3; device++) CHECK_EQ_INT(vram_device_used(&cu, device), 0);
    TEST_DONE();
}
