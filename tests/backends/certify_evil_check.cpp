// One hostile backend (tests/backends/evil/*.c) certified by the real `poolspec certify`, from
// the outside, as CI would run it:
//
//   certify_evil_check POOLSPEC LIBRARY SOURCE OUT [OPTION...]
//
// OPTIONs are certify options added to every certification (e.g. --no-shrink).
// The source's header says what must happen (` * expect: STATUS|STATUS`, and optionally
// ` * args: --option value ...`, certify options that replace the defaults of the same name, and
// ` * also: --option ...`, options of a second run with the same expectations, and ` * replay: racy`
// for a failure that depends on timing, whose bundles need only run). Checked: poolspec ends by itself with exit 0 or 1 (0
// exactly when no failure and something was computed), its --json stdout parses, all three reports are written, the matrix
// holds no control character, the library's runs show an expected status and no failure
// outside the list, no process of the library outlives poolspec, and one reproducer bundle of
// each status replays its status from another folder with its command.txt.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::cerr << "FAILED: " << what << "\n";
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string header_field(const std::string& source, const std::string& field) {
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(" * " + field + ":");
    if (at == 0) return line.substr(field.size() + 4);
    if (line.find("*/") != std::string::npos) break;
  }
  return "";
}

struct Ran {
  int status = -1;  // the wait status
  bool timed_out = false;
  std::string out;
};

// Runs argv with stdout read through a pipe (so a process that keeps it open shows as a run that
// does not end) and stderr to a file, in `cwd`, for at most `seconds`.
Ran run_command(const std::vector<std::string>& args, const std::string& cwd, const std::string& err, int seconds,
                const std::string& tag = "") {
  Ran r;
  int out[2];
  if (pipe(out) != 0) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  std::vector<char*> environment;
  for (char** e = environ; *e; ++e) environment.push_back(*e);
  std::string tagged = tag;
  if (!tag.empty()) environment.push_back(tagged.data());
  environment.push_back(nullptr);
  const int e = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (e != 0) {
    close(out[0]);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;  // end of stdout: every holder closed it
    r.out.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

// Processes carrying `tag` in their environment: the poolspec run's workers and whatever they
// started (the environment is inherited), and no other test's.
std::vector<int> processes_tagged(const std::string& tag) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string environment = read_text(entry.path() / "environ");
    if (environment.find(tag) != std::string::npos && std::stoi(name) != getpid()) out.push_back(std::stoi(name));
  }
  return out;
}

bool is_failure(const std::string& status) {
  return status != "PASS" && status != "UNSUPPORTED" && status != "WAIVED";
}

}  // namespace

// One certification of the library with the defaults and `extra` options, checked; its files in `out`.
void certify_once(const std::string& poolspec, const std::string& library, const std::set<std::string>& expected,
                  const std::vector<std::string>& extra, bool racy, const std::string& out) {
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out + "/elsewhere");
  std::vector<std::string> args = {poolspec,  "certify",       "--backend", library,           "--suite",
                                   "smoke",   "--layout",      "nchw",      "--filter",        "shapes/1d:regular",
                                   "--timeout-ms", "1000",     "--load-timeout-ms", "5000",    "--out",
                                   out + "/reports", "--json"};
  // The header's options replace the defaults of the same name; a flag is added.
  for (size_t i = 0; i < extra.size(); ++i) {
    const bool valued = i + 1 < extra.size() && extra[i + 1].rfind("--", 0) != 0;
    const auto at = std::find(args.begin(), args.end(), extra[i]);
    if (valued && at != args.end()) *(at + 1) = extra[i + 1];
    else if (valued) args.insert(args.end(), {extra[i], extra[i + 1]});
    else args.push_back(extra[i]);
    i += valued;
  }

  const std::string tag = "POOLSPEC_EVIL_CHECK=" + std::to_string(getpid()) + "-" +
                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const Ran r = run_command(args, out, out + "/stderr.txt", 600, tag);
  check(!r.timed_out, "poolspec certify ended by itself (its stdout closed and it exited) within 600 s");
  check(WIFEXITED(r.status), "poolspec exited (was not killed by a signal)");
  const int code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
  check(code == 0 || code == 1, "exit code 0 or 1, got " + std::to_string(code) + "; stderr: " + read_text(out + "/stderr.txt"));
  for (const char* file : {"matrix.txt", "report.json", "junit.xml"})
    check(std::filesystem::exists(out + "/reports/" + file), std::string("wrote ") + file);
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(r.out);
    check(report == nlohmann::json::parse(read_text(out + "/reports/report.json")), "--json stdout is report.json");
  } catch (const std::exception& e) {
    check(false, std::string("--json stdout parses: ") + e.what());
  }
  for (unsigned char c : read_text(out + "/reports/matrix.txt"))
    if (c < 0x20 && c != '\n') {
      check(false, "matrix.txt holds no control character");
      break;
    }
  check(read_text(out + "/reports/junit.xml").find("</testsuites>") != std::string::npos, "junit.xml is whole");

  // The library's statuses.
  std::set<std::string> seen;
  if (report.contains("runs"))
    for (const auto& run : report["runs"])
      if (run.value("origin", "") == std::filesystem::absolute(library).string()) seen.insert(run.value("status", ""));
  std::string seen_text;
  for (const std::string& s : seen) seen_text += s + " ";
  bool any = false;
  for (const std::string& s : seen) {
    any = any || expected.count(s);
    if (is_failure(s)) check(expected.count(s) > 0, "status " + s + " is not expected (seen: " + seen_text + ")");
  }
  check(any, "an expected status appears (seen: " + seen_text + ")");
  bool failed = false;
  for (const std::string& s : seen) failed = failed || is_failure(s);
  // A run in which nothing was computed (every problem refused) certified nothing: exit 1 too.
  bool computed = false;
  if (report.contains("runs"))
    for (const auto& run : report["runs"])
      computed = computed || (run.value("status", "") != "UNSUPPORTED" && run.value("rule_verdict", "") != "invalid");
  check(code == (failed || !computed ? 1 : 0),
        "exit code " + std::to_string(code) + " matches the statuses (" + seen_text + (computed ? "" : ", nothing computed") + ")");

  // Nothing of the library's left running.
  std::vector<int> left;
  for (int i = 0; i < 50; ++i) {
    left = processes_tagged(tag);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  check(left.empty(), "no process of the library outlives poolspec (" + std::to_string(left.size()) + " left)");
  for (int pid : left) kill(pid, SIGKILL);

  // One bundle of each status replays it, from another folder.
  std::set<std::string> replayed;
  if (report.contains("runs"))
    for (const auto& run : report["runs"]) {
      const std::string status = run.value("status", "");
      if (!run.contains("repro_dir") || replayed.count(status)) continue;
      replayed.insert(status);
      const std::string command = read_text(run["repro_dir"].get<std::string>() + "/command.txt");
      // A bundle said to replay gets three tries: a race the backend runs may still lose one.
      const bool says_it_replays = run.value("reproduces", "").rfind("reproduces", 0) == 0 && !racy;
      Ran replay;
      for (int attempt = 0; attempt < (says_it_replays ? 3 : 1); ++attempt) {
        replay = run_command({"/bin/sh", "-c", command}, out + "/elsewhere", out + "/replay-stderr.txt", 600);
        if (replay.out.find("(nchw): " + status + "\n") != std::string::npos) break;
      }
      // A bundle that says it replays must replay its status; one that says it does not (the
      // failure needed a longer history) must still run.
      const bool reproduces = says_it_replays;
      const int replay_code = WIFEXITED(replay.status) ? WEXITSTATUS(replay.status) : -1;
      check(!replay.timed_out && (replay_code == 1 || (!reproduces && replay_code == 0)),
            "the " + status + " bundle's command.txt runs and exits 1: " + command + "\n" + replay.out +
                read_text(out + "/replay-stderr.txt"));
      if (reproduces)
        check(replay.out.find("(nchw): " + status + "\n") != std::string::npos, "the " + status + " bundle replays " + status + ":\n" + replay.out);
    }
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: certify_evil_check POOLSPEC LIBRARY SOURCE OUT [OPTION...]\n";
    return 2;
  }
  const std::string poolspec = argv[1], library = argv[2], source_path = argv[3], out = argv[4];
  const std::string source = read_text(source_path);
  std::set<std::string> expected;
  {
    std::string list = header_field(source, "expect");
    for (char& c : list)
      if (c == '|') c = ' ';
    for (const std::string& w : words(list)) expected.insert(w);
  }
  if (expected.empty()) {
    std::cerr << source_path << ": no ' * expect: STATUS' line in its header\n";
    return 2;
  }
  std::vector<std::string> extra = words(header_field(source, "args"));
  extra.insert(extra.end(), argv + 5, argv + argc);
  // ` * replay: racy`: the failure depends on timing, so its bundles need only run.
  const bool racy = header_field(source, "replay").find("racy") != std::string::npos;
  certify_once(poolspec, library, expected, extra, racy, out);
  // ` * also: OPTIONS`: once more with them (as without a PID namespace), the same expected.
  if (const std::vector<std::string> also = words(header_field(source, "also")); !also.empty()) {
    extra.insert(extra.end(), also.begin(), also.end());
    certify_once(poolspec, library, expected, extra, racy, out + "/also");
  }
  return failures == 0 ? 0 : 1;
}
