#include "template_instantiate.h"

#include <vector>

#include "template_library.h"

namespace gatejit::compiler {

StatusOr<std::string> instantiate(const KernelPlan &plan) {
  const Contract &c = plan.contract;
  std::vector<std::string> snippets = {
      std::string("epilogue_") + rounding_name(c.rounding),
      std::string("activation_") + activation_name(c.act),
      "sigmoid",
      c.dtype() == DType::kF32 ? "convert_f32" : "convert_narrow",
  };
  snippets.insert(snippets.end(), plan.snippets.begin(), plan.snippets.end());
  std::string epilogue;
  for (const std::string &name : snippets) {
    auto text = template_text(name);
    if (!text.ok()) return text.status();
    epilogue += *text;
  }
  TemplateParams params = plan.params;
  auto filled_epilogue = substitute(epilogue, params);
  if (!filled_epilogue.ok()) return filled_epilogue.status();
  params["EPILOGUE"] = *filled_epilogue;
  for (const auto &[param, file] : plan.body_fragments) {
    auto text = template_text(file);
    if (!text.ok()) return text.status();
    auto filled = substitute(*text, plan.params);
    if (!filled.ok()) return filled.status();
    params[param] = *filled;
  }
  auto kernel = template_text(plan.template_file);
  if (!kernel.ok()) return kernel.status();
  return substitute(*kernel, params);
}

}  // namespace gatejit::compiler
