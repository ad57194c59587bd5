#!/usr/bin/env python3
"""Crops real DEMs into the GPU tests' fixtures (rust/orogen-gpu/tests/data/dems/).

Each DEM becomes NAME.png (16-bit grayscale) and NAME.txt (its sidecar: height = offset +
sample * scale metres, the cell size in metres, the crop, the source). Reads ESRI ASCII
grids (.asc) and single-band 16-bit TIFFs with PIL only (no numpy). The window is the one
given, or else the largest nodata-free rectangle of at most 300 x 300 cells (the GPU
refuses nodata under `device: Gpu`), so every fixture cell is a real DEM value.

    scripts/dem-fixtures.py OUT_DIR NAME SOURCE_FILE [x0 y0 w h] [--note TEXT]

The sources and crops of the committed fixtures are in the folder's README.md.
"""
import math
import sys

from PIL import Image

MAX_SIDE = 300


def read_asc(path):
    with open(path) as f:
        text = f.read().split("\n")
    header, i = {}, 0
    while i < len(text):
        parts = text[i].split()
        if parts and parts[0][0].isalpha():
            header[parts[0].lower()] = parts[1]
            i += 1
        else:
            break
    values = [float(v) for line in text[i:] for v in line.split()]
    w, h = int(header["ncols"]), int(header["nrows"])
    if len(values) != w * h:
        sys.exit(f"{path}: {len(values)} values for {w} x {h}")
    nodata = float(header.get("nodata_value", "nan"))
    size = float(header["cellsize"])
    # Geographic grids (degrees) in metres at their mid latitude.
    if size < 0.01:
        lat = float(header["yllcorner"]) + h * size / 2
        dy = size * 111_320.0
        dx = dy * math.cos(math.radians(lat))
    else:
        dx = dy = size
    return w, h, values, nodata, (dx, dy)


def read_tif(path):
    im = Image.open(path)
    w, h = im.size
    values = [float(v) for v in im.getdata()]
    scale = im.tag_v2.get(33550, (30.0, 30.0, 0.0))
    nodata = im.tag_v2.get(42113)
    nodata = float(nodata) if nodata is not None else float("nan")
    return w, h, values, nodata, (float(scale[0]), float(scale[1]))


def largest_window(w, h, ok):
    """The largest all-`ok` rectangle (x0, y0, w, h), sides capped at MAX_SIDE."""
    best = (0, 0, 0, 0, 0)
    heights = [0] * w
    for y in range(h):
        for x in range(w):
            heights[x] = heights[x] + 1 if ok[y * w + x] else 0
        for x0 in range(w):
            least = MAX_SIDE
            for x1 in range(x0, min(w, x0 + MAX_SIDE)):
                least = min(least, heights[x1])
                if least == 0:
                    break
                area = least * (x1 - x0 + 1)
                if area > best[0]:
                    best = (area, x0, y - least + 1, x1 - x0 + 1, least)
    return best[1:]


def main():
    args = sys.argv[1:]
    note = ""
    if "--note" in args:
        k = args.index("--note")
        note = args[k + 1]
        args = args[:k] + args[k + 2:]
    out, name, src = args[0], args[1], args[2]
    w, h, values, nodata, (dx, dy) = read_tif(src) if src.endswith(".tif") else read_asc(src)
    ok = [v != nodata and not math.isnan(v) for v in values]
    if len(args) >= 7:
        x0, y0, cw, ch = (int(a) for a in args[3:7])
    else:
        x0, y0, cw, ch = largest_window(w, h, ok)
    cells = [values[(y0 + y) * w + x0 + x] for y in range(ch) for x in range(cw)]
    if not all(ok[(y0 + y) * w + x0 + x] for y in range(ch) for x in range(cw)):
        sys.exit(f"{name}: the window has nodata")
    lo, hi = min(cells), max(cells)
    # The coarsest decimal step that keeps every value, else the finest that fits 16 bits.
    scale = None
    for step in (1.0, 0.1, 0.01, 0.001):
        if (hi - lo) / step > 65535:
            break
        scale = step
        if all(abs(v / step - round(v / step)) < 1e-6 for v in cells):
            break
    offset = math.floor(lo / scale) * scale
    samples = [round((v - offset) / scale) for v in cells]
    worst = max(abs(offset + s * scale - v) for s, v in zip(samples, cells))
    img = Image.new("I;16", (cw, ch))
    img.putdata(samples)
    img.save(f"{out}/{name}.png", optimize=True)
    with open(f"{out}/{name}.txt", "w") as f:
        f.write(f"offset {offset:.3f}\nscale {scale}\n")
        f.write(f"cell_size {dx:.2f} {dy:.2f}\n")
        f.write(f"crop {x0} {y0} {cw} {ch} of {w} {h}\n")
        f.write(f"quantisation {worst:.4f}\n")
        if note:
            f.write(f"source {note}\n")
    print(f"{name}: {cw} x {ch} at ({x0}, {y0}) of {w} x {h}, {lo}..{hi} m, "
          f"scale {scale} m (worst rounding {worst:.4f} m), cells {dx:.2f} x {dy:.2f} m")


if __name__ == "__main__":
    main()
