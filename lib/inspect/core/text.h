// Text helpers shared by every report and message of lib/inspect: number
// formatting, counts with their noun, names from untrusted input made safe
// for one line of a terminal, UTF-8 decoding, XML escaping. One place, so
// every report spells them alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graphscope {

/// snprintf of one double with a printf format ("%.2f").
std::string fmt(const char* format, double v);

/// A number as the user wrote it: the shortest form up to 15 digits ("5",
/// "0.25"), no trailing zeros.
std::string num(double v);

/// A measured figure with two decimals, trailing zeros dropped ("6.45",
/// "5"; never "-0").
std::string num2(double v);

/// A change in percent with its sign and `decimals` decimals ("+12%",
/// "-3.5%"), "0%" when it rounds to zero: never "-0%" or "+0.0%".
std::string signed_percent(double percent, int decimals);

/// "1 node", "3 nodes".
std::string plural(size_t n, const char* one, const char* many);

/// s and then spaces up to `width` bytes: printf's "%-*s" without its stop
/// at a NUL or its buffer's limit.
std::string padded(std::string_view s, size_t width);

/// s when it has at most `max` bytes (max >= 3); else as many of its whole
/// UTF-8 characters as fit in max - 3 bytes, and "...".
std::string shortened(std::string_view s, size_t max);

/// The items separated by ", ".
std::string joined(const std::vector<std::string_view>& items);

/// s as a JSON string literal, quotes included, control characters escaped:
/// one line however hostile the input. Cut to max bytes (whole UTF-8
/// characters) with "..." before the closing quote when longer.
std::string quoted(std::string_view s, size_t max = std::string_view::npos);

/// One name from untrusted input (a kernel, module, file or range name, a
/// rule from someone's rules file) made safe for one line of a text report
/// or message on a terminal: nothing in it is interpreted and it cannot
/// start a line. Control characters are shown escaped: line feed, carriage
/// return and tab as \n \r \t, the other C0 controls and DEL as \xNN
/// (\x1b, \x00), the C1 controls U+0080..U+009F as \u0080..\u009f; each
/// byte that is not part of well-formed UTF-8 as \xNN. Everything else,
/// backslashes included, is kept as it is, so text that is already
/// printable passes unchanged (printable(printable(s)) == printable(s)).
std::string printable(std::string_view s);

/// A whole text report or message for a terminal: as printable(), except
/// that line feeds and tabs, the report's own layout, are kept. Names inside
/// the report must still go through printable() first: here a line feed in a
/// name would start a line.
std::string terminal_safe(std::string_view s);

/// The well-formed UTF-8 sequence at s[i]: its code point and its length in
/// bytes (1 to 4). len is 0 where s[i] starts none: a stray continuation
/// byte, a sequence cut short, an overlong form, a surrogate (U+D800..
/// U+DFFF) or beyond U+10FFFF.
struct Utf8Char {
  uint32_t cp = 0;
  size_t len = 0;
};
Utf8Char utf8_char(std::string_view s, size_t i);

/// Whether XML 1.0 can hold the code point (its Char production: tab, line
/// feed, carriage return, U+0020..U+D7FF, U+E000..U+FFFD,
/// U+10000..U+10FFFF). Not U+FFFE, U+FFFF, the surrogates or the other C0
/// controls, not even as character references.
bool xml_char(uint32_t cp);

/// The name of an input path in messages and headers: "standard input" for
/// "-", else the path.
std::string display_name(const std::string& path);

/// s escaped for XML text and attribute values: markup characters as
/// entities, line breaks and tabs as character references, and what XML 1.0
/// cannot hold as U+FFFD: each code point outside xml_char() (C0 controls,
/// U+FFFE, U+FFFF) and each byte of invalid UTF-8.
std::string xml_escape(std::string_view s);

}  // namespace graphscope
