# What `cmake --install` puts where, in three install components that are
# also the .deb packages (cmake/packaging.cmake):
#   runtime  lib/libgatejit.so.0*           the runtime with the C API (no LLVM)
#            lib/gatejit/python/gatejit     the Python package sources
#            share/gatejit/gatejit-generic.gjb  the shipped generic kernels
#                                           (where the compiler is built)
#   jit      lib/libgatejit_jit.so.0*       the runtime + compiler, self-contained
#            bin/gatejit                    the command line (links the shared
#                                           MLIR/LLVM libraries: install RPATH)
#   dev      include/, lib/*.a, the .so links, lib/cmake/gatejit, lib/pkgconfig
# The CMake package has the components runtime (gatejit::runtime static,
# gatejit::shared), jit (gatejit::jit; needs no LLVM either: it is linked in)
# and compiler (gatejit::compiler static; needs LLVM, MLIR and lld 22).
include(CMakePackageConfigHelpers)
set(GATEJIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gatejit)

install(TARGETS gatejit_runtime gatejit_shared EXPORT gatejitRuntimeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(EXPORT gatejitRuntimeTargets NAMESPACE gatejit:: DESTINATION ${GATEJIT_CMAKE_DIR} COMPONENT dev)
install(DIRECTORY runtime/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(DIRECTORY python/gatejit DESTINATION ${CMAKE_INSTALL_LIBDIR}/gatejit/python COMPONENT runtime
        PATTERN "__pycache__" EXCLUDE)

set(GATEJIT_PC_FILES gatejit)
if(GATEJIT_BUILD_COMPILER)
  install(TARGETS gatejit_jit EXPORT gatejitJitTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT jit NAMELINK_COMPONENT dev)
  install(EXPORT gatejitJitTargets NAMESPACE gatejit:: DESTINATION ${GATEJIT_CMAKE_DIR} COMPONENT dev)
  # The build tree's RUNPATH names the MLIR/LLVM folders; keep them installed.
  set_target_properties(gatejit PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS gatejit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT jit)
  install(TARGETS gatejit_compiler EXPORT gatejitCompilerTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  install(EXPORT gatejitCompilerTargets NAMESPACE gatejit:: DESTINATION ${GATEJIT_CMAKE_DIR} COMPONENT dev)
  install(DIRECTORY compiler/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
  list(APPEND GATEJIT_PC_FILES gatejit-jit)
endif()
# Found by the runtime from its own folder (runtime/src/shipped_bundle.h).
if(TARGET gatejit_generic_bundle)
  install(FILES ${GATEJIT_SHIPPED_BUNDLE} DESTINATION ${CMAKE_INSTALL_DATADIR}/gatejit COMPONENT runtime)
endif()

configure_package_config_file(cmake/gatejitConfig.cmake.in ${CMAKE_BINARY_DIR}/gatejitConfig.cmake
                              INSTALL_DESTINATION ${GATEJIT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/gatejitConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/gatejitConfig.cmake ${CMAKE_BINARY_DIR}/gatejitConfigVersion.cmake
        DESTINATION ${GATEJIT_CMAKE_DIR} COMPONENT dev)

# pkg-config: gatejit (libgatejit.so) and gatejit-jit (libgatejit_jit.so).
# ${pcfiledir} keeps them valid wherever the prefix is moved.
file(RELATIVE_PATH GATEJIT_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
foreach(pc ${GATEJIT_PC_FILES})
  configure_file(cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endforeach()
