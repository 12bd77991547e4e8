# The python tests: pytest, run by CTest (label python) with the build tree's package on the
# path and POOLSPEC naming the command-line tool they compare with.
import os
import shutil

import pytest

pytest_plugins = ["pytester"]

# A test module that test_plugin.py runs under the plugin, one of whose tests must fail there.
collect_ignore = ["plugin_example"]


@pytest.fixture(scope="session")
def poolspec_command() -> str:
    command = os.environ.get("POOLSPEC") or shutil.which("poolspec")
    if not command:
        pytest.skip("the poolspec command: set POOLSPEC to its path")
    return command
