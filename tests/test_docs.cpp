// The repository's documents hold together (label docs): every document the code and the docs
// cite is in the repository, every relative Markdown link reaches a file (and its heading, when
// it names one), nothing cites the design notes the project started from, and the README stays
// a front door (at most 200 lines).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path root = POOLSPEC_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The files a reader of the repository reads: sources, build files, scripts and documents (not
// the build trees, corpora, regressions or stored vectors, which are data).
std::vector<fs::path> text_files() {
  static const std::set<std::string> extensions = {
      ".md", ".cpp", ".hpp", ".h", ".c", ".sh", ".txt", ".cmake", ".in", ".yml", ".json", ".dict"};
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path relative = fs::relative(it->path(), root);
    const std::string first = relative.begin()->string();
    if (it->is_directory() && (first == "build" || first == ".git" || relative == "fuzz/corpus" ||
                               relative == "fuzz/regressions")) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string name = relative.filename().string();
    if (it->is_regular_file() &&
        (extensions.contains(relative.extension().string()) || name == "run"))
      files.push_back(relative);
  }
  return files;
}

// A heading's anchor as GitHub derives it: lower case, punctuation dropped, spaces to hyphens.
std::string anchor_of(const std::string& heading) {
  std::string a;
  for (const unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_')
      a += static_cast<char>(std::tolower(c));
    else if (c == ' ')
      a += '-';
    else if (c >= 0x80)
      a += static_cast<char>(c);
  }
  return a;
}

std::set<std::string> anchors(const std::string& markdown) {
  std::set<std::string> result;
  std::istringstream lines(markdown);
  bool fenced = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("```")) fenced = !fenced;
    if (fenced || !line.starts_with("#")) continue;
    const auto text = line.find_first_not_of('#');
    if (text != std::string::npos && line[text] == ' ')
      result.insert(anchor_of(line.substr(text + 1)));
  }
  return result;
}

}  // namespace

TEST_CASE("nothing cites the design notes outside the repository") {
  const std::regex outside(R"(DESIGN\.md|\bnotes/[a-z_]+\.md|\.\./shared)");
  for (const fs::path& file : text_files()) {
    const std::string text = read_text(root / file);
    std::smatch m;
    INFO(file.string());
    CHECK_FALSE(std::regex_search(text, m, outside));
  }
}

TEST_CASE("every document the code and the docs name is in the repository") {
  const std::regex named(
      R"(\b((?:docs/[a-z_-]+|(?:xs3|fuzz|proofs|spec)/(?:README|ERRATA))\.md)\b)");
  int seen = 0;
  for (const fs::path& file : text_files()) {
    const std::string text = read_text(root / file);
    for (auto m = std::sregex_iterator(text.begin(), text.end(), named);
         m != std::sregex_iterator(); ++m) {
      ++seen;
      INFO(file.string() << " names " << (*m)[1].str());
      CHECK(fs::is_regular_file(root / (*m)[1].str()));
    }
  }
  CHECK(seen > 50);
}

TEST_CASE("every relative link of a Markdown file reaches its file and heading") {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  int links = 0;
  for (const fs::path& file : text_files()) {
    if (file.extension() != ".md") continue;
    const std::string text = read_text(root / file);
    for (auto m = std::sregex_iterator(text.begin(), text.end(), link); m != std::sregex_iterator();
         ++m) {
      const std::string target = (*m)[1].str();
      if (target.find("://") != std::string::npos || target.starts_with("mailto:")) continue;
      ++links;
      const auto hash = target.find('#');
      const std::string path = target.substr(0, hash);
      const fs::path resolved = path.empty() ? root / file : (root / file).parent_path() / path;
      INFO(file.string() << " links to " << target);
      REQUIRE(fs::exists(resolved));
      if (hash != std::string::npos && resolved.extension() == ".md")
        CHECK(anchors(read_text(resolved)).contains(target.substr(hash + 1)));
    }
  }
  CHECK(links > 20);
}

TEST_CASE("the README is a front door: at most 200 lines") {
  const std::string readme = read_text(root / "README.md");
  CHECK(std::count(readme.begin(), readme.end(), '\n') <= 200);
}

TEST_CASE("the checks above fail where they should") {
  CHECK(anchor_of("7. A minimal backend") == "7-a-minimal-backend");
  CHECK(anchor_of("Certification: `poolspec certify`") == "certification-poolspec-certify");
  CHECK(anchors("# Title\n```\n# not a heading\n```\n## 1a. Shape, padding\n") ==
        std::set<std::string>{"title", "1a-shape-padding"});
}
