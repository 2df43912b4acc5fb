# The benchmark's side-by-side table, laid out as documented (check_table.sh).
# Not in cross builds: under qemu-user every pool of the bench's table reads "could not start",
# so there is no table to check (tools.bench_smoke still runs the bench there).
if(TARGET uform-bench AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME bench.table_layout COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_table.sh $<TARGET_FILE:uform-bench>)
  set_tests_properties(bench.table_layout PROPERTIES LABELS bench TIMEOUT 120)
endif()

# `uform bench --pairs`: the paired-rounds table, laid out as documented (check_pairs.sh).
if(TARGET uform-bench AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME bench.pairs_layout COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_pairs.sh $<TARGET_FILE:uform-bench>)
  set_tests_properties(bench.pairs_layout PROPERTIES LABELS bench TIMEOUT 120)
endif()

# scripts/bench-ab: builds compared in paired rounds, laid out as documented (check_ab.sh).
if(TARGET uform-bench AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME bench.ab_layout COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_ab.sh ${PROJECT_SOURCE_DIR}
                                        $<TARGET_FILE_DIR:uform-bench>)
  set_tests_properties(bench.ab_layout PROPERTIES LABELS bench TIMEOUT 120)
endif()

# `uform bench --turns`: pools alive side by side, taking turns batch by batch (check_turns.sh).
if(TARGET uform-bench AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME bench.turns_layout COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_turns.sh $<TARGET_FILE:uform-bench>)
  set_tests_properties(bench.turns_layout PROPERTIES LABELS bench TIMEOUT 120)
endif()

# Where `uform bench --turns` splits its cycles into the machine's latency modes (not a
# test_*.c: it needs the bench's library, built only with the bench).
if(TARGET uform_bench_core AND NOT CMAKE_CROSSCOMPILING)
  add_executable(check_turns_modes ${CMAKE_CURRENT_LIST_DIR}/check_turns_modes.c)
  target_link_libraries(check_turns_modes PRIVATE uform_bench_core m)
  add_test(NAME bench.turns_mode_threshold COMMAND check_turns_modes)
  set_tests_properties(bench.turns_mode_threshold PROPERTIES LABELS bench TIMEOUT 60)
  # scripts/bench-ab's Python copy of the rule, held against this one on the same floors.
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    add_test(NAME bench.ab_mode_threshold_agrees
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_mode_threshold.py ${PROJECT_SOURCE_DIR}
                     $<TARGET_FILE:check_turns_modes>)
    set_tests_properties(bench.ab_mode_threshold_agrees PROPERTIES LABELS bench TIMEOUT 60)
  endif()
endif()

# The call-cost programs run and count every task (a short run of each linkage).
foreach(linkage static shared)
  if(TARGET uform-bench-call-${linkage})
    add_test(NAME bench.call_cost_${linkage}
             COMMAND uform-bench-call-${linkage} --threads 2 --calls 2000 --runs 3)
    set_tests_properties(bench.call_cost_${linkage} PROPERTIES LABELS bench TIMEOUT 60
                         PASS_REGULAR_EXPRESSION "^${linkage} library, 2 thread\\(s\\), 2000 calls a run:.* ns a call; median [0-9.]+ ns")
  endif()
endforeach()

# scripts/bench-when-fast: a command run whenever the floor reads the fast mode (stand-in floors).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME bench.when_fast COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_when_fast.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(bench.when_fast PROPERTIES LABELS bench TIMEOUT 60)
endif()
