"""What checking costs from Python, measured in one process in interleaved rounds (docs/python.md,
"Speed"): on ResNet-50's stem max pool (1x64x112x112 in, 3x3, stride 2, pad 1; contiguous and
channels_last), at one thread,
  - PyTorch's own max_pool2d,
  - poolspec.check with sampling (16 elements) and its cost as a fraction of max_pool2d's time,
  - poolspec.check of every element by the linked-in checker (sample=0) against the same checker
    called from C++ on the same buffers, with no Python in between,
  - poolspec.check of every element against the exact evaluation (the default).
A program that reports; no time is asserted anywhere.
Usage: PYTHONPATH=build/gcc/python /usr/bin/python3 python/bench/check_overhead.py [--rounds N]
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import poolspec
from poolspec import _poolspec


def seconds(call, repeats):
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"poolspec {poolspec.__version__}, torch {torch.__version__}, 1 thread, "
          f"{args.rounds} interleaved rounds, medians")
    for layout in ("contiguous", "channels_last"):
        x = torch.randn(1, 64, 112, 112)
        if layout == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        y = F.max_pool2d(x, 3, 2, 1)
        p = poolspec.problem(op="max", pytorch=dict(kernel_size=3, stride=2, padding=1),
                             input_shape=x.shape)
        xs, ys = x.numpy(), y.numpy()
        times = {name: [] for name in ("torch", "sampled", "full_linked", "full_cpp", "full_exact")}
        for _ in range(args.rounds):
            times["torch"].append(seconds(lambda: F.max_pool2d(x, 3, 2, 1), 20))
            times["sampled"].append(seconds(lambda: poolspec.check(p, x, y, sample=16), 200))
            times["full_linked"].append(seconds(lambda: poolspec.check(p, x, y, sample=0), 5))
            times["full_cpp"].append(_poolspec.linked_in_check_seconds(p, xs, ys, 0, 5))
            times["full_exact"].append(seconds(lambda: poolspec.check(p, x, y), 1))
        m = {k: statistics.median(v) for k, v in times.items()}
        print(f"\n{p.string} ({layout})")
        print(f"  torch max_pool2d                    {m['torch'] * 1e3:9.3f} ms")
        print(f"  check, 16 samples                   {m['sampled'] * 1e3:9.3f} ms  "
              f"{m['sampled'] / m['torch']:.1%} of max_pool2d")
        print(f"  check, every element (linked-in)    {m['full_linked'] * 1e3:9.3f} ms  "
              f"{m['full_linked'] / m['full_cpp']:.2f}x the checker from C++ "
              f"({m['full_cpp'] * 1e3:.3f} ms)")
        print(f"  check, every element (exact)        {m['full_exact'] * 1e3:9.3f} ms  "
              f"{m['full_exact'] / m['full_cpp']:.1f}x the checker from C++")


if __name__ == "__main__":
    main()
