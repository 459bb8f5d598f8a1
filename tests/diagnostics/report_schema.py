#!/usr/bin/env python3
"""The report's data against its written format: runs `tessera graph run --report`
on three runs (a small graph, one that spills and reloads, one that fails), takes
the JSON out of each page and checks it against docs/report-format.schema.json
(JSON Schema 2020-12, every object closed, so a field the writer adds or drops
without the schema fails here), then checks what a schema cannot say and
docs/report-format.md does: the columns of a table have one length, and every
number that points into a table points inside it. Last, it checks that the
schema refuses documents that break it, so that this test can fail.

usage: report_schema.py --tool build/tools/tessera --source-root .
Exit 77 (skipped) without python3-jsonschema, unless CI=true.
"""
import argparse
import copy
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_browser import check, failures, run_tool, write_small_graph  # noqa: E402

try:
    import jsonschema
except ImportError:
    if os.environ.get("CI") == "true":
        raise
    print("python3-jsonschema is missing (scripts/setup installs it): skipped")
    sys.exit(77)

DATA = re.compile(r'<script id="data" type="application/json">(.*?)</script>', re.S)


def page_data(path):
    m = DATA.search(open(path, encoding="utf-8").read())
    return json.loads(m.group(1)) if m else None


def consistency(name, d):
    """The rules of docs/report-format.md that a JSON Schema cannot state."""
    def columns(table, what):
        lengths = {k: len(v) for k, v in d[table].items() if isinstance(v, list)}
        check(len(set(lengths.values())) <= 1, f"{name}: {what} columns have one length ({lengths})")
        return next(iter(lengths.values()), 0)

    def inside(values, size, what):
        check(all(0 <= v < size for v in values), f"{name}: every {what} is an index below {size}")

    n = columns("tasks", "task")
    columns("held", "held")
    columns("spills", "spill")
    columns("resources", "resource")
    check(len(d["name_prefix"]) == len(d["names"]), f"{name}: one name_prefix per name")
    check(len(d["prefix_total"]) == len(d["prefixes"]), f"{name}: one prefix_total per prefix")
    inside(d["name_prefix"], len(d["prefixes"]), "name_prefix")
    inside(d["tasks"]["name"], len(d["names"]), "task name")
    inside(d["tasks"]["func"], len(d["funcs"]), "task func")
    inside(d["tasks"]["run"], len(d["runs"]), "task run")
    workers = max((r["workers"] for r in d["runs"]), default=0)
    inside(d["tasks"]["worker"] + d["spills"]["worker"], workers, "worker")
    check(n == sum(r["finished"] for r in d["runs"]), f"{name}: one task column entry per finished task")
    return n


def refused(schema, d, change, what):
    """The schema must refuse `d` after `change`: a test that cannot fail is a defect."""
    bad = copy.deepcopy(d)
    change(bad)
    try:
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
        check(False, f"the schema refuses {what}")
    except jsonschema.ValidationError:
        check(True, f"the schema refuses {what}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    p.add_argument("--source-root", required=True)
    a = p.parse_args()
    schema = json.load(open(os.path.join(a.source_root, "docs", "report-format.schema.json"), encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    graphs = os.path.join(a.source_root, "tests", "data", "graphs")
    with tempfile.TemporaryDirectory() as out:
        small = os.path.join(out, "small.json")
        write_small_graph(small)
        runs = {
            "small": ([small, "--workers", "2"], 0),
            "spilling": ([os.path.join(graphs, "matmul.json"), "--workers", "2", "--memory-limit", "300000"], 0),
            "failing": ([os.path.join(graphs, "rechunk_rows_to_cols.json"), "--workers", "2", "--memory-limit",
                         "700000"], 1),
        }
        docs = {}
        for name, (args, status) in runs.items():
            html = os.path.join(out, name + ".html")
            rc, _, se = run_tool(a.tool, ["graph", "run"] + args + ["--report", html])
            check(rc == status, f"{name}: tessera graph run exits {status} ({se.strip()[-200:]})")
            d = page_data(html) if os.path.exists(html) else None
            check(d is not None, f"{name}: the page holds its data")
            if d is None:
                continue
            errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(d), key=lambda e: list(e.path))
            for e in errors[:5]:
                print(f"      at {'/'.join(map(str, e.path))}: {e.message[:200]}")
            check(not errors, f"{name}: the data follows docs/report-format.schema.json")
            consistency(name, d)
            docs[name] = d
    if "spilling" in docs:
        check(len(docs["spilling"]["spills"]["kind"]) > 0, "spilling: the data has spills (the spill columns are read)")
    if "failing" in docs:
        check(len(docs["failing"]["errors"]) > 0, "failing: the data has its error")
    if "small" in docs:
        d = docs["small"]
        refused(schema, d, lambda x: x.pop("runs"), "data without runs")
        refused(schema, d, lambda x: x.update(extra=1), "a field it does not describe")
        refused(schema, d, lambda x: x["tasks"]["dur"].append(-1), "a negative duration")
        refused(schema, d, lambda x: x["runs"][0].update(failed="no"), "a run whose failed is not a boolean")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
