#include "gatejit/contract_json.h"

#include <set>

#include "input_echo.h"
#include "input_limits.h"
#include "json_input.h"

namespace gatejit {
namespace {

Status get_int(const nlohmann::json &j, const char *key, int64_t &out) {
  if (!j.contains(key)) return Status::Ok();
  auto v = json_int64(j.at(key), key);
  if (!v.ok()) return v.status();
  out = *v;
  return Status::Ok();
}

Status get_string(const nlohmann::json &j, const char *key, std::string &out, bool &present) {
  present = j.contains(key);
  if (!present) return Status::Ok();
  const auto &v = j.at(key);
  if (!v.is_string()) return invalid_argument(std::string(key) + " = " + describe_json(v) + ": must be a string");
  out = v.get<std::string>();
  return Status::Ok();
}

// The contract parsers echo a rejected value as given; put the escaped,
// bounded echo in its place, so a value with control bytes or of 100 MB
// makes a short, printable message.
Status with_bounded_echo(const Status &s, const std::string &value) {
  std::string m = s.message();
  const std::string raw = "'" + value + "'";
  if (const size_t at = m.find(raw); at != std::string::npos) m.replace(at, raw.size(), quote_input(value));
  else m = bounded_message(m, 512);
  return Status(s.code(), m);
}

template <typename T, typename Parse>
Status get_enum(const nlohmann::json &j, const char *key, T &out, Parse parse) {
  std::string s;
  bool present = false;
  GATEJIT_RETURN_IF_ERROR(get_string(j, key, s, present));
  if (!present) return Status::Ok();
  auto parsed = parse(s);
  if (!parsed.ok()) return with_bounded_echo(parsed.status(), s);
  out = *parsed;
  return Status::Ok();
}

}  // namespace

StatusOr<Contract> contract_from_json(const nlohmann::json &j) {
  static const std::set<std::string> kKeys = {
      "target", "m", "m_max", "n", "k", "dtype", "dtype_hidden", "dtype_weight", "dtype_attn",
      "dtype_out", "weight_scale", "out_scale", "ld_hidden", "ld_weight", "ld_attn", "ld_out", "align", "act", "rounding",
      "template"};
  if (!j.is_object()) return invalid_argument("contract: expected a JSON object, got " + describe_json(j));
  for (const auto &[key, value] : j.items())
    if (!kKeys.count(key))
      return invalid_argument("contract key " + quote_input(key) +
                              " is unknown: allowed keys are target, m, m_max, n, k, dtype, dtype_hidden, "
                              "dtype_weight, dtype_attn, dtype_out, weight_scale, out_scale, ld_hidden, ld_weight, ld_attn, ld_out, "
                              "align, act, rounding, template");
  Contract c;
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "target", c.target, parse_target));
  if (j.contains("m") && j.at("m").is_string()) {
    if (j.at("m").get<std::string>() != "dynamic")
      return invalid_argument("m = " + describe_json(j.at("m")) + ": must be an integer or \"dynamic\"");
    c.m_dynamic = true;
    c.m = 0;
  } else {
    GATEJIT_RETURN_IF_ERROR(get_int(j, "m", c.m));
  }
  GATEJIT_RETURN_IF_ERROR(get_int(j, "m_max", c.m_max));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "n", c.n));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "k", c.k));
  DType all = DType::kBF16;
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "dtype", all, [](std::string_view s) { return parse_dtype(s, "dtype"); }));
  c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = all;
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "dtype_hidden", c.dtype_hidden, [](std::string_view s) { return parse_dtype(s, "dtype_hidden"); }));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "dtype_weight", c.dtype_weight, [](std::string_view s) { return parse_dtype(s, "dtype_weight"); }));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "dtype_attn", c.dtype_attn, [](std::string_view s) { return parse_dtype(s, "dtype_attn"); }));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "dtype_out", c.dtype_out, [](std::string_view s) { return parse_dtype(s, "dtype_out"); }));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "weight_scale", c.weight_scale, parse_weight_scale));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "out_scale", c.out_scale, parse_out_scale));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "ld_hidden", c.ld_hidden));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "ld_weight", c.ld_weight));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "ld_attn", c.ld_attn));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "ld_out", c.ld_out));
  GATEJIT_RETURN_IF_ERROR(get_int(j, "align", c.align));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "act", c.act, parse_activation));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "rounding", c.rounding, parse_rounding));
  GATEJIT_RETURN_IF_ERROR(get_enum(j, "template", c.template_kind, parse_template));
  return c;
}

StatusOr<Contract> contract_from_json_text(std::string_view text) {
  if (text.size() > limits::kContractJsonBytes)
    return invalid_argument("contract JSON: " + std::to_string(text.size()) + " bytes is larger than the limit of " +
                            std::to_string(limits::kContractJsonBytes) + " bytes");
  auto j = parse_json_input(text, "contract JSON");
  if (!j.ok()) return j.status();
  return contract_from_json(*j);
}

nlohmann::json contract_to_json(const Contract &c) {
  nlohmann::json j = {
      {"target", target_name(c.target)}, {"n", c.n}, {"k", c.k}, {"dtype", dtype_name(c.dtype())},
      {"ld_hidden", c.ld_hidden}, {"ld_weight", c.ld_weight}, {"ld_attn", c.ld_attn}, {"ld_out", c.ld_out},
      {"align", c.align}, {"act", activation_name(c.act)}, {"rounding", rounding_name(c.rounding)},
      {"template", template_name(c.template_kind)}, {"m_max", c.m_max}};
  if (c.m_dynamic) j["m"] = "dynamic";
  else j["m"] = c.m;
  if (c.dtype_weight != c.dtype()) {
    j["dtype_weight"] = dtype_name(c.dtype_weight);
    j["weight_scale"] = weight_scale_name(c.weight_scale);
  }
  if (c.fp8_out()) {
    j["dtype_out"] = dtype_name(c.dtype_out);
    j["out_scale"] = out_scale_name(c.out_scale);
  }
  return j;
}

}  // namespace gatejit
