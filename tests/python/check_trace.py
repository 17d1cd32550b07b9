"""XLITE_PROFILE=trace.json, checked: runs a program with it, parses the trace, and checks that every span
nests in its parent (kernels in executions, compile phases in compilations, both in syncs), that the spans
add up to the metrics the program printed, and that tools/trace_png.py draws it.

    python3 check_trace.py PROGRAM WORK_DIR TRACE_PNG_TOOL
"""
import json
import os
import re
import subprocess
import sys

program, work, png_tool = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
trace_path = os.path.join(work, "trace.json")
if os.path.exists(trace_path):
    os.remove(trace_path)
report = subprocess.run([program], env=dict(os.environ, XLITE_PROFILE=trace_path), check=True, capture_output=True,
                        text=True).stdout
events = json.load(open(trace_path))["traceEvents"]
spans = [e for e in events if e["ph"] == "X"]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


# Every span lies inside the spans that contain its start (same thread), never across one's end.
TOLERANCE = 0.002  # microseconds: timestamps are printed to the nanosecond
for tid in {s["tid"] for s in spans}:
    stack = []
    for s in sorted((s for s in spans if s["tid"] == tid), key=lambda s: (s["ts"], -s["dur"])):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= s["ts"] + TOLERANCE:
            stack.pop()
        if stack:
            parent = stack[-1]
            check(s["ts"] + s["dur"] <= parent["ts"] + parent["dur"] + TOLERANCE,
                  f"{s['name']} crosses the end of {parent['name']}")
            allowed = {"compile": {"sync", "compile"}, "execute": {"sync"}, "kernel": {"execute"}, "sync": set(),
                       "trace": set()}[s["cat"]]
            check(parent["cat"] in allowed, f"{s['cat']} span {s['name']} inside {parent['cat']} span {parent['name']}")
        else:
            check(s["cat"] in ("sync", "trace"), f"{s['cat']} span {s['name']} outside any sync")
        stack.append(s)


def metric(name):
    """(samples, total microseconds) of a timed metric in the printed metrics report."""
    m = re.search(rf"Metric: {name}\n  TotalSamples: (\d+)\n  Accumulator: ([0-9.]+)(ns|us|ms|s)\n", report)
    if not m:
        return 0, 0.0
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[m.group(3)]
    return int(m.group(1)), float(m.group(2)) * scale


executes = [s for s in spans if s["cat"] == "execute"]
compiles = [s for s in spans if s["cat"] == "compile" and s["name"].startswith("compile ")]
phases = [s for s in spans if s["cat"] == "compile" and not s["name"].startswith("compile ")]
kernels = [s for s in spans if s["cat"] == "kernel"]
run_samples = metric("ExecuteTime")[0] + metric("EagerOpExecuteTime")[0]
run_total = metric("ExecuteTime")[1] + metric("EagerOpExecuteTime")[1]
compile_samples = metric("CompileTime")[0] + metric("EagerOpCompileTime")[0]
check(len(executes) == run_samples, f"{len(executes)} execute spans, {run_samples} executions in the metrics")
check(len(compiles) == compile_samples, f"{len(compiles)} compile spans, {compile_samples} compilations in the metrics")
check(abs(sum(s["dur"] for s in executes) - run_total) <= 0.01 * run_total + 5,
      f"execute spans add to {sum(s['dur'] for s in executes):.1f} us, the metrics to {run_total:.1f} us")
check(len(phases) == 3 * len(compiles), f"{len(phases)} compile phases for {len(compiles)} compilations")
check(sorted({s["name"] for s in phases}) == ["codegen", "fusion", "passes"], "phase names")
check(len(kernels) >= len(executes), f"{len(kernels)} kernel spans for {len(executes)} executions")
check(any(s["cat"] == "trace" for s in spans), "no tracing span")
memory = [e for e in events if e["ph"] == "C"]
check(len(memory) == len(executes), f"{len(memory)} memory samples for {len(executes)} executions")
check(all(e["name"] == "memory in use cpu:0" and e["args"]["bytes"] >= 0 for e in memory), "memory counter")

png = os.path.join(work, "timeline.png")
subprocess.run([sys.executable, png_tool, trace_path, png], check=True)
with open(png, "rb") as f:
    head = f.read(8)
check(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 2000, "trace_png.py did not draw a PNG")

for failure in failures:
    print("FAIL:", failure)
print(f"{len(spans)} spans, {len(executes)} executions, {len(compiles)} compilations, {len(kernels)} kernels checked")
sys.exit(1 if failures else 0)
