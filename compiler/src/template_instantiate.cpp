#include "template_instantiate.h"

#include <fmt/format.h>

#include <set>

namespace gatejit::compiler {
namespace {

std::string name_of(const Template &t) { return t.path.substr(t.path.rfind('/') + 1); }

// "kernel gemv; snippets epilogue_boundary, sigmoid; fragments PICK_STAGE = stage_pick_sm90"
std::string describe(const TemplateSet &set) {
  std::string s = "kernel " + name_of(*set.kernel);
  for (size_t i = 0; i < set.snippets.size(); ++i) s += (i ? ", " : "; snippets ") + name_of(*set.snippets[i]);
  for (size_t i = 0; i < set.fragments.size(); ++i)
    s += (i ? ", " : "; fragments ") + set.fragments[i].first + " = " + name_of(*set.fragments[i].second);
  return s;
}

Status check_kind(const Template &t, TemplateFileKind want) {
  if (t.kind == want) return Status::Ok();
  return internal_error(fmt::format("template {} is a {}, used as a {}", t.path, template_file_kind_name(t.kind),
                                    template_file_kind_name(want)));
}

StatusOr<const Template *> find_kind(const std::string &name, TemplateFileKind want) {
  auto t = find_template(name);
  if (!t.ok()) return t.status();
  if (Status s = check_kind(**t, want); !s.ok()) return s;
  return *t;
}

// Both ways: every parameter set is taken by one of the templates, and
// every parameter a template takes is set (the kernel's ${EPILOGUE} and
// fragment parameters by the instantiation itself).
Status check_parameters(const TemplateSet &set, const TemplateParams &params) {
  std::set<std::string> filled_here = {"EPILOGUE"};
  for (const auto &[param, fragment] : set.fragments) filled_here.insert(param);
  std::vector<const Template *> all = {set.kernel};
  all.insert(all.end(), set.snippets.begin(), set.snippets.end());
  for (const auto &[param, fragment] : set.fragments) all.push_back(fragment);
  std::string untaken;  // every one at once: "${A}, ${B}"
  for (const auto &[name, value] : params) {
    if (filled_here.count(name))
      return internal_error(fmt::format("plan sets ${{{}}}, which the instantiation fills in ({})", name, describe(set)));
    bool taken = false;
    for (const Template *t : all) taken = taken || t->takes(name);
    if (!taken) untaken += (untaken.empty() ? "${" : ", ${") + name + "}";
  }
  if (!untaken.empty())
    return internal_error(fmt::format("plan sets {}, which none of the templates instantiated together takes ({})",
                                      untaken, describe(set)));
  for (const std::string &param : filled_here)
    if (!set.kernel->takes(param))
      return internal_error(fmt::format("kernel {} does not take ${{{}}}, which the instantiation fills in ({})",
                                        set.kernel->path, param, describe(set)));
  for (const Template *t : all)
    for (const TemplateParam &p : t->params)
      if (!params.count(p.name) && !(t == set.kernel && filled_here.count(p.name)))
        return internal_error(fmt::format("template {} takes ${{{}}} ({}), which the plan does not set", t->path,
                                          p.name, p.meaning));
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> instantiate_set(const TemplateSet &set, const TemplateParams &params) {
  if (Status s = check_kind(*set.kernel, TemplateFileKind::kKernel); !s.ok()) return s;
  for (const Template *t : set.snippets)
    if (Status s = check_kind(*t, TemplateFileKind::kSnippet); !s.ok()) return s;
  for (const auto &[param, t] : set.fragments)
    if (Status s = check_kind(*t, TemplateFileKind::kFragment); !s.ok()) return s;
  if (Status s = check_parameters(set, params); !s.ok()) return s;
  std::string epilogue;
  for (const Template *t : set.snippets) epilogue += t->body;
  TemplateParams filled = params;
  auto filled_epilogue = substitute(epilogue, params);
  if (!filled_epilogue.ok()) return filled_epilogue.status();
  filled["EPILOGUE"] = *filled_epilogue;
  for (const auto &[param, t] : set.fragments) {
    auto text = substitute(t->body, params);
    if (!text.ok()) return text.status();
    filled[param] = *text;
  }
  return substitute(set.kernel->body, filled);
}

StatusOr<std::string> instantiate(const KernelPlan &plan) {
  const Contract &c = plan.contract;
  std::vector<std::string> snippets = {
      std::string("epilogue_") + rounding_name(c.rounding),
      std::string("activation_") + activation_name(c.act),
      "sigmoid",
      c.dtype() == DType::kF32 ? "convert_f32" : "convert_narrow",
  };
  snippets.insert(snippets.end(), plan.snippets.begin(), plan.snippets.end());
  TemplateSet set;
  auto kernel = find_kind(plan.template_file, TemplateFileKind::kKernel);
  if (!kernel.ok()) return kernel.status();
  set.kernel = *kernel;
  for (const std::string &name : snippets) {
    auto t = find_kind(name, TemplateFileKind::kSnippet);
    if (!t.ok()) return t.status();
    set.snippets.push_back(*t);
  }
  for (const auto &[param, file] : plan.body_fragments) {
    auto t = find_kind(file, TemplateFileKind::kFragment);
    if (!t.ok()) return t.status();
    set.fragments.emplace_back(param, *t);
  }
  return instantiate_set(set, plan.params);
}

}  // namespace gatejit::compiler
