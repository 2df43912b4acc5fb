# test_executor_thread_start_refused skips itself (exit 77, saying why) where the C library caps
# the default thread stack (musl) or has no pthread_setattr_default_np (WebAssembly).
set_tests_properties(executor.test_executor_thread_start_refused PROPERTIES SKIP_RETURN_CODE 77)
