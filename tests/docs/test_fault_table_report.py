#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/fault_table_report.py --check passes on the committed document and
table and fails, at the check meant for it, on every kind of damage: the
block missing, doubled or with a cell changed; a count or the header's
scenarios changed, a row lost, a cell lost, a fault point twice, a policy
named twice, the separator wrong, a cell garbled or an outcome twice in it,
a policy without a scenario, an empty table, no SOURCE."""

import os
import re
import sys

from log_damage import ROOT, LogDamage

RUN = os.path.join(ROOT, "docs", "logs", "ci", "39-fault-table")


def main():
    d = LogDamage("fault_table_report", os.path.join(ROOT, "docs", "reliability.md"), RUN, "table.md")
    table = d.log
    d.run("the committed document and table", True)
    d.block_cases("<!-- fault_table_report:begin matrix -->", "<!-- fault_table_report:end matrix -->",
                  "| clGetCommandQueueInfo", lambda row: row.replace("construction throws 9", "construction throws 8", 1))
    d.log_edit("a count changed", r"(construction throws )9", r"\g<1>8", expect="the cells count")
    d.log_edit("the header's scenarios changed", r"^\| fault point \((\d+)", "| fault point (1", expect="the cells count")
    d.log_edit("a row lost", r"^\| clGetCommandQueueInfo.*\n", "", expect="the cells count")
    d.log_edit("a cell lost", r"^(\| clGetCommandQueueInfo[^|]*\|)[^|]*\|", r"\1", expect="cells (has")
    d.log_edit("a fault point twice", r"^(\| clGetCommandQueueInfo.*)$", r"\1\n\1", expect="a fault point of its own")
    d.log_edit("a policy named twice", r"^(\| fault point \(\d+ scenarios\) \| )([^|]+) \|", r"\1\2 | \2 |",
               expect="a policy named twice")
    d.log_edit("the separator wrong", r"^\|---\|---\|", "|---|", expect="separator")
    d.log_edit("a cell garbled", r"construction throws 9", "construction throws nine", expect="is not one outcome")
    d.log_edit("an outcome twice in a cell", r"construction throws 9", "construction throws 4<br>construction throws 5",
               expect="is not one outcome")
    rows = table.splitlines(True)
    header = re.match(r"^(\| fault point \(\d+ scenarios\) \|)", rows[0]).group(1)
    policies = rows[0][len(header):].count("|")
    empty_column = [rows[0].rstrip("\n") + " Idle |\n", "|---|" + "---|" * (policies + 1) + "\n"] + \
        [r.rstrip("\n") + " · |\n" for r in rows[2:]]
    d.run("a policy without a scenario", False, log_text="".join(empty_column), expect="no scenario of Idle")
    d.run("an empty table", False, log_text="", expect="not the header")
    d.run("no SOURCE", False, source_text="", expect="no SOURCE file")
    return d.finish()


if __name__ == "__main__":
    sys.exit(main())
