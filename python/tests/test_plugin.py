"""The pytest plugin on a test module that pools through torch.nn.functional: the right calls
pass, the wrong kernel is caught with the spec's words. The plugin is loaded by its entry point
(the package's metadata beside it), as a user's pytest loads it."""
import pathlib

import pytest

pytest.importorskip("torch")

EXAMPLE = pathlib.Path(__file__).parent / "plugin_example" / "test_pooling_calls.py"


def test_the_plugin_catches_the_wrong_kernel(pytester):
    pytester.copy_example(str(EXAMPLE))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           "test_pooling_calls.py")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_pooling_through_a_wrong_kernel*",
                                 "*differ from the spec*",
                                 "*problem: max:f32:n1c1:h8w8:k3x3:s2x2*ceil_torch*"])


def test_every_call_is_checked_with_the_option(pytester):
    pytester.makepyfile(test_calls="""
        import torch, torch.nn.functional as F
        def test_unmarked(poolspec_torch):
            F.avg_pool3d(torch.randn(1, 1, 4, 4, 4), 2)
            F.max_pool1d(torch.randn(3, 5), 2)  # batchless
            assert len(poolspec_torch) == 2
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           "--poolspec", "--poolspec-sample", "0")
    result.assert_outcomes(passed=1)


def test_by_default_every_element_is_checked(pytester):
    # One wrong element of 192: a spot check of 16 would miss it on most seeds.
    pytester.makepyfile(test_one_element="""
        import pytest, torch, torch.nn.functional as F
        @pytest.mark.poolspec
        def test_one_wrong_element(monkeypatch):
            real = torch.max_pool2d
            def mutant(*args, **kwargs):
                y = real(*args, **kwargs).clone()
                y.view(-1)[3] += 1.0
                return y
            monkeypatch.setattr(torch, "max_pool2d", mutant)
            F.max_pool2d(torch.randn(1, 3, 16, 16), 3, 2, 1)
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 of 192 checked elements differ from the spec*"])


def test_calls_without_values_pass_through(pytester):
    pytester.makepyfile(test_graphs="""
        import torch, torch.nn.functional as F
        def test_traced_and_meta(poolspec_torch):
            # No TracerWarning (-W error): the trace passes through; its check run has values.
            torch.jit.trace(torch.nn.AvgPool2d(2), torch.randn(1, 1, 4, 4))
            checked = len(poolspec_torch)
            F.max_pool2d(torch.empty(1, 1, 8, 8, device="meta"), 2)
            assert len(poolspec_torch) == checked
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error")
    result.assert_outcomes(passed=1)
