"""The table of bench/attention.sh: medians over the repeats of xlite_bench's and attention_peer.py's lines.

Each ratio is the median of the ratios within each repeat (both programs ran back to back), so one
disturbed process does not decide it. usage: attention_table.py RESULTS_DIR
"""

import pathlib
import statistics
import sys


def read(path):
    values = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and not line.startswith("#"):
            values[parts[0]] = float(parts[1])
    return values


def main():
    folder = pathlib.Path(sys.argv[1])
    repeats = []
    for xlite in sorted(folder.glob("xlite_*.txt")):
        merged = read(xlite)
        torch_file = folder / xlite.name.replace("xlite_", "torch_")
        if torch_file.exists():
            merged.update(read(torch_file))
        repeats.append(merged)

    def median(fn):
        values = []
        for r in repeats:
            try:
                values.append(fn(r))
            except (KeyError, ZeroDivisionError):
                pass
        return statistics.median(values) if values else float("nan")

    peak = median(lambda r: r["attention.fma_peak_GFLOPs"])
    print(f"FMA peak in the same runs: {peak:.0f} GFLOP/s; {len(repeats)} repeats\n")
    print("| S | causal | flash ms | composite ms | SDPA ms | flash GFLOP/s (of peak) | flash / composite | "
          "flash / SDPA | train: flash ms | composite ms | SDPA ms | flash / composite | flash / SDPA | "
          "memory: flash / composite |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in (512, 1024, 2048, 4096):
        for causal in (False, True):
            t = f"attention_{'causal_' if causal else ''}S{s}."
            row = [
                str(s), "yes" if causal else "no",
                f"{median(lambda r: r[t + 'flash_ms']):.1f}",
                f"{median(lambda r: r[t + 'composite_ms']):.1f}",
                f"{median(lambda r: r[t + 'torch_sdpa_ms']):.1f}",
                f"{median(lambda r: r[t + 'flash_GFLOPs']):.0f} "
                f"({median(lambda r: r[t + 'flash_fraction_of_fma_peak']):.0%})",
                f"{median(lambda r: r[t + 'composite_ms'] / r[t + 'flash_ms']):.2f}x",
                f"{median(lambda r: r[t + 'torch_sdpa_ms'] / r[t + 'flash_ms']):.2f}x",
                f"{median(lambda r: r[t + 'flash_train_ms']):.1f}",
                f"{median(lambda r: r[t + 'composite_train_ms']):.1f}",
                f"{median(lambda r: r[t + 'torch_sdpa_train_ms']):.1f}",
                f"{median(lambda r: r[t + 'composite_train_ms'] / r[t + 'flash_train_ms']):.2f}x",
                f"{median(lambda r: r[t + 'torch_sdpa_train_ms'] / r[t + 'flash_train_ms']):.2f}x",
                f"{median(lambda r: r[t + 'flash_temp_over_composite']):.4f}",
            ]
            print("| " + " | ".join(row) + " |")
    p = "paged_decode_B8_H32_kv8_D128_S2048."
    print("\n| decode | paged ms | contiguous (ops) ms | SDPA ms | paged / contiguous time | paged GB/s | "
          "memcpy GB/s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| B8 H32 Hkv8 D128 S2048 page 16 | {median(lambda r: r[p + 'paged_ms']):.2f} | "
          f"{median(lambda r: r[p + 'contiguous_ms']):.2f} | {median(lambda r: r[p + 'torch_sdpa_ms']):.2f} | "
          f"{median(lambda r: r[p + 'paged_over_contiguous_time']):.2f} | {median(lambda r: r[p + 'paged_GBps']):.1f} | "
          f"{median(lambda r: r[p + 'memcpy_GBps']):.1f} |")


if __name__ == "__main__":
    main()
