// The colour scale of a profile's delays, the same in every picture
// (`profile --svg`) and on every report page: relative to the profile's
// delay threshold (past it a fake dependency blocks), never to the largest
// delay of the graph, so that a colour means the same on every graph and a
// healthy graph stays pale. The page's legend is written from this table.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

namespace graphscope {

struct DelayBand {
  double from;        // the band starts at this multiple of the threshold
  const char* fill;   // "#rrggbb"
  const char* words;  // what the band means, for the legend
};

/// Bands in increasing order; the last one is open-ended.
inline constexpr DelayBand kDelayBands[] = {
    {0.0, "#ffffff", "under half the threshold"},
    {0.5, "#fff3c4", "from half the threshold to the threshold"},
    {1.0, "#fdc57a", "over the threshold: a fake dependency this late blocks"},
    {2.0, "#f4874b", "over twice the threshold"},
    {4.0, "#b8211b", "over four times the threshold"},
};
inline constexpr size_t kDelayBandCount = sizeof kDelayBands / sizeof kDelayBands[0];

/// The fill of a node the trace has no record of (neither a delay nor a
/// type's colour: the scale would read it as a delay).
inline constexpr const char* kNoRecordFill = "#e3e6ea";

/// The band of a delay: the last whose start (times the threshold) it
/// reaches. A threshold of 0 puts every positive delay in the last band.
inline size_t delay_band(double delay_us, double threshold_us) {
  size_t b = 0;
  for (size_t k = 1; k < kDelayBandCount; ++k)
    if (delay_us > 0 && delay_us >= kDelayBands[k].from * threshold_us) b = k;
  return b;
}

/// WCAG relative luminance of "#rrggbb".
inline double luminance(const char* rgb) {
  unsigned r = 0, g = 0, b = 0;
  if (std::sscanf(rgb, "#%2x%2x%2x", &r, &g, &b) != 3) return 1.0;
  auto lin = [](unsigned c) {
    const double x = c / 255.0;
    return x <= 0.03928 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/// WCAG contrast ratio of two colours (1 to 21).
inline double contrast_ratio(const char* a, const char* b) {
  const double x = luminance(a), y = luminance(b);
  return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

/// The text colour that reads best on a fill: black or white, by the
/// fill's luminance.
inline const char* text_on(const char* fill) {
  return contrast_ratio(fill, "#000000") >= contrast_ratio(fill, "#ffffff") ? "#000000" : "#ffffff";
}

}  // namespace graphscope
