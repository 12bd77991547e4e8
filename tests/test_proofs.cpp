// Every refuted proof's counterexample becomes a regression case: the problem Z3 produced is
// checked here against the spec itself (not against Z3), so the phenomenon the refutation
// claims is shown on a concrete problem. And the pinned counterexamples below keep those cases
// even if a later Z3 finds different ones.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "poolspec/formulas.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/proofs/proof.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/tosa_division.hpp"

namespace poolspec {
namespace {

int64_t extent(const Problem& p, Rounding r) {
  return formulas::output_extent(formulas::terms_of<int64_t>(p.axes[0]), r);
}

// What each refuted claim says happens, checked on a concrete one-axis problem.
void check_phenomenon(const std::string& name, const Problem& p) {
  const Axis& a = p.axes[0];
  const auto terms = formulas::terms_of<int64_t>(a);
  if (name == "mutant/stride-zero/int") {
    CHECK(validate(p).error().message == "strides[0]=0: strides must be >= 1");
    return;
  }
  REQUIRE_MESSAGE(infer_shape(p).ok(), infer_shape(p).error().message);
  if (name.rfind("empty/openvino-exclude/", 0) == 0) {
    CHECK((a.kernel > a.pad_begin && a.kernel > a.pad_end));  // OpenVINO's rule holds ...
    CHECK(find_empty_window(p).has_value());                  // ... and still a window is empty
  } else if (name == "empty/floor/dilated-narrow-input/int") {
    const int64_t o = extent(p, Rounding::floor);
    const auto w = find_empty_window(p);
    REQUIRE(w.has_value());
    CHECK(formulas::in_bounds_taps<int64_t>(terms, 0) > 0);  // the ends are not empty,
    CHECK(formulas::in_bounds_taps<int64_t>(terms, o - 1) > 0);
    CHECK(a.extent < a.dilation);  // the input is narrower than the dilation
  } else if (name == "empty/include_clip/ceil/int") {
    CHECK(p.divisor == Divisor::include_clip);
    CHECK(find_empty_window(p).has_value());
  } else if (name == "mutant/ceil-equals-ceil_torch/int") {
    CHECK(extent(p, Rounding::ceil) == extent(p, Rounding::ceil_torch) + 1);
  } else if (name == "auto_pad/same_upper/ceil/int") {
    CHECK(extent(p, Rounding::ceil) == ceil_div(a.extent, a.stride) + 1);
    CHECK(a.kernel < a.stride);
  } else if (name == "mutant/openvino-document-formula/int") {
    CHECK(a.extent + a.pad_begin + a.pad_end - a.kernel / a.stride + 1 !=
          extent(p, Rounding::floor));
  } else {
    FAIL("no phenomenon check for refuted proof " << name);
  }
}

TEST_CASE("refuted claims: each counterexample shows its phenomenon on the spec") {
  int checked = 0;
  for (const proofs::Proof& proof : proofs::all_proofs()) {
    if (proof.expect != proofs::Expect::refuted || !proof.problem_of) continue;
    CAPTURE(proof.name);
    const proofs::ProofResult r = proofs::run_proof(proof, 60000, "");
    REQUIRE(r.got == "sat");
    REQUIRE(!r.problem.empty());
    MESSAGE(proof.name << ": " << r.problem);
    check_phenomenon(proof.name, parse_problem(r.problem).value());
    ++checked;
  }
  CHECK(checked == 8);
}

TEST_CASE("pinned counterexamples (found by Z3 4.8.12 in the proofs above)") {
  const std::pair<const char*, const char*> pinned[] = {
      {"empty/openvino-exclude/ceil/int", "avg:f32:n1c1:w1:k3:s3:pb2:pe1:exclude:ceil:empty=zero"},
      {"empty/openvino-exclude/floor/dilated/int",
       "avg:f32:n1c1:w1:k10:s2:dl2:pb9:pe9:exclude:floor:empty=zero"},
      {"empty/floor/dilated-narrow-input/int",
       "avg:f32:n1c1:w1:k5:s3:dl2:pb6:pe9:exclude:floor:empty=zero"},
      {"empty/include_clip/ceil/int", "avg:f32:n1c1:w1:k1:s7:pb0:pe5:include_clip:ceil:empty=zero"},
      {"mutant/ceil-equals-ceil_torch/int",
       "avg:f32:n1c1:w1:k13:s14:pb13:pe12:exclude:ceil:empty=zero"},
      {"mutant/openvino-document-formula/int",
       "avg:f32:n1c1:w1:k1:s2:pb0:pe0:exclude:floor:empty=zero"},
      {"mutant/stride-zero/int", "avg:f32:n1c1:w1:k1:s0:pb0:pe0:exclude:floor:empty=zero"},
      // docs/semantics.md 2.3: d=6, k=1, s=4, same_upper pads (0, 0), CEIL gives 3 = ceil(6/4) + 1.
      {"auto_pad/same_upper/ceil/int", "avg:f32:n1c1:w6:k1:s4:pb0:pe0:exclude:ceil:empty=zero"},
  };
  for (const auto& entry : pinned) {
    CAPTURE(entry.first);
    check_phenomenon(entry.first, parse_problem(entry.second).value());
  }
}

// acc / count rounded half away from zero, from the definition: |acc| / count rounded half up,
// with acc's sign.
int64_t half_away(int64_t acc, int64_t count) {
  const int64_t magnitude = (2 * (acc < 0 ? -acc : acc) + count) / (2 * count);
  return acc < 0 ? -magnitude : magnitude;
}

TEST_CASE("TOSA's int8 division: exact for small windows, and the proofs' first difference") {
  // Every sum of every count up to 300 (a 17x17 window), by enumeration.
  int64_t differing = 0;
  for (int64_t count = 1; count <= 300; ++count)
    for (int64_t acc = -255 * count; acc <= 255 * count; ++acc)
      differing += tosa::divide(acc, count) != half_away(acc, count);
  CHECK(differing == 0);
  CHECK(tosa::scale_bits(1) == 0);
  CHECK(tosa::scale_bits(2) == 1);
  CHECK(tosa::scale_bits(3) == 2);
  CHECK(tosa::scale_bits(2109769) == 22);
  // The counts with room (510 count (2^22 - rho) >= 2^52, rho = ((2^30 + 1) 2^22) % count; see
  // proofs/src/tosa_proofs.cpp) below the first difference, enumerated here: the proof
  // tosa/division/k=22/counts-with-room/bv64 lists these twelve.
  std::vector<int64_t> with_room;
  for (int64_t count = (int64_t{1} << 21) + 1; count < 2109769; ++count)
    if (510 * count * ((int64_t{1} << 22) - (((int64_t{1} << 30) + 1) << 22) % count) >= int64_t{1}
                                                                                             << 52)
      with_room.push_back(count);
  CHECK(with_room.size() == 12);
  CHECK(with_room.front() == 2106963);
  CHECK(with_room.back() == 2109499);
  // The refuted proofs' counterexamples, checked on the int64 arithmetic.
  int found = 0;
  for (const proofs::Proof& proof : proofs::all_proofs()) {
    if (proof.name.rfind("tosa/division/", 0) != 0 || proof.expect != proofs::Expect::refuted)
      continue;
    CAPTURE(proof.name);
    const proofs::ProofResult r = proofs::run_proof(proof, 60000, "");
    REQUIRE(r.got == "sat");
    ++found;
    const int64_t count = r.counterexample.at("count");
    if (proof.name.find("mutant-list") != std::string::npos) {  // the count left out of the list
      CHECK(count == with_room.back());
      continue;
    }
    const int64_t acc = r.counterexample.at("acc");
    MESSAGE(proof.name << ": count " << count << ", acc " << acc);
    CHECK(std::abs(acc) <= 255 * count);
    if (proof.name.find("mutant") == std::string::npos) {
      CHECK(count == 2109769);
      CHECK(tosa::divide(acc, count) != half_away(acc, count));
    } else {  // the multiplier without + 1
      const int64_t mutant = floor_div(
          acc * floor_div(int64_t{1} << 32, count) + (int64_t{1} << 31), int64_t{1} << 32);
      CHECK(mutant != half_away(acc, count));
      CHECK(tosa::divide(acc, count) == half_away(acc, count));
    }
  }
  CHECK(found == 3);
  // The worked example (spec/ERRATA.md T1): 2,109,769 taps summing to -536,936,210, a mean of
  // -254.4999997...: TOSA gives -255, the exact mean rounded half away from zero -254.
  CHECK(tosa::divide(-536936210, 2109769) == -255);
  CHECK(half_away(-536936210, 2109769) == -254);
  CHECK(tosa::divide(536936210, 2109769) == 255);
  CHECK(half_away(536936210, 2109769) == 254);
}

TEST_CASE("a proof's own checks can fail: a claim made false is refuted") {
  // The runner reports sat for a false claim and marks a proved-expected run as failed.
  proofs::Proof wrong{"test/false-claim",
                      "d + 1 == d",
                      "integers",
                      "",
                      "",
                      proofs::Expect::proved,
                      "",
                      proofs::Arithmetic::integer,
                      [](proofs::Query& q) {
                        const proofs::Z3Int d = q.variable("d");
                        q.claim(d + q.builder().literal(1) == d);
                      },
                      nullptr};
  const proofs::ProofResult r = proofs::run_proof(wrong, 10000, "");
  CHECK(r.got == "sat");
  CHECK(!r.passed);
}

}  // namespace
}  // namespace poolspec
