// What `gatejit bundle extract` writes: every kernel of a bundle as a plain
// code object file, plus index.tsv (file, symbol, contract per line).
//
// A bundle comes from outside and its checksums prove only that it was not
// damaged, not that its writer was honest, so nothing in a file name or an
// index line is taken on trust. A file name is built only from fields checked
// against a fixed alphabet: the target's own name, the template (1-32 of
// a-z, 0-9, _), the first 12 digits of the key (lowercase hex, checked by the
// reader) and the format's extension. The symbol (1-256 of A-Z, a-z, 0-9, _,
// ., $) and the contract text (printable ASCII) must hold no tab, line break
// or NUL, so no entry can forge a line of index.tsv. Anything else refuses the
// whole bundle, naming the entry, before a single file is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bundle.h"

namespace gatejit {

struct ExtractedFile {
  std::string name;  // <target>-<template>-<12 hex digits>.<hsaco|ptx|cubin>
  std::vector<uint8_t> code;
};

struct ExtractPlan {
  std::vector<ExtractedFile> files;  // in the bundle's order; no two share a name
  std::string index_tsv;             // "file\tsymbol\tcontract\n", then one line per file
};

// Every entry decoded and checked; the first entry that cannot be named or
// indexed safely (or does not decode) is the error.
StatusOr<ExtractPlan> plan_extract(const Bundle &bundle);

}  // namespace gatejit
