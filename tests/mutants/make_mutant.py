#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a mutant of clzero's headers: a copy of include/ with one fix undone.

    make_mutant.py MUTANT SOURCE_ROOT OUT_DIR

MUTANT is a .mutant file (format below). SOURCE_ROOT is the repository
(its include/ is copied); OUT_DIR receives include/, the mutated copy, and
the copy is made afresh each time. Every edit must find its lines exactly
once, as whole lines, in the original of the header it names (under
include/), must not overlap another edit, and the edits must change more
than whitespace: otherwise a mutant whose text moved or vanished would
build the unchanged headers, or something other than the defect it stands
for, and its verdict would be about that instead. Any such mismatch, and any malformed file, ends the tool
with status 1 and a sentence saying which.

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


def overlapping_count(text, part):
    """How many times `part` occurs in `text`, overlaps included (str.count
    skips a match that begins inside the last one: two equal lines in a row
    share the newline between them)."""
    count, at = 0, text.find(part)
    while at != -1:
        count += 1
        at = text.find(part, at + 1)
    return count


def make(mutant_path, source_root, out_dir):
    mutant_path = pathlib.Path(mutant_path)
    source_root = pathlib.Path(source_root)
    out_dir = pathlib.Path(out_dir)
    name = mutant_path.name
    edits = parse(mutant_path.read_text(encoding="utf-8"), name)
    include_root = (source_root / "include").resolve()
    # Every edit is checked against the original header, whole lines only,
    # before anything is written: one edit cannot find the text another one
    # wrote (and so undo it), nor two edits overlap.
    originals = {}  # header (relative to include/) -> its text
    spans = {}      # header -> [(start, end, new text, line of the edit)]
    for rel, find, replace, line in edits:
        path = (source_root / rel).resolve()
        try:
            key = path.relative_to(include_root)
        except ValueError:
            raise MutantError(f"{name}:{line}: {rel} is not a header under include/") from None
        if not path.is_file():
            raise MutantError(f"{name}:{line}: {rel} does not exist")
        text = originals.setdefault(key, path.read_text(encoding="utf-8"))
        anchored = "\n" + text
        count = overlapping_count(anchored, "\n" + find)
        if count != 1:
            raise MutantError(
                f"{name}:{line}: the lines to change occur {count} times in include/{key} (they must occur once, as "
                "whole lines): the code they undo has changed, so the mutant no longer stands for its defect; update "
                "the mutant")
        start = anchored.index("\n" + find)  # where `find` starts in `text`
        end = start + len(find)
        for other_start, other_end, _, other_line in spans.get(key, []):
            if start < other_end and other_start < end:
                raise MutantError(f"{name}:{line}: the edit overlaps the one at line {other_line} in include/{key}")
        spans.setdefault(key, []).append((start, end, replace, line))
    mutated = {}
    for key, text in originals.items():
        new = text
        for start, end, replace, _ in sorted(spans[key], key=lambda span: span[0], reverse=True):
            new = new[:start] + replace + new[end:]
        if new.split() == text.split():
            raise MutantError(f"{name}: the edits change only the whitespace of include/{key}: the mutant would "
                              "compile to the headers themselves")
        mutated[key] = new
    target = out_dir / "include"
    if target.exists():
        shutil.rmtree(target)
    # Plain copies, so that every file is newer than what was built from an
    # earlier copy and the build recompiles against this one.
    shutil.copytree(source_root / "include", target, copy_function=shutil.copy)
    for key, text in mutated.items():
        (target / key).write_text(text, encoding="utf-8")
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
