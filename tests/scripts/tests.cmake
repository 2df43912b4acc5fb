# The test command's own helpers (scripts/), checked with fake runners: no build, no time.
if(NOT CMAKE_CROSSCOMPILING)
  add_test(NAME scripts.stages COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_stages.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(scripts.stages PROPERTIES LABELS scripts TIMEOUT 60)
endif()
