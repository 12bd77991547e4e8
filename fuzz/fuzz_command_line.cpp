// fuzz_command_line: the poolspec command line itself (cli/src/command_line.cpp), in process.
//
// Targets: option parsing, the checks every command makes before any work, and the commands that
// read and write files: shape, run, explain, diff, check-model, onnx-test and seeds, with
// --json, --help and --version. certify and prove are left out: they start worker processes and
// run Z3, seconds per input (their bad inputs are rows of tests/cli/bad_inputs.sh).
// Input: text, one argument per line, the first the command; a line "@@" ends the arguments and
// the bytes after it become the file f (also written as f.npy, f.onnx, f.xml and f.pb), so
// that the commands' file readers meet hostile files too. The scratch folder also holds a valid
// f32 and i8 .npy (x.npy, q.npy), an ONNX model (m.onnx) and an OpenVINO IR (m.xml).
// The commands run in the scratch folder and reach nothing outside it: an input with '/' or ".."
// in an argument, or that names certify, prove or merge, is skipped. The sizes are the target's:
// --max-elements and --max-taps are set to 256 and --max-tap-visits to 65536 (given ones are
// dropped), so that a hang or a blow-up is a finding, not a large problem the limits allow.
// Oracle:
//   - no crash, leak or undefined behaviour (ASan, UBSan), no hang (libFuzzer's -timeout) and
//     no blow-up (-rss_limit_mb, -malloc_limit_mb): a bad input is refused, whatever it is;
//   - the exit status is 0, 1 or 2, and a 2 comes with a "poolspec: error: " line on stderr;
//   - with --json (and no help, --version or "-" for a file), every line on stdout is a JSON
//     document with a "schema"; a refusal's is poolspec.error/1.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "command_line.hpp"
#include "poolspec/npy.hpp"

// Sanitizer reports go to the fd given here while the command's stderr is captured (weak: the
// replay builds with g++ have no sanitizer runtime).
extern "C" void __sanitizer_set_report_fd(void* fd) __attribute__((weak));

namespace {

namespace fs = std::filesystem;

// The target's sizes: --max-elements and --max-taps, and --max-tap-visits (a few milliseconds of
// the spec's evaluation per framework under ASan).
constexpr std::string_view element_limit = "256", work_limit = "65536";

struct Scratch {
  fs::path folder;
  int saved_stdout = -1, saved_stderr = -1;
};

Scratch& scratch() {
  static Scratch s;
  return s;
}

[[noreturn]] void fail(const std::string& what, const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) line += " '" + a + "'";
  std::fprintf(stderr, "\n== fuzz_command_line: FAILURE\npoolspec%s\n%s\n", line.c_str(),
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string onnx_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(22);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("fuzz");
  onnx::ValueInfoProto* x = graph->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 1, 4, 4})
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  const auto node = [&](const char* name, const char* op, const char* output) {
    onnx::NodeProto* n = graph->add_node();
    n->set_name(name);
    n->set_op_type(op);
    n->add_input("x");
    n->add_output(output);
    onnx::AttributeProto* k = n->add_attribute();
    k->set_name("kernel_shape");
    k->set_type(onnx::AttributeProto::INTS);
    k->add_ints(2);
    k->add_ints(2);
    return n;
  };
  node("avg", "AveragePool", "a");
  onnx::AttributeProto* ceil = node("max", "MaxPool", "m")->add_attribute();
  ceil->set_name("ceil_mode");
  ceil->set_type(onnx::AttributeProto::INT);
  ceil->set_i(1);
  graph->add_output()->set_name("a");
  graph->add_output()->set_name("m");
  return model.SerializeAsString();
}

constexpr std::string_view openvino_ir = R"(<?xml version="1.0"?>
<net name="fuzz" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,1,4,4" element_type="f32"/>
<output><port id="0" precision="FP32"><dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></output></layer>
<layer id="1" name="max" type="MaxPool" version="opset8"><data auto_pad="explicit" kernel="2,2" pads_begin="0,0" pads_end="0,0" rounding_type="ceil" strides="2,2" dilations="1,1" index_element_type="i64" axis="0"/>
<input><port id="0" precision="FP32"><dim>1</dim><dim>1</dim><dim>4</dim><dim>4</dim></port></input>
<output><port id="1" precision="FP32"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port>
<port id="2" precision="I64"><dim>1</dim><dim>1</dim><dim>2</dim><dim>2</dim></port></output></layer>
</layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges></net>
)";

// The scratch folder as every input starts with it: the fixtures and the fuzzed file, nothing else.
void reset_scratch(std::string_view file) {
  const fs::path& folder = scratch().folder;
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(folder, ignored)) fs::remove_all(entry, ignored);
  static const std::string x =
      poolspec::encode_npy({poolspec::DType::f32,
                            {1, 1, 4, 4},
                            {1, -2, 3, 4, 5, 6, -7, 8, 9, 0.5, 11, 12, 13, 14, 15, -0.0}});
  static const std::string q = poolspec::encode_npy(
      {poolspec::DType::i8, {1, 1, 3, 3}, {-128, 127, 0, 1, -1, 5, 100, -100, 7}});
  static const std::string model = onnx_model();
  write_file(folder / "x.npy", x);
  write_file(folder / "q.npy", q);
  write_file(folder / "m.onnx", model);
  write_file(folder / "m.xml", openvino_ir);
  for (const char* name : {"f", "f.npy", "f.onnx", "f.xml", "f.pb"})
    write_file(folder / name, file);
}

// The arguments, or none when the input is one this target skips.
bool decode(std::string_view text, std::vector<std::string>& args, std::string_view& file) {
  const size_t end = text.find("\n@@\n");
  file = end == std::string_view::npos ? std::string_view() : text.substr(end + 4);
  text = text.substr(0, end);
  std::istringstream lines{std::string(text)};
  std::string line;
  bool drop_value = false;
  while (std::getline(lines, line)) {
    if (drop_value) {  // the value of a dropped --max-... option
      drop_value = false;
      continue;
    }
    if (line.find('/') != std::string::npos || line.find("..") != std::string::npos ||
        line == "certify" || line == "prove" || line == "merge" ||
        line.find('\0') != std::string::npos)
      return false;
    if (line.rfind("--max-", 0) == 0) {
      drop_value = line.find('=') == std::string::npos;
      continue;
    }
    args.push_back(line);
  }
  if (args.size() > 64) return false;
  if (args.empty()) return true;  // `poolspec` alone: the seeds
  const std::string& command = args[0];
  std::vector<std::string> limits;
  if (command == "shape" || command == "run" || command == "explain" || command == "diff" ||
      command == "check-model")
    limits = {"--max-elements", std::string(element_limit)};
  if (command == "run" || command == "diff" || command == "check-model")
    limits.insert(limits.end(), {"--max-tap-visits", std::string(work_limit)});
  if (command == "explain") limits.insert(limits.end(), {"--max-taps", std::string(element_limit)});
  args.insert(args.begin() + 1, limits.begin(), limits.end());
  return true;
}

bool has(const std::vector<std::string>& args, std::string_view a) {
  for (const std::string& x : args)
    if (x == a) return true;
  return false;
}

// Asks for help, which is text whatever else is given: --help (--help=x too), or -h alone or
// leading a group of short flags (CLI11 reads "-hx" as -h).
bool asks_for_help(const std::vector<std::string>& args) {
  for (const std::string& x : args)
    if (x.rfind("--help", 0) == 0 || x.rfind("-h", 0) == 0) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char folder[] = "/tmp/fuzz_command_line.XXXXXX";
  if (mkdtemp(folder) == nullptr) {
    std::perror("fuzz_command_line: mkdtemp");
    std::exit(1);
  }
  scratch().folder = folder;
  scratch().saved_stdout = dup(STDOUT_FILENO);
  scratch().saved_stderr = dup(STDERR_FILENO);
  if (__sanitizer_set_report_fd)
    __sanitizer_set_report_fd(
        reinterpret_cast<void*>(static_cast<intptr_t>(scratch().saved_stderr)));
  // "-" reads standard input: an empty one, never the terminal's.
  const int null = open("/dev/null", O_RDONLY);
  dup2(null, STDIN_FILENO);
  close(null);
  std::atexit([] { std::filesystem::remove_all(scratch().folder); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args;
  std::string_view file;
  if (!decode(std::string_view(reinterpret_cast<const char*>(data), size), args, file)) return 0;
  reset_scratch(file);
  const fs::path folder = scratch().folder;

  // The command runs in the scratch folder, its stdout and stderr captured in files there.
  std::vector<const char*> argv{"poolspec"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  const fs::path out_path = folder / ".stdout", err_path = folder / ".stderr";
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const fs::path cwd = fs::current_path();
  fs::current_path(folder);
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  const int status = poolspec::cli::command_line(static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  std::clearerr(stdout);
  dup2(scratch().saved_stdout, STDOUT_FILENO);
  dup2(scratch().saved_stderr, STDERR_FILENO);
  close(out);
  close(err);
  fs::current_path(cwd);

  const std::string stdout_text = read_file(out_path), stderr_text = read_file(err_path);
  if (status != 0 && status != 1 && status != 2)
    fail("exit status " + std::to_string(status) + " (only 0, 1 and 2 are)\n" + stderr_text, args);
  if (status == 2 && stderr_text.find("poolspec: error: ") == std::string::npos)
    fail("exit 2 without a 'poolspec: error: ' line; stderr:\n" + stderr_text, args);
  if (has(args, "--json") && !asks_for_help(args) && !has(args, "--version") && !has(args, "-")) {
    if (status == 2 && stdout_text.empty()) fail("--json: exit 2 with nothing on stdout", args);
    std::istringstream lines(stdout_text);
    std::string line, last_schema;
    while (std::getline(lines, line)) {
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("schema"))
        fail("--json: a line of stdout is not a JSON document with a schema:\n" + line, args);
      last_schema = j["schema"].is_string() ? j["schema"].get<std::string>() : "";
    }
    if (status == 2 && last_schema != "poolspec.error/1")
      fail(
          "--json: exit 2, and stdout's last document is " + last_schema + ", not poolspec.error/1",
          args);
  }
  return 0;
}
