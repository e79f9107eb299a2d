#include "input_echo.h"

#include <cstdio>

namespace gatejit {
namespace {

void append_escaped(std::string &out, unsigned char c, bool keep_newline, char quote) {
  switch (c) {
    case '\n':
      out += keep_newline ? "\n" : "\\n";
      return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    case '\0': out += "\\0"; return;
    case '\\': out += quote ? "\\\\" : "\\"; return;
  }
  if (c < 0x20 || c >= 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
    return;
  }
  if (quote && c == static_cast<unsigned char>(quote)) out += '\\';
  out += char(c);
}

std::string escape(std::string_view text, size_t max_shown, bool keep_newline, char quote) {
  std::string out;
  const size_t shown = text.size() > max_shown ? max_shown : text.size();
  out.reserve(shown + 2);
  if (quote) out += quote;
  for (size_t i = 0; i < shown; ++i) append_escaped(out, static_cast<unsigned char>(text[i]), keep_newline, quote);
  if (shown < text.size()) out += "...";
  if (quote) out += quote;
  if (shown < text.size()) out += " (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace

std::string escape_input(std::string_view text, size_t max_shown) { return escape(text, max_shown, false, 0); }

std::string quote_input(std::string_view text, size_t max_shown, char quote) {
  return escape(text, max_shown, false, quote);
}

std::string bounded_message(std::string_view message, size_t max_bytes) {
  std::string out = escape(message, max_bytes, true, 0);
  return out;
}

}  // namespace gatejit
