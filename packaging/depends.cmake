# Read by cpack (CPACK_PROJECT_CONFIG_FILE): sets the package's Depends from
# dpkg-shlibdeps run on the ELF files it holds. Libraries no Debian package
# provides (CUDA's runtime and CUPTI, from the CUDA toolkit) are left out
# (--ignore-missing-info) and said.
if(NOT CPACK_GENERATOR STREQUAL "DEB" OR CPACK_DEBIAN_PACKAGE_DEPENDS)
  return()
endif()
find_program(GS_SHLIBDEPS dpkg-shlibdeps)
if(NOT GS_SHLIBDEPS)
  message(FATAL_ERROR "graphscope's package needs dpkg-shlibdeps for its Depends: sudo apt-get install dpkg-dev")
endif()
set(_dir "${GS_PACKAGE_WORKDIR}")
file(MAKE_DIRECTORY "${_dir}/debian")
file(WRITE "${_dir}/debian/control" "Source: graphscope\n\nPackage: graphscope\nArchitecture: any\n")
set(_args -O --ignore-missing-info)
foreach(d ${GS_PACKAGE_LIBDIRS})
  list(APPEND _args "-l${d}")
endforeach()
execute_process(COMMAND ${GS_SHLIBDEPS} ${_args} ${GS_PACKAGE_ELF} WORKING_DIRECTORY "${_dir}"
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "dpkg-shlibdeps failed (${_rc}): ${_err}")
endif()
string(REGEX MATCH "shlibs:Depends=([^\n]*)" _ "${_out}")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CMAKE_MATCH_1}")
if(NOT CPACK_DEBIAN_PACKAGE_DEPENDS)
  message(FATAL_ERROR "dpkg-shlibdeps gave no Depends: ${_out} ${_err}")
endif()
message(STATUS "graphscope package Depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
