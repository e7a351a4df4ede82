#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a mutant of clzero's headers: a copy of include/ with one fix undone.

    make_mutant.py MUTANT SOURCE_ROOT OUT_DIR

MUTANT is a .mutant file (format below). SOURCE_ROOT is the repository
(its include/ is copied); OUT_DIR receives include/, the mutated copy, and
the copy is made afresh each time. Every edit must find its text exactly
once in the file it names, and must change it: a mutant whose text moved
or vanished would otherwise build the unchanged headers, and the test meant
to kill it would pass for the wrong reason. Any such mismatch, and any
malformed file, ends the tool with status 1 and a sentence saying which.

The format: lines before the first edit and between edits are comments
(start with #) or blank. An edit is

    file: include/clzero/some/header.hpp
    <<<<
    the text as it is now (whole lines)
    ====
    the text the mutant has instead (may be empty)
    >>>>

and a later edit without its own file: line applies to the last file named.
"""

import pathlib
import shutil
import sys


class MutantError(Exception):
    pass


def parse(text, name):
    edits = []
    current_file = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped == "" or stripped.startswith("#"):
            i += 1
            continue
        if stripped.startswith("file:"):
            current_file = stripped[len("file:"):].strip()
            if not current_file.startswith("include/"):
                raise MutantError(f"{name}:{i + 1}: a mutant changes headers under include/ only, not {current_file!r}")
            i += 1
            continue
        if stripped != "<<<<":
            raise MutantError(f"{name}:{i + 1}: expected 'file:', '<<<<', a comment or a blank line, found {line!r}")
        if current_file is None:
            raise MutantError(f"{name}:{i + 1}: an edit before any 'file:' line")
        start = i + 1
        try:
            middle = lines.index("====", start)
            end = lines.index(">>>>", middle + 1)
        except ValueError:
            raise MutantError(f"{name}:{i + 1}: an edit without its '====' and '>>>>' lines") from None
        if "<<<<" in lines[start:end]:
            raise MutantError(f"{name}:{i + 1}: an edit not closed by '>>>>' before the next '<<<<'")
        find = "\n".join(lines[start:middle]) + "\n"
        replace = "\n".join(lines[middle + 1:end]) + "\n" if end > middle + 1 else ""
        if find.strip() == "":
            raise MutantError(f"{name}:{i + 1}: an edit with no text to find")
        if find == replace:
            raise MutantError(f"{name}:{i + 1}: an edit whose new text is its old text changes nothing")
        edits.append((current_file, find, replace, i + 1))
        i = end + 1
    if not edits:
        raise MutantError(f"{name}: no edit: the mutant would be the headers themselves")
    return edits


def make(mutant_path, source_root, out_dir):
    mutant_path = pathlib.Path(mutant_path)
    source_root = pathlib.Path(source_root)
    out_dir = pathlib.Path(out_dir)
    name = mutant_path.name
    edits = parse(mutant_path.read_text(encoding="utf-8"), name)
    # Check every edit against the original headers before anything is written.
    changed = {}
    for rel, find, replace, line in edits:
        original = source_root / rel
        if not original.is_file():
            raise MutantError(f"{name}:{line}: {rel} does not exist")
        text = changed.get(rel)
        if text is None:
            text = original.read_text(encoding="utf-8")
        count = text.count(find)
        if count != 1:
            raise MutantError(
                f"{name}:{line}: the text to change occurs {count} times in {rel} (it must occur once): the code "
                "it undoes has changed, so the mutant no longer stands for its defect; update the mutant")
        changed[rel] = text.replace(find, replace, 1)
    target = out_dir / "include"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source_root / "include", target)
    for rel, text in changed.items():
        (out_dir / rel).write_text(text, encoding="utf-8")
    return len(edits)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        count = make(argv[1], argv[2], argv[3])
    except (MutantError, OSError, UnicodeDecodeError) as error:
        print(f"make_mutant.py: {error}", file=sys.stderr)
        return 1
    print(f"make_mutant.py: {pathlib.Path(argv[1]).name}: {count} edit(s) applied under {argv[3]}/include")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
