// The kernel templates (templates/<role>/<name>.mlir), embedded at build
// time: each file's declaration (its kind and the parameters it takes), its
// body, and the ${NAME} substitution that fills it. templates/README.md
// describes the files and their declaration.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gatejit/status.h"

namespace gatejit::compiler {

struct EmbeddedTemplate {
  const char *name;  // file name without .mlir, unique across role folders ("gemv")
  const char *path;  // role folder and name ("kernels/gemv")
  const char *text;
};
extern const EmbeddedTemplate kEmbeddedTemplates[];
extern const size_t kEmbeddedTemplateCount;

using TemplateParams = std::map<std::string, std::string>;

// What a template file is, as its first line declares ("// kind: snippet").
enum class TemplateFileKind {
  kKernel,    // a gpu.module with the kernel; one per plan
  kSnippet,   // functions the kernel calls, pasted together at its ${EPILOGUE}
  kFragment,  // a piece of the kernel's body, taken in place at a ${NAME} of its own
};
const char *template_file_kind_name(TemplateFileKind kind);

struct TemplateParam {
  std::string name;     // "ROWS"
  std::string meaning;  // one line: "weight rows (output columns) a wave owns"
};

struct Template {
  std::string path;  // where it came from, for messages ("kernels/gemv")
  TemplateFileKind kind = TemplateFileKind::kSnippet;
  std::vector<TemplateParam> params;  // as declared: exactly the ${NAME}s the body uses
  std::string body;                   // the text after the declaration: what is filled in

  bool takes(std::string_view param) const;
};

// A template file: its declaration, then its body.
//   // kind: kernel | snippet | fragment
//   // param NAME: what it means, on one line
//   ...
// The declaration is the first line and the "// param" lines right after
// it. An error names the file and, where there is one, the line: no kind
// or an unknown one, a malformed or repeated parameter, a "// param" line
// after the declaration, and a parameter the body uses but the declaration
// does not list, or lists but the body does not use.
StatusOr<Template> parse_template(std::string_view path, std::string_view text);

// The ${NAME}s of `text`, each once, in order of first use. An unterminated
// ${ or a name that is not [A-Z][A-Z0-9_]* is an error.
StatusOr<std::vector<std::string>> template_uses(std::string_view text);

// An embedded template by name, parsed (once for all of them). A name that
// is not embedded, or a file that does not parse, is an error naming it.
StatusOr<const Template *> find_template(std::string_view name);

// Replaces every ${NAME} in `text` with params[NAME]. An unknown name is an
// error naming it (a template and its generator out of step).
StatusOr<std::string> substitute(std::string_view text, const TemplateParams &params);

// XXH3-64 over every embedded template (its path and text), as 16 hex
// digits: part of the compiler fingerprint, so editing, renaming or moving a
// template invalidates cached kernels.
std::string templates_hash();

}  // namespace gatejit::compiler
