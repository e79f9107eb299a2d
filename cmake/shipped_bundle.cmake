# The shipped bundle (runtime/src/shipped_bundle.h): every generic kernel of
# gfx950, gfx942 and sm_90, compiled by the gatejit tool at build time and
# installed beside the runtime, so that a runtime with the JIT off and an
# empty cache serves every valid contract. In the build tree it is written
# beside libgatejit.so (build/runtime) and copied beside the tool and
# libgatejit_jit.so (build/compiler), where the runtime looks first.
# Included from compiler/CMakeLists.txt (it needs the tool).
option(GATEJIT_BUILD_SHIPPED_BUNDLE "Compile the generic kernels installed beside the runtime" ON)
set(GATEJIT_SHIPPED_BUNDLE_JOBS 0 CACHE STRING "parallel compiles for the shipped bundle (0: all cores)")
if(NOT GATEJIT_BUILD_SHIPPED_BUNDLE)
  return()
endif()
set(GATEJIT_SHIPPED_BUNDLE_TARGETS gfx950,gfx942,sm_90)
set(GATEJIT_SHIPPED_BUNDLE ${PROJECT_BINARY_DIR}/runtime/gatejit-generic.gjb CACHE INTERNAL "the shipped bundle")
set(GATEJIT_SHIPPED_BUNDLE_COPY ${CMAKE_CURRENT_BINARY_DIR}/gatejit-generic.gjb)
set(_gatejit_compress "")
if(GATEJIT_ZSTD_INCLUDE AND GATEJIT_ZSTD_LIBRARY)  # as runtime/CMakeLists.txt decides
  set(_gatejit_compress --compress)
endif()
add_custom_command(
  OUTPUT ${GATEJIT_SHIPPED_BUNDLE} ${GATEJIT_SHIPPED_BUNDLE_COPY}
  COMMAND $<TARGET_FILE:gatejit> precompile --all-generic --targets ${GATEJIT_SHIPPED_BUNDLE_TARGETS}
          -j ${GATEJIT_SHIPPED_BUNDLE_JOBS} ${_gatejit_compress} -o ${GATEJIT_SHIPPED_BUNDLE}
  COMMAND ${CMAKE_COMMAND} -E copy ${GATEJIT_SHIPPED_BUNDLE} ${GATEJIT_SHIPPED_BUNDLE_COPY}
  DEPENDS gatejit
  COMMENT "Compiling the shipped bundle of generic kernels (${GATEJIT_SHIPPED_BUNDLE_TARGETS})"
  VERBATIM)
add_custom_target(gatejit_generic_bundle ALL DEPENDS ${GATEJIT_SHIPPED_BUNDLE} ${GATEJIT_SHIPPED_BUNDLE_COPY})
