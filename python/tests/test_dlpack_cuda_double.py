"""DLPack for device arenas, against the CUDA driver test double: one tensor per device twin on
kDLCUDA with the device's CUDA ordinal; the consumer's stream waits on the device for the
executor's earlier calls (__dlpack__(stream=...)), the host only for what they have not queued."""

from test_vram_cuda_double import THREE_DEVICES, TWO_DEVICES, run_child

TESTS = __import__("pathlib").Path(__file__).resolve().parent

PRELUDE = f"""
        sys.path.insert(0, {str(TESTS)!r})
        import dlpack_abi
"""


def test_a_device_view_is_a_kdlcuda_tensor_per_device_twin(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, THREE_DEVICES, PRELUDE + """
        with Executor.for_vram([2, 0]) as executor, Arena.new_in(executor, 1 << 20) as arena:
            native = {}
            executor.for_devices(lambda slot: native.__setitem__(slot.device, slot.native_device))
            pointer = arena.allocate(4096)
            views = []
            for device in range(2):
                view = arena.device_view(device, pointer, 4096)
                legacy = dlpack_abi.describe(view.__dlpack__(stream=1))
                versioned = dlpack_abi.describe(view.__dlpack__(stream=-1, max_version=(1, 0)))
                views.append({"dlpack_device": list(view.__dlpack_device__()), "legacy": legacy,
                              "versioned": versioned, "twin": arena.device_pointer(device, pointer),
                              "device": view.device, "native": native[device]})
            whole = arena.device_view(1)
            whole_answer = [whole.address == arena.device_pointer(1, arena.device_view(0).address), whole.nbytes]
            refusals = {
                "arena_dlpack": failure(arena.__dlpack__),
                "arena_device": failure(arena.__dlpack_device__),
                "host_view": failure(arena.view),
                "memoryview": failure(lambda: memoryview(views and arena.device_view(0))),
                "cpu": failure(lambda: arena.device_view(0).__dlpack__(dl_device=(1, 0))),
                "copy": failure(lambda: arena.device_view(0).__dlpack__(copy=True)),
                "stream0": failure(lambda: arena.device_view(0).__dlpack__(stream=0)),
                "device_range": failure(lambda: arena.device_view(2)),
            }
            gc.collect()
        report(views=views, whole=whole_answer, refusals=refusals)
    """)
    for view in answer["views"]:
        assert view["dlpack_device"] == [2, view["native"]]
        for kind in ("legacy", "versioned"):
            assert view[kind]["device"] == [2, view["native"]]
            assert view[kind]["data"] == view["twin"] and view[kind]["shape"] == [4096]
            assert view[kind]["dtype"] == [1, 8, 1] and view[kind]["ndim"] == 1
        assert view["legacy"]["name"] == "dltensor" and view["versioned"]["name"] == "dltensor_versioned"
    # device 0 is gpu_devices()[2]: its CUDA ordinal, not its index among the executor's devices
    assert [view["native"] for view in answer["views"]] == [2, 0]
    assert answer["whole"] == [True, 1 << 20]
    refusals = answer["refusals"]
    assert refusals["arena_dlpack"][0] == "BufferError" and "device_view" in refusals["arena_dlpack"][1]
    assert refusals["arena_device"][0] == "BufferError"
    assert refusals["host_view"][0] == "BufferError"
    assert refusals["memoryview"][0] == "BufferError" and "no host buffer" in refusals["memoryview"][1]
    assert refusals["cpu"][0] == "BufferError" and "copy_to_host" in refusals["cpu"][1]
    assert refusals["copy"][0] == "BufferError"
    assert refusals["stream0"][0] == "ValueError"
    assert refusals["device_range"][0] == "InvalidArgumentError"


# The consumer's side, as a framework has it: a stream of its own on the device's primary
# context, made through the double's driver API with ctypes, and work on it (a host function
# the double runs on that stream's thread, reading device memory as a kernel would).
CONSUMER = """
        import threading
        driver = ctypes.CDLL(os.environ["UFORM_CUDA_LIBRARY"])
        HOST_FUNCTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        driver.cuLaunchHostFunc.argtypes = [ctypes.c_void_p, HOST_FUNCTION, ctypes.c_void_p]
        driver.cuMemsetD8Async.argtypes = [ctypes.c_ulonglong, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]
        driver.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        driver.cuStreamDestroy_v2.argtypes = [ctypes.c_void_p]
        assert driver.cuInit(0) == 0
        context = ctypes.c_void_p()
        assert driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), 1) == 0
        assert driver.cuCtxSetCurrent(context) == 0
        consumer = ctypes.c_void_p()
        assert driver.cuStreamCreate(ctypes.byref(consumer), 1) == 0  # CU_STREAM_NON_BLOCKING
"""


def test_a_tensor_never_sees_a_copy_still_writing(cuda_double, tmp_path):
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, PRELUDE + CONSUMER + """
        size = 20 << 20
        data = PATTERN[:size]
        seen = []
        with Executor.for_vram() as executor, Arena.new_in(executor, size) as arena:
            pointer = arena.allocate(size)
            for round in range(3):
                chunk = bytes([round]) + data[1:]
                pending = executor.copy_to_device(1, arena.device_pointer(1, pointer), chunk, deferred=True)
                capsule = arena.device_view(1, pointer, size).__dlpack__(stream=consumer.value)
                tensor = dlpack_abi.describe(capsule)

                @HOST_FUNCTION
                def read(_):  # the consumer's kernel, on its stream
                    seen.append(ctypes.string_at(tensor["data"], size) == chunk)

                assert driver.cuLaunchHostFunc(consumer, read, None) == 0
                assert driver.cuStreamSynchronize(consumer) == 0
                let_go = dlpack_abi.consume(capsule)
                refused = failure(arena.close)
                let_go()
                pending.wait()
                del pending, capsule
        assert driver.cuStreamDestroy_v2(consumer) == 0
        report(seen=seen, refused=refused)
    """)
    assert answer["seen"] == [True, True, True]
    assert answer["refused"][0] == "BufferError"


def test_the_consumer_stream_waits_on_the_device_not_the_host(cuda_double, tmp_path):
    # A deferred device function holds the executor's stream of device 1 behind a gate, with a
    # memset queued after it: the export returns with the gate still shut (no host wait), and the
    # consumer's work queued after it runs only once the gate opened and the memset ran.
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, PRELUDE + CONSUMER + """
        gate = threading.Event()
        passed = []
        seen = {}

        @HOST_FUNCTION
        def hold(_):
            gate.wait(20)
            passed.append(True)

        with Executor.for_vram([1]) as executor, Arena.new_in(executor, 1 << 20) as arena:
            pointer = arena.allocate(4096)

            def hold_stream(slot):
                assert driver.cuLaunchHostFunc(slot.stream, hold, None) == 0
                assert driver.cuMemsetD8Async(pointer, 0xAB, 4096, slot.stream) == 0

            @HOST_FUNCTION
            def read(_):
                seen["gate_had_passed"] = bool(passed)
                seen["bytes"] = set(ctypes.string_at(pointer, 4096))

            # The arena's first device view learns the DLPack devices with a call of its own (which
            # would wait for the held one): taken first.
            view = arena.device_view(0, pointer, 4096)
            pending = executor.for_devices(hold_stream, deferred=True)
            capsule = view.__dlpack__(stream=consumer.value)
            gate_shut_at_return = not passed
            assert driver.cuLaunchHostFunc(consumer, read, None) == 0
            time.sleep(0.2)
            before_gate = sorted(seen)
            gate.set()
            assert driver.cuStreamSynchronize(consumer) == 0
            pending.wait()
            let_go = dlpack_abi.consume(capsule)
            let_go()
            del capsule, pending, view
        assert driver.cuStreamDestroy_v2(consumer) == 0
        report(gate_shut_at_return=gate_shut_at_return, before_gate=before_gate,
               gate_had_passed=seen["gate_had_passed"], bytes=sorted(seen["bytes"]))
    """)
    assert answer["gate_shut_at_return"] is True
    assert answer["before_gate"] == []
    assert answer["gate_had_passed"] is True
    assert answer["bytes"] == [0xAB]


def test_the_first_device_view_waits_for_no_queued_call(cuda_double, tmp_path):
    """The executor learns its devices' DLPack devices when it is made, so an arena's first
    device_view() answers at once while a deferred call still holds the devices: the call below
    waits for a gate the main thread opens only after device_view() has returned (had the view
    waited for the call, the call's wait would run out after 30 s and say so)."""
    answer = run_child(cuda_double, tmp_path, TWO_DEVICES, PRELUDE + """
        import threading
        with Executor.for_vram() as executor, Arena.new_in(executor, 1 << 20) as arena:
            gate = threading.Event()
            opened = []
            pending = executor.for_devices(lambda slot: opened.append(gate.wait(30)), deferred=True)
            views = [list(arena.device_view(device).__dlpack_device__()) for device in range(2)]
            still_pending = not pending.done()
            gate.set()
            pending.wait()
        report(opened=opened, still_pending=still_pending, views=views)
    """)
    assert answer["opened"] == [True, True]
    assert answer["still_pending"] is True
    assert answer["views"] == [[2, 0], [2, 1]]
