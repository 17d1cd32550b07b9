"""xlite's StableHLO export, run by XLA itself.

usage: stablehlo_xla.py PATH/TO/xlite-stablehlo-cases [RANDOM_GRAPHS]

The tool writes StableHLO modules that xlite exported (small models through debug::stablehlo, and random
graphs that use every IR op), with their arguments and the results xlite computed. Each module is compiled
by XLA's CPU client from jaxlib, run on the same arguments, and every result compared with xlite's:
floats within rtol = atol = 1e-4 (1e-2 for f16 and bf16), integers and bools exactly, NaN where xlite has NaN.
Random draws come from XLA's generator, not xlite's: in the cases named draws_*, only the types of the
results are compared. Every IR op but custom calls (XLA does not know xlite's kernels) must appear in some module (the exporter writes the text-IR line of each
instruction as a comment above its ops). Negative controls: a module whose result is perturbed, and one
with a changed op, must fail the comparison.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
from jax._src import xla_bridge
from jax._src.lib import xla_client

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
          "I32": np.int32, "I64": np.int64, "U8": np.uint8, "BOOL": np.bool_}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    header_size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + header_size])
    data = blob[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors


def numbered(tensors, prefix):
    count = sum(1 for name in tensors if name.startswith(prefix))
    return [tensors[f"{prefix}{i}"] for i in range(count)]


def mismatch(expected, got, values=True):
    """None when XLA's result matches xlite's (its type only, without values), else what differs."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return f"type {got.dtype}{list(got.shape)} vs xlite's {expected.dtype}{list(expected.shape)}"
    if not values:
        return None
    if np.issubdtype(expected.dtype, np.integer) or expected.dtype == np.bool_:
        bad = np.argwhere(got != expected)
    else:
        tolerance = 1e-2 if expected.dtype in (np.float16, ml_dtypes.bfloat16) else 1e-4
        e, g = expected.astype(np.float64), got.astype(np.float64)
        with np.errstate(invalid="ignore"):
            close = np.abs(e - g) <= tolerance + tolerance * np.maximum(np.abs(e), np.abs(g))
        close |= (e == g) | (np.isnan(e) & np.isnan(g))
        bad = np.argwhere(~close)
    if len(bad) == 0:
        return None
    at = tuple(bad[0])
    return f"{len(bad)} elements differ, first at {list(at)}: XLA {got[at]} vs xlite {expected[at]}"


class Xla:
    def __init__(self):
        self.backend = xla_bridge.get_backend("cpu")
        self.device = self.backend.local_devices()[0]

    def run(self, module, args):
        executable = self.backend.compile(module, compile_options=xla_client.CompileOptions())
        buffers = [self.backend.buffer_from_pyval(a, self.device) for a in args]
        return [np.asarray(r) for r in executable.execute(buffers)]


def check_case(xla, directory, name, module=None, expected_override=None):
    """The list of problems with one case (empty when XLA agrees with xlite)."""
    module = module or open(os.path.join(directory, name + ".mlir")).read()
    tensors = read_safetensors(os.path.join(directory, name + ".safetensors"))
    expected = expected_override or numbered(tensors, "out")
    try:
        results = xla.run(module, numbered(tensors, "arg"))
    except Exception as error:  # XLA refused the module: the export is wrong
        return [f"{name}: XLA cannot run it: {str(error).splitlines()[0]}"]
    if len(results) != len(expected):
        return [f"{name}: {len(results)} results vs xlite's {len(expected)}"]
    problems = []
    for i, (want, got) in enumerate(zip(expected, results)):
        why = mismatch(want, got, values=not name.startswith("draws_"))
        if why:
            problems.append(f"{name} out{i}: {why}")
    return problems


def main():
    tool = sys.argv[1]
    random_graphs = sys.argv[2] if len(sys.argv) > 2 else "200"
    xla = Xla()
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([tool, directory, random_graphs], check=True)
        names = sorted(f[:-5] for f in os.listdir(directory) if f.endswith(".mlir"))
        all_ops = set(open(os.path.join(directory, "ops.txt")).read().split())
        exported = set()
        problems = []
        for name in names:
            module = open(os.path.join(directory, name + ".mlir")).read()
            exported |= set(re.findall(r"^\s*// %\w+ = (\w+)\(", module, re.M))
            problems += check_case(xla, directory, name, module)
        # Custom calls export as stablehlo.custom_call, which XLA runs only with the kernel registered in it.
        missing = sorted(all_ops - exported - {"parameter", "custom_call", "custom_output"})
        if missing:
            problems.append(f"ops never exported: {', '.join(missing)}")

        # Negative controls: the comparison must see a wrong result and a wrong op.
        first = "api_attention"
        tensors = read_safetensors(os.path.join(directory, first + ".safetensors"))
        wrong = [t.copy() for t in numbered(tensors, "out")]
        wrong[0] = (wrong[0].astype(np.float64) * 1.5 + 1).astype(wrong[0].dtype)
        if not check_case(xla, directory, first, expected_override=wrong):
            problems.append("negative control: a perturbed result was not caught")
        module = open(os.path.join(directory, "api_training_step.mlir")).read()
        if not check_case(xla, directory, "api_training_step", module.replace('"stablehlo.add"', '"stablehlo.subtract"')):
            problems.append("negative control: a module with a changed op was not caught")

    if problems:
        print("\n".join(problems))
        print(f"FAILED: {len(problems)} problems in {len(names)} exported modules")
        return 1
    print(f"ok: {len(names)} exported modules ran on XLA and matched xlite; {len(exported)} IR ops exported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
