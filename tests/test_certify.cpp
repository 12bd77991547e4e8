// poolspec certify (issue: certify): every mutant backend reported with its status while the run
// goes on; the documented minimal C backend and the in-tree engines certified clean; the ABI's
// problem conversion round-trips.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
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
#include "poolspec/evaluate.hpp"
#include "poolspec/network_layers.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"
#include "rapidcheck_doctest.hpp"
#include "suite.hpp"
#include "waivers.hpp"

namespace {

using poolspec::certify::CertifyOptions;
using poolspec::certify::JobResult;
using poolspec::certify::Verdict;

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

// Runs of a row in one column with a status.
int64_t count_in(const Run& r, const std::string& row, const std::string& column,
                 const std::string& status) {
  int64_t n = 0;
  for (const auto& run : r.report["runs"])
    n += run["backend"].get<std::string>() + "@" + run["rules"].get<std::string>() == row &&
         run["column"] == column && run["status"] == status;
  return n;
}

TEST_CASE("a backend that claims TOSA's rules must refuse the problems they refuse") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {POOLSPEC_TOSA_BACKENDS};
  o.rules = {"claimed"};
  o.layouts = {"nchw"};  // the minimal backend's layout
  o.shrink = false;
  // Windows that do not fit exactly (shapes/2d:regular), pads as long as the kernel with an
  // exact fit (limits/tosa_pad_equals_kernel), the 8K level's kernel and stride; and problems
  // TOSA accepts (shapes/2d:no_pad).
  o.filters = {"shapes/2d:regular", "shapes/2d:no_pad", "limits/"};
  const Run r = certify(o, "tosa-invalid");
  CHECK(r.exit_code == poolspec::exit_check_failed);
  // Every invalid problem is one run, in the invalid column, with its rule verdict.
  int64_t invalid = 0;
  for (const auto& run : r.report["runs"]) {
    const bool refused_by_rules = run["rule_verdict"] == "invalid";
    CHECK(refused_by_rules == (run["column"] == "invalid"));
    invalid += refused_by_rules;
  }
  CHECK(invalid > 0);
  CHECK(count_in(r, "tosa-checked@tosa", "invalid", "PASS") > 0);
  CHECK(r.report["summary"]["tosa-checked@tosa"]["FAIL"] == 0);
  for (const char* column : {"avg excl", "max"}) {  // the valid problems run, and pass
    CAPTURE(column);
    CHECK(count_in(r, "tosa-checked@tosa", column, "PASS") > 0);
  }
  const std::pair<const char*, const char*> caught[] = {{"tosa-accepts-inexact@tosa", "FAIL"},
                                                        {"tosa-pads-unchecked@tosa", "FAIL"},
                                                        {"tosa-crash-past-level@tosa", "CRASH"}};
  for (const std::pair<const char*, const char*>& mutant : caught) {
    const std::string row = mutant.first;  // not a structured binding: clang 14's CAPTURE
    CAPTURE(row);
    CHECK(count_in(r, row, "invalid", mutant.second) > 0);
    CHECK(count_in(r, row, "invalid", "PASS") > 0);  // the refusals it still makes
  }
  // A problem run where it must be refused has a bundle, which replays as that refusal asked
  // again (`--rules tosa --problem ...`): FAIL for the mutant, PASS for the checked backend.
  const nlohmann::json* failed = nullptr;
  for (const auto& run : r.report["runs"])
    if (run["backend"] == "tosa-accepts-inexact" && run["column"] == "invalid" &&
        run["status"] == "FAIL" && run.contains("repro_command"))
      failed = &run;
  REQUIRE(failed != nullptr);
  const std::string command = (*failed)["repro_command"];
  CHECK(command.find("--rules tosa --problem") != std::string::npos);
  CHECK((*failed)["reproduces"] == "reproduces in a fresh worker");
  CertifyOptions replay;
  replay.backends = {POOLSPEC_TOSA_BACKENDS};
  replay.rules = {"tosa"};
  replay.layouts = {"nchw"};
  replay.problem = (*failed)["problem"];
  replay.input = (*failed)["repro_dir"].get<std::string>() + "/input.npy";
  replay.out_dir = std::string(POOLSPEC_TEST_OUT) + "/tosa-invalid-replay";
  // Judged as a problem to compute (the replay blind to the refusal), the mutant's correct values
  // would pass and the checked backend's refusal would be UNSUPPORTED: exit 0.
  CHECK(poolspec::certify::certify_command(replay) == poolspec::exit_check_failed);
  // `claimed` names each backend's own rules (TOSA's here): the same refusal asked.
  replay.rules = {"claimed"};
  CHECK(poolspec::certify::certify_command(replay) == poolspec::exit_check_failed);
  // Without --rules (the run's default, claimed and openvino) nothing is refused: the mutant's
  // values are right, and the checked backend's refusal is UNSUPPORTED.
  replay.rules = CertifyOptions{}.rules;
  CHECK(poolspec::certify::certify_command(replay) == poolspec::exit_ok);
  // Two rule sets would judge the one problem twice over: refused.
  replay.rules = {"tosa", "openvino"};
  CHECK(poolspec::certify::certify_command(replay) == poolspec::exit_bad_input);
  // Under another rule set the same backends are not held to TOSA's refusals.
  o.rules = {"openvino"};
  const Run other = certify(o, "tosa-invalid-openvino");
  for (const auto& run : other.report["runs"]) CHECK(run["column"] != "invalid");
}

TEST_CASE("TOSA's floating-point freedoms: a zero of either sign, a subnormal flushed to zero") {
  // tosa-float-freedoms flips every zero's sign and flushes every subnormal result: right under
  // TOSA's rules, wrong under OpenVINO's and StableHLO's, which fix both (of OpenVINO's problems
  // the backend takes the average only: its max starts from lowest, TOSA's does not).
  CertifyOptions o;
  o.suite = "ci";  // smoke has neither value kind
  o.backends = {POOLSPEC_TOSA_BACKENDS};
  o.rules = {"claimed", "openvino", "stablehlo"};
  o.layouts = {"nchw"};
  o.shrink = false;
  o.filters = {"values/2d_k2s2:avg_exclude:f32:subnormal", "values/2d_k2s2:max:f32:subnormal",
               "values/2d_k2s2:max:f32:signed_zero"};
  const Run r = certify(o, "tosa-float-freedoms");
  CHECK(count(r, "tosa-float-freedoms@tosa", "PASS") == 3);
  CHECK(count(r, "tosa-float-freedoms@openvino", "FAIL") == 1);
  CHECK(count(r, "tosa-float-freedoms@stablehlo", "FAIL") == 3);
  // The same values, unflushed and with their signs, pass.
  CHECK(count(r, "tosa-checked@openvino", "PASS") == 1);
  CHECK(count(r, "tosa-checked@stablehlo", "PASS") == 3);
}

TEST_CASE("every mutant backend is caught with its status, and the run completes") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {POOLSPEC_MUTANT_BACKENDS};
  o.timeout_ms = 1500;
  o.layouts = {"nchw"};  // the mutants are the minimal backend: nchw only
  // The cases that reach every bug (the whole smoke suite takes too long under ASan).
  o.filters = {"shapes/1d:regular",
               "shapes/2d:asymmetric_pad",
               "shapes/1d:ic_tail",
               "regressions/int8_average_ties",
               "enum1d",
               "fields/bias",
               "fields/batch_3",
               "fields/round_toward_zero",
               "fields/zeros_ordered"};
  const Run r = certify(o, "mutants");
  CHECK(r.exit_code == poolspec::exit_check_failed);
  const std::pair<const char*, const char*> expected[] = {
      {"mutant-border-divisor@spec", "FAIL"},
      {"mutant-end-pads@spec", "FAIL"},
      {"mutant-ties@spec", "FAIL"},
      {"mutant-write-past@spec", "OUT-OF-BOUNDS"},
      {"mutant-crash@spec", "CRASH"},
      {"mutant-hang@spec", "HANG"},
      {"mutant-unwritten@spec", "UNWRITTEN"},
      {"mutant-loose-sums@stablehlo", "FAIL"},
      {"mutant-no-bias@spec", "FAIL"},
      {"mutant-previous-image@spec", "FAIL"},
      {"mutant-floor-for-trunc@spec", "FAIL"},
      {"mutant-zeros-equal@spec", "FAIL"}};
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
  // The loose sums are within what the backend declares: only StableHLO's own bound fails them,
  // and its bundles replay under StableHLO's rules.
  CHECK(count(r, "mutant-loose-sums@openvino", "PASS") > 0);
  CHECK(count(r, "mutant-loose-sums@openvino", "FAIL") == 0);
  // Each failure has a reproducer bundle with the one command that replays it.
  int bundles = 0;
  for (const auto& run : r.report["runs"])
    if (run.contains("repro_command")) {
      ++bundles;
      const std::string command = run["repro_command"];
      CHECK(command.find("--problem") != std::string::npos);
      // Only runs held to StableHLO's rules (their float averages) name them.
      if (run["rules"] != "stablehlo") CHECK(command.find("--rules") == std::string::npos);
      if (run["backend"] == "mutant-loose-sums" && run["rules"] == "stablehlo")
        CHECK(command.find("--rules stablehlo") != std::string::npos);
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
  CHECK(r.exit_code == poolspec::exit_ok);
  CHECK(count(r, "minimal@spec", "PASS") > 400);
  CHECK(count(r, "minimal@spec", "UNSUPPORTED") > 0);  // nhwc and f16 are refused, with reasons
}

TEST_CASE("every waiver names a finding that docs/findings.md records") {
  // A waiver hides failures of a shipped backend; the finding is its justification.
  const std::string findings = read_text(POOLSPEC_SOURCE_DIR "/docs/findings.md");
  const std::regex id(R"(\b(DNNL|XNN|OCV|ARMNN|TORCH|MLIR)-[0-9]+\b)");
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

TEST_CASE("a waiver covers its cell's FAIL runs; a scoped one only its status, layout, problems") {
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("poolspec-waivers-{}.txt", ::getpid()))
          .string();
  const auto read = [&](const std::string& text) {
    std::ofstream(path) << text;
    return poolspec::certify::read_waivers(path);
  };
  auto waivers = read(
      "# a comment\n"
      "lib openvino max | finding X: a FAIL of the cell\n"
      "lib openvino max int when OUT-OF-BOUNDS nhwc max:[iu]8:n*c3:* | finding Y: 3 channels\n");
  REQUIRE(waivers);
  REQUIRE(waivers->size() == 2);
  const auto run = [](std::string column, Verdict v, std::string layout, std::string problem) {
    JobResult r;
    r.backend = "lib";
    r.rules = "openvino";
    r.column = std::move(column);
    r.verdict = v;
    r.layout = std::move(layout);
    r.problem = std::move(problem);
    return r;
  };
  const std::string u8c3 = "max:u8:n1c3:h4w6:k2x2:s2x2:pb1x1:pe1x1:floor";
  CHECK(poolspec::certify::waiver_for(*waivers, run("max", Verdict::fail, "nchw",
                                                    "max:f32:n1c1:w4:k2:s1")) == &(*waivers)[0]);
  // The unscoped waiver covers FAIL only: a write out of bounds in its cell stays a failure.
  CHECK(poolspec::certify::waiver_for(*waivers, run("max", Verdict::out_of_bounds, "nchw", u8c3)) ==
        nullptr);
  // Nor does a scoped waiver cover its cell's FAIL runs.
  CHECK(poolspec::certify::waiver_for(*waivers, run("max int", Verdict::fail, "nhwc", u8c3)) ==
        nullptr);
  CHECK(poolspec::certify::waiver_for(
            *waivers, run("max int", Verdict::out_of_bounds, "nhwc", u8c3)) == &(*waivers)[1]);
  CHECK(poolspec::certify::waiver_for(
            *waivers, run("max int", Verdict::out_of_bounds, "nchw", u8c3)) == nullptr);
  CHECK(poolspec::certify::waiver_for(*waivers, run("max int", Verdict::crash, "nhwc", u8c3)) ==
        nullptr);
  CHECK(poolspec::certify::waiver_for(
            *waivers, run("max int", Verdict::out_of_bounds, "nhwc",
                          "max:u8:n1c4:h4w6:k2x2:s2x2:pb1x1:pe1x1:floor")) == nullptr);
  JobResult other_rules = run("max int", Verdict::out_of_bounds, "nhwc", u8c3);
  other_rules.rules = "onnx";
  CHECK(poolspec::certify::waiver_for(*waivers, other_rules) == nullptr);

  // Every column a run can have, and no other.
  CHECK(
      read("lib onnx avg incl ceil int | finding X\nlib onnx max ceil idx int | finding X\n"
           "lib onnx shape | finding X\nlib spec invalid | finding X\n"));

  // Words may be separated by tabs; a FAIL scope may cover a layout's whole cell.
  auto tabbed = read("lib\topenvino  max\twhen\tFAIL nhwc\t*\t| finding X\n");
  REQUIRE(tabbed);
  CHECK((*tabbed)[0].column == "max");
  CHECK((*tabbed)[0].layout == "nhwc");
  CHECK(poolspec::certify::waiver_for(*tabbed, run("max", Verdict::fail, "nhwc", u8c3)) != nullptr);

  // The glob: classes, ranges, negation, '?', and a pattern of many stars that does not match,
  // answered in pattern x text steps (fnmatch(3) would backtrack into every star).
  const auto covers = [&](const std::string& pattern, const std::string& problem) {
    auto one = read("lib openvino max when CRASH * " + pattern + " | finding Z\n");
    REQUIRE(one);
    return poolspec::certify::waiver_for(*one, run("max", Verdict::crash, "nchw", problem)) !=
           nullptr;
  };
  CHECK(covers("max:[iu]8:*", "max:i8:n1c1:w4:k2:s1"));
  CHECK_FALSE(covers("max:[iu]8:*", "max:f32:n1c1:w4:k2:s1"));
  CHECK(covers("max:[!f]?:n*", "max:u8:n1c1:w4:k2:s1"));
  CHECK_FALSE(covers("max:[^a-t]8:*", "max:i8:n1c1:w4:k2:s1"));
  CHECK(covers("max:?8:n1c[0-9]:*:s1", "max:u8:n1c3:w4:k2:s1"));
  CHECK(covers("max:[]u]8:*", "max:u8:n1c1:w4:k2:s1"));   // a ']' first in a set is a member
  CHECK_FALSE(covers("max:u8", "max:u8:n1c1:w4:k2:s1"));  // the whole string, not a prefix
  CHECK_FALSE(covers("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", std::string(400, 'a')));

  // A scope that is not STATUS LAYOUT PATTERN is refused, with its line.
  for (const char* bad :
       {"lib openvino max when PASS nhwc * | finding X\n",
        "lib openvino max when LOAD-ERROR nhwc * | finding X\n",
        "lib openvino max when OUT-OF-BOUNDS nhwc | finding X\n",
        "lib openvino max when OUT-OF-BOUNDS ncdhw * | finding X\n",
        "lib openvino max when CRASH nhwc max:* extra | finding X\n",
        "lib openvino max when CRASH nhwc max:*\n",
        "lib openvino max when CRASH nhwc max:[iu8:*| finding X\n",
        "lib openvino max when OUT-OF-BOUNDS nhwc ** | finding X\n",
        "lib openvino max WHEN CRASH nhwc max:* | finding X\n",
        "lib openvino when CRASH nhwc max:* | finding X\n",
        // a rule set or a column no run has: a waiver that would never apply
        "lib openvno max | finding X\n", "lib openvino maxx | finding X\n",
        "lib openvino avg | finding X\n", "lib openvino avg excl idx | finding X\n",
        "lib openvino max int ceil | finding X\n"}) {
    INFO(bad);
    const auto refused = read(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find(path + ":1") != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("the in-tree backends certify clean on the smoke suite") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {"reference", "optimized", "xs3"};
  o.filters = {"shapes/1d", "shapes/2d:regular", "shapes/global", "values", "regressions"};
  const Run r = certify(o, "in-tree");
  CHECK(r.exit_code == poolspec::exit_ok);
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

TEST_CASE("the fields part asks every field no translated intent sets") {
  // Each problem string of add_fields is a valid problem (make_suite refuses the suite if not).
  for (const char* suite : {"smoke", "ci"}) {
    CAPTURE(suite);
    const auto cases = poolspec::certify::make_suite(suite);
    REQUIRE(cases.ok());
    std::set<std::string> fields;
    for (const poolspec::certify::Case& c : *cases)
      if (c.part == "fields") fields.insert(c.id);
    CHECK(fields.size() == (std::string(suite) == "ci" ? 25u : 24u));
    CHECK(fields.count("fields/tosa_zero_points") == 1);
    CHECK(fields.count("fields/openvino_index_axis") == 1);
    CHECK(fields.count("fields/tosa_division_47x47") == 1);
    CHECK(fields.count("fields/zeros_ordered") == 1);
  }
}

TEST_CASE("a backend that computed nothing is not certified, whatever the others computed") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {"reference", POOLSPEC_MINIMAL_BACKEND};
  o.layouts = {"nchw"};
  o.filters = {"fields/f64"};  // the minimal backend takes f32 and i8 only: it refuses the case
  const Run refused = certify(o, "one-backend-idle");
  CHECK(count(refused, "reference@spec", "PASS") > 0);
  CHECK(count(refused, "minimal@spec", "PASS") == 0);
  CHECK(refused.exit_code == poolspec::exit_check_failed);
  o.filters = {"fields/bias"};  // both compute it
  CHECK(certify(o, "both-backends-compute").exit_code == poolspec::exit_ok);
  // A backend asked nothing at all (xs3's rules have no case here) has no run, and still counts:
  // report.json lists it, and the run fails.
  o.backends = {"reference", "xs3"};
  const Run unasked = certify(o, "one-backend-unasked");
  CHECK(unasked.exit_code == poolspec::exit_check_failed);
  bool listed = false;
  for (const auto& b : unasked.report["backends"]) listed = listed || b["name"] == "xs3";
  CHECK(listed);
  // A spec backend under --rules spec is held to the spec.
  o.backends = {"reference"};
  o.rules = {"spec"};
  CHECK(count(certify(o, "spec-under-spec"), "reference@spec", "PASS") > 0);
  // A replay that every backend refuses replayed nothing: exit 1; one backend computing it is 0.
  CertifyOptions replay;
  replay.backends = {POOLSPEC_MINIMAL_BACKEND};
  replay.layouts = {"nchw"};
  replay.problem = "avg:f64:n1c1:w4:k2:s2:pb0:pe0:exclude:floor";
  replay.out_dir = std::string(POOLSPEC_TEST_OUT) + "/replay-refused";
  CHECK(poolspec::certify::certify_command(replay) == poolspec::exit_check_failed);
  replay.backends = {POOLSPEC_MINIMAL_BACKEND, "reference"};
  CHECK(poolspec::certify::certify_command(replay) == poolspec::exit_ok);
}

TEST_CASE("merge joins the shards of one run into its reports, and refuses what is not that") {
  CertifyOptions o;
  o.suite = "smoke";
  // Two of the mutant library's backends: wrong values and writes past the output to join,
  // without a hang's timeouts in each of the five certifications.
  o.backends = {"reference", POOLSPEC_MUTANT_BACKENDS, "mutant-border-divisor",
                "mutant-write-past"};
  o.layouts = {"nchw"};
  o.timeout_ms = 1000;
  o.filters = {"shapes/1d:regular", "values"};
  o.shrink = false;  // the mutants' many failures, each shrunk, are not what merging joins
  const Run whole = certify(o, "merge-whole");
  std::set<std::string> rows;
  for (const auto& [row, statuses] : whole.report["summary"].items()) rows.insert(row);
  CHECK(rows == std::set<std::string>{"reference@spec", "mutant-border-divisor@spec",
                                      "mutant-write-past@spec"});
  CHECK(count(whole, "mutant-border-divisor@spec", "FAIL") > 0);
  CHECK(count(whole, "mutant-write-past@spec", "OUT-OF-BOUNDS") > 0);
  std::vector<std::string> dirs;
  for (int i = 0; i < 3; ++i) {
    o.shard = fmt::format("{}/3", i);
    (void)certify(o, fmt::format("merge-shard-{}", i));
    dirs.push_back(std::string(POOLSPEC_TEST_OUT) + fmt::format("/merge-shard-{}", i));
  }
  const std::string out = std::string(POOLSPEC_TEST_OUT) + "/merged";
  CHECK(poolspec::certify::merge_command(dirs, out, false) ==
        poolspec::exit_check_failed);  // the mutants fail
  const auto merged = nlohmann::json::parse(read_text(out + "/report.json"));
  CHECK(merged["summary"] == whole.report["summary"]);
  CHECK(merged["runs"].size() == whole.report["runs"].size());
  CHECK(merged["cases"] == whole.report["cases"]);
  CHECK(read_text(out + "/matrix.txt") ==
        read_text(std::string(POOLSPEC_TEST_OUT) + "/merge-whole/matrix.txt"));
  // A shard missing, given twice, or from another run.
  CHECK(poolspec::certify::merge_command({dirs[0], dirs[1]}, out, false) ==
        poolspec::exit_bad_input);
  CHECK(poolspec::certify::merge_command({dirs[0], dirs[1], dirs[1]}, out, false) ==
        poolspec::exit_bad_input);
  o.shard = "2/3";
  o.layouts = {"nchw", "nhwc"};
  (void)certify(o, "merge-other");
  CHECK(poolspec::certify::merge_command(
            {dirs[0], dirs[1], std::string(POOLSPEC_TEST_OUT) + "/merge-other"}, out, false) ==
        poolspec::exit_bad_input);
  CHECK(poolspec::certify::merge_command({dirs[0], dirs[1], "/nonexistent"}, out, false) ==
        poolspec::exit_bad_input);
  // A shard whose runs were cut short, or repeated, is not the shard: refused.
  const std::string report_path = dirs[1] + "/report.json";
  const std::string original = read_text(report_path);
  auto edited = nlohmann::json::parse(original);
  edited["runs"] = nlohmann::json::array();
  std::ofstream(report_path) << edited.dump();
  CHECK(poolspec::certify::merge_command(dirs, out, false) == poolspec::exit_bad_input);
  edited = nlohmann::json::parse(original);
  edited["runs"].push_back(edited["runs"][0]);
  std::ofstream(report_path) << edited.dump();
  CHECK(poolspec::certify::merge_command(dirs, out, false) == poolspec::exit_bad_input);
  std::ofstream(report_path) << original;
  CHECK(poolspec::certify::merge_command(dirs, out, false) == poolspec::exit_check_failed);
  // A shard a signal stopped before its end holds only some of its cases' runs: refused.
  auto stopped = nlohmann::json::parse(read_text(dirs[2] + "/report.json"));
  stopped["stopped_by_signal"] = 15;
  std::ofstream(dirs[2] + "/report.json") << stopped.dump();
  CHECK(poolspec::certify::merge_command(dirs, out, false) == poolspec::exit_bad_input);
}

TEST_CASE("bad certify options are refused with exit code 2") {
  CertifyOptions o;
  o.shard = "2/2";
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {"no-such-backend"};
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {POOLSPEC_MUTANT_BACKENDS, "mutant-none-such"};  // a name no backend of it has
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {"/nonexistent/libnothing.so"};
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  o = CertifyOptions{};
  o.suite = "huge";
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  o = CertifyOptions{};
  o.backends = {"reference"};
  o.filters = {"no-case-has-this-in-its-id"};
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  for (int64_t CertifyOptions::*limit :
       {&CertifyOptions::timeout_ms, &CertifyOptions::load_timeout_ms,
        &CertifyOptions::memory_limit_mb, &CertifyOptions::cpu_limit_s}) {
    o = CertifyOptions{};
    o.*limit = 0;
    CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
  }
  o = CertifyOptions{};
  o.input = "x.npy";  // without --problem
  CHECK(poolspec::certify::certify_command(o) == poolspec::exit_bad_input);
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
// benchmark: each must be a valid f32 problem of plain geometry (what a suite case can say) under
// a unique name, and the full suite must hold each at its real size, as it is (ci shrinks the
// channels and 3-D extents; ci's cases must still differ).
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
    CHECK(p->dtype == poolspec::DType::f32);
    CHECK((p->op == poolspec::Op::max || p->divisor == poolspec::Divisor::exclude ||
           p->divisor == poolspec::Divisor::include_full));
    benchmarked += layer.benchmarked ? 1 : 0;
    const std::string id = fmt::format("topologies/{}", layer.name);
    const auto c =
        std::find_if(full->begin(), full->end(), [&](const auto& x) { return x.id == id; });
    REQUIRE(c != full->end());
    // Under the spec's rules the case holds the layer's geometry: its op, channels, and each
    // axis's extent, kernel, stride, dilation and pads.
    bool found = false;
    for (const auto& r : poolspec::certify::problems_under(*c, "spec"))
      found = found || (r.problem.op == p->op && r.problem.channels == p->channels &&
                        r.problem.axes == p->axes &&
                        (p->op == poolspec::Op::max || r.problem.divisor == p->divisor));
    CHECK(found);
  }
  CHECK(names.size() >= 10);
  CHECK(benchmarked > 0);
  // ci shrinks them, and its cases still differ.
  const auto ci = poolspec::certify::make_suite("ci");
  REQUIRE(ci.ok());
  std::set<std::string> ci_problems;
  int topologies = 0;
  for (const auto& c : *ci)
    if (c.part == "topologies") {
      ++topologies;
      const auto problems = poolspec::certify::problems_under(c, "spec");
      REQUIRE(!problems.empty());
      CHECK(ci_problems.insert(poolspec::format_problem(problems.front().problem)).second);
    }
  CHECK(topologies == static_cast<int>(names.size()));
}

namespace {

const poolspec::certify::Case& suite_case(const std::vector<poolspec::certify::Case>& suite,
                                          const std::string& id) {
  const auto c =
      std::find_if(suite.begin(), suite.end(), [&](const auto& x) { return x.id == id; });
  REQUIRE(c != suite.end());
  return *c;
}

}  // namespace

// Regression cases do what their names say.
TEST_CASE(
    "the ceil_drop_last_window case drops a window under PyTorch's rules and keeps it under "
    "OpenVINO's") {
  const auto ci = poolspec::certify::make_suite("ci");
  REQUIRE(ci.ok());
  const auto& c = suite_case(*ci, "regressions/ceil_drop_last_window");
  std::set<int64_t> pytorch, openvino;
  for (const auto& r : poolspec::certify::problems_under(c, "pytorch"))
    pytorch.insert(poolspec::validated_shape(r.problem).value().output_shape.back());
  for (const auto& r : poolspec::certify::problems_under(c, "openvino"))
    if (r.problem.rounding == poolspec::Rounding::ceil)
      openvino.insert(poolspec::validated_shape(r.problem).value().output_shape.back());
  CHECK(pytorch == std::set<int64_t>{2});
  CHECK(openvino == std::set<int64_t>{3});
}

// The sweeps' value kinds put what they name where kernels specialise: NaN inside a vector's
// body (a channel past the first 4 of a pixel, a column past the first 4 of a row), windows of
// nothing but NaN, sums that only grow.
TEST_CASE("the sweeps' values: NaN in vector bodies, all-NaN windows, non-negative sums") {
  const auto ci = poolspec::certify::make_suite("ci");
  REQUIRE(ci.ok());
  int sweeps = 0, body_cases = 0, all_nan_cases = 0;
  for (const auto& c : *ci) sweeps += c.part == "sweeps" ? 1 : 0;
  CHECK(sweeps > 200);
  using poolspec::certify::Values;
  for (const auto& c : *ci) {
    if (c.part != "sweeps" || c.intent.shape.size() != 4) continue;
    const int64_t channels = c.intent.shape[1];
    CAPTURE(c.id);
    if (c.values == Values::nan_sprinkled && channels >= 8) {
      // NaN in a channel past the first 4 of a pixel, and in a column past the first 4 of a row.
      const auto problems = poolspec::certify::problems_under(c, "spec");
      REQUIRE(!problems.empty());
      const poolspec::Tensor x = poolspec::certify::make_input(c, problems.front().problem);
      const int64_t plane = x.shape[2] * x.shape[3], w = x.shape[3];
      bool body_channel = false, body_column = false;
      for (size_t i = 0; i < x.values.size(); ++i)
        if (std::isnan(x.values[i])) {
          body_channel = body_channel || (static_cast<int64_t>(i) / plane) % channels >= 4;
          body_column = body_column || static_cast<int64_t>(i) % w >= 4;
        }
      CHECK(body_channel);
      CHECK(body_column);
      ++body_cases;
    }
    if (c.values == Values::nan_rows && c.intent.op == poolspec::Op::max) {
      // Under PyTorch's rules (NaN propagates) the first output row's windows -- input rows -1,
      // 0 and 1, of which 0 and 1 are NaN -- give NaN, and so does every column of that row.
      for (const auto& r : poolspec::certify::problems_under(c, "pytorch")) {
        const poolspec::Tensor x = poolspec::certify::make_input(c, r.problem);
        const auto y = poolspec::evaluate(r.problem, x);
        REQUIRE(y.ok());
        const int64_t ow = y->values.shape[3];
        for (int64_t j = 0; j < ow; ++j)
          CHECK(std::isnan(y->values.values[static_cast<size_t>(j)]));
        ++all_nan_cases;
      }
    }
    if (c.values == Values::non_negative) {
      const auto problems = poolspec::certify::problems_under(c, "spec");
      if (problems.empty()) continue;
      for (double v : poolspec::certify::make_input(c, problems.front().problem).values)
        REQUIRE(v >= 0);
    }
  }
  CHECK(body_cases >= 10);
  CHECK(all_nan_cases > 0);
}

// Each blind-spot backend (backends/blind_spot_backends.c) has a bug only the sweeps reach: the
// other parts of ci pass it (checked in the unsanitized build), the sweeps fail it. blind-rank3's
// bug is 3-D: smoke's 3-D shapes fail it (smoke had none; ci's 3-D shapes catch it too).
// Under the sanitizers three of them: what is checked there is the runner on the path of
// failures, which is the same for each, and the sweeps' runs take a minute a backend.
TEST_CASE("the sweeps catch each blind-spot backend, which the rest of the suite passes") {
#ifdef POOLSPEC_SANITIZED
  const std::vector<std::string> blind = {"blind-nan-body", "blind-half-vector",
                                          "blind-byte-vectors"};
#else
  const std::vector<std::string> blind = {
      "blind-nan-body",     "blind-all-nan",      "blind-channels-48",
      "blind-wide-average", "blind-large-window", "blind-override",
      "blind-dilation3",    "blind-half-vector",  "blind-byte-vectors"};
#endif
  CertifyOptions o;
  o.suite = "ci";
  o.backends = {POOLSPEC_BLIND_SPOT_BACKENDS};
  o.backends.insert(o.backends.end(), blind.begin(), blind.end());  // those alone of the library
  o.layouts = {"nchw"};                                             // the minimal backend's layout
  o.rules = {"claimed"};  // "spec": every framework's problem
  o.shrink = false;
  o.filters = {"sweeps/"};
  const Run sweeps = certify(o, "blind-sweeps");
  CHECK(sweeps.exit_code == poolspec::exit_check_failed);
  CHECK(sweeps.report["summary"].size() == blind.size());  // the library's other backends not run
  for (const std::string& name : blind) {
    CAPTURE(name);
    CHECK(count(sweeps, name + "@spec", "FAIL") > 0);
  }
#ifndef POOLSPEC_SANITIZED  // the rest of ci under every framework's rules: minutes under ASan
  o.filters = {"shapes/", "topologies/", "enum1d/", "enum2d/", "values/", "seeds/", "regressions/"};
  const Run rest = certify(o, "blind-rest");
  for (const std::string& name : blind) {
    const std::string row = name + "@spec";
    CAPTURE(row);
    CHECK(count(rest, row, "FAIL") == 0);
    CHECK(count(rest, row, "PASS") > 0);
  }
#endif
  o.suite = "smoke";
  o.filters = {"shapes/3d"};
  o.backends = {POOLSPEC_BLIND_SPOT_BACKENDS, "blind-rank3"};
  const Run smoke_3d = certify(o, "blind-smoke-3d");
  CHECK(smoke_3d.report["summary"].size() == 1);
  CHECK(count(smoke_3d, "blind-rank3@spec", "FAIL") > 0);
}

// A backend's own shape rule (output_shape, backend.h version 2) is certified apart from its
// runs: blind-shape runs right and answers one output for a window longer than the padded input.
// Its runs all pass; its shape answers fail, and only on questions whose answer is a refusal.
TEST_CASE("the shape questions catch a shape rule that never refuses, which every run passes") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {POOLSPEC_BLIND_SPOT_BACKENDS};
  o.layouts = {"nchw"};
  o.rules = {"claimed", "openvino"};
  o.shrink = false;
  const Run r = certify(o, "blind-shape");
  int64_t runs_passed = 0, shape_passed = 0, shape_failed = 0;
  for (const auto& run : r.report["runs"]) {
    if (run["backend"] != "blind-shape") continue;
    const std::string status = run["status"], detail = run.value("detail", "");
    CAPTURE(run["problem"].get<std::string>());
    CAPTURE(detail);
    if (run["column"] != "shape") {
      CHECK((status == "PASS" || status == "UNSUPPORTED"));
      runs_passed += status == "PASS";
      continue;
    }
    shape_passed += status == "PASS";
    if (status != "FAIL") continue;
    ++shape_failed;
    CHECK(detail.find("the rules give a refusal") != std::string::npos);
    CHECK(detail.find("a window longer than the padded input") != std::string::npos);
  }
  CHECK(runs_passed > 0);
  CHECK(shape_passed > 0);
  CHECK(shape_failed > 0);
  CHECK(r.exit_code == poolspec::exit_check_failed);
}

// The shrinker keeps each step a problem of the rules the backend is held to: a spec backend runs
// every framework's problem, each labelled, and each shrinks within its framework's rules -- under
// PyTorch's, the pads stay symmetric and at most half the kernel, which a shrink of the problem
// itself (one pad at a time) leaves.
TEST_CASE("a minimal counterexample stays a problem of the rules the backend is held to") {
  CertifyOptions o;
  o.suite = "smoke";
  o.backends = {POOLSPEC_MUTANT_BACKENDS};
  o.layouts = {"nchw"};
  o.timeout_ms = 1500;
  o.filters = {"shapes/2d:asymmetric_pad", "shapes/2d:regular"};
  const Run r = certify(o, "minimal-within");
  int pytorch = 0;
  for (const auto& run : r.report["runs"]) {
    if (!run.contains("minimal_problem")) continue;
    const std::string label = run["label"].get<std::string>();
    const auto p = poolspec::parse_problem(run["minimal_problem"].get<std::string>());
    REQUIRE(p.ok());
    CAPTURE(label);
    CAPTURE(run["minimal_problem"].get<std::string>());
    CHECK(run.value("minimal_within", "").find(label) != std::string::npos);
    const bool shrunk = run["minimal_problem"] != run["problem"];
    for (const poolspec::Axis& a : p->axes) {
      if (label == "pytorch") {
        CHECK(a.pad_begin == a.pad_end);
        CHECK(2 * a.pad_begin <= a.kernel);
      }
    }
    pytorch += label == "pytorch" && shrunk ? 1 : 0;
  }
  CHECK(pytorch > 0);
}

TEST_CASE("the matrix fits 100 columns: long library paths, every kind of problem, every status") {
  std::vector<poolspec::certify::JobResult> results;
  const std::string long_path = "/opt/vendor/accelerator/lib/x86_64-linux-gnu/libvendor_pooling.so";
  const char* columns[] = {"avg excl",     "avg excl ceil", "avg excl ceil int", "avg excl int",
                           "avg incl",     "avg incl ceil", "avg incl ceil int", "avg incl int",
                           "max",          "max ceil",      "max ceil idx",      "max ceil idx int",
                           "max ceil int", "max idx",       "max idx int",       "max int",
                           "shape"};
  for (const std::string& backend : {long_path, std::string("reference")})
    for (const char* column : columns)
      for (int k = 0; k < 12345; k += 997) {
        poolspec::certify::JobResult r;
        r.backend = backend;
        r.rules = "openvino";
        r.column = column;
        r.verdict =
            k % 3 == 0 ? poolspec::certify::Verdict::fail : poolspec::certify::Verdict::pass;
        results.push_back(r);
      }
  const std::string matrix = poolspec::certify::matrix_text(results);
  size_t begin = 0, widest = 0;
  while (begin < matrix.size()) {
    const size_t end = std::min(matrix.find('\n', begin), matrix.size());
    widest = std::max(widest, end - begin);
    begin = end + 1;
  }
  CHECK(widest <= 100);
  CHECK(matrix.find("...") != std::string::npos);  // the long path keeps its end
  CHECK(matrix.find("libvendor_pooling.so@openvino") != std::string::npos);
  for (const char* column : columns) CHECK(matrix.find(column) != std::string::npos);
}
