/* A host program built against the runtime alone (libgatejit.so; no LLVM on
 * its build machine): resolves a contract and says where the kernel came
 * from: a bundle, the disk cache, or the JIT library found beside
 * libgatejit.so (libgatejit_jit.so, attached by gatejit_runtime_create).
 * Usage: host_runtime [contract-json]   (exit 1 with the reason on failure) */
#include <stdio.h>

#include "gatejit/gatejit.h"

int main(int argc, char **argv) {
  const char *contract = argc > 1 ? argv[1]
                                  : "{\"m\": 1, \"n\": 1536, \"k\": 7168, \"dtype\": \"bf16\", \"act\": \"sigmoid\", "
                                    "\"target\": \"sm_90\"}";
  gatejit_runtime_t rt = NULL;
  gatejit_status_t s = gatejit_runtime_create(NULL, &rt);
  char *how = NULL;
  if (!s) s = gatejit_resolve_contract_json(rt, contract, &how);
  if (s) {
    fprintf(stderr, "host_runtime: %s\n", gatejit_status_message(s));
    gatejit_status_free(s);
    gatejit_runtime_destroy(rt);
    return 1;
  }
  printf("host_runtime: %s\n", how);
  gatejit_string_free(how);
  gatejit_runtime_destroy(rt);
  return 0;
}
