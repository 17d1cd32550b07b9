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

    def ms(key):
        return f"{median(lambda r: r[key]):.1f}"

    def ratio(numerator, denominator):
        return f"{median(lambda r: r[numerator] / r[denominator]):.2f}x"

    def table(header, prefix, cells):
        print(header)
        print("|" + "---|" * header.count(" | ") + "---|")
        for s in (512, 1024, 2048, 4096):
            for causal in (False, True):
                t = f"{prefix}{'causal_' if causal else ''}S{s}."
                print("| " + " | ".join([str(s), "yes" if causal else "no"] + cells(t)) + " |")

    peak = median(lambda r: r["attention.fma_peak_GFLOPs"])
    print(f"FMA peak in the same runs: {peak:.0f} GFLOP/s; {len(repeats)} repeats\n")
    table("| S | causal | flash ms | composite ms | SDPA ms | flash GFLOP/s (of peak) | flash / composite | "
          "flash / SDPA | train: flash ms | composite ms | SDPA ms | flash / composite | flash / SDPA | "
          "memory: flash / composite |", "attention_", lambda t: [
              ms(t + "flash_ms"), ms(t + "composite_ms"), ms(t + "torch_sdpa_ms"),
              f"{median(lambda r: r[t + 'flash_GFLOPs']):.0f} "
              f"({median(lambda r: r[t + 'flash_fraction_of_fma_peak']):.0%})",
              ratio(t + "composite_ms", t + "flash_ms"), ratio(t + "torch_sdpa_ms", t + "flash_ms"),
              ms(t + "flash_train_ms"), ms(t + "composite_train_ms"), ms(t + "torch_sdpa_train_ms"),
              ratio(t + "composite_train_ms", t + "flash_train_ms"),
              ratio(t + "torch_sdpa_train_ms", t + "flash_train_ms"),
              f"{median(lambda r: r[t + 'flash_temp_over_composite']):.4f}"])
    print("\nbf16 inputs (flash: bf16 tile products accumulating in f32; SDPA: PyTorch's bf16 kernel):\n")
    table("| S | causal | flash bf16 ms | flash f32 ms | f32 / bf16 | SDPA bf16 ms | flash / SDPA | "
          "train: flash bf16 ms | flash f32 ms | f32 / bf16 | SDPA bf16 ms | flash / SDPA |", "attention_bf16_",
          lambda t: [ms(t + "bf16_ms"), ms(t + "f32_ms"), ratio(t + "f32_ms", t + "bf16_ms"),
                     ms(t + "torch_sdpa_ms"), ratio(t + "torch_sdpa_ms", t + "bf16_ms"), ms(t + "bf16_train_ms"),
                     ms(t + "f32_train_ms"), ratio(t + "f32_train_ms", t + "bf16_train_ms"),
                     ms(t + "torch_sdpa_train_ms"), ratio(t + "torch_sdpa_train_ms", t + "bf16_train_ms")])
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
