/* A host program that JITs and launches through the C API.
 *
 *   1. create a runtime and attach the JIT (libgatejit_compiler is linked in);
 *   2. resolve the seed contract: bundles -> cache -> JIT compile (+ cache);
 *   3. launch on the GPU. On a machine without a GPU the launch reports
 *      exactly what is missing, and the program says so and exits 0.
 *
 * Build: part of the gatejit build (examples/), or see examples/find_package. */
#include <stdio.h>
#include <string.h>

#include "gatejit/gatejit.h"

static int report(const char *what, gatejit_status_t s) {
  if (!s) return 0;
  fprintf(stderr, "%s: %s\n", what, gatejit_status_message(s));
  gatejit_status_free(s);
  return 1;
}

int main(void) {
  gatejit_runtime_t rt = NULL;
  if (report("create", gatejit_runtime_create(NULL, &rt))) return 1;
  if (report("attach_jit", gatejit_runtime_attach_jit(rt))) return 1;

  const char *seed = "{\"m\": 1, \"n\": 1536, \"k\": 7168, \"dtype\": \"bf16\", \"act\": \"sigmoid\", \"target\": \"sm_90\"}";
  char *how = NULL;
  if (report("resolve", gatejit_resolve_contract_json(rt, seed, &how))) return 1;
  printf("resolved the seed contract for sm_90: %s\n", how);
  gatejit_string_free(how);

  /* The call an inference engine makes every forward (device pointers and a
   * stream; here placeholders, since nothing is launched without a GPU). */
  static unsigned short placeholder[8] __attribute__((aligned(16)));
  gatejit_gate_args_t args = GATEJIT_GATE_ARGS_INIT; /* struct_size, the rest zero */
  args.hidden = (gatejit_tensor_t){placeholder, GATEJIT_BF16, 1, 7168, 7168};
  args.weight = (gatejit_tensor_t){placeholder, GATEJIT_BF16, 1536, 7168, 7168};
  args.attn = (gatejit_tensor_t){placeholder, GATEJIT_BF16, 1, 1536, 1536};
  args.out = args.attn;
  args.act = GATEJIT_SIGMOID;
  args.rounding = GATEJIT_ROUNDING_BOUNDARY;
  args.device_kind = GATEJIT_DEVICE_CUDA;
  args.device_ordinal = 0;
  gatejit_status_t s = gatejit_prepare(rt, &args);
  if (s && gatejit_status_code(s) == GATEJIT_DEVICE_ERROR) {
    printf("no GPU here, stopping before the launch: %s\n", gatejit_status_message(s));
    gatejit_status_free(s);
    gatejit_runtime_destroy(rt);
    return 0;
  }
  if (report("prepare", s)) return 1;
  printf("a GPU is present: a real program would now pass device pointers to gatejit_gate_epilogue\n");
  gatejit_runtime_destroy(rt);
  return 0;
}
