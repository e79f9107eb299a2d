// resolve_contracts [--jit] FILE: a host process of the runtime for the
// record/replay tests (and for replaying a record file by hand). Creates one
// runtime through the C API with the options of the environment
// (GATEJIT_RECORD, GATEJIT_DISABLE_JIT, GATEJIT_BUNDLE_PATH,
// GATEJIT_CACHE_DIR, GATEJIT_SHIPPED_BUNDLE, ...), attaches the compiler
// with --jit, and resolves each contract of FILE (one JSON object a line;
// blank lines skipped), printing "ok <explanation>" or "error <message>" a
// line. No GPU: resolution only. Exit status 0 when every contract
// resolved, 1 otherwise, 2 for a usage error.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "gatejit/gatejit.h"

int main(int argc, char **argv) {
  const bool jit = argc == 3 && std::strcmp(argv[1], "--jit") == 0;
  if (argc != 2 && !jit) {
    std::fprintf(stderr, "usage: resolve_contracts [--jit] FILE\n");
    return 2;
  }
  std::ifstream in(argv[argc - 1]);
  if (!in) {
    std::fprintf(stderr, "resolve_contracts: cannot read %s\n", argv[argc - 1]);
    return 2;
  }
  gatejit_runtime_t rt = nullptr;
  auto failed = [](gatejit_status_t s, const char *what) {
    if (!s) return false;
    std::fprintf(stderr, "resolve_contracts: %s: %s\n", what, gatejit_status_message(s));
    gatejit_status_free(s);
    return true;
  };
  if (failed(gatejit_runtime_create(nullptr, &rt), "gatejit_runtime_create")) return 1;
  if (jit && failed(gatejit_runtime_attach_jit(rt), "gatejit_runtime_attach_jit")) return 1;
  int errors = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    char *text = nullptr;
    if (gatejit_status_t s = gatejit_resolve_contract_json(rt, line.c_str(), &text)) {
      std::printf("error %s\n", gatejit_status_message(s));
      gatejit_status_free(s);
      ++errors;
    } else {
      std::printf("ok %s\n", text);
    }
    gatejit_string_free(text);
  }
  gatejit_runtime_destroy(rt);
  return errors ? 1 : 0;
}
