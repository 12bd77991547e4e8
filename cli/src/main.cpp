// poolspec: the executable specification of pooling, on the command line (docs/cli.md).
#include "command_line.hpp"

int main(int argc, char** argv) { return poolspec::cli::command_line(argc, argv); }
