/* Where a VRAM executor's host threads go when no memory domain is named: the NUMA nodes
 * nearest its devices, read through the hardware seam, checked on two fixtures: an 8-GPU
 * two-socket server (four GPUs per socket) and a Grace-Hopper (one GPU beside the 72 Grace
 * cores on node 0, its HBM a CPU-less node 1). A device on a node without CPUs, or whose node
 * the platform does not say for any device, sends the host threads to every node. The GPUs come
 * from the CUDA driver test double. */
#include "gpu/cuda_double.h"
#include "gpu/gpu_devices.h"
#include "gpu/vram_internal.h"
#include "hardware/fixture.h"
#include "test.h"

static const char config[] =
    "device pci=0000:C3:00.0 cc=9.0\ndevice pci=0000:1B:00.0 cc=9.0\ndevice pci=0000:DF:00.0 cc=9.0\n"
    "device pci=0000:52:00.0 cc=8.0\ndevice pci=0000:43:00.0 cc=8.9\ndevice pci=0000:9D:00.0 cc=10.0\n"
    "device pci=0000:61:00.0 cc=8.0\ndevice pci=0000:D1:00.0 cc=12.0\n"
    "device pci=0009:01:00.0 cc=9.0 name=NVIDIA GH200 480GB\n";

static size_t domains_of(const uform__gpu_detail_t *details, const size_t *picks, size_t count, int32_t *nodes) {
    uform__gpu_detail_t chosen[16];
    for (size_t i = 0; i < count; i++) chosen[i] = details[picks[i]];
    return uform__vram_host_domains(chosen, count, nodes);
}

int main(void) {
    use_cuda_double(config);
    use_fixture("two_socket_6248_smt");
    uform__gpu_detail_t details[9];
    size_t count = 0;
    CHECK_OK(uform__gpu_details(details, 9, &count));
    CHECK_EQ_INT(count, 9);
    /* PCI order: 0009:01 (domain 9) is last; 1B 43 52 61 on socket 0, 9D C3 D1 DF on socket 1. */
    int32_t nodes[16];
    const size_t socket0[] = {0, 1, 2, 3}, socket1[] = {4, 5}, both[] = {6, 0, 7};
    CHECK_EQ_INT(domains_of(details, socket0, 4, nodes), 1);
    CHECK_EQ_INT(nodes[0], 0);
    CHECK_EQ_INT(domains_of(details, socket1, 2, nodes), 1);
    CHECK_EQ_INT(nodes[0], 1);
    CHECK_EQ_INT(domains_of(details, both, 3, nodes), 2);
    CHECK_EQ_INT(nodes[0], 1);
    CHECK_EQ_INT(nodes[1], 0);
    /* The two-socket fixture has no 0009:01:00.0: its node is unknown. Alone, that is every node;
     * beside a known one, the known one. */
    const size_t unknown[] = {8}, unknown_and_socket0[] = {8, 0};
    CHECK_EQ_INT(domains_of(details, unknown, 1, nodes), 0);
    CHECK_EQ_INT(domains_of(details, unknown_and_socket0, 2, nodes), 1);
    CHECK_EQ_INT(nodes[0], 0);

    use_fixture("grace_hopper_gh200");
    CHECK_OK(uform__gpu_details(details, 9, &count));
    CHECK_EQ_INT(details[8].numa_node, 0);
    CHECK_EQ_STR(details[8].pci_address, "0009:01:00.0");
    const size_t gh200[] = {8};
    CHECK_EQ_INT(domains_of(details, gh200, 1, nodes), 1);
    CHECK_EQ_INT(nodes[0], 0);
    /* Were the GPU reported on its own HBM node (1, no CPUs), the host threads go everywhere. */
    details[8].numa_node = 1;
    CHECK_EQ_INT(domains_of(details, gh200, 1, nodes), 0);
    TEST_DONE();
}
