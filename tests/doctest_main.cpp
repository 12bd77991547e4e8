// The one doctest main of the test executables (the costliest TU, kept alone).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
