# libgatejit_jit.so (target gatejit_jit): the runtime and the compiler with
# MLIR, LLVM (the AMDGPU and NVPTX back ends the compiler initialises) and lld
# linked in from their static archives, so it loads where no LLVM is
# installed. Only the gatejit_* C entry points are exported (gatejit_jit.map);
# --gc-sections drops what nothing reaches and the result is stripped. Its
# run-time needs are glibc, libstdc++, libgcc_s, libm and libz (checked by the
# jit_library_deps test). Included from compiler/CMakeLists.txt.

file(GLOB GATEJIT_JIT_ARCHIVES ${LLVM_LIBRARY_DIR}/libMLIR*.a ${LLVM_LIBRARY_DIR}/libLLVM*.a
     ${LLVM_LIBRARY_DIR}/liblld*.a)
if(NOT GATEJIT_JIT_ARCHIVES)
  message(FATAL_ERROR "gatejit_jit: no static MLIR/LLVM/lld archives in ${LLVM_LIBRARY_DIR} "
                      "(Debian: libmlir-22-dev, llvm-22-dev, liblld-22-dev)")
endif()
# Only the AMDGPU and NVPTX back ends: every other target's archives stay out,
# and their initialisers (which lld's driver calls) register nothing.
set(GATEJIT_JIT_TARGETS AMDGPU NVPTX)
set(GATEJIT_OTHER_TARGETS ${LLVM_TARGETS_TO_BUILD})
list(REMOVE_ITEM GATEJIT_OTHER_TARGETS ${GATEJIT_JIT_TARGETS})
list(JOIN GATEJIT_OTHER_TARGETS "|" GATEJIT_OTHER_TARGETS_RE)
list(FILTER GATEJIT_JIT_ARCHIVES EXCLUDE REGEX
     "/libLLVM(${GATEJIT_OTHER_TARGETS_RE})(CodeGen|Desc|Info|AsmParser|Disassembler|Utils|TargetMCA)\\.a$")
set(GATEJIT_ABSENT_TARGETS ${CMAKE_CURRENT_BINARY_DIR}/absent_llvm_targets.cpp)
execute_process(COMMAND ${CMAKE_COMMAND} -DCONFIG_DIR=${LLVM_INCLUDE_DIRS}/llvm/Config
                        "-DKEEP=${GATEJIT_JIT_TARGETS}" -DOUT=${GATEJIT_ABSENT_TARGETS}
                        -P ${PROJECT_SOURCE_DIR}/cmake/absent_llvm_targets.cmake
                COMMAND_ERROR_IS_FATAL ANY)
# zstd from its static archive, so the library does not need libzstd.so.
find_library(GATEJIT_ZSTD_STATIC libzstd.a)
find_library(GATEJIT_ZLIB_SHARED z REQUIRED)
find_program(GATEJIT_LD_LLD NAMES ld.lld ld.lld-22 HINTS ${LLVM_TOOLS_BINARY_DIR})

# compiler/jit/: the JIT library's own sources (the plugin entry points, and
# the Polly extension point LLVM's static LTO archive asks for), and the
# generated initialisers of the absent targets.
file(GLOB GATEJIT_JIT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/jit/*.cpp)
add_library(gatejit_jit SHARED ${GATEJIT_JIT_SOURCES} ${GATEJIT_ABSENT_TARGETS})
add_library(gatejit::jit ALIAS gatejit_jit)
set_target_properties(gatejit_jit PROPERTIES OUTPUT_NAME gatejit_jit EXPORT_NAME jit
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                      LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/gatejit_jit.map)
target_include_directories(gatejit_jit
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include ${GATEJIT_JSON_INCLUDE})
target_include_directories(gatejit_jit SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
target_compile_options(gatejit_jit PRIVATE -Wall -Wextra ${GATEJIT_LLVM_DEFINITIONS})
add_dependencies(gatejit_jit gatejit_compiler gatejit_runtime)
# The two archives go in through link options: relink when either changes.
set_property(TARGET gatejit_jit APPEND PROPERTY LINK_DEPENDS $<TARGET_FILE:gatejit_compiler> $<TARGET_FILE:gatejit_runtime>)
set(GATEJIT_JIT_ZSTD "")
if(GATEJIT_ZSTD_INCLUDE AND GATEJIT_ZSTD_LIBRARY)  # the runtime archive uses zstd (runtime/CMakeLists.txt)
  if(NOT GATEJIT_ZSTD_STATIC)
    message(FATAL_ERROR "gatejit_jit: the runtime uses zstd but libzstd.a is missing (Debian: libzstd-dev)")
  endif()
  set(GATEJIT_JIT_ZSTD ${GATEJIT_ZSTD_STATIC})
endif()
target_link_options(gatejit_jit PRIVATE
  $<$<BOOL:${GATEJIT_LD_LLD}>:-fuse-ld=lld>
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/gatejit_jit.map"
  "LINKER:--gc-sections" "LINKER:--as-needed" "LINKER:-z,defs" "LINKER:-z,now" "LINKER:--strip-all"
  "LINKER:--whole-archive" $<TARGET_FILE:gatejit_compiler> $<TARGET_FILE:gatejit_runtime> "LINKER:--no-whole-archive")
target_link_libraries(gatejit_jit PRIVATE ${GATEJIT_JIT_ARCHIVES} ${GATEJIT_JIT_ZSTD} ${GATEJIT_ZLIB_SHARED}
                      Threads::Threads ${CMAKE_DL_LIBS} rt m)
