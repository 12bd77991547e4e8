// The poolspec command line as a function: main() is one call of it, and the command-line fuzz
// target (fuzz/fuzz_command_line.cpp) makes many in one process.
#pragma once

namespace poolspec::cli {

// Parses the arguments (argv[0] is the program's name), refuses bad input before any work and
// runs the command. Returns the exit status: 0 ok, 1 a check failed, 2 bad input. No exception
// leaves it.
int command_line(int argc, const char* const* argv);

}  // namespace poolspec::cli
