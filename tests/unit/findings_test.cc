#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "inspect/analysis/findings.h"
#include "inspect/analysis/profile.h"
#include "inspect/core/error.h"
#include "inspect/core/text.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/formats/load.h"
#include "inspect/formats/profile_json.h"
#include "inspect/render/profile_report.h"
#include "test_data.h"

using namespace graphscope;

namespace {

struct Recorded {
  GraphDocument doc;
  ProfileReport report;
};

Recorded recorded(const std::string& name, double tolerance_us = 2.0) {
  Recorded x;
  x.doc = load_graph(test::data_path("profiles/" + name + ".graph.json"));
  const Trace t = read_chrome_trace(test::read_data("profiles/" + name + ".trace.json"), name);
  ProfileOptions o;
  o.tolerance_us = tolerance_us;
  x.report = analyze_profile(x.doc, t, o);
  return x;
}

double share_of(const MakespanAccount& a, bool (*is)(AccountCategory)) {
  int64_t ns = 0;
  for (const AccountPart& p : a.parts)
    if (is(p.category)) ns += p.ns;
  return double(ns) / double(a.makespan_ns);
}

// An account of 1000 us with `ns` in category c, the rest kernel work.
MakespanAccount account_with(AccountCategory c, int64_t ns) {
  MakespanAccount a;
  a.replays = 1;
  a.makespan_ns = 1000000;
  a.chain_nodes = 4;
  for (size_t k = 0; k < kAccountCategories; ++k) a.parts.push_back({AccountCategory(k), 0, 0, 0, 0});
  a.parts[size_t(c)].ns = ns;
  a.parts[size_t(AccountCategory::kernel)].ns = a.makespan_ns - ns;
  return a;
}

}  // namespace

TEST_CASE("findings: copies behind one copy engine, with what to try and the model's prediction") {
  for (double tol : {0.5, 2.0}) {
    CAPTURE(tol);
    const Recorded x = recorded("copies.c1", tol);
    const ProfileReport& r = x.report;
    REQUIRE(r.what_if);
    REQUIRE(r.findings.size() == 1);
    const Finding& f = r.findings[0];
    CHECK(f.kind == FindingKind::copy_engine);
    CHECK(f.share == doctest::Approx(share_of(r.account, is_fake_wait)));
    CHECK(f.part_us == doctest::Approx(double(r.account.part(AccountCategory::fake_copy_engine)) / 1000));
    CHECK(f.from_us == doctest::Approx(r.makespan_us));
    CHECK(f.to_us == doctest::Approx(r.what_if->without_fake_us));
    CHECK(f.to_us < 0.5 * f.from_us);
    CHECK(f.try_.find("order") != std::string::npos);
    // The line says the numbers it rests on.
    CHECK(f.text.find(fmt("%.1f", f.part_us) + " us") != std::string::npos);
    CHECK(f.text.find(fmt("%.1f", f.from_us) + " -> " + fmt("%.1f", f.to_us) + " us") != std::string::npos);
    const std::string text = format_profile(r, x.doc);
    CHECK(text.find("findings       " + f.text + "\n") != std::string::npos);
  }
}

TEST_CASE("findings: the wide fan-out's dependency latency, against the model with none") {
  const Recorded x = recorded("wide.c1");
  const ProfileReport& r = x.report;
  REQUIRE(r.findings.size() == 1);
  const Finding& f = r.findings[0];
  CHECK(f.kind == FindingKind::latency);
  CHECK(f.share == doctest::Approx(double(r.account.part(AccountCategory::latency)) / double(r.account.makespan_ns)));
  CHECK(f.share > kFindingShare);
  CHECK(f.to_us == doctest::Approx(r.what_if->zero_latency_us));
  CHECK(f.try_.find("programmatic dependent launch") != std::string::npos);
}

TEST_CASE("findings: none where nothing stands out, and the report says so") {
  const Recorded x = recorded("chain.c8");
  const ProfileReport& r = x.report;
  REQUIRE(r.what_if);
  CHECK(r.findings.empty());
  CHECK(format_profile(r, x.doc).find("findings       none stand out") != std::string::npos);
}

TEST_CASE("findings: a part under the share, or one the model predicts no gain for, is none") {
  WhatIf w;
  w.measured_us = w.as_measured_us = 1000;
  w.without_fake_us = 700;
  w.zero_latency_us = 1000;
  // 30% behind one channel: a finding, with a connection count above the
  // one channel used, and the chain without that wait at best.
  auto f = find_findings(account_with(AccountCategory::fake_same_channel, 300000), &w, 1);
  REQUIRE(f.size() == 1);
  CHECK(f[0].kind == FindingKind::channel);
  CHECK(f[0].try_ == "CUDA_DEVICE_MAX_CONNECTIONS=8 or a stream per branch");
  CHECK(f[0].text ==
        "fake wait behind one channel: 300.0 us (30% of the makespan); try: CUDA_DEVICE_MAX_CONNECTIONS=8 or a "
        "stream per branch; the account predicts 1000.0 -> 700.0 us (-30%) at best: the chain without those waits "
        "(the what-if keeps channel waits as measured)");
  CHECK(find_findings(account_with(AccountCategory::fake_same_channel, 300000), &w, 12)[0].try_ ==
        "CUDA_DEVICE_MAX_CONNECTIONS=24 or a stream per branch");
  // Under the share: nothing.
  CHECK(find_findings(account_with(AccountCategory::fake_same_channel, 99000), &w, 1).empty());
  // Copies behind their engine, 30%: the what-if's prediction without it.
  f = find_findings(account_with(AccountCategory::fake_copy_engine, 300000), &w, 1);
  REQUIRE(f.size() == 1);
  CHECK(f[0].to_us == 700);
  // Latency of 40%, but the model predicts no gain without it: nothing.
  CHECK(find_findings(account_with(AccountCategory::latency, 400000), &w, 1).empty());
  w.without_fake_us = 990;  // the copies: 1% shorter, under the gain that counts
  CHECK(find_findings(account_with(AccountCategory::fake_copy_engine, 300000), &w, 1).empty());
  // No what-if: never a finding without its numbers.
  CHECK(find_findings(account_with(AccountCategory::fake_same_channel, 300000), nullptr, 1).empty());
  // Without channels, behind one stream.
  f = find_findings(account_with(AccountCategory::fake_same_stream, 300000), &w, 0);
  REQUIRE(f.size() == 1);
  CHECK(f[0].try_ == "a stream per branch");
}

TEST_CASE("findings: written to the profile JSON and read back, and an older report gets them from its account") {
  const Recorded x = recorded("copies.c1");
  const std::string json = write_profile_json(x.report, x.doc);
  const nlohmann::json j = nlohmann::json::parse(json);
  REQUIRE(j.contains("findings"));
  REQUIRE(j["findings"].size() == 1);
  CHECK(j["findings"][0]["kind"] == "copy_engine");
  CHECK(j["findings"][0]["text"] == x.report.findings[0].text);
  const ProfileDocument back = read_profile_json(json, "p.json");
  REQUIRE(back.report.findings.size() == 1);
  CHECK(back.report.findings[0].text == x.report.findings[0].text);
  CHECK(back.report.findings[0].to_us == doctest::Approx(x.report.findings[0].to_us));
  nlohmann::json older = j;
  older.erase("findings");
  const ProfileDocument derived = read_profile_json(older.dump(), "old.json");
  REQUIRE(derived.report.findings.size() == 1);
  CHECK(derived.report.findings[0].kind == FindingKind::copy_engine);
  CHECK(derived.report.findings[0].share == doctest::Approx(x.report.findings[0].share));
  nlohmann::json bad = j;
  bad["findings"][0]["kind"] = "magic";
  try {
    read_profile_json(bad.dump(), "bad.json");
    FAIL("read");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "bad.json (findings[0].kind: \"magic\" is not \"channel\", \"copy_engine\" or \"latency\")");
  }
}
