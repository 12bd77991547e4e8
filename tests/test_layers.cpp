// The folders are layers (label layers; docs/design.md §1): a source file may include poolspec's
// headers only from its own folder and the folders below it. The build enforces it too (each
// folder's target sees only the include folders of what it links); this test says which include
// crossed a layer, and keeps the rule written in one place.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path root = POOLSPEC_SOURCE_DIR;

// Each layer and what it may include, itself included. Folders above these (cli/, fuzz/, tests/)
// may include anything.
const std::map<std::string, std::set<std::string>> allowed = {
    {"spec", {"spec"}},
    {"check", {"spec", "check"}},
    {"reference", {"spec", "check", "reference"}},
    {"xs3", {"spec", "check", "xs3"}},
    {"optimized", {"spec", "check", "reference", "optimized"}},
    {"frontends", {"spec", "xs3", "frontends"}},
    {"proofs", {"spec", "xs3", "proofs"}},
    {"certify", {"spec", "check", "reference", "xs3", "frontends", "optimized", "certify"}},
};

// The folder whose include/ holds each header, by its include name ("poolspec/shape.hpp").
std::map<std::string, std::string> header_owners() {
  std::map<std::string, std::string> owners;
  for (const auto& [layer, _] : allowed)
    for (const char* folder : {"include", "testing"}) {  // testing/: a layer's test-only headers
      const fs::path include = root / layer / folder;
      if (!fs::is_directory(include)) continue;
      for (const auto& entry : fs::recursive_directory_iterator(include))
        if (entry.is_regular_file())
          owners[fs::relative(entry.path(), include).generic_string()] = layer;
    }
  return owners;
}

// The includes of poolspec headers in `text` that `layer` may not make, as "header (owner)".
std::vector<std::string> crossings(const std::string& layer, const std::string& text,
                                   const std::map<std::string, std::string>& owners) {
  static const std::regex include(R"(#\s*include\s*"(poolspec/[^"]+)\")");
  std::vector<std::string> found;
  for (auto m = std::sregex_iterator(text.begin(), text.end(), include);
       m != std::sregex_iterator(); ++m) {
    const auto owner = owners.find((*m)[1].str());
    if (owner != owners.end() && !allowed.at(layer).contains(owner->second))
      found.push_back((*m)[1].str() + " (" + owner->second + "/)");
  }
  return found;
}

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("no include crosses a layer the wrong way") {
  const auto owners = header_owners();
  REQUIRE(owners.size() > 20);
  int files = 0;
  for (const auto& [layer, _] : allowed) {
    if (!fs::is_directory(root / layer)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / layer)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      ++files;
      INFO(fs::relative(entry.path(), root).string());
      CHECK(crossings(layer, read_text(entry.path()), owners).empty());
    }
  }
  CHECK(files > 50);
}

TEST_CASE("the check sees a crossing") {
  const auto owners = header_owners();
  CHECK(crossings("spec", "#include \"poolspec/engine.hpp\"\n", owners) ==
        std::vector<std::string>{"poolspec/engine.hpp (check/)"});
  CHECK(crossings("xs3", "#include \"poolspec/frontends.hpp\"\n", owners).size() == 1);
  CHECK(crossings("frontends", "#include \"poolspec/xs3/pooling.hpp\"\n", owners).empty());
  CHECK(crossings("check", "#  include \"poolspec/reference/reference.hpp\"\n", owners).size() ==
        1);
}
