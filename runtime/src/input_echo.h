// Echoing untrusted input (keys, values, paths, environment values) in error
// messages: every byte that is not printable ASCII is escaped, so a message
// cannot carry terminal escape sequences, line breaks or a NUL that cuts it,
// and the echo is bounded, so a 100 MB key gives a short message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gatejit {

// The text with \n, \t, \r, \0, \\ and \xNN escapes (bytes < 0x20 and
// >= 0x7f), cut to at most `max_shown` input bytes; a cut text ends with
// "... (N bytes)". Printable ASCII passes through unchanged, so an ordinary
// path reads as itself.
std::string escape_input(std::string_view text, size_t max_shown = 256);

// escape_input() in quotes (a quote inside is escaped too), for values and
// keys: 'colour', 'a\nb', 'xxxx...' (104857600 bytes).
std::string quote_input(std::string_view text, size_t max_shown = 64, char quote = '\'');

// The last line of defence for a whole message before it is printed or
// handed across the C API: control bytes other than '\n' are escaped and the
// message is cut to `max_bytes`, saying how much was cut.
std::string bounded_message(std::string_view message, size_t max_bytes = 4096);

}  // namespace gatejit
