// Text helpers shared by every report and message of lib/inspect: number
// formatting, counts with their noun, names from untrusted input made safe
// for one line, XML escaping. One place, so every report spells them alike.
#pragma once

#include <cstddef>
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

/// "1 node", "3 nodes".
std::string plural(size_t n, const char* one, const char* many);

/// The items separated by ", ".
std::string joined(const std::vector<std::string_view>& items);

/// s as a JSON string literal, quotes included, control characters escaped:
/// one line however hostile the input. Cut to max bytes (whole UTF-8
/// characters) with "..." before the closing quote when longer.
std::string quoted(std::string_view s, size_t max = std::string_view::npos);

/// s with control characters replaced by '?', for plain-text lines.
std::string printable(std::string_view s);

/// The name of an input path in messages and headers: "standard input" for
/// "-", else the path.
std::string display_name(const std::string& path);

/// s escaped for XML text and attribute values: markup characters as
/// entities, line breaks and tabs as character references, and characters
/// XML 1.0 cannot hold (controls, invalid UTF-8) as U+FFFD.
std::string xml_escape(std::string_view s);

}  // namespace graphscope
