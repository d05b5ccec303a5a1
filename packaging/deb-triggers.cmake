# Run by cpack after it wrote the Debian package (CPACK_POST_BUILD_SCRIPTS).
# CPack (3.25) calls ldconfig from postinst and postrm for libraries in
# /usr/lib; Debian does it with the ldconfig trigger instead (dh_makeshlibs;
# lintian: lacks-ldconfig-trigger, maintscript-calls-ldconfig). The package
# is unpacked, its ldconfig scripts replaced by the trigger, and packed
# again with root as owner.
find_program(GS_DPKG_DEB dpkg-deb REQUIRED)
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT deb MATCHES "\\.deb$")
    continue()
  endif()
  set(dir "${deb}.d")
  file(REMOVE_RECURSE "${dir}")
  execute_process(COMMAND ${GS_DPKG_DEB} -R "${deb}" "${dir}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${deb} failed (${rc})")
  endif()
  foreach(script postinst postrm)
    if(EXISTS "${dir}/DEBIAN/${script}")
      file(READ "${dir}/DEBIAN/${script}" text)
      # CPack's own: ldconfig and nothing else.
      string(REGEX REPLACE "#[^\n]*\n|set -e|if|then|fi|ldconfig|\\[[^]]*\\]|;|[ \t\n]" "" rest "${text}")
      if(NOT rest STREQUAL "")
        message(FATAL_ERROR "${script} of ${deb} does more than ldconfig: ${text}")
      endif()
      file(REMOVE "${dir}/DEBIAN/${script}")
    endif()
  endforeach()
  file(WRITE "${dir}/DEBIAN/triggers" "activate-noawait ldconfig\n")
  execute_process(COMMAND ${GS_DPKG_DEB} --root-owner-group -Zxz -b "${dir}" "${deb}" OUTPUT_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${deb} failed (${rc})")
  endif()
  file(REMOVE_RECURSE "${dir}")
endforeach()
