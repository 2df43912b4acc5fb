# The benchmark's side-by-side table, laid out as documented (check_table.sh).
if(TARGET uform-bench)
  add_test(NAME bench.table_layout COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_table.sh
    ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:uform-bench>)
  set_tests_properties(bench.table_layout PROPERTIES LABELS bench TIMEOUT 120)
endif()
