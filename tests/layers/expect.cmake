# Runs scripts/check-layers.py against a fixture's statement of the layers and checks its exit
# status and what it prints (CTest alone checks one or the other):
#   cmake -DPYTHON=python3 -DSCRIPT=... -DLAYERS=... -DEXPECT_STATUS=1 -DEXPECT_OUTPUT=<regex> -P expect.cmake
execute_process(COMMAND ${PYTHON} ${SCRIPT} --layers ${LAYERS}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status STREQUAL EXPECT_STATUS)
  message(FATAL_ERROR "check-layers exited with ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT output MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "check-layers printed no line matching '${EXPECT_OUTPUT}'")
endif()
