#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the documentation says what the code does.

    check_docs.py remedies            docs/reliability.md's remedies are in the headers' messages
    check_docs.py api XML_DIR         every public declaration Doxygen finds is named in docs/api.md
    check_docs.py api-list            print the declarations docs/api.md must name (needs XML_DIR)

Exit status 1, with every discrepancy listed, when the documentation is wrong.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = os.path.join(ROOT, "include", "clzero")

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)


def string_literals(text):
    """The string literals of a C++ source, adjacent ones joined (as the compiler joins them)."""
    out, current, last_end = [], None, 0
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if not tok.startswith('"'):
            if current is not None:
                out.append(current)
                current = None
            continue
        value = bytes(tok[1:-1], "utf-8").decode("unicode_escape", errors="replace") if "\\" in tok else tok[1:-1]
        if current is not None and text[last_end:m.start()].strip() == "":
            current += value
        else:
            if current is not None:
                out.append(current)
            current = value
        last_end = m.end()
    if current is not None:
        out.append(current)
    return out


def header_messages():
    literals = []
    for base, _, files in os.walk(INCLUDE):
        for f in sorted(files):
            if f.endswith(".hpp"):
                with open(os.path.join(base, f), encoding="utf-8") as fh:
                    literals += string_literals(fh.read())
    return literals


def check_remedies():
    path = os.path.join(ROOT, "docs", "reliability.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("<!-- remedies"))
    except StopIteration:
        print("check_docs: docs/reliability.md has no '<!-- remedies' table")
        return 1
    rows = []
    for line in lines[start + 3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = re.fullmatch(r"`(.+)`", cells[-1])
        if not m:
            print("check_docs: docs/reliability.md: a remedy is not one code span: %s" % line)
            return 1
        rows.append((cells[0], m.group(1)))
    if not rows:
        print("check_docs: docs/reliability.md: the remedies table is empty")
        return 1
    literals = header_messages()
    missing = [(where, remedy) for where, remedy in rows if not any(remedy in lit for lit in literals)]
    for where, remedy in missing:
        print("check_docs: docs/reliability.md says %s's message ends in %r; no message in include/clzero does" %
              (where, remedy))
    if missing:
        return 1
    print("check_docs: the %d remedies in docs/reliability.md are in the headers' messages" % len(rows))
    return 0


def main(argv):
    if argv[:1] == ["remedies"]:
        return check_remedies()
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
