# `cpack -G DEB` in the build directory: a Debian package of the install tree
# (prefix /usr; stripped; the manual compressed; the copyright file). Its
# Depends are computed by Debian's dpkg-shlibdeps from the ELF files it holds
# when cpack runs (packaging/depends.cmake); CUDA's runtime and CUPTI come from
# the CUDA toolkit, which is no Debian package: the objects that load them
# find them by their RUNPATH (/usr/local/cuda), and the offline commands need
# neither.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME graphscope)
set(CPACK_PACKAGE_VENDOR "the graphscope authors")
set(CPACK_PACKAGE_CONTACT "the graphscope authors <graphscope@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inspect and debug CUDA graphs")
set(CPACK_PACKAGE_DESCRIPTION
    "graphscope reads, captures, profiles, checks and compares CUDA graphs: what is in a graph, whether its
independent branches ran concurrently, why a kernel started late, where its time went, which code made
each node, and whether it changed. It reads graphscope JSON, PyTorch's get_graph_data() JSON and
cudaGraphDebugDotPrint files. The package holds the command-line tool, the CUDA injection library behind
--exec, the C++ library (find_package(graphscope), pkg-config graphscope), the C API, the Python package
cudagraphscope, the JSON Schemas of its documents and the manual. Live commands need the CUDA toolkit
(13.0 or newer) in /usr/local/cuda and an NVIDIA driver.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
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
include(CPack)
