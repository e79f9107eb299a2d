# Runs one command and checks its exit status and output, for ctest:
#   cmake "-DCOMMAND=prog|arg|..." -DEXIT=<status> [-DMATCH=<regex on stdout+stderr>]
#         [-DENV=NAME=value] -P check_command.cmake
cmake_minimum_required(VERSION 3.22)
if(DEFINED ENV)
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${ENV}")
  set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
endif()
string(REPLACE "|" ";" COMMAND "${COMMAND}")  # '|' separates the arguments (ctest keeps it whole)
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${COMMAND}")
if(NOT rc STREQUAL "${EXIT}")
  message(FATAL_ERROR "${shown}: exit status ${rc}, expected ${EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED MATCH AND NOT "${out}${err}" MATCHES "${MATCH}")
  message(FATAL_ERROR "${shown}: output does not match '${MATCH}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "${shown}: exit ${rc}")
