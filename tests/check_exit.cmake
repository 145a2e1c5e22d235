# Runs EXE with ARGS (arguments separated by |) and checks its exit code (RC) and that stderr contains ERR
# (plain text, not a pattern).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL RC)
  message(FATAL_ERROR "expected exit ${RC}, got ${rc}; stderr: ${err}")
endif()
if(ERR)
  string(FIND "${err}" "${ERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr does not contain '${ERR}': ${err}")
  endif()
endif()
