#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# map-svg.py: draw the data/hole layout of a file as an SVG picture, from
# the JSON that `lacuna map --json` (or `lacuna nfs-map --json`) prints.
#
#   lacuna map --json FILE | scripts/map-svg.py -o FILE.svg
#   scripts/map-svg.py -o out.svg --title "disk.img on XFS" \
#       --map "local (lacunafs)" local.json --map "over NFS" nfs.json
#
# Each map becomes one horizontal bar, the file's first byte on the left
# and its end on the right: data blue, holes light grey. Several maps of
# the same file (say, the local one and the one read over NFS) are drawn
# one under the other on the same scale, so that they can be compared by
# eye. A data segment narrower than a pixel is still drawn one pixel
# wide, or a database page in a large file would not show; the totals
# under each bar give the exact byte counts, and hovering a segment in a
# browser shows its offset and length. Standard library only.
import argparse
import html
import json
import sys

WIDTH = 960  # whole picture
MARGIN = 20
BAR_X = MARGIN
BAR_W = WIDTH - 2 * MARGIN
BAR_H = 34
DATA = "#2563eb"
HOLE = "#e5e7eb"
TEXT = "#111827"
MUTED = "#4b5563"
UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]


def human(v):
    """Bytes in powers of 1024, as `lacuna map` prints them."""
    d, i = float(v), 0
    while d >= 1024 and i < len(UNITS) - 1:
        d /= 1024
        i += 1
    return "%d B" % v if i == 0 else "%.1f %s" % (d, UNITS[i])


def tick_label(v):
    """A tick offset: exact in the largest unit that divides it."""
    if v == 0:
        return "0"
    i = 0
    while i < len(UNITS) - 1 and v % 1024 == 0:
        v //= 1024
        i += 1
    return "%d %s" % (v, UNITS[i])


def tick_step(size):
    """A power of two giving 4 to 8 intervals over size."""
    step = 1
    while size / step > 8:
        step *= 2
    return step


def load(path):
    try:
        with (sys.stdin if path == "-" else open(path)) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("map-svg: %s: %s" % (path, e))
    for key in ("size", "segments"):
        if key not in m:
            sys.exit("map-svg: %s: no '%s' (not the output of lacuna map --json?)"
                     % (path, key))
    return m


def spans(m, size):
    """Data segments as pixel spans [x0, x1), neighbours within a pixel merged."""
    out = []
    for s in m["segments"]:
        if s["kind"] != "data" or s["length"] <= 0:
            continue
        x0 = BAR_W * s["offset"] / size
        x1 = max(BAR_W * (s["offset"] + s["length"]) / size, x0 + 1)
        if out and x0 <= out[-1][1] + 0.5:
            out[-1][1] = max(out[-1][1], x1)
            out[-1][2].append(s)
        else:
            out.append([x0, x1, [s]])
    return out


def seg_title(segs):
    if len(segs) == 1:
        s = segs[0]
        return "data at %d (%s), %d bytes (%s)" % (
            s["offset"], tick_label(s["offset"]) if s["offset"] % 1024 == 0
            else human(s["offset"]), s["length"], human(s["length"]))
    n = sum(s["length"] for s in segs)
    return "%d data segments from %d to %d, %d bytes (%s) of data" % (
        len(segs), segs[0]["offset"], segs[-1]["offset"] + segs[-1]["length"],
        n, human(n))


def draw(maps, title):
    size = max(max(m["size"] for _, m in maps), 1)
    out = []
    y = MARGIN
    out.append('<text x="%d" y="%d" font-size="16" font-weight="bold" fill="%s">%s</text>'
               % (MARGIN, y + 14, TEXT, html.escape(title)))
    y += 28
    for label, m in maps:
        data = m.get("data_bytes", sum(s["length"] for s in m["segments"]
                                       if s["kind"] == "data"))
        holes = m.get("hole_bytes", sum(s["length"] for s in m["segments"]
                                        if s["kind"] == "hole"))
        extra = []
        if "atomic" in m:
            extra.append("atomic map" if m["atomic"] else "not atomic")
        if "op" in m:
            extra.append("from %s replies" % m["op"])
        out.append('<text x="%d" y="%d" font-size="13" fill="%s">%s</text>'
                   % (BAR_X, y + 12, TEXT, html.escape(label + (
                       " (%s)" % ", ".join(extra) if extra else ""))))
        y += 18
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s">'
                   '<title>holes: %s</title></rect>'
                   % (BAR_X, y, BAR_W, BAR_H, HOLE, human(holes)))
        for x0, x1, segs in spans(m, size):
            out.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s">'
                       '<title>%s</title></rect>'
                       % (BAR_X + x0, y, x1 - x0, BAR_H, DATA, html.escape(seg_title(segs))))
        if m["size"] < size:  # a shorter file: mark its end
            x = BAR_X + BAR_W * m["size"] / size
            out.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="%s"/>'
                       % (x, y - 3, x, y + BAR_H + 3, TEXT))
        y += BAR_H
        nseg = len(m["segments"])
        pct = 100.0 * data / m["size"] if m["size"] else 0.0
        line = "%d segments: data %s (%.2f%%), holes %s" % (nseg, human(data), pct, human(holes))
        if "allocated_bytes" in m:
            line += ", allocated %s" % human(m["allocated_bytes"])
        narrow = sum(1 for sg in m["segments"]
                     if sg["kind"] == "data" and 0 < BAR_W * sg["length"] / size < 1)
        if narrow:
            line += "; %d data segment%s narrower than a pixel, widened to one" % (
                narrow, "" if narrow == 1 else "s")
        out.append('<text x="%d" y="%d" font-size="12" fill="%s">%s</text>'
                   % (BAR_X, y + 15, MUTED, html.escape(line)))
        y += 30
    # the offset scale, under the last bar
    step = tick_step(size)
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>'
               % (BAR_X, y, BAR_X + BAR_W, y, MUTED))
    t = 0
    while t <= size:
        x = BAR_X + BAR_W * t / size
        anchor = "start" if t == 0 else "end" if x > BAR_X + BAR_W - 30 else "middle"
        out.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="%s"/>'
                   % (x, y, x, y + 5, MUTED))
        out.append('<text x="%.2f" y="%d" font-size="11" text-anchor="%s" fill="%s">%s</text>'
                   % (x, y + 17, anchor, MUTED, tick_label(t)))
        t += step
    y += 30
    # legend
    out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
               '<text x="%d" y="%d" font-size="12" fill="%s">data</text>'
               % (BAR_X, y, DATA, BAR_X + 17, y + 10, TEXT))
    out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s" stroke="%s" '
               'stroke-width="0.5"/><text x="%d" y="%d" font-size="12" fill="%s">hole</text>'
               % (BAR_X + 70, y, HOLE, MUTED, BAR_X + 87, y + 10, TEXT))
    out.append('<text x="%d" y="%d" font-size="11" fill="%s">file offset, %s per pixel; '
               'data narrower than a pixel is widened to one (said under its bar)</text>'
               % (BAR_X + 150, y + 10, MUTED, human(size // BAR_W or 1)))
    y += 12 + MARGIN
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d" font-family="sans-serif">\n'
            '<rect width="100%%" height="100%%" fill="white"/>\n%s\n</svg>\n'
            % (WIDTH, y, WIDTH, y, "\n".join(out)))


def main():
    p = argparse.ArgumentParser(
        description="Draw the data/hole layout of files from `lacuna map --json`.")
    p.add_argument("json", nargs="*", help="a map in JSON ('-': standard input)")
    p.add_argument("--map", nargs=2, action="append", default=[], metavar=("LABEL", "JSON"),
                   help="a map with the label to show above its bar (repeatable)")
    p.add_argument("--title", help="the title (default: the first map's file name)")
    p.add_argument("-o", "--output", default="-", help="the SVG file (default: standard output)")
    a = p.parse_args()
    maps = [(lbl, load(path)) for lbl, path in a.map]
    for path in a.json:
        m = load(path)
        maps.append((m.get("file", path), m))
    if not maps:
        p.error("no map given")
    svg = draw(maps, a.title or maps[0][1].get("file", "file layout"))
    if a.output == "-":
        sys.stdout.write(svg)
    else:
        with open(a.output, "w") as f:
            f.write(svg)


if __name__ == "__main__":
    main()
