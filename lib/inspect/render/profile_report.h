// Rendering a profile report for people: the text report and the picture's
// decoration. The analysis (profile.h) computes; this only formats.
#pragma once

#include <cstddef>
#include <string>

#include "dot_writer.h"
#include "../model/graph.h"
#include "../analysis/profile.h"

namespace graphscope {

/// The readable report: summary, worst delays first, fake dependencies with
/// both kernel names, the critical path, lane and stream use.
std::string format_profile(const ProfileReport& r, const GraphDocument& doc, size_t top = 15);

/// The picture's decoration for a report: root nodes filled by median delay
/// (white for none, through yellow, to red for the largest), with a line
/// "delay 12.3 us, fake (blocking)" each.
DotOverlay profile_overlay(const ProfileReport& r);

}  // namespace graphscope
