# The same test again with glibc's rseq registration turned off (a tunable any program's user may
# set): the inline CPU read must then fall back to sched_getcpu, and says which form it took.
add_test(NAME platform.test_platform_current_cpu_without_rseq COMMAND test_platform_current_cpu)
set_tests_properties(platform.test_platform_current_cpu_without_rseq PROPERTIES
  LABELS platform TIMEOUT 60 ENVIRONMENT "GLIBC_TUNABLES=glibc.pthread.rseq=0")
