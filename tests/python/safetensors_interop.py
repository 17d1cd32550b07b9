"""Checkpoint interop between xlite and Python's safetensors package and PyTorch.

usage: safetensors_interop.py PATH/TO/xlite-checkpoint-interop

1. xlite writes (xlite::save) the known tensors; safetensors.torch.load_file and safetensors.numpy.load_file
   must read every name, dtype, shape and value exactly (NumPy has no bfloat16, so bf16 is checked through
   torch only; NumPy reads a second file that xlite writes without bf16).
2. safetensors.torch.save_file writes the same tensors; xlite::load must read them exactly (the tool's
   `check` mode).
3. Negative controls: a wrong value and a wrong dtype must be caught, on both sides.

The known values are defined below exactly as in tools/checkpoint_interop.cpp: for each dtype, "<dtype>"
(a few dims), "<dtype>_scalar" (0-dim), "<dtype>_empty" (a zero dim) and "<dtype>_special"; element i
(row-major) holds value(dtype, start + i) with start 4 for the scalar and 0 otherwise, and "_special"
tensors hold the listed values. Change both files together.
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

# ---- The known values (mirrored in tools/checkpoint_interop.cpp) ----

# name: (torch dtype, NumPy dtype or None, safetensors dtype, shape of "<name>", shape of "<name>_empty")
DTYPES = {
    "f32": (torch.float32, np.float32, "F32", [2, 3, 4], [0]),
    "f64": (torch.float64, np.float64, "F64", [5], [2, 0]),
    "f16": (torch.float16, np.float16, "F16", [4, 4], [0, 3]),
    "bf16": (torch.bfloat16, None, "BF16", [3, 5], [2, 0, 3]),
    "i32": (torch.int32, np.int32, "I32", [7, 1], [0]),
    "i64": (torch.int64, np.int64, "I64", [2, 3], [1, 0]),
    "u8": (torch.uint8, np.uint8, "U8", [4, 8], [0, 4]),
    "bool": (torch.bool, np.bool_, "BOOL", [3, 3], [0]),
}
FLOATING = {"f32", "f64", "f16", "bf16"}
SCALAR_START = 4


def value(dtype, n):
    """Element value n of each dtype. f32 is the f64 value rounded to nearest f32; f16 and bf16 values are
    exact in 16 bits."""
    if dtype == "f64":
        return (n - 10) * 0.1
    if dtype == "f32":
        return float(np.float32((n - 10) * 0.1))
    if dtype == "f16":
        return (n - 10) * 0.125
    if dtype == "bf16":
        return (n - 10) * 0.375
    if dtype == "i64":
        return (n - 6) * 1537228672809129301
    if dtype == "i32":
        return (n - 6) * 357913941
    if dtype == "u8":
        return (n * 37 + 11) % 256
    if dtype == "bool":
        return n % 3 == 1
    raise ValueError(dtype)


INF, NAN, H = math.inf, math.nan, float.fromhex
SPECIALS = {
    "f64": [INF, -INF, NAN, -0.0, H("0x1p-1074"), H("0x1.fffffffffffffp1023"), H("0x1p-1022")],
    "f32": [INF, -INF, NAN, -0.0, H("0x1p-149"), H("0x1.fffffep127"), H("0x1p-126")],
    "f16": [INF, -INF, NAN, -0.0, H("0x1p-24"), H("0x1.ffcp15"), H("0x1p-14")],
    "bf16": [INF, -INF, NAN, -0.0, H("0x1p-133"), H("0x1.fep127"), H("0x1p-126")],
    "i64": [-(2**63), 2**63 - 1, -1, 0],
    "i32": [-(2**31), 2**31 - 1, -1, 0],
    "u8": [0, 255, 128, 127],
    "bool": [True, False],
}


def expected_tensors():
    """name -> (dtype name, shape, flat list of Python values)."""
    out = {}
    for dtype, (_, _, _, shape, empty_shape) in DTYPES.items():
        def add(name, shape, start):
            out[name] = (dtype, shape, [value(dtype, start + i) for i in range(math.prod(shape))])

        add(dtype, shape, 0)
        add(dtype + "_scalar", [], SCALAR_START)
        add(dtype + "_empty", empty_shape, 0)
        out[dtype + "_special"] = (dtype, [len(SPECIALS[dtype])], list(SPECIALS[dtype]))
    return out


# ---- Comparing ----


def same_value(actual, expected, floating):
    """Exact: floats by their bits as doubles (so -0.0 differs from 0.0), any NaN matching any NaN."""
    if floating:
        if math.isnan(expected):
            return math.isnan(actual)
        return struct.pack("<d", actual) == struct.pack("<d", expected)
    return type(actual) is type(expected) and actual == expected


def compare(name, dtype, shape, values, actual_dtype, expected_dtype, actual_shape, actual_values):
    """Problems found in one tensor, as strings."""
    if actual_dtype != expected_dtype:
        return [f"'{name}': dtype {actual_dtype}, expected {expected_dtype}"]
    if list(actual_shape) != shape:
        return [f"'{name}': shape {list(actual_shape)}, expected {shape}"]
    return [f"'{name}'[{i}] = {a!r}, expected {e!r}"
            for i, (a, e) in enumerate(zip(actual_values, values)) if not same_value(a, e, dtype in FLOATING)]


def check_loaded(loaded, framework, expected, skip_dtypes=()):
    """Checks a dict of tensors read by safetensors (torch or NumPy); returns the problems."""
    problems = []
    wanted = {name: e for name, e in expected.items() if e[0] not in skip_dtypes}
    problems += [f"unexpected tensor '{name}'" for name in sorted(set(loaded) - set(wanted))]
    problems += [f"missing tensor '{name}'" for name in sorted(set(wanted) - set(loaded))]
    for name, (dtype, shape, values) in sorted(wanted.items()):
        if name not in loaded:
            continue
        t = loaded[name]
        torch_dtype, np_dtype = DTYPES[dtype][0], DTYPES[dtype][1]
        if framework == "torch":
            if not isinstance(t, torch.Tensor):
                problems.append(f"'{name}': a {type(t).__name__}, not a torch.Tensor")
                continue
            # tolist() converts every element to a Python float, int or bool exactly (bf16 and f16 too).
            problems += compare(name, dtype, shape, values, t.dtype, torch_dtype, t.shape, t.flatten().tolist())
        else:
            if not isinstance(t, np.ndarray):
                problems.append(f"'{name}': a {type(t).__name__}, not a numpy.ndarray")
                continue
            problems += compare(name, dtype, shape, values, t.dtype, np.dtype(np_dtype), t.shape, t.ravel().tolist())
    return problems


def torch_tensors(expected):
    """The expected tensors, built by torch (conversion of the listed values: exact for every one of them)."""
    out = {}
    for name, (dtype, shape, values) in expected.items():
        out[name] = torch.tensor(values, dtype=DTYPES[dtype][0]).reshape(shape)
    return out


# ---- The test ----


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def step(self, what, problems):
        if problems:
            self.failed += 1
            print(f"FAIL {what}: {len(problems)} problems")
            for p in problems[:50]:
                print(f"  {p}")
        else:
            self.passed += 1
            print(f"ok   {what}")


def run_tool(tool, *args):
    return subprocess.run([tool, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tool = sys.argv[1]
    print(f"safetensors {safetensors.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    expected = expected_tensors()
    report = Report()

    with tempfile.TemporaryDirectory(prefix="xlite_interop_") as work:
        xlite_file = os.path.join(work, "xlite.safetensors")
        xlite_file_no_bf16 = os.path.join(work, "xlite_no_bf16.safetensors")
        torch_file = os.path.join(work, "torch.safetensors")

        # 1. xlite writes, Python reads.
        for path, extra in ((xlite_file, []), (xlite_file_no_bf16, ["--without", "bf16"])):
            r = run_tool(tool, "write", path, *extra)
            if r.returncode != 0:
                print(f"FAIL xlite-checkpoint-interop write {path} {' '.join(extra)} (exit {r.returncode}):\n{r.stdout}")
                return 1
        report.step("safetensors.torch.load_file reads xlite::save exactly (every dtype)",
                    check_loaded(safetensors.torch.load_file(xlite_file), "torch", expected))
        report.step("safetensors.numpy.load_file reads xlite::save exactly (every dtype but bf16)",
                    check_loaded(safetensors.numpy.load_file(xlite_file_no_bf16), "numpy", expected, ("bf16",)))
        try:
            loaded = safetensors.numpy.load_file(xlite_file)
            report.step("safetensors.numpy.load_file reads xlite::save with bf16 (non-bf16 tensors exactly)",
                        check_loaded({k: v for k, v in loaded.items() if expected.get(k, ("?",))[0] != "bf16"}, "numpy",
                                     expected, ("bf16",)))
        except TypeError as e:  # NumPy has no bfloat16: any file holding one is refused whole.
            print(f"note safetensors.numpy.load_file refuses a file with bf16, as expected: {e}")

        # 2. Python writes, xlite reads.
        safetensors.torch.save_file(torch_tensors(expected), torch_file, metadata={"format": "pt"})
        r = run_tool(tool, "check", torch_file)
        report.step("xlite::load reads safetensors.torch.save_file exactly (every dtype)",
                    [] if r.returncode == 0 else [f"exit {r.returncode}: {r.stdout.strip()}"])

        # 3. Negative controls: each side must notice one wrong value and one wrong dtype.
        wrong_value = dict(torch_tensors(expected))
        wrong_value["f32"] = wrong_value["f32"].clone()
        wrong_value["f32"].view(-1)[5] = torch.nextafter(wrong_value["f32"].view(-1)[5], torch.tensor(math.inf))
        wrong_dtype = dict(torch_tensors(expected))
        wrong_dtype["i32"] = wrong_dtype["i32"].to(torch.int64)
        for what, tensors, fragment in (("value", wrong_value, "'f32'[5]"), ("dtype", wrong_dtype, "'i32': dtype i64")):
            path = os.path.join(work, f"wrong_{what}.safetensors")
            safetensors.torch.save_file(tensors, path)
            r = run_tool(tool, "check", path)
            report.step(f"xlite-checkpoint-interop check catches a wrong {what}",
                        [] if r.returncode == 1 and fragment in r.stdout else
                        [f"exit {r.returncode}, output without {fragment!r}: {r.stdout.strip()}"])
            problems = check_loaded(tensors, "torch", expected)
            report.step(f"this script catches a wrong {what}",
                        [] if any(fragment.split(":")[0] in p for p in problems) else [f"found {problems}"])

    print(f"{report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
