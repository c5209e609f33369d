# Runs scripts/check-layer-symbols.py on a fixture's manifest and checks its exit status and what
# it prints (CTest alone checks one or the other):
#   cmake -DPYTHON=python3 -DSCRIPT=... -DMANIFEST=... -DNM=nm -DEXPECT_STATUS=1
#         -DEXPECT_OUTPUT=<regex> -P expect.cmake
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${MANIFEST} --nm ${NM}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status STREQUAL EXPECT_STATUS)
  message(FATAL_ERROR "check-layer-symbols exited with ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT output MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "check-layer-symbols printed no line matching '${EXPECT_OUTPUT}'")
endif()
