#!/usr/bin/env python3
"""Draws a folded-stack file (`frame;frame;... count` per line) as a flamegraph SVG: the root
at the bottom, each frame as wide as its share of the samples, callers below callees. Hover a
frame for its name, samples and share; frames narrower than a pixel are left out.

    flamegraph.py IN.folded > OUT.svg [--title TEXT] [--width PX]
"""

import argparse
import html
import zlib

ROW = 16


def tree(path):
    """Nested {frame: [count, children]} from a folded file, and the total count."""
    root = [0, {}]
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            root[0] += n
            node = root
            for frame in stack.split(";"):
                node = node[1].setdefault(frame, [0, {}])
                node[0] += n
    return root


def colour(name):
    """A warm colour, fixed per function, so one function looks the same in every graph."""
    h = zlib.crc32(name.encode())
    return f"rgb({205 + h % 50},{(h >> 8) % 180 + 40},{(h >> 16) % 55})"


def frames(node, total, width, x, depth, out):
    for name, child in sorted(node[1].items()):
        w = child[0] / total * width
        if w >= 1:
            out.append((x, depth, w, name, child[0]))
            frames(child, total, width, x, depth + 1, out)
        x += w


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folded")
    p.add_argument("--title", default="")
    p.add_argument("--width", type=int, default=1600)
    a = p.parse_args()
    root = tree(a.folded)
    total = max(root[0], 1)
    boxes = []
    frames(root, total, a.width, 0.0, 0, boxes)
    depth = max((b[1] for b in boxes), default=0) + 1
    height = (depth + 2) * ROW
    title = html.escape(a.title or a.folded)
    print(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{height}" '
        f'font-family="monospace" font-size="11">'
    )
    print(f'<text x="4" y="{ROW - 4}">{title} ({root[0]} samples)</text>')
    for x, d, w, name, count in boxes:
        y = height - (d + 1) * ROW
        label = html.escape(name)
        share = 100 * count / total
        chars = int((w - 4) / 6.6)
        text = label if len(name) <= chars else html.escape(name[: max(chars - 2, 0)] + "..")
        print(
            f'<g><title>{label} ({count} samples, {share:.1f}%)</title>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW - 1}" '
            f'fill="{colour(name)}"/>'
            + (f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{text}</text>' if chars >= 3 else "")
            + "</g>"
        )
    print("</svg>")


if __name__ == "__main__":
    main()
