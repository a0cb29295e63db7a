#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check that #include lines follow Lacuna's layers.

lacunad's folders are layers (gateway/README.md), from the top:
xprt (transports) -> rpc -> nfs4 -> state -> export -> config -> common.
A file may include headers of its own layer and of the layers below it,
never above. Each program (fusefs/, gateway/, tools/, lib/) may include
its own headers, common/ and include/, never another program's.
tests/ and bench/ reach into everything on purpose and are not checked.

usage: check-layers.py [--graph] [SRCDIR]
Prints every include that breaks a rule and exits 1 if there is one;
--graph also prints the include edges between folders.
"""
import os
import re
import sys

# lacunad's layers, the highest first; a folder not listed takes its parent's rank
LAYERS = ["gateway", "gateway/xprt", "gateway/rpc", "gateway/nfs4", "gateway/state",
          "gateway/export", "gateway/config", "common"]
PROGRAMS = ["fusefs", "gateway", "tools", "lib"]
SHARED = ["common", "include"]
CHECKED = PROGRAMS + SHARED
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def folder_of(path):
    return os.path.dirname(path)


def layer_rank(folder):
    """Rank of a folder in LAYERS (0: the top), or None outside them."""
    while folder:
        if folder in LAYERS:
            return LAYERS.index(folder)
        folder = os.path.dirname(folder)
    return None


def program_of(path):
    top = path.split("/", 1)[0]
    return top if top in PROGRAMS + SHARED else None


def sources(src):
    for top in CHECKED:
        for root, _, files in os.walk(os.path.join(src, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(root, f), src)


def main(argv):
    graph = "--graph" in argv
    args = [a for a in argv if not a.startswith("--")]
    src = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = sorted(sources(src))
    by_name = {}
    for f in files:
        if f.endswith(".h"):
            by_name.setdefault(os.path.basename(f), []).append(f)
    bad = []
    edges = {}
    checked = 0
    for f in files:
        prog = program_of(f)
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fp:
            lines = fp.readlines()
        for no, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<":
                if not name.startswith("lacuna/"):
                    continue
                target = "include/" + name
            else:
                rel = os.path.normpath(os.path.join(folder_of(f), name))
                if os.path.exists(os.path.join(src, rel)):
                    target = rel
                else:
                    cands = by_name.get(os.path.basename(name), [])
                    # a program's own headers first, then the shared ones
                    own = [c for c in cands if program_of(c) == prog] or \
                          [c for c in cands if program_of(c) in SHARED] or cands
                    if len(own) != 1:
                        if name != "config.h":
                            bad.append(f"{f}:{no}: \"{name}\" names {len(own)} headers")
                        continue
                    target = own[0]
            checked += 1
            tprog = program_of(target)
            a, b = folder_of(f), folder_of(target)
            if a != b:
                edges[(a, b)] = edges.get((a, b), 0) + 1
            if tprog != prog and tprog not in SHARED:
                bad.append(f"{f}:{no}: includes {target}: {prog}/ may not include from {tprog}/")
                continue
            ra, rb = layer_rank(a), layer_rank(b)
            if ra is not None and rb is not None and rb < ra:
                bad.append(f"{f}:{no}: includes {target}: {b}/ is above {a}/")
    if graph:
        for (a, b), n in sorted(edges.items()):
            print(f"{a} -> {b}: {n}")
    for line in bad:
        print(line)
    print(f"{checked} includes checked, {len(bad)} against the layers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
