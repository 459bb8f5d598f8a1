"""tools/export_dask_graph.py end to end: three dask.array expressions are
exported, and `tessera graph inspect --json` reads each file and reports dask's
figures exactly as the file holds them. The first expression is the one
tests/data/graphs/tree_sum.json was exported from: the exporter must measure
dask's figures as that file records them.

usage: export_dask_graph_test.py TESSERA EXPORTER SOURCE_ROOT
Exit 77 (meson's "skipped") when this Python lacks dask.array.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import dask.array  # noqa: F401
except ImportError:
    print("skipped: %s cannot import dask.array" % sys.executable)
    sys.exit(77)

EXPRESSIONS = {
    "tree_sum": "da.random.random((400, 400), chunks=25).sum()",
    "rechunk": "da.ones((40, 400), chunks=(10, 400)).rechunk((400 // 10, 10)).sum(axis=0)",
    "x_plus_xT": "(lambda x: (x + x.T).sum(axis=0))(da.random.random((80, 80), chunks=10))",
}
FIGURES = ["order_max_pressure", "sync_max_held", "sync_max_held_bytes"]


def main():
    tessera, exporter, root = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory(prefix="tessera-export-") as tmp:
        for name, expr in EXPRESSIONS.items():
            path = os.path.join(tmp, name + ".json")
            subprocess.run([sys.executable, exporter, expr, "-o", path], check=True)
            with open(path) as f:
                doc = json.load(f)
            ref = doc["reference"]
            if doc["format"] != "tessera-graph/1" or len(ref["dask_order"]) != len(doc["tasks"]):
                failures.append("%s: expected a tessera-graph/1 file with a dask_order entry per task" % name)
            out = subprocess.run([tessera, "graph", "inspect", "--json", path], check=True,
                                 capture_output=True, text=True).stdout
            shown = json.loads(out)
            if shown["tasks"] != len(doc["tasks"]) or shown["outputs"] != len(doc["outputs"]):
                failures.append("%s: inspect read %d tasks and %d outputs, the file has %d and %d"
                                % (name, shown["tasks"], shown["outputs"], len(doc["tasks"]), len(doc["outputs"])))
            for fig in FIGURES:
                if shown["dask"][fig] != ref[fig]:
                    failures.append("%s: inspect shows dask's %s as %s, the file has %s"
                                    % (name, fig, shown["dask"][fig], ref[fig]))
            print("%-10s %5d tasks  dask %s  tessera %s" % (name, len(doc["tasks"]),
                  [ref[f] for f in FIGURES], [shown[f] for f in FIGURES]))
            if name == "tree_sum":
                with open(os.path.join(root, "tests", "data", "graphs", "tree_sum.json")) as f:
                    recorded = json.load(f)["reference"]
                for fig in FIGURES:
                    if ref[fig] != recorded[fig]:
                        failures.append("tree_sum: exported %s = %s, tests/data/graphs/tree_sum.json has %s"
                                        % (fig, ref[fig], recorded[fig]))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
