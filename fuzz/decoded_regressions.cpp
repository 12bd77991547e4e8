// The committed regression inputs of the targets that decode a problem with consume_problem
// (fuzz_input.hpp) still decode to the problem each was found as, listed in
// fuzz/regressions/decoded.txt ("<target>/<file> <problem string>" per line). A change to the
// decoder that moved them would leave the regression folders replaying other, untested problems.
// Usage: decoded_regressions fuzz/regressions     Exit 0, 1 on a moved input, 2 on a bad list.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "poolspec/problem_string.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s REGRESSIONS_FOLDER\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  std::ifstream list(folder + "/decoded.txt");
  if (!list) {
    std::fprintf(stderr, "%s/decoded.txt: cannot be read\n", folder.c_str());
    return 2;
  }
  int checked = 0, moved = 0;
  for (std::string line; std::getline(list, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string file, expected;
    fields >> file >> expected;
    std::ifstream input(folder + "/" + file, std::ios::binary);
    if (!input || expected.empty()) {
      std::fprintf(stderr, "decoded.txt: '%s': no such input, or no problem after it\n",
                   line.c_str());
      return 2;
    }
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(input), {}};
    FuzzedDataProvider in(bytes.data(), bytes.size());
    const std::string got = poolspec::format_problem(
        poolspec::fuzz::consume_problem(in, poolspec::fuzz::ProblemLimits{}));
    ++checked;
    if (got != expected) {
      ++moved;
      std::fprintf(stderr, "%s decodes to\n  %s\nnot to the problem it was found as\n  %s\n",
                   file.c_str(), got.c_str(), expected.c_str());
    }
  }
  if (checked == 0) {
    std::fprintf(stderr, "%s/decoded.txt lists no input\n", folder.c_str());
    return 2;
  }
  std::printf("%d regression inputs decode as they were found, %d moved\n", checked - moved, moved);
  return moved == 0 ? 0 : 1;
}
