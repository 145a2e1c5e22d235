# Runs `dlsim-cuda devices` and checks its answer: on a machine without a GPU (CI) it must exit 3 with a message
# that says there is no GPU; on a machine with one it must list it and exit 0 (then this check has nothing to test).
execute_process(COMMAND ${EXE} devices RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(STATUS "a GPU is present; the no-GPU message is not exercised here:\n${out}")
  return()
endif()
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "dlsim-cuda devices: expected exit code 3 without a GPU, got '${rc}'\n${out}${err}")
endif()
if(NOT err MATCHES "no CUDA GPU")
  message(FATAL_ERROR "dlsim-cuda devices: stderr does not say 'no CUDA GPU':\n${err}")
endif()
message(STATUS "dlsim-cuda without a GPU: exit 3, '${err}'")
