# compile_fail.cmake (cmake -P; a ctest of tests-cpp/CMakeLists.txt): checks that calls the API
# must refuse do not compile, and for the right reason.
#
# SOURCE is compiled twice with CXX (-std=c++17 -fsyntax-only, INCLUDES: '|'-separated dirs):
#  1. as it is: the right calls, which must compile with -Wall -Wextra -Werror (so a failure in
#     step 2 is not a broken file or include path);
#  2. with -DFW_WRONG and -Werror=deprecated-declarations: the wrong calls. Every statement
#     followed by `  // error: REGEX` must get a compiler error on that line whose text matches REGEX, and
#     there must be no error on any other line.
cmake_minimum_required(VERSION 3.22)
foreach(v CXX SOURCE INCLUDES)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "compile_fail.cmake: ${v} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" _dirs "${INCLUDES}")
set(_args -std=c++17 -fsyntax-only)
foreach(d IN LISTS _dirs)
  list(APPEND _args "-I${d}")
endforeach()

execute_process(COMMAND "${CXX}" ${_args} -Wall -Wextra -Werror "${SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "compile_fail.cmake: ${SOURCE} without FW_WRONG (the right calls) does not compile:\n${_out}")
endif()
message(STATUS "the right calls compile")

execute_process(COMMAND "${CXX}" ${_args} -DFW_WRONG -Werror=deprecated-declarations -fmax-errors=0 "${SOURCE}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0)
  message(FATAL_ERROR "compile_fail.cmake: ${SOURCE} with FW_WRONG compiled: the wrong calls are accepted")
endif()

file(STRINGS "${SOURCE}" _lines)
get_filename_component(_name "${SOURCE}" NAME)
string(REPLACE "." "\\." _name_re "${_name}")
set(_n 0)
set(_expected "")
set(_failures "")
foreach(_line IN LISTS _lines)
  math(EXPR _n "${_n} + 1")
  if(_line MATCHES "^ *[^ /].*;  // error: (.*)$")
    set(_want "${CMAKE_MATCH_1}")
    list(APPEND _expected ${_n})
    # GCC and Clang: "file:LINE:COL: error: ..." (the first line of the diagnostic).
    if(NOT _out MATCHES "${_name_re}:${_n}:[0-9]+: error: [^\n]*${_want}")
      string(APPEND _failures "\n  line ${_n} (${_line}): no error matching '${_want}'")
    else()
      message(STATUS "line ${_n}: refused (${_want})")
    endif()
  endif()
endforeach()
if(NOT _expected)
  message(FATAL_ERROR "compile_fail.cmake: no statement of ${SOURCE} is marked '  // error: REGEX'")
endif()
# Errors on unmarked lines: the wrong calls must fail for the marked reason only.
string(REGEX MATCHALL "${_name_re}:[0-9]+:[0-9]+: error:" _errors "${_out}")
foreach(_e IN LISTS _errors)
  string(REGEX REPLACE "^.*:([0-9]+):[0-9]+: error:$" "\\1" _l "${_e}")
  if(NOT _l IN_LIST _expected)
    string(APPEND _failures "\n  an error on unmarked line ${_l}")
  endif()
endforeach()
if(_failures)
  message(FATAL_ERROR "compile_fail.cmake: ${SOURCE} with FW_WRONG:${_failures}\ncompiler output:\n${_out}")
endif()
list(LENGTH _expected _count)
message(STATUS "all ${_count} wrong calls are refused")
