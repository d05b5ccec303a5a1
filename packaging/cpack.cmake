# `cpack -G DEB` in the build directory: a Debian package of the install tree
# (prefix /usr, libraries in /usr/lib/<multiarch>; stripped; the manual and
# the changelog compressed; the copyright file; shlibs and the ldconfig
# trigger), clean under lintian (tests/install/deb.sh). Its Depends are
# computed by Debian's dpkg-shlibdeps from the ELF files it holds when cpack
# runs (packaging/depends.cmake); CUDA's runtime and CUPTI come from the CUDA
# toolkit, which is no Debian package: the objects that load them find them
# through the toolkit's /etc/ld.so.conf.d entry (or by the toolkit's path,
# lib/capture/cupti_locate.h), and the offline commands need neither.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME graphscope)
set(CPACK_PACKAGE_VENDOR "the graphscope authors")
set(CPACK_PACKAGE_CONTACT "the graphscope authors <graphscope@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inspect and debug CUDA graphs")
# Lines under 80 columns (lintian: extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "graphscope reads, captures, profiles, checks and compares CUDA graphs:
what is in a graph, whether its independent branches ran concurrently, why
a kernel started late, where its time went, which code made each node, and
whether it changed. It reads graphscope JSON, PyTorch's get_graph_data()
JSON and cudaGraphDebugDotPrint files.
The package holds the command-line tool, the CUDA injection library behind
--exec, the C++ library (find_package(graphscope), pkg-config graphscope),
the C API, the Python package cudagraphscope, the JSON Schemas of its
documents and the manual. Live commands need the CUDA toolkit (13.0 or
newer) and an NVIDIA driver.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# DEBIAN/shlibs for the public libraries, and the ldconfig trigger with them
# in place of CPack's ldconfig scripts (packaging/deb-triggers.cmake).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/packaging/deb-triggers.cmake)
# Files in the package's data are owned by root (lintian: wrong-file-owner-uid-or-gid).
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
# The ELF files the package holds, for dpkg-shlibdeps at cpack time.
set(_gs_elf $<TARGET_FILE:graphscope> $<TARGET_FILE:graphscope_c> $<TARGET_FILE:graphscope_inspect_shared>)
if(GRAPHSCOPE_HAVE_CUDA)
  list(APPEND _gs_elf $<TARGET_FILE:graphscope_live> $<TARGET_FILE:graphscope_capture_shared>
       $<TARGET_FILE:graphscope_inject> $<TARGET_FILE:graphscope_preload>)
endif()
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/graphscope-cpack.cmake CONTENT
"set(GS_PACKAGE_ELF \"${_gs_elf}\")
set(GS_PACKAGE_LIBDIRS \"${GRAPHSCOPE_CUDA_RPATH}\")
set(GS_PACKAGE_WORKDIR \"${PROJECT_BINARY_DIR}/_CPack_Packages/graphscope-shlibdeps\")
include(\"${PROJECT_SOURCE_DIR}/packaging/depends.cmake\")
")
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/graphscope-cpack.cmake)

# The Debian changelog (a native package: usr/share/doc/graphscope/changelog.gz),
# dated by SOURCE_DATE_EPOCH or the last commit, so that a build is reproducible.
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  string(TIMESTAMP _gs_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
else()
  execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%cD OUTPUT_VARIABLE _gs_date
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _gs_rc)
  if(NOT _gs_rc EQUAL 0 OR NOT _gs_date)
    string(TIMESTAMP _gs_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  endif()
endif()
file(WRITE ${PROJECT_BINARY_DIR}/debian-changelog
"graphscope (${PROJECT_VERSION}) unstable; urgency=medium

  * Release ${PROJECT_VERSION}: see CHANGELOG.md in the source and graphscope(1).

 -- ${CPACK_PACKAGE_CONTACT}  ${_gs_date}
")
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/changelog.gz
  COMMAND ${GZIP} -9n -c ${PROJECT_BINARY_DIR}/debian-changelog > ${PROJECT_BINARY_DIR}/changelog.gz
  DEPENDS ${PROJECT_BINARY_DIR}/debian-changelog VERBATIM)
add_custom_target(graphscope_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/changelog.gz)
install(FILES ${PROJECT_BINARY_DIR}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Why the package is one package (lintian's overrides, each with its reason).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME graphscope)
include(CPack)
