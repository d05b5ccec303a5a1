# Runs one golden case: the real graphscope CLI on recorded inputs, with the
# whole expected output kept in the case file.
#
# A case file (tests/golden/NAME.case):
#   args: dump tests/data/nvidia/forkjoin.dot --json
#   exit: 0
#   --- stdout
#   <the exact expected standard output>
#   --- stderr            (optional: the exact expected standard error)
#   <...>
# Arguments are split like a shell line without quotes; paths are relative to
# the repository root. tests/golden/update.sh rewrites the expected output.
cmake_minimum_required(VERSION 3.22)
file(READ "${CASE}" content)
string(FIND "${content}" "--- stdout\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${CASE}: no '--- stdout' section")
endif()
string(SUBSTRING "${content}" 0 ${at} header)
math(EXPR body_at "${at} + 11")
string(SUBSTRING "${content}" ${body_at} -1 expected_out)
set(expected_err "")
set(check_err OFF)
string(FIND "${expected_out}" "--- stderr\n" err_at)
if(NOT err_at EQUAL -1)
  math(EXPR err_body "${err_at} + 11")
  string(SUBSTRING "${expected_out}" ${err_body} -1 expected_err)
  string(SUBSTRING "${expected_out}" 0 ${err_at} expected_out)
  set(check_err ON)
endif()
string(REGEX MATCH "args:([^\n]*)" _ "${header}")
string(STRIP "${CMAKE_MATCH_1}" args)
separate_arguments(args UNIX_COMMAND "${args}")
string(REGEX MATCH "exit: *([0-9]+)" _ "${header}")
set(expected_rc "${CMAKE_MATCH_1}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${GS}" ${args} WORKING_DIRECTORY "${ROOT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(bad "")
if(NOT "${rc}" STREQUAL "${expected_rc}")
  string(APPEND bad "exit code ${rc}, expected ${expected_rc}\n")
endif()
if(NOT "${out}" STREQUAL "${expected_out}")
  file(WRITE "${WORK}/expected.out" "${expected_out}")
  file(WRITE "${WORK}/actual.out" "${out}")
  execute_process(COMMAND diff -u "${WORK}/expected.out" "${WORK}/actual.out" OUTPUT_VARIABLE d)
  string(APPEND bad "standard output differs:\n${d}")
endif()
if(check_err AND NOT "${err}" STREQUAL "${expected_err}")
  string(APPEND bad "standard error differs:\nexpected: ${expected_err}actual:   ${err}")
endif()
if(bad)
  message(FATAL_ERROR "${CASE}:\n${bad}")
endif()
