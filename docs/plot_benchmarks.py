#!/usr/bin/env python3
"""Draws the attention-lab benchmark tables of docs/benchmarks-log.md as log-log SVG plots.

Dev-time tool, standard library only:  python3 docs/plot_benchmarks.py
Reads the "**Name** — wall ms / process CPU ms / peak MiB" tables and writes
docs/bench-maps.svg (one head's map) and docs/bench-outputs.svg (attention outputs), plotting
process CPU time (the steadier figure on a shared machine) against n.
"""
import math
import pathlib
import re

DOCS = pathlib.Path(__file__).resolve().parent
COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"]


def read_tables(markdown):
    """{table name: {column: [(n, cpu_ms), ...]}} for every wall/CPU/MiB table."""
    tables = {}
    for match in re.finditer(r"\*\*(\w+)\*\* — wall ms / process CPU ms / peak MiB\n\n(.*?)\n\n", markdown, re.S):
        rows = [r.strip().strip("|").split("|") for r in match.group(2).splitlines()]
        header = [h.strip() for h in rows[0]]
        series = {h: [] for h in header[1:]}
        for row in rows[2:]:
            n = int(row[0])
            for name, cell in zip(header[1:], row[1:]):
                parts = cell.strip().split("/")
                if len(parts) == 3:
                    series[name].append((n, float(parts[1])))
        tables[match.group(1)] = series
    return tables


def plot(path, title, lines):
    """lines: [(label, colour, dashed, [(n, ms)])] -> a log-log SVG line chart."""
    width, height, left, right, top, bottom = 640, 400, 70, 190, 40, 50
    points = [p for _, _, _, pts in lines for p in pts]
    xs = [math.log10(n) for n, _ in points]
    ys = [math.log10(ms) for _, ms in points]
    x0, x1 = math.floor(min(xs) * 2) / 2, math.ceil(max(xs) * 2) / 2
    y0, y1 = math.floor(min(ys)), math.ceil(max(ys))
    px = lambda x: left + (x - x0) / (x1 - x0) * (width - left - right)
    py = lambda y: height - bottom - (y - y0) / (y1 - y0) * (height - top - bottom)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="DejaVu Sans, sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="13" font-weight="bold">{title}</text>']
    for e in range(y0, y1 + 1):  # decades of milliseconds
        y = py(e)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0 ** e:g}</text>')
    ns = sorted({n for n, _ in points})
    for n in ns:
        x = px(math.log10(n))
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">sequence length n</text>')
    out.append(f'<text transform="translate(18 {(top + height - bottom) / 2}) rotate(-90)" text-anchor="middle">'
               'process CPU time (ms, log scale)</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
               'fill="none" stroke="#444"/>')
    for i, (label, colour, dashed, pts) in enumerate(lines):
        path_d = " ".join(f"{'M' if j == 0 else 'L'}{px(math.log10(n)):.1f},{py(math.log10(ms)):.1f}"
                          for j, (n, ms) in enumerate(pts))
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        out.append(f'<path d="{path_d}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for n, ms in pts:
            out.append(f'<circle cx="{px(math.log10(n)):.1f}" cy="{py(math.log10(ms)):.1f}" r="2.5" fill="{colour}"/>')
        ly = top + 10 + i * 18
        out.append(f'<line x1="{width - right + 12}" x2="{width - right + 36}" y1="{ly}" y2="{ly}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{width - right + 42}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def main():
    tables = read_tables((DOCS / "benchmarks-log.md").read_text())
    maps = []
    for i, name in enumerate(["DotMap", "LinearMap", "FavorMap", "AdditiveMap"]):
        short = name[:-3].lower()
        maps.append((f"{short} (AttnScope)", COLOURS[i], False, tables[name]["Core"]))
        maps.append((f"{short} (plain LibTorch)", COLOURS[i], True, tables[name]["Plain"]))
    plot(DOCS / "bench-maps.svg", "One head's attention map, causal, d = 64 (CPU)", maps)
    outputs = [
        ("dot (AttnScope)", COLOURS[0], False, tables["DotOutput"]["Core"]),
        ("dot (plain LibTorch)", COLOURS[0], True, tables["DotOutput"]["Plain"]),
        ("linear (AttnScope)", COLOURS[1], False, tables["LinearOutput"]["Core"]),
        ("linear (plain cumsum)", COLOURS[1], True, tables["LinearOutput"]["PlainCumsum"]),
        ("linear (plain n²)", COLOURS[2], True, tables["LinearOutput"]["PlainQuadratic"]),
    ]
    plot(DOCS / "bench-outputs.svg", "Causal attention output, one head, d = 64 (CPU)", outputs)


if __name__ == "__main__":
    main()
