/* gatejit runtime C API: a stable C ABI (opaque handles, status objects with
 * messages, no C++ types). A host application creates one runtime, then calls
 * gatejit_gate_epilogue() once per forward with device pointers and a stream:
 *
 *   out[m, n] = act(sum_k hidden[m, k] * weight[n, k]) * attn[m, n]
 *
 * The first call for a contract (shape, dtypes, strides, alignment, act,
 * rounding, device) resolves a kernel: loaded bundles -> disk cache -> JIT
 * (when the compiler library is linked and attached) -> the generic kernel ->
 * a clear "unsupported" error. Later calls are a hash lookup and a launch: no
 * allocation, file I/O or synchronisation, so they can be captured in a
 * CUDA/HIP graph. All functions are thread-safe. */
#ifndef GATEJIT_GATEJIT_H_
#define GATEJIT_GATEJIT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: gatejit_gate_args_t and gatejit_runtime_options_t begin with
 * struct_size (initialise them with GATEJIT_GATE_ARGS_INIT and
 * GATEJIT_RUNTIME_OPTIONS_INIT).
 * 3: GATEJIT_FP8_E4M3 weights and gatejit_gate_args_t.weight_scale (at the
 * end: a version-2 caller's smaller struct is still read, as a call without
 * weight scales). */
/* 4: GATEJIT_FP8_E4M3 outs and gatejit_gate_args_t.out_scale (at the end:
 * version-2 and -3 callers' smaller structs are still read). */
/* 5: gatejit_runtime_options_t.record_path, .disable_shipped_bundle and
 * .jit_mode (at the end: a version-2 to -4 caller's smaller struct is still
 * read). */
#define GATEJIT_API_VERSION 5

typedef struct gatejit_status_s *gatejit_status_t; /* NULL means success */
typedef struct gatejit_runtime_s *gatejit_runtime_t;

typedef enum {
  GATEJIT_OK = 0,
  GATEJIT_INVALID_ARGUMENT = 1,
  GATEJIT_UNSUPPORTED = 2,
  GATEJIT_NOT_FOUND = 3,
  GATEJIT_CORRUPT = 4,
  GATEJIT_IO_ERROR = 5,
  GATEJIT_PERMISSION_DENIED = 6,
  GATEJIT_COMPILE_ERROR = 7,
  GATEJIT_DEVICE_ERROR = 8,
  GATEJIT_INTERNAL = 9
} gatejit_status_code_t;

/* GATEJIT_FP8_E4M3: OCP e4m3 ("e4m3fn": bias 7, max 448, NaN 0x7f / 0xff, no
 * infinity), one byte; a weight (with weight_scale) or an out (with
 * out_scale). */
typedef enum { GATEJIT_BF16 = 0, GATEJIT_F16 = 1, GATEJIT_F32 = 2, GATEJIT_FP8_E4M3 = 3 } gatejit_dtype_t;
typedef enum { GATEJIT_SIGMOID = 0, GATEJIT_SILU = 1 } gatejit_activation_t;
typedef enum { GATEJIT_ROUNDING_BOUNDARY = 0, GATEJIT_ROUNDING_FUSED = 1 } gatejit_rounding_t;
typedef enum { GATEJIT_DEVICE_CUDA = 1, GATEJIT_DEVICE_HIP = 2 } gatejit_device_kind_t;

/* A 2-D row-major tensor on the device: rows x cols, row stride `ld`
 * elements (ld >= cols), inner dimension contiguous. */
typedef struct {
  void *data;
  gatejit_dtype_t dtype;
  int64_t rows;
  int64_t cols;
  int64_t ld;
} gatejit_tensor_t;

/* One call. struct_size is sizeof(gatejit_gate_args_t) as the caller's
 * gatejit.h has it, so that the struct can grow: the library reads the
 * fields that size holds and refuses a size it does not know, naming it. */
typedef struct {
  size_t struct_size;
  gatejit_tensor_t hidden; /* [M, K] */
  gatejit_tensor_t weight; /* [N, K] (torch Linear layout) */
  gatejit_tensor_t attn;   /* [M, N] */
  gatejit_tensor_t out;    /* [M, N]; may be the very buffer of attn */
  gatejit_activation_t act;
  gatejit_rounding_t rounding;
  gatejit_device_kind_t device_kind;
  int device_ordinal;
  void *stream; /* CUstream / hipStream_t; NULL = the default stream */
  /* API version 3. The fp32 scales of an fp8 weight (dtype GATEJIT_F32,
   * packed: ld = cols): [N, 1], one per output channel, or [ceil(N / 128),
   * ceil(K / 128)], one per 128 x 128 block of the weight (DeepSeek-V3's
   * layout). The weight's value is fp8 value x scale. data NULL (all zero)
   * for a bf16 / f16 weight. */
  gatejit_tensor_t weight_scale;
  /* API version 4. For an fp8 out: the fp32 scales the kernel writes, one
   * per row and 128 columns (dtype GATEJIT_F32, [M, N / 128], packed; N a
   * multiple of 128), vLLM's per_token_group_quant_fp8 layout. With y the
   * gated value in attn's dtype: scale = max(max |y| of the group, 1e-10) /
   * 448, out = e4m3(clamp(y / scale, -448, 448)). An fp8 out may not overlap
   * attn. data NULL (all zero) for a bf16 / f16 / f32 out. */
  gatejit_tensor_t out_scale;
} gatejit_gate_args_t;
#define GATEJIT_GATE_ARGS_INIT {sizeof(gatejit_gate_args_t)}

/* What a call does when the specialised kernel of its contract is in no
 * bundle or cache (docs/serving.md). */
typedef enum {
  GATEJIT_JIT_DEFAULT = 0,    /* $GATEJIT_JIT (sync | background | off), else sync */
  GATEJIT_JIT_SYNC = 1,       /* compile it before the call returns */
  GATEJIT_JIT_BACKGROUND = 2, /* serve the generic kernel (a bundle's or the cache's) at once while worker
                                 threads compile it; a later call, outside any graph capture, swaps it in.
                                 gatejit_prepare() still waits for it. */
  GATEJIT_JIT_OFF = 3         /* never compile (as disable_jit) */
} gatejit_jit_mode_t;

typedef struct {
  size_t struct_size;      /* sizeof(gatejit_runtime_options_t), as for the call's arguments */
  const char *cache_dir;   /* NULL or "": $GATEJIT_CACHE_DIR, $XDG_CACHE_HOME/gatejit, ~/.cache/gatejit
                              (an empty variable counts as unset) */
  int disable_cache;       /* 1: never touch the disk cache */
  int cache_read_only;     /* 1: load from the cache, never write (also GATEJIT_CACHE_READONLY=1) */
  int disable_jit;         /* 1: never compile (also GATEJIT_DISABLE_JIT=1) */
  const char *bundle_path; /* ':'-separated bundle files to load at creation (besides GATEJIT_BUNDLE_PATH) */
  /* API version 5. */
  const char *record_path;    /* append every contract resolved to this file, one JSON line each, for
                                 `gatejit precompile --contracts` (also GATEJIT_RECORD=FILE; this wins) */
  int disable_shipped_bundle; /* 1: do not load the shipped bundle of generic kernels (also
                                 GATEJIT_SHIPPED_BUNDLE=0) */
  gatejit_jit_mode_t jit_mode; /* GATEJIT_JIT_DEFAULT: $GATEJIT_JIT, else sync; disable_jit wins */
} gatejit_runtime_options_t;
#define GATEJIT_RUNTIME_OPTIONS_INIT {sizeof(gatejit_runtime_options_t)}

/* The API version the library was built with (GATEJIT_API_VERSION of its
 * gatejit.h): a binding loading the library at run time compares it with the
 * layout it was written for before it passes a struct. */
int gatejit_api_version(void);

/* Status objects. */
gatejit_status_code_t gatejit_status_code(gatejit_status_t status);
const char *gatejit_status_message(gatejit_status_t status); /* "" for NULL */
void gatejit_status_free(gatejit_status_t status);

/* Runtime. `options` may be NULL (defaults + environment). */
gatejit_status_t gatejit_runtime_create(const gatejit_runtime_options_t *options, gatejit_runtime_t *out_runtime);
void gatejit_runtime_destroy(gatejit_runtime_t runtime);
gatejit_status_t gatejit_runtime_load_bundle(gatejit_runtime_t runtime, const char *path);

/* The fused gate epilogue: resolves (first call) and launches on `stream`. */
gatejit_status_t gatejit_gate_epilogue(gatejit_runtime_t runtime, const gatejit_gate_args_t *args);

/* Resolves and loads the kernel for `args` without launching (warm-up before
 * graph capture). */
gatejit_status_t gatejit_prepare(gatejit_runtime_t runtime, const gatejit_gate_args_t *args);

/* Which path the call would take and why, e.g.
 * "specialised gemv from bundle kernels.gjb" or
 * "generic (JIT): leading dimension ld_weight = 7170 is not 16-byte aligned".
 * Does not launch or compile. The string is freed with gatejit_string_free. */
gatejit_status_t gatejit_explain(gatejit_runtime_t runtime, const gatejit_gate_args_t *args, char **out_text);
/* The same for a contract given as JSON (keys as the command-line flags). */
gatejit_status_t gatejit_explain_contract_json(gatejit_runtime_t runtime, const char *contract_json,
                                               char **out_text);
/* Resolves a contract given as JSON without touching a device: bundles ->
 * cache -> JIT (compiling and caching if needed). For warm-up and tools.
 * `out_text` (may be NULL) receives the explanation. */
gatejit_status_t gatejit_resolve_contract_json(gatejit_runtime_t runtime, const char *contract_json,
                                               char **out_text);
void gatejit_string_free(char *text);

/* Provided by the compiler library (libgatejit_compiler): attaches the JIT to
 * a runtime. Without it, the runtime serves bundles and the disk cache only. */
gatejit_status_t gatejit_runtime_attach_jit(gatejit_runtime_t runtime);

#ifdef __cplusplus
}
#endif

#endif /* GATEJIT_GATEJIT_H_ */
