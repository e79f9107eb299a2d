// Issue 19, points 2, 9 and 10 at the library: contract JSON from outside is
// depth-bounded (no stack overflow), a key given twice is refused by name,
// and every echo of the input in a message is escaped and bounded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gatejit/contract_json.h"
#include "gatejit/gatejit.h"
#include "input_echo.h"
#include "json_input.h"

namespace gatejit {
namespace {

std::string nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

// No control byte and no byte past ASCII in a message.
void expect_printable(const std::string &m) {
  for (unsigned char c : m) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(c) << " in: " << m;
}

TEST(ContractJsonInput, DeepNestingIsRefusedNotACrash) {
  for (const std::string &text : {nested(100000), nested(100000, '{', '}'),
                                  "{\"m\": " + nested(100000) + "}", std::string(100000, '[')}) {
    auto c = contract_from_json_text(text);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_LT(c.status().message().size(), 200u) << c.status().message();
  }
  auto c = contract_from_json_text("{\"m\": " + nested(100000) + "}");
  EXPECT_NE(c.status().message().find("nested deeper than 64 levels"), std::string::npos) << c.status().message();
}

TEST(ContractJsonInput, NestingWithinTheBoundParses) {
  auto j = parse_json_input(nested(64), "test");
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_FALSE(parse_json_input(nested(65), "test").ok());
  // A contract value that is a (shallow) container is described, not dumped.
  auto c = contract_from_json_text(R"({"n": [[1, 2], {"a": 3}], "k": 1})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "n = an array of 2 values: must be an integer");
}

TEST(ContractJsonInput, DuplicateKeysAreRefusedByName) {
  auto c = contract_from_json_text(R"({"n": 1536, "k": 7168, "n": 4096})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "contract JSON: key 'n' appears twice in one object");
  // The same key in different objects is fine.
  EXPECT_TRUE(parse_json_input(R"([{"n": 1}, {"n": 2}])", "spec").ok());
}

TEST(ContractJsonInput, SyntaxErrorsNameTheOffset) {
  auto c = contract_from_json_text("{\"n\": 1,, }");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "contract JSON: not valid JSON (error at byte 9)");
}

TEST(ContractJsonInput, OversizedTextIsRefusedBeforeParsing) {
  const std::string big = "{\"n\": \"" + std::string(2 << 20, 'x') + "\"}";
  auto c = contract_from_json_text(big);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("is larger than the limit of 1048576 bytes"), std::string::npos);
}

TEST(ContractJsonInput, UnknownKeyEchoIsBoundedAndEscaped) {
  nlohmann::json j = nlohmann::json::object();
  j[std::string(10 << 20, 'k')] = 1;  // a 10 MB key
  auto c = contract_from_json(j);
  ASSERT_FALSE(c.ok());
  EXPECT_LT(c.status().message().size(), 400u);
  EXPECT_NE(c.status().message().find("(10485760 bytes)"), std::string::npos) << c.status().message();

  nlohmann::json evil = nlohmann::json::object();
  evil[std::string("a\x1b[31mred\nline\0after", 20)] = 1;
  auto e = contract_from_json(evil);
  ASSERT_FALSE(e.ok());
  expect_printable(e.status().message());
  EXPECT_NE(e.status().message().find("'a\\x1b[31mred\\nline\\0after'"), std::string::npos) << e.status().message();
}

TEST(ContractJsonInput, EnumValueEchoIsBoundedAndEscaped) {
  nlohmann::json j = {{"n", 1}, {"k", 1}, {"dtype", std::string(1 << 20, 'z') + "\x07"}};
  auto c = contract_from_json(j);
  ASSERT_FALSE(c.ok());
  EXPECT_LT(c.status().message().size(), 400u) << c.status().message().substr(0, 400);
  EXPECT_NE(c.status().message().find("allowed dtypes are bf16, f16, f32"), std::string::npos)
      << c.status().message().substr(0, 400);
  nlohmann::json k = {{"n", 1}, {"k", 1}, {"act", "si\nlu"}};
  auto a = contract_from_json(k);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "act = 'si\\nlu': allowed activations are sigmoid, silu");
}

// Issue 45: a number past int64 is echoed as given, never as what it wraps
// to (18446744073709551615 is not -1).
TEST(ContractJsonInput, IntegersPastInt64AreEchoedAsGiven) {
  for (const char *key : {"m", "m_max", "n", "k", "ld_hidden", "align"}) {
    for (const char *value : {"18446744073709551615", "9223372036854775808"}) {
      SCOPED_TRACE(std::string(key) + " = " + value);
      std::string text = "{";
      for (const char *other : {"m", "n", "k"})
        if (std::string(other) != key) text += std::string("\"") + other + "\": 256, ";
      auto c = contract_from_json_text(text + "\"" + key + "\": " + value + "}");
      ASSERT_FALSE(c.ok());
      const std::string &m = c.status().message();
      EXPECT_NE(m.find(std::string(key) + " = " + value), std::string::npos) << m;
      EXPECT_EQ(m.find("-1"), std::string::npos) << m;
      EXPECT_NE(m.find("9223372036854775807"), std::string::npos) << "names the largest allowed: " << m;
    }
  }
}

TEST(InputEcho, EscapesAndBounds) {
  EXPECT_EQ(quote_input("plain"), "'plain'");
  EXPECT_EQ(quote_input(std::string("it's\0", 5)), "'it\\'s\\0'");
  EXPECT_EQ(escape_input("/tmp/a b"), "/tmp/a b");
  EXPECT_EQ(escape_input("\xff\x7f\t"), "\\xff\\x7f\\t");
  EXPECT_EQ(quote_input(std::string(100, 'a'), 4), "'aaaa...' (100 bytes)");
  const std::string m = bounded_message("line one\nline two\x1b[0m", 4096);
  EXPECT_EQ(m, "line one\nline two\\x1b[0m");
  EXPECT_EQ(bounded_message(std::string(10000, 'm'), 16).size(), std::string("mmmmmmmmmmmmmmmm... (10000 bytes)").size());
}

// Through the C API: a hostile contract string is an error status, never a
// crash of the host process, and its message is one bounded printable text.
TEST(ContractJsonInput, CApiExplainSurvivesHostileContracts) {
  gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
  options.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  ASSERT_EQ(gatejit_runtime_create(&options, &rt), nullptr);
  const std::vector<std::string> texts = {nested(100000), "{\"n\": 1, \"n\": 2}", "{\"\x1b[2J\": 1}",
                                         std::string(3 << 20, ' ')};
  for (const std::string &text : texts) {
    char *out = nullptr;
    gatejit_status_t s = gatejit_explain_contract_json(rt, text.c_str(), &out);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(gatejit_status_code(s), GATEJIT_INVALID_ARGUMENT);
    const std::string m = gatejit_status_message(s);
    EXPECT_LT(m.size(), 4200u);
    expect_printable(m);
    gatejit_status_free(s);
    EXPECT_EQ(out, nullptr);
  }
  gatejit_runtime_destroy(rt);
}

}  // namespace
}  // namespace gatejit
