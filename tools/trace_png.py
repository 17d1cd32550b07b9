#!/usr/bin/env python3
"""Draws an xlite profile trace (XLITE_PROFILE=trace.json) as a PNG timeline.

    python3 tools/trace_png.py trace.json timeline.png [--width 1600] [--from-ms A] [--to-ms B]

One band per thread; spans stack by nesting (sync, then compile or execute, then compile phases or
kernels), coloured by category and labelled where they are wide enough. Under the bands, each device's
memory in use as a line. Needs Pillow (Debian's python3-pil).
"""
import argparse
import json
import sys

from PIL import Image, ImageDraw

COLOURS = {"sync": (120, 144, 156), "trace": (255, 202, 40), "compile": (239, 83, 80), "execute": (66, 165, 245),
           "kernel": (102, 187, 106)}
ROW, PAD, LEFT, AXIS, MEMORY = 18, 6, 90, 24, 90


def human(size):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024


def depths(spans):
    """Nesting depth of each span on one thread: the number of open spans that contain it."""
    open_ends, out = [], []
    for span in sorted(spans, key=lambda s: (s["ts"], -s["dur"])):
        end = span["ts"] + span["dur"]
        while open_ends and open_ends[-1] <= span["ts"] + 1e-3:
            open_ends.pop()
        out.append((len(open_ends), span))
        open_ends.append(end)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("png")
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--from-ms", type=float, default=None)
    parser.add_argument("--to-ms", type=float, default=None)
    args = parser.parse_args()
    events = json.load(open(args.trace))["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    counters = [e for e in events if e.get("ph") == "C"]
    if not spans:
        sys.exit("trace_png.py: the trace has no spans")
    start = args.from_ms * 1e3 if args.from_ms is not None else min(s["ts"] for s in spans)
    stop = args.to_ms * 1e3 if args.to_ms is not None else max(s["ts"] + s["dur"] for s in spans)
    stop = max(stop, start + 1)
    scale = (args.width - LEFT - PAD) / (stop - start)
    x_of = lambda us: LEFT + (us - start) * scale

    threads = sorted({s["tid"] for s in spans})
    laid = {t: depths([s for s in spans if s["tid"] == t]) for t in threads}
    bands, y = {}, AXIS
    for t in threads:
        rows = 1 + max(d for d, _ in laid[t])
        bands[t] = (y, rows)
        y += rows * ROW + PAD
    memory_top = y + PAD
    height = memory_top + (MEMORY if counters else 0) + PAD
    image = Image.new("RGB", (args.width, height), "white")
    draw = ImageDraw.Draw(image)

    # Time axis: about ten ticks at round values.
    span_ms = (stop - start) / 1e3
    step = 10 ** int(f"{span_ms / 10:e}".split("e")[1])
    while span_ms / step > 12:
        step *= 2
    tick = (start / 1e3 // step + 1) * step
    while tick * 1e3 < stop:
        x = x_of(tick * 1e3)
        draw.line([(x, AXIS - 6), (x, height)], fill=(230, 230, 230))
        draw.text((x + 2, 4), f"{tick:g} ms", fill="black")
        tick += step

    for t in threads:
        top, rows = bands[t]
        draw.text((4, top + 2), f"thread {t}", fill="black")
        for depth, span in laid[t]:
            x0, x1 = x_of(span["ts"]), x_of(span["ts"] + span["dur"])
            if x1 < LEFT or x0 > args.width:
                continue
            x0, x1 = max(x0, LEFT), min(x1, args.width - PAD)
            y0 = top + depth * ROW
            draw.rectangle([x0, y0, max(x1, x0 + 1), y0 + ROW - 2], fill=COLOURS.get(span.get("cat"), (180, 180, 180)))
            label = span["name"]
            if x1 - x0 > 6 * len(label):
                draw.text((x0 + 2, y0 + 3), label, fill="black")
            elif x1 - x0 > 40:
                draw.text((x0 + 2, y0 + 3), label[: int((x1 - x0) / 6) - 1] + "~", fill="black")

    if counters:
        peak = max(c["args"]["bytes"] for c in counters) or 1
        draw.text((4, memory_top), "memory", fill="black")
        draw.text((4, memory_top + 14), "peak " + human(peak), fill="black")
        for name in sorted({c["name"] for c in counters}):
            samples = sorted((c for c in counters if c["name"] == name), key=lambda c: c["ts"])
            points = []
            for c in samples:  # a step line: the value holds until the next sample
                y = memory_top + MEMORY - 4 - (MEMORY - 8) * c["args"]["bytes"] / peak
                if points:
                    points.append((x_of(c["ts"]), points[-1][1]))
                points.append((x_of(c["ts"]), y))
            points.append((args.width - PAD, points[-1][1]))
            draw.line(points, fill=(126, 87, 194), width=2)
    legend_x = LEFT
    for category, colour in COLOURS.items():
        draw.rectangle([legend_x, height - 14, legend_x + 10, height - 4], fill=colour)
        draw.text((legend_x + 14, height - 15), category, fill="black")
        legend_x += 90
    image.save(args.png)


if __name__ == "__main__":
    main()
