// Template declarations (templates/README.md): each rule of parse_template
// on a small synthetic file, then every embedded template.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "template_library.h"

namespace gatejit::compiler {
namespace {

// The error of parsing `text` as "role/t", or "" where it parses.
std::string parse_error(const std::string &text) {
  auto t = parse_template("role/t", text);
  return t.ok() ? "" : t.status().message();
}

TEST(TemplateDeclaration, KindParamsAndBody) {
  auto t = parse_template("weight/pairs",
                          "// kind: snippet\n"
                          "// param VEC: elements of a vector\n"
                          "// param T: the element type\n"
                          "    // prose about ${T}\n"
                          "    func.func private @f(%x: vector<${VEC}x${T}>)\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kind, TemplateFileKind::kSnippet);
  ASSERT_EQ(t->params.size(), 2u);
  EXPECT_EQ(t->params[0].name, "VEC");
  EXPECT_EQ(t->params[0].meaning, "elements of a vector");
  EXPECT_EQ(t->params[1].name, "T");
  EXPECT_TRUE(t->takes("T"));
  EXPECT_FALSE(t->takes("N"));
  // The body is what follows the declaration, as it is.
  EXPECT_EQ(t->body, "    // prose about ${T}\n    func.func private @f(%x: vector<${VEC}x${T}>)\n");
}

TEST(TemplateDeclaration, EachKind) {
  for (auto [word, kind] : {std::pair{"kernel", TemplateFileKind::kKernel}, {"snippet", TemplateFileKind::kSnippet},
                            {"fragment", TemplateFileKind::kFragment}}) {
    auto t = parse_template("role/t", std::string("// kind: ") + word + "\n  %x = arith.constant 0 : index\n");
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->kind, kind);
    EXPECT_STREQ(template_file_kind_name(t->kind), word);
    EXPECT_TRUE(t->params.empty());
  }
}

TEST(TemplateDeclaration, NoKindIsAnError) {
  EXPECT_EQ(parse_error("func.func private @f()\n"),
            "template role/t: line 1 is 'func.func private @f()', not its declaration's "
            "'// kind: kernel | snippet | fragment'");
  EXPECT_NE(parse_error("// param T: the type\n// kind: snippet\n").find("line 1 is '// param T"), std::string::npos);
  EXPECT_NE(parse_error("").find("line 1 is ''"), std::string::npos);
}

TEST(TemplateDeclaration, UnknownKindIsAnError) {
  EXPECT_EQ(parse_error("// kind: kernal\n"),
            "template role/t: line 1: kind 'kernal': allowed kinds are kernel, snippet, fragment");
}

TEST(TemplateDeclaration, MalformedParamLineIsAnError) {
  for (const char *line : {"// param rows: lower case", "// param ROWS", "// param ROWS:", "// param ROWS: ",
                           "// param ROWS COLS: two names", "// param ${ROWS}: braces"}) {
    const std::string error = parse_error(std::string("// kind: snippet\n") + line + "\n");
    EXPECT_NE(error.find("template role/t: line 2 is '" + std::string(line) + "', not '// param NAME: meaning'"),
              std::string::npos)
        << line << " -> " << error;
  }
}

TEST(TemplateDeclaration, ParamDeclaredTwiceIsAnError) {
  EXPECT_EQ(parse_error("// kind: snippet\n// param T: a\n// param T: b\n${T}\n"),
            "template role/t: line 3 declares T a second time");
}

TEST(TemplateDeclaration, UsedButNotDeclaredIsAnError) {
  EXPECT_EQ(parse_error("// kind: snippet\n// param T: the type\n  %x : vector<${VEC}x${T}>\n"),
            "template role/t uses ${VEC} but does not declare it ('// param VEC: meaning')");
  // A use in a comment is a use: it is filled in too.
  EXPECT_EQ(parse_error("// kind: fragment\n  // (needs ${N})\n"),
            "template role/t uses ${N} but does not declare it ('// param N: meaning')");
}

TEST(TemplateDeclaration, DeclaredButNotUsedIsAnError) {
  EXPECT_EQ(parse_error("// kind: snippet\n// param T: the type\n// param VEC: stale\n  %x : ${T}\n"),
            "template role/t declares VEC but does not use it");
}

TEST(TemplateDeclaration, ParamLineAfterTheDeclarationIsAnError) {
  EXPECT_EQ(parse_error("// kind: snippet\n// param T: the type\n\n// param VEC: cut off\n${T} ${VEC}\n"),
            "template role/t: line 4 is a '// param' line after the declaration ended (line 2)");
}

TEST(TemplateDeclaration, BadUseIsAnError) {
  EXPECT_EQ(parse_error("// kind: snippet\n  %x = ${T\n"), "template role/t: unterminated ${ at offset 7");
  EXPECT_EQ(parse_error("// kind: snippet\n  ${t}\n"),
            "template role/t: ${t} at offset 2: a parameter name is [A-Z][A-Z0-9_]*");
}

TEST(TemplateUses, EachOnceInOrderOfFirstUse) {
  auto uses = template_uses("${B} ${A} ${B} ${C_2}");
  ASSERT_TRUE(uses.ok());
  EXPECT_EQ(*uses, (std::vector<std::string>{"B", "A", "C_2"}));
}

// Every embedded template declares exactly what it uses, and its kind
// matches its folder: kernels/ holds the kernels, and only they are.
TEST(EmbeddedTemplates, EachDeclaresWhatItTakes) {
  ASSERT_GT(kEmbeddedTemplateCount, 0u);
  std::set<std::string> names;
  for (size_t i = 0; i < kEmbeddedTemplateCount; ++i) {
    const EmbeddedTemplate &e = kEmbeddedTemplates[i];
    SCOPED_TRACE(e.path);
    EXPECT_TRUE(names.insert(e.name).second) << "two templates named " << e.name;
    auto t = parse_template(e.path, e.text);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->kind == TemplateFileKind::kKernel, std::string(e.path).rfind("kernels/", 0) == 0);
    auto found = find_template(e.name);
    ASSERT_TRUE(found.ok()) << found.status().message();
    EXPECT_EQ((*found)->body, t->body);
  }
  EXPECT_EQ(find_template("no_such_template").status().message(),
            "template 'no_such_template' is not embedded in this build");
}

}  // namespace
}  // namespace gatejit::compiler
