#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the documentation says what the code does.

    check_docs.py remedies            docs/reliability.md's remedies are in the headers' messages
    check_docs.py links               every relative link of the documents leads to a file (and a
                                      heading), and every comment citing a document's section names
                                      one that exists
    check_docs.py api DOXYGEN OUT_DIR every public declaration (Doxygen's XML of the repository's
                                      Doxyfile, written to OUT_DIR), CMake option, environment
                                      variable and clzero-info flag is named in docs/api.md

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
    missing = [(where, remedy) for where, remedy in rows if not any(lit.endswith(remedy) for lit in literals)]
    for where, remedy in missing:
        print("check_docs: docs/reliability.md says %s's message ends in %r; no message in include/clzero does" %
              (where, remedy))
    if missing:
        return 1
    print("check_docs: the %d remedies in docs/reliability.md are in the headers' messages" % len(rows))
    return 0


# ---------------------------------------------------------------- api.md

SKIP_MEMBERS = re.compile(r"^(operator\W.*|operator bool|~.*)$")


def doxygen_xml(doxygen, out):
    """Runs Doxygen on the repository's Doxyfile with XML output into OUT; returns the XML folder."""
    import subprocess
    os.makedirs(out, exist_ok=True)
    conf = os.path.join(out, "Doxyfile")
    with open(conf, "w") as f:
        f.write("@INCLUDE = %s\nOUTPUT_DIRECTORY = %s\nGENERATE_HTML = NO\nGENERATE_XML = YES\n"
                "XML_PROGRAMLISTING = NO\nSOURCE_BROWSER = NO\nQUIET = YES\nWARNINGS = NO\n" %
                (os.path.join(ROOT, "Doxyfile"), out))
    subprocess.run([doxygen, conf], cwd=ROOT, check=True)
    return os.path.join(out, "xml")


def public_declarations(xml_dir):
    """[(scope, name, kind)]: every public class, member, free function, enum value and macro."""
    out = []
    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    for c in index.findall("compound"):
        kind = c.get("kind")
        if kind not in ("class", "struct", "namespace", "file"):
            continue
        tree = ET.parse(os.path.join(xml_dir, c.get("refid") + ".xml")).getroot()
        comp = tree.find("compounddef")
        cname = comp.findtext("compoundname")
        if "detail" in cname.split("::") or cname == "std":
            continue
        if kind in ("class", "struct"):
            out.append(("", cname, kind, "namespace"))
        for m in comp.iter("memberdef"):
            mk, prot = m.get("kind"), m.get("prot")
            name = m.findtext("name")
            if prot != "public" or mk == "friend" or SKIP_MEMBERS.match(name):
                continue
            if kind == "file" and mk != "define":
                continue  # free functions are listed under their namespace
            if mk == "define" and name.startswith("CLZERO_DETAIL_"):
                continue
            if kind in ("class", "struct") and name == cname.split("::")[-1]:
                continue  # constructors: documented with their class
            scope_kind = "namespace" if kind in ("namespace", "file") else "class"
            out.append((cname if kind != "file" else "", name, mk, scope_kind))
            if mk == "enum":
                for v in m.findall("enumvalue"):
                    out.append((cname if kind != "file" else "", v.findtext("name"), "enumvalue", scope_kind))
    return out


def api_sections(text):
    """docs/api.md cut at every heading: [(heading, body)]."""
    sections, heading, body = [], "", []
    for line in text.split("\n"):
        if line.startswith("#"):
            sections.append((heading, "\n".join(body)))
            heading, body = line, []
        else:
            body.append(line)
    sections.append((heading, "\n".join(body)))
    return sections


def code_identifiers(text):
    """Every identifier inside a code span or a code block of `text`."""
    spans = re.findall(r"```.*?```|`[^`]+`", text, re.S)
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(spans)))


def words(text):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def other_names():
    """What a user sets or types besides C++: the CMake options and cache
    variables of the project and its test suites, the environment variables
    the library, clzero-info and the main test suite read, and clzero-info's
    flags. (The fault layer's and the benchmarks' variables are documented
    with them, in reliability.md and benchmarks.md.)"""
    names = []
    cmake = [os.path.join(ROOT, "CMakeLists.txt"), os.path.join(ROOT, "tests", "CMakeLists.txt")]
    for sub in ("tests", "examples", "tools"):
        for d in sorted(os.listdir(os.path.join(ROOT, sub))):
            if os.path.isfile(os.path.join(ROOT, sub, d, "CMakeLists.txt")):
                cmake.append(os.path.join(ROOT, sub, d, "CMakeLists.txt"))
    cmake.append(os.path.join(ROOT, "tools", "CMakeLists.txt"))
    for path in cmake:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        rel = os.path.relpath(path, ROOT)
        for n in re.findall(r"\boption\(\s*(CLZERO_[A-Z0-9_]+)", text):
            names.append(("CMake option (%s)" % rel, n))
        for n in re.findall(r"\bset\(\s*(CLZERO_[A-Z0-9_]+)[^)]*\bCACHE\b", text):
            names.append(("CMake cache variable (%s)" % rel, n))
    sources = []
    for base, _, files in os.walk(os.path.join(ROOT, "include")):
        sources += [os.path.join(base, f) for f in files if f.endswith(".hpp")]
    for d in (os.path.join(ROOT, "tools"), os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "support")):
        sources += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith((".hpp", ".cpp"))]
    for path in sources:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for n in re.findall(r'getenv\(\s*"(CLZERO_[A-Z0-9_]+)"', text):
            names.append(("environment variable (%s)" % os.path.relpath(path, ROOT), n))
        if os.path.basename(path) == "clzero_info.cpp":
            for n in re.findall(r'"(--[a-z][a-z0-9-]*)', text):
                names.append(("clzero-info flag", n))
    return sorted(set(names))


def check_api(doxygen, out):
    with open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8") as f:
        api = f.read()
    sections = api_sections(api)
    everywhere = code_identifiers(api)
    protocol = [body for heading, body in sections if "policy protocol" in heading]
    missing = []
    for scope, name, kind, scope_kind in public_declarations(doxygen_xml(doxygen, out)):
        if scope_kind == "namespace":
            # A class, a free function, an enum or its values, a type alias, a
            # macro: named in code somewhere on the page.
            if name.split("::")[-1] not in everywhere:
                missing.append("%s %s" % (kind, "::".join(x for x in (scope, name) if x)))
            continue
        # A member: named in code in a section that names its class (a policy's
        # protocol members also in the policy protocol's section).
        cls = scope.split("::")[-1]
        outer = scope.split("::")[-2] if scope.count("::") >= 2 else ""
        bodies = [h + "\n" + b for h, b in sections if cls in words(h) or cls in code_identifiers(b)]
        if scope.startswith("clzero::policy::"):
            bodies += protocol
        if outer and outer != "policy":  # a nested type (Auto::Options): the outer class's sections too
            bodies += [h + "\n" + b for h, b in sections if outer in words(h) or outer in code_identifiers(b)]
        if not any(name in code_identifiers(b) for b in bodies):
            missing.append("%s %s::%s" % (kind, scope, name))
    for what, name in other_names():
        if not re.search(r"`[^`\n]*" + re.escape(name) + r"(?![A-Za-z0-9_-])[^`\n]*`", api):
            missing.append("%s %s" % (what, name))
    for m in missing:
        print("check_docs: docs/api.md does not name the public %s" % m)
    if missing:
        print("check_docs: %d public declarations are missing from docs/api.md: add each where its class is "
              "described (in a code span), or move it into clzero::detail" % len(missing))
        return 1
    print("check_docs: every public declaration is named in docs/api.md")
    return 0


# ---------------------------------------------------------------- links

def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lstrip("#").strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_files():
    out = [os.path.join(ROOT, "README.md")]
    for base, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(base, ROOT)
        # .mnn: MNN's source tree, fetched by examples/engines/mnn/build.sh (git-ignored)
        if rel.startswith(("build", ".git", ".mnn")) or "/build" in rel or rel.startswith("docs/logs"):
            dirs[:] = []
            continue
        out += [os.path.join(base, f) for f in files if f.endswith(".md") and os.path.join(base, f) not in out]
    return out


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {slug(l) for l in text.split("\n") if l.startswith("#")}


def section_named(path, name):
    """Whether the document has a heading or a bold lead-in that reads `name`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("`", "")
    flat = re.sub(r"\s+", " ", text)
    return any(name in h for h in re.findall(r"^#+ (.*)$", text, re.M)) or \
        any(name in b for b in re.findall(r"\*\*(.+?)\*\*", flat))


def check_links():
    problems = []
    for md in markdown_files():
        rel_md = os.path.relpath(md, ROOT)
        with open(md, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"```.*?```|`[^`]*`", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if not os.path.exists(dest):
                problems.append("%s links to %s, which does not exist" % (rel_md, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append("%s links to %s: %s has no such heading" % (rel_md, target,
                                                                         os.path.relpath(dest, ROOT)))
    # Comments and documents that cite a section: docs/NAME.md, "Section".
    cite = re.compile(r'(docs/[a-z_]+\.md),\s*(?://\s*)?"([^"]+)"')
    for base, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(base, ROOT)
        if rel.startswith(("build", ".git", ".mnn", "docs/logs", "docs/bench")) or "/build" in rel:
            dirs[:] = []
            continue
        for f in files:
            if not f.endswith((".hpp", ".cpp", ".h", ".md", ".py", ".sh", ".txt", ".cmake")):
                continue
            path = os.path.join(base, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            joined = re.sub(r"\n\s*(//|#)?\s*", " ", text)
            for doc, name in cite.findall(joined):
                name = re.sub(r"\s+", " ", name).strip()
                target = os.path.join(ROOT, doc)
                if not os.path.exists(target):
                    problems.append("%s cites %s, which does not exist" % (os.path.relpath(path, ROOT), doc))
                elif not section_named(target, name):
                    problems.append("%s cites %s, \"%s\": no such heading or bold lead-in there" %
                                    (os.path.relpath(path, ROOT), doc, name))
    for p in problems:
        print("check_docs: " + p)
    if problems:
        return 1
    print("check_docs: every link and cited section exists")
    return 0


def main(argv):
    if argv[:1] == ["remedies"]:
        return check_remedies()
    if argv[:1] == ["links"]:
        return check_links()
    if argv[:1] == ["api"] and len(argv) == 3:
        return check_api(argv[1], argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
