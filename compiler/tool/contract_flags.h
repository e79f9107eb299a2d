// The contract flags shared by `compile`, `ir` and `explain`; the same names
// are the keys of a contract JSON file (--contract FILE.json).
#pragma once

#include <CLI/CLI.hpp>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "gatejit/contract_json.h"

namespace gatejit::tool {

struct ContractFlags {
  std::string contract_file;
  // Each flag is optional: given flags override the JSON file's keys.
  nlohmann::json given = nlohmann::json::object();

  void add_to(CLI::App *app) {
    app->add_option("--contract", contract_file, "contract as a JSON file (keys = these flag names)");
    add_int(app, "--m", "m", "rows M, or 'dynamic' (with --m_max)");
    add_int(app, "--m_max,--m-max", "m_max", "upper bound of M");
    add_int(app, "--n", "n", "output columns N (rows of weight)");
    add_int(app, "--k", "k", "reduction length K");
    for (const char *key : {"dtype", "dtype_hidden", "dtype_weight", "dtype_attn", "dtype_out", "act", "rounding",
                            "target", "template"})
      add_string(app, std::string("--") + key, key);
    for (const char *key : {"ld_hidden", "ld_weight", "ld_attn", "ld_out", "align"})
      add_int(app, std::string("--") + key, key, "");
  }

  StatusOr<Contract> contract() const {
    nlohmann::json j = nlohmann::json::object();
    if (!contract_file.empty()) {
      std::ifstream in(contract_file);
      if (!in) return invalid_argument("--contract " + contract_file + ": cannot open the file");
      std::stringstream ss;
      ss << in.rdbuf();
      j = nlohmann::json::parse(ss.str(), nullptr, false);
      if (j.is_discarded() || !j.is_object())
        return invalid_argument("--contract " + contract_file + ": not a JSON object");
    }
    for (const auto &[k, v] : given.items()) j[k] = v;
    return contract_from_json(j);
  }

 private:
  void add_int(CLI::App *app, const std::string &flags, const std::string &key, const std::string &help) {
    app->add_option_function<std::string>(
           flags,
           [this, key](const std::string &v) {
             if (key == "m" && v == "dynamic") given[key] = v;
             else {
               size_t used = 0;
               long long n = 0;
               try { n = std::stoll(v, &used); } catch (...) { used = 0; }
               if (used != v.size() || v.empty()) throw CLI::ValidationError("--" + key, "'" + v + "' is not an integer");
               given[key] = n;
             }
           },
           help);
  }
  void add_string(CLI::App *app, const std::string &flag, const std::string &key) {
    app->add_option_function<std::string>(flag, [this, key](const std::string &v) { given[key] = v; });
  }
};

}  // namespace gatejit::tool
