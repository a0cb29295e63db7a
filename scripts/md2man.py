#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn one of docs/*.N.md into a man page (roff, man macros).

    md2man.py [--version V] docs/lacunad.conf.5.md > lacunad.conf.5

The Markdown is the subset the man pages in docs/ are written in: a first
line "# NAME(SECTION)", "## HEADING" (.SH) and "### HEADING" (.SS),
paragraphs, "- " lists, "TERM" followed by ": definition" (.TP), fenced
code blocks, tables (shown as they are written), and inline `code`,
**bold**, *italic* and [links](target) (the text is kept). Standard
library only, so that building the man pages needs nothing but python3.
"""
import re
import sys

INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])\*([^*\s][^*]*?)\*(?!\w)|\[([^\]]+)\]\([^)]*\)")


def esc(text):
    """Escape what roff would read as its own."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return text.replace("\u2014", "\\(em").replace("\u2013", "\\(en").replace("\u2192", "\\(->")


def inline(text):
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(esc(text[pos:m.start()]))
        code, bold, ital, link = m.groups()
        if code is not None:
            out.append("\\fB" + esc(code) + "\\fR")
        elif bold is not None:
            out.append("\\fB" + inline(bold) + "\\fR")
        elif ital is not None:
            out.append("\\fI" + inline(ital) + "\\fR")
        else:
            out.append(inline(link))
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out)


def line_out(out, text):
    """A text line that roff must not take for a request."""
    if text.startswith((".", "'")):
        text = "\\&" + text
    out.append(text)


def convert(lines, version):
    out = []
    m = re.match(r"#\s+(\S+)\((\d)\)", lines[0]) if lines else None
    if not m:
        sys.exit("md2man: the first line must be '# NAME(SECTION)'")
    name, section = m.groups()
    out.append('.TH "%s" "%s" "" "lacuna %s" "Lacuna"' % (name.upper(), section, version))
    i, para, section = 1, [], [""]

    def flush():
        if para:
            text = inline(" ".join(para))
            if section[0] == "NAME":  # "name \- summary", as whatis(1) reads it
                text = text.replace(" \\(em ", " \\- ", 1)
            out.append(".PP")
            line_out(out, text)
            para.clear()

    while i < len(lines):
        ln = lines[i].rstrip("\n")
        s = ln.strip()
        if s.startswith("```"):
            flush()
            out.append(".PP\n.RS 4\n.nf")
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                line_out(out, esc(lines[i].rstrip("\n")))
                i += 1
            out.append(".fi\n.RE")
        elif s.startswith("|"):
            flush()
            out.append(".PP\n.RS 4\n.nf")
            while i < len(lines) and lines[i].strip().startswith("|"):
                row = lines[i].strip()
                if not re.fullmatch(r"[|\s:-]+", row):
                    cells = [c.strip() for c in row.strip("|").split("|")]
                    line_out(out, inline("  ".join(cells)))
                i += 1
            out.append(".fi\n.RE")
            continue
        elif s.startswith("### "):
            flush()
            out.append(".SS " + inline(s[4:]))
        elif s.startswith("## "):
            flush()
            section[0] = s[3:].strip().upper()
            out.append(".SH " + inline(s[3:]).upper())
        elif s.startswith("- ") or s.startswith("* "):
            flush()
            item = [s[2:]]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                item.append(lines[i].strip())
            out.append(".IP \\(bu 2")
            line_out(out, inline(" ".join(item)))
        elif s.startswith(": ") and para:
            term = " ".join(para)
            para.clear()
            item = [s[2:]]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                item.append(lines[i].strip())
            out.append(".TP")
            line_out(out, inline(term))
            line_out(out, inline(" ".join(item)))
        elif not s:
            flush()
        else:
            para.append(s)
        i += 1
    flush()
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    version = ""
    if len(args) == 3 and args[0] == "--version":
        version, args = args[1], args[2:]
    if len(args) != 1:
        sys.exit("usage: md2man.py [--version V] FILE.md")
    with open(args[0], encoding="utf-8") as f:
        sys.stdout.write(convert(f.readlines(), version))


if __name__ == "__main__":
    main()
