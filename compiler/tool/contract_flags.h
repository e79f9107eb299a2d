// The contract flags shared by `compile`, `ir` and `explain`; the same names
// are the keys of a contract JSON file (--contract FILE.json).
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <string>
#include <string_view>

#include "file_io.h"
#include "gatejit/contract_json.h"
#include "gatejit/target_info.h"
#include "input_echo.h"
#include "input_limits.h"
#include "json_input.h"

namespace gatejit::tool {

struct ContractFlags {
  std::string contract_file;
  // Each flag is optional: given flags override the JSON file's keys.
  nlohmann::json given = nlohmann::json::object();

  void add_to(CLI::App *app) {
    app->add_option("--contract", contract_file, "contract as a JSON file (keys = these flag names); given flags override its keys");
    add_int(app, "--m", "m", "rows M (>= 1), or 'dynamic' (with --m_max); default 1");
    add_int(app, "--m_max,--m-max", "m_max", "upper bound of M; default M (fixed M)");
    add_int(app, "--n", "n", "output columns N (rows of weight); required");
    add_int(app, "--k", "k", "reduction length K; required");
    add_string(app, "--dtype", "dtype", "element type of all four tensors: bf16 | f16 | f32; default bf16");
    for (const char *key : {"dtype_hidden", "dtype_weight", "dtype_attn", "dtype_out"})
      add_string(app, std::string("--") + key, key,
                 std::string("bf16 | f16 | f32") +
                     (std::string_view(key) == "dtype_weight" || std::string_view(key) == "dtype_out" ? " | fp8_e4m3" : "") +
                     "; default --dtype");
    add_string(app, "--weight_scale,--weight-scale", "weight_scale",
               "scales of an fp8_e4m3 weight: per_channel | block128 (128 x 128 blocks); default none");
    add_string(app, "--out_scale,--out-scale", "out_scale",
               "scales of an fp8_e4m3 out, written by the kernel: per_token_group128 ([M, N/128] fp32); default none");
    add_string(app, "--act", "act", "sigmoid | silu; default sigmoid");
    add_string(app, "--rounding", "rounding", "boundary (round at every boundary) | fused; default boundary");
    add_string(app, "--target", "target", target_help());
    add_string(app, "--template", "template", "auto | gemv | mma | generic; default auto (the runtime's choice)");
    add_int(app, "--ld_hidden", "ld_hidden", "row stride of hidden in elements; default K");
    add_int(app, "--ld_weight", "ld_weight", "row stride of weight in elements; default K");
    add_int(app, "--ld_attn", "ld_attn", "row stride of attn in elements; default N");
    add_int(app, "--ld_out", "ld_out", "row stride of out in elements; default N");
    add_int(app, "--align", "align", "alignment in bytes of the hidden and weight pointers: a power of two; default 16");
  }

  StatusOr<Contract> contract() const {
    nlohmann::json j = nlohmann::json::object();
    if (!contract_file.empty()) {
      const std::string what = "--contract " + escape_input(contract_file);
      auto bytes = read_file(contract_file, limits::kContractJsonBytes);
      if (!bytes.ok()) return Status(bytes.status().code(), "--contract " + bytes.status().message());
      auto parsed = parse_json_input(std::string_view(reinterpret_cast<const char *>(bytes->data()), bytes->size()),
                                     what);
      if (!parsed.ok()) return parsed.status();
      if (!parsed->is_object()) return invalid_argument(what + ": a contract is a JSON object, not " + describe_json(*parsed));
      j = std::move(*parsed);
    }
    for (const auto &[k, v] : given.items()) j[k] = v;
    return contract_from_json(j);
  }

 private:
  void add_int(CLI::App *app, const std::string &flags, const std::string &key, const std::string &help) {
    app->add_option_function<std::string>(
           flags,
           [this, key](const std::string &v) {
             if (key == "m" && v == "dynamic") {
               given[key] = v;
               return;
             }
             // Digits with an optional '-', nothing else: no spaces, no '+'.
             long long n = 0;
             const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
             if (v.empty() || ec != std::errc() || end != v.data() + v.size())
               throw CLI::ValidationError("--" + key, quote_input(v) + " is not an integer (digits, optionally after '-')");
             given[key] = n;
           },
           help);
  }
  void add_string(CLI::App *app, const std::string &flag, const std::string &key, const std::string &help) {
    app->add_option_function<std::string>(flag, [this, key](const std::string &v) { given[key] = v; }, help);
  }
  // The target table's names, and the clang/HIP target-ID form.
  static std::string target_help() {
    std::string names;
    for (const TargetInfo &t : target_table()) names += (names.empty() ? "" : " | ") + std::string(t.name);
    return names + " (clang/HIP target IDs with features such as gfx950:sramecc+:xnack- too); default " +
           target_name(Contract{}.target);
  }
};

}  // namespace gatejit::tool
