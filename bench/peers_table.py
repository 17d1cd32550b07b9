"""The table and chart of bench/peers.sh, from the `name value unit` files it wrote.

    python bench/peers_table.py RESULTS_DIR CHART_PNG "PEER PEER ..." [LIMIT]

For each workload and size: xlite's median time, its speed against the machine's limit measured in the same
process (LIMIT "memcpy", the default: a copy of the same traffic, `<case>.memcpy_ms`; "fma": the step's matmul
FLOPs at the FMA peak, `<case>.limit_ms`), as the median of the per-repeat ratios, and for each peer its median
time and the ratio peer / xlite (median of the per-repeat ratios; "fastest" divides the peer's fastest repeat
by xlite's median, the rule of BENCHMARKS.md). The check column is the largest relative difference between a
peer's check value and xlite's. Where the programs printed `<case>.<program>_peak_MiB` and `_steady_MiB`, two
more tables give each one's peak memory, over the whole case and over the timed calls alone. The chart shows the ratios at every size, one panel per workload.
"""

import glob
import os
import re
import statistics
import sys
from collections import defaultdict


def read_runs(directory, program):
    """Per repeat, the {name: value} of one program's files, in repeat order."""
    # Exactly PROGRAM_<repeat>.txt: "xlite_*" would also take xlite_eager's files.
    pattern = re.compile(re.escape(program) + r"_(\d+)\.txt$")
    files = [f for f in glob.glob(os.path.join(directory, f"{program}_*.txt")) if pattern.fullmatch(os.path.basename(f))]
    files.sort(key=lambda f: int(pattern.fullmatch(os.path.basename(f)).group(1)))
    runs = []
    for path in files:
        values = {}
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and not line.startswith("#"):
                    values[parts[0]] = float(parts[1])
        runs.append(values)
    return runs


def cases(xlite_runs):
    seen = []
    for run in xlite_runs:
        for name in run:
            if name.endswith(".xlite_ms"):
                case = name[: -len(".xlite_ms")]
                if case not in seen:
                    seen.append(case)
    return seen


def per_repeat_ratios(num_runs, num_key, den_runs, den_key):
    ratios = []
    for a, b in zip(num_runs, den_runs):
        if num_key in a and den_key in b and b[den_key] > 0:
            ratios.append(a[num_key] / b[den_key])
    return ratios


def values_of(runs, key):
    return [r[key] for r in runs if key in r]


def main():
    directory, chart, peers = sys.argv[1], sys.argv[2], sys.argv[3].split()
    limit_key, limit_label = LIMITS[sys.argv[4] if len(sys.argv) > 4 else "memcpy"]
    xlite = read_runs(directory, "xlite")
    peer_runs = {p: read_runs(directory, p) for p in peers}
    header = ["case", "xlite ms", limit_label]
    for p in peers:
        header += [f"{p} ms", f"{p} / xlite", "(fastest)"]
    header.append("check")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    plot = defaultdict(lambda: defaultdict(list))  # workload -> peer -> [(size, ratio)]
    for case in cases(xlite):
        workload, size = case.rsplit(".", 1)
        t = values_of(xlite, f"{case}.xlite_ms")
        bw = per_repeat_ratios(xlite, f"{case}.{limit_key}", xlite, f"{case}.xlite_ms")
        row = [case, f"{statistics.median(t):.3f}", f"{statistics.median(bw):.2f}" if bw else "-"]
        if bw:
            plot[workload][limit_label].append((size, statistics.median(bw)))
        check = values_of(xlite, f"{case}.check")
        worst = 0.0
        for p in peers:
            pt = values_of(peer_runs[p], f"{case}.{p}_ms")
            if not pt:
                row += ["-", "-", "-"]
                continue
            ratio = statistics.median(per_repeat_ratios(peer_runs[p], f"{case}.{p}_ms", xlite, f"{case}.xlite_ms"))
            row += [f"{statistics.median(pt):.3f}", f"{ratio:.2f}", f"{min(pt) / statistics.median(t):.2f}"]
            plot[workload][p].append((size, ratio))
            pc = values_of(peer_runs[p], f"{case}.{p}_check")
            if check and pc:
                worst = max(worst, abs(pc[0] - check[0]) / max(abs(check[0]), 1e-30))
        row.append(f"{worst:.1e}")
        print("| " + " | ".join(row) + " |")
    memory_table(xlite, peer_runs, "peak")
    memory_table(xlite, peer_runs, "steady")
    draw(plot, chart)


LIMITS = {"memcpy": ("memcpy_ms", "x memcpy"), "fma": ("limit_ms", "x FMA peak")}


def memory_table(xlite, peer_runs, kind):
    """Median `kind` MiB of each program per case, and each peer's over xlite's (> 1: xlite needs less)."""
    rows = [c for c in cases(xlite) if values_of(xlite, f"{c}.xlite_{kind}_MiB")]
    if not rows:
        return
    header = [f"case ({kind} memory)", "xlite MiB"]
    for p in peer_runs:
        header += [f"{p} MiB", f"{p} / xlite"]
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for case in rows:
        mine = statistics.median(values_of(xlite, f"{case}.xlite_{kind}_MiB"))
        row = [case, f"{mine:.1f}"]
        for p, runs in peer_runs.items():
            theirs = values_of(runs, f"{case}.{p}_{kind}_MiB")
            row += [f"{statistics.median(theirs):.1f}", f"{statistics.median(theirs) / mine:.2f}"] if theirs else ["-", "-"]
        print("| " + " | ".join(row) + " |")


def axis_label(workload, sizes):
    if workload == "alone":
        return "function (16M f32)"
    if sizes and all(s.startswith("b") for s in sizes):
        return "batch"
    if sizes and all(s.startswith("s") for s in sizes):
        return "sequence (2048 tokens a step)"
    return "f32 elements"


def draw(plot, chart):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    workloads = list(plot)
    cols = min(4, len(workloads))
    rows = (len(workloads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 3.2 * rows), squeeze=False)
    axes = axes.flatten()
    for ax, workload in zip(axes, workloads):
        for series, points in plot[workload].items():
            is_limit = series in (label for _, label in LIMITS.values())
            label = f"xlite at {series.replace('x ', '')} (limit time / xlite time)" if is_limit else f"{series} time / xlite time"
            style = "k--" if is_limit else "o-"
            ax.plot([s for s, _ in points], [r for _, r in points], style, label=label)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(ticker.FixedLocator([0.2, 0.3, 0.5, 0.7, 0.85, 1, 1.2, 1.5, 2, 3, 5, 10, 20]))
        ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_title(workload, fontsize=9)
        ax.set_xlabel(axis_label(workload, [s for points in plot[workload].values() for s, _ in points]))
    for ax in axes[len(workloads):]:
        ax.axis("off")
    axes[0].set_ylabel("ratio (> 1: xlite ahead)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(chart) or ".", exist_ok=True)
    fig.savefig(chart, dpi=90)
    print(f"\nchart: {chart}")


if __name__ == "__main__":
    main()
