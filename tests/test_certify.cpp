// poolspec certify (issue: certify): every mutant backend reported with its status while the run
// goes on; the documented minimal C backend and the in-tree engines certified clean; the ABI's
// problem conversion round-trips.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "certify.hpp"
#include "exit_status.hpp"
#include "generators.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/network_layers.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"
#include "rapidcheck_doctest.hpp"
#include "suite.hpp"

namespace {

using poolspec::certify::CertifyOptions;

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Run {
  int exit_code;
  nlohmann::json report;
};

Run certify(CertifyOptions o, const std::string& name) {
  o.out_dir = std::string(POOLSPEC_TEST_OUT) + "/" + name;
  const int code = poolspec::certify::certify_command(o);
  return {code, nlohmann::json::parse(read_text(o.out_dir + "/report.json"))};
}

int64_t count(const Run& r, const std::string& row, const std::string& status) {
  if (!r.report["summary"].contains(row)) return 0;
  return r.report["summary"][row][status].get<int64_t>();
}

}  // namespace

TEST_CASE("every mutant backend is caught with its status, and the run completes") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {POOLSPEC_MUTANT_BACKENDS};
  o.timeout_ms = 1500;
  o.layouts = {"nchw"};  // the mutants are the minimal backend: nchw only
  // The cases that reach every bug (the whole smoke suite takes too long under ASan).
  o.filters = {"shapes/1d:regular", "shapes/2d:asymmetric_pad", "shapes/1d:ic_tail",
               "regressions/int8_average_ties", "enum1d"};
  const Run r = certify(o, "mutants");
  CHECK(r.exit_code == poolspec::cli::exit_check_failed);
  const std::pair<const char*, const char*> expected[] = {
      {"mutant-border-divisor@spec", "FAIL"}, {"mutant-end-pads@spec", "FAIL"},
      {"mutant-ties@spec", "FAIL"},           {"mutant-write-past@spec", "OUT-OF-BOUNDS"},
      {"mutant-crash@spec", "CRASH"},         {"mutant-hang@spec", "HANG"},
      {"mutant-unwritten@spec", "UNWRITTEN"}};
  const char* statuses[] = {"FAIL", "CRASH", "HANG", "OUT-OF-BOUNDS", "UNWRITTEN"};
  for (const auto& [row, status] : expected) {
    const std::string name = row;
    CAPTURE(name);
    CHECK(count(r, row, status) > 0);
    // Where the bug is on some problems only, the others still pass.
    if (name != "mutant-write-past@spec" && name != "mutant-unwritten@spec")
      CHECK(count(r, row, "PASS") > 0);
    for (const char* other : statuses)
      if (std::string(other) != status) CHECK(count(r, row, other) == 0);
  }
  // Each failure has a reproducer bundle with the one command that replays it.
  int bundles = 0;
  for (const auto& run : r.report["runs"])
    if (run.contains("repro_command")) {
      ++bundles;
      CHECK(run["repro_command"].get<std::string>().find("--problem") != std::string::npos);
    }
  CHECK(bundles > 0);
}

TEST_CASE("the documented minimal C backend is the one built here, and it certifies clean") {
  const std::string doc = read_text(POOLSPEC_SOURCE_DIR "/docs/certification.md");
  const std::string source = read_text(POOLSPEC_SOURCE_DIR "/tests/backends/minimal_backend.c");
  REQUIRE(!source.empty());
  CHECK(doc.find(source) != std::string::npos);
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {POOLSPEC_MINIMAL_BACKEND};
  const Run r = certify(o, "minimal");
  CHECK(r.exit_code == poolspec::cli::exit_ok);
  CHECK(count(r, "minimal@spec", "PASS") > 400);
  CHECK(count(r, "minimal@spec", "UNSUPPORTED") > 0);  // nhwc and f16 are refused, with reasons
}

TEST_CASE("every waiver names a finding that docs/findings.md records") {
  // A waiver hides failures of a shipped backend; the finding is its justification.
  const std::string findings = read_text(POOLSPEC_SOURCE_DIR "/docs/findings.md");
  const std::regex id(R"(\b(DNNL|XNN|TORCH)-[0-9]+\b)");
  std::istringstream waivers(read_text(POOLSPEC_SOURCE_DIR "/certify/waivers.txt"));
  int lines = 0;
  for (std::string line; std::getline(waivers, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++lines;
    INFO(line);
    const std::string reason = line.substr(line.find('|') + 1);
    int named = 0;
    for (auto m = std::sregex_iterator(reason.begin(), reason.end(), id);
         m != std::sregex_iterator(); ++m) {
      ++named;
      CHECK(findings.find("**" + m->str() + ". ") != std::string::npos);
    }
    CHECK(named > 0);
  }
  CHECK(lines > 0);
}

TEST_CASE("the in-tree backends certify clean on the smoke suite") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {"reference", "optimized", "xs3"};
  o.filters = {"shapes/1d", "shapes/2d:regular", "shapes/global", "values", "regressions"};
  const Run r = certify(o, "in-tree");
  CHECK(r.exit_code == poolspec::cli::exit_ok);
  CHECK(count(r, "reference@spec", "PASS") > 400);
  CHECK(count(r, "optimized@spec", "PASS") > 400);
  CHECK(count(r, "xs3@xs3", "PASS") > 0);
}

TEST_CASE("a shard is a slice: the shards' runs add up to the whole") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {"reference"};
  o.layouts = {"nchw"};
  o.filters = {"enum1d", "values"};
  const int64_t whole = count(certify(o, "shard-all"), "reference@spec", "PASS");
  o.shard = "0/2";
  const int64_t first = count(certify(o, "shard-0"), "reference@spec", "PASS");
  o.shard = "1/2";
  const int64_t second = count(certify(o, "shard-1"), "reference@spec", "PASS");
  CHECK(first > 0);
  CHECK(second > 0);
  CHECK(first + second == whole);
}

TEST_CASE("merge joins the shards of one run into its reports, and refuses what is not that") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {"reference", POOLSPEC_MUTANT_BACKENDS};
  o.layouts = {"nchw"};
  o.timeout_ms = 1000;
  o.filters = {"shapes/1d:regular", "values"};
  const Run whole = certify(o, "merge-whole");
  std::vector<std::string> dirs;
  for (int i = 0; i < 3; ++i) {
    o.shard = fmt::format("{}/3", i);
    (void)certify(o, fmt::format("merge-shard-{}", i));
    dirs.push_back(std::string(POOLSPEC_TEST_OUT) + fmt::format("/merge-shard-{}", i));
  }
  const std::string out = std::string(POOLSPEC_TEST_OUT) + "/merged";
  CHECK(poolspec::certify::merge_command(dirs, out, false) ==
        poolspec::cli::exit_check_failed);  // the mutants fail
  const auto merged = nlohmann::json::parse(read_text(out + "/report.json"));
  CHECK(merged["summary"] == whole.report["summary"]);
  CHECK(merged["runs"].size() == whole.report["runs"].size());
  CHECK(merged["cases"] == whole.report["cases"]);
  CHECK(read_text(out + "/matrix.txt") ==
        read_text(std::string(POOLSPEC_TEST_OUT) + "/merge-whole/matrix.txt"));
  // A shard missing, given twice, or from another run.
  CHECK(poolspec::certify::merge_command({dirs[0], dirs[1]}, out, false) ==
        poolspec::cli::exit_bad_input);
  CHECK(poolspec::certify::merge_command({dirs[0], dirs[1], dirs[1]}, out, false) ==
        poolspec::cli::exit_bad_input);
  o.shard = "2/3";
  o.layouts = {"nchw", "nhwc"};
  (void)certify(o, "merge-other");
  CHECK(poolspec::certify::merge_command(
            {dirs[0], dirs[1], std::string(POOLSPEC_TEST_OUT) + "/merge-other"}, out, false) ==
        poolspec::cli::exit_bad_input);
  CHECK(poolspec::certify::merge_command({dirs[0], dirs[1], "/nonexistent"}, out, false) ==
        poolspec::cli::exit_bad_input);
}

TEST_CASE("bad certify options are refused with exit code 2") {
  CertifyOptions o;
  o.shard = "2/2";
  CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {"no-such-backend"};
  CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {"/nonexistent/libnothing.so"};
  CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
  o = CertifyOptions{};
  o.suite = "huge";
  CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {"reference"};
  o.filters = {"no-case-has-this-in-its-id"};
  CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
  for (int64_t CertifyOptions::*limit :
       {&CertifyOptions::timeout_ms, &CertifyOptions::load_timeout_ms,
        &CertifyOptions::memory_limit_mb, &CertifyOptions::cpu_limit_s}) {
    o = CertifyOptions{};
    o.*limit = 0;
    CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
  }
  o = CertifyOptions{};
  o.input = "x.npy";  // without --problem
  CHECK(poolspec::certify::certify_command(o) == poolspec::cli::exit_bad_input);
}

TEST_CASE("the backend ABI carries every valid problem and back") {
  poolspec::test::check_property("to_c_problem / from_c_problem round-trip", [] {
    const poolspec::Problem p = *poolspec::test::problem_gen();
    for (poolspec::Layout layout : poolspec::all_layouts) {
      const auto c = poolspec::to_c_problem(p, layout);
      RC_ASSERT(c.ok());
      const auto back = poolspec::from_c_problem(c->problem);
      RC_ASSERT(back.ok());
      RC_ASSERT(*back == p);
      RC_ASSERT(poolspec::layout_of(c->problem) == layout);
    }
  });
}

// The network layers (check/src/network_layers.cpp) feed the suites' topologies and the
// benchmark: each must be a valid problem under a unique name, and the full suite must hold each
// at its real size (the smoke and ci suites shrink the channels and 3-D extents).
TEST_CASE("every network layer is a valid problem, and the full suite runs each at its real size") {
  const auto full = poolspec::certify::make_suite("full");
  REQUIRE(full.ok());
  std::set<std::string_view> names;
  int benchmarked = 0;
  for (const poolspec::NetworkLayer& layer : poolspec::network_layers()) {
    CAPTURE(layer.name);
    CHECK(names.insert(layer.name).second);
    const auto p = poolspec::parse_problem(layer.problem);
    REQUIRE(p.ok());
    CHECK(poolspec::validate(*p).ok());
    CHECK(p->batch == 1);
    benchmarked += layer.benchmarked ? 1 : 0;
    const std::string id = fmt::format("topologies/{}", layer.name);
    const auto c =
        std::find_if(full->begin(), full->end(), [&](const auto& x) { return x.id == id; });
    REQUIRE(c != full->end());
    CHECK(c->intent.shape == poolspec::input_shape(*p));
  }
  CHECK(names.size() >= 10);
  CHECK(benchmarked > 0);
}
