/* The JIT library's plugin interface: libgatejit_jit.so (the runtime with the
 * compiler, MLIR, LLVM and lld linked in) exports these besides the C API, so
 * a runtime without the compiler (libgatejit.so, or the static runtime) can
 * dlopen it and compile through it. Plain C: the two sides share no C++ type;
 * a kernel crosses as its encoded KernelBinary (kernel_binary.h), which the
 * loading side decodes and checks like a disk-cache entry.
 *
 * The runtime finds the library at gatejit_runtime_create (unless the JIT is
 * disabled): $GATEJIT_JIT_LIBRARY (a regular file, links followed; an error
 * if it is anything else or cannot be loaded),
 * else libgatejit_jit.so.0 or libgatejit_jit.so in the folder of the library
 * (or program) the runtime is linked into. See docs/runtime.md. */
#ifndef GATEJIT_JIT_PLUGIN_H_
#define GATEJIT_JIT_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "gatejit/gatejit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GATEJIT_JIT_PLUGIN_VERSION 1

/* GATEJIT_JIT_PLUGIN_VERSION of the library. */
int gatejit_jit_plugin_version(void);

/* The compiler's fingerprint (part of every disk-cache key); static storage,
 * one line of 1-4096 printable ASCII bytes (anything else, NULL included,
 * makes the runtime refuse the library). */
const char *gatejit_jit_fingerprint(void);

/* Compiles one normalised contract given as JSON (contract_json.h keys,
 * template and dynamic M included) into an encoded KernelBinary. On success
 * *out_blob (freed with gatejit_jit_blob_free) holds *out_size bytes. The
 * returned status belongs to the JIT library: read and free it with the JIT
 * library's gatejit_status_message / gatejit_status_free. Success with a NULL
 * blob, or a size above 1 GiB, is refused by the runtime unread. */
gatejit_status_t gatejit_jit_compile(const char *contract_json, uint8_t **out_blob, size_t *out_size);
void gatejit_jit_blob_free(uint8_t *blob);

/* The template the compiler picks for one normalised contract given as JSON
 * ("gemv", "mma" or "generic"; static storage), without compiling; NULL where
 * the contract is refused. Optional: a runtime explains without it. */
const char *gatejit_jit_template(const char *contract_json);

#ifdef __cplusplus
}
#endif

#endif /* GATEJIT_JIT_PLUGIN_H_ */
