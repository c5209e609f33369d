# Runs scripts/check-layers.py against a fixture's statement of the layers (LAYERS) or a fixture's
# tree (TREE) and checks its exit status and what it prints (CTest alone checks one or the other):
#   cmake -DPYTHON=python3 -DSCRIPT=... -DLAYERS=... -DEXPECT_STATUS=1 -DEXPECT_OUTPUT=<regex> -P expect.cmake
if(DEFINED TREE)
  set(fixture --tree ${TREE})
else()
  set(fixture --layers ${LAYERS})
endif()
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${fixture}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status STREQUAL EXPECT_STATUS)
  message(FATAL_ERROR "check-layers exited with ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT output MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "check-layers printed no line matching '${EXPECT_OUTPUT}'")
endif()
