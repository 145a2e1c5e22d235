# Runs EXE with ARGS (arguments separated by |) and fails unless what it prints is FILE, byte for byte: a file
# committed as a command's output (docs/parameters.md) must be what the code now prints. The failure says how to
# regenerate the file (REGENERATE).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} ${ARGS} exited ${rc}: ${err}")
endif()
file(READ "${FILE}" committed)
if(NOT printed STREQUAL committed)
  message(FATAL_ERROR "${FILE} is not what the code prints now; regenerate it with: ${REGENERATE}")
endif()
