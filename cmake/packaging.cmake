# CPack: one .deb per install component (cmake/install.cmake):
#   gatejit-runtime  libgatejit.so.0 and the Python sources
#   gatejit-jit      libgatejit_jit.so.0 (self-contained) and bin/gatejit
#   gatejit-dev      headers, static libraries, .so links, CMake and pkg-config files
# Run-time dependencies are computed by dpkg-shlibdeps from what the binaries
# link (bin/gatejit: libllvm22 and libmlir-22, both in Debian 12); the dev
# package depends on the other two at the same version.
#   cpack -G DEB --config build/CPackConfig.cmake     (after building)
set(CPACK_PACKAGE_NAME gatejit)
set(CPACK_PACKAGE_VENDOR "gatejit")
set(CPACK_PACKAGE_CONTACT "gatejit maintainers <gatejit@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "JIT code generator and runtime for fused gate-epilogue GPU kernels")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
if(GATEJIT_BUILD_COMPILER)
  set(CPACK_COMPONENTS_ALL runtime jit dev)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME gatejit-runtime)
set(CPACK_DEBIAN_JIT_PACKAGE_NAME gatejit-jit)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME gatejit-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(_gatejit_dev_depends "gatejit-runtime (= ${PROJECT_VERSION}), libzstd-dev, nlohmann-json3-dev")
if(GATEJIT_BUILD_COMPILER)
  string(APPEND _gatejit_dev_depends ", gatejit-jit (= ${PROJECT_VERSION})")
  # Only the `compiler` CMake component (the static C++ compiler library) needs these.
  set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "llvm-22-dev, libmlir-22-dev, liblld-22-dev, libfmt-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_gatejit_dev_depends}")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "gatejit runtime: the C API, kernel bundles and the disk cache (no compiler)")
set(CPACK_COMPONENT_JIT_DESCRIPTION "gatejit JIT: libgatejit_jit.so (runtime + compiler, MLIR/LLVM/lld linked in) and the gatejit tool")
set(CPACK_COMPONENT_DEV_DESCRIPTION "gatejit development files: headers, static libraries, CMake package, pkg-config")
include(CPack)
