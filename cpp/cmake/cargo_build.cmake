# cargo_build.cmake (cmake -P): builds the Rust static library (crate rust/cxx) and copies this
# checkout's artifacts into the CMake build dir: the static library to ${OUT}/libfluss_writer_cxx.a
# and the cxx-generated headers to ${OUT}/cxxbridge/.
#
# Why a copy: several checkouts (git worktrees) may share one CARGO_TARGET_DIR. Cargo keeps each
# checkout's artifacts apart (the hash includes the package path), but the convenience paths
# ($TARGET/<profile>/libfluss_writer_cxx.a and the $TARGET/cxxbridge symlinks) are shared and
# point to whichever checkout built last (the symlinks: whose build script ran last). The headers
# are taken from this checkout's build-script output dir (cargo's JSON messages name it); the
# library from the convenience path right after cargo relinked it to this checkout's artifact.
#
# With STRIP (the release profile), the copy is stripped of debug info (the Rust standard library
# ships with line tables) and of the LLVM bitcode the standard library's objects carry for LTO
# (.llvmbc, .llvmcmd; no C++ build uses it): 66 -> 52 MiB (docs/distribution.md).
#
# Variables: CARGO, TARGET_DIR, PROFILE (dev, release, profiling), STRIP (a strip program, or
# empty), FEATURES (cargo features of fluss-writer-cxx, comma-separated, or empty), SOURCE_DIR, OUT.
#
# A build with other FEATURES (test-hooks) is another artifact of cargo's (another metadata hash),
# so a build dir with the hooks and one without do not rebuild each other's library.
set(_args build -p fluss-writer-cxx --message-format=json-render-diagnostics --profile ${PROFILE})
if(FEATURES)
  list(APPEND _args --features ${FEATURES})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CARGO_TARGET_DIR=${TARGET_DIR} ${CARGO} ${_args}
  WORKING_DIRECTORY "${SOURCE_DIR}"
  OUTPUT_VARIABLE _out
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cargo build -p fluss-writer-cxx failed (${_rc})")
endif()
file(TO_CMAKE_PATH "${SOURCE_DIR}/rust/cxx" _manifest_dir)
string(REPLACE "\n" ";" _lines "${_out}")
set(_lib "")
set(_out_dir "")
set(_artifact "{}")
foreach(_line IN LISTS _lines)
  if(NOT _line MATCHES "fluss-writer-cxx")
    continue()
  endif()
  string(JSON _reason ERROR_VARIABLE _err GET "${_line}" reason)
  if(_err)
    continue()
  endif()
  string(JSON _pkg GET "${_line}" package_id)
  # "path+file:///.../rust/cxx#fluss-writer-cxx@0.1.0" (or the older "fluss-writer-cxx 0.1.0 (path+file://...)")
  string(FIND "${_pkg}" "${_manifest_dir}#" _at)
  string(FIND "${_pkg}" "${_manifest_dir})" _at_old)
  if(_at EQUAL -1 AND _at_old EQUAL -1)
    continue()
  endif()
  if(_reason STREQUAL "build-script-executed")
    string(JSON _out_dir GET "${_line}" out_dir)
  elseif(_reason STREQUAL "compiler-artifact" AND _line MATCHES "staticlib")
    set(_artifact "${_line}")
  endif()
endforeach()
# The static library: cargo names only the shared convenience path, which it has just (re)linked
# to this checkout's artifact; copy it at once (another checkout's build could relink it later).
string(JSON _n ERROR_VARIABLE _err LENGTH "${_artifact}" filenames)
if(NOT _err)
  math(EXPR _last "${_n} - 1")
  foreach(_i RANGE 0 ${_last})
    string(JSON _f GET "${_artifact}" filenames ${_i})
    if(_f MATCHES "\\.a$")
      set(_lib "${_f}")
    endif()
  endforeach()
endif()
if(NOT _lib OR NOT EXISTS "${_lib}")
  message(FATAL_ERROR "cargo_build.cmake: no static library of ${_manifest_dir} in cargo's output")
endif()
if(NOT _out_dir OR NOT EXISTS "${_out_dir}/cxxbridge/include")
  message(FATAL_ERROR "cargo_build.cmake: no cxxbridge output of ${_manifest_dir} in cargo's output")
endif()
file(MAKE_DIRECTORY "${OUT}/cxxbridge")
if(STRIP)
  # Strip only when cargo's library or the strip command changed (a stripped copy made every time
  # would relink everything after each build).
  set(_strip_cmd "${STRIP}" --strip-debug --remove-section=.llvmbc --remove-section=.llvmcmd)
  set(_stamp "${OUT}/unstripped/strip-command.txt")
  set(_old_cmd "")
  if(EXISTS "${_stamp}")
    file(READ "${_stamp}" _old_cmd)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_lib}" "${OUT}/unstripped/libfluss_writer_cxx.a")
  if(NOT EXISTS "${OUT}/libfluss_writer_cxx.a" OR NOT _old_cmd STREQUAL "${_strip_cmd}"
     OR "${OUT}/unstripped/libfluss_writer_cxx.a" IS_NEWER_THAN "${OUT}/libfluss_writer_cxx.a")
    execute_process(COMMAND ${_strip_cmd} -o "${OUT}/libfluss_writer_cxx.a.tmp" "${OUT}/unstripped/libfluss_writer_cxx.a"
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "${STRIP} of the Rust static library failed (${_rc})")
    endif()
    file(RENAME "${OUT}/libfluss_writer_cxx.a.tmp" "${OUT}/libfluss_writer_cxx.a")
    file(WRITE "${_stamp}" "${_strip_cmd}")
  endif()
else()
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_lib}" "${OUT}/libfluss_writer_cxx.a")
endif()
file(GLOB_RECURSE _headers RELATIVE "${_out_dir}/cxxbridge/include" "${_out_dir}/cxxbridge/include/*")
foreach(_h IN LISTS _headers)
  get_filename_component(_d "${OUT}/cxxbridge/${_h}" DIRECTORY)
  file(MAKE_DIRECTORY "${_d}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_out_dir}/cxxbridge/include/${_h}" "${OUT}/cxxbridge/${_h}")
endforeach()
