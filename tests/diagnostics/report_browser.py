#!/usr/bin/env python3
"""The HTML report in a real browser: runs `tessera graph run --report` on four
known runs, opens each report in headless Chromium (--dump-dom, --screenshot)
and checks what the page drew against what the run measured.

  small      a 10-task graph (written here)
  failing    rechunk_rows_to_cols.json under a memory limit it cannot keep
  spilling   matmul.json under a limit that makes it spill and reload
  200k       bench/graphs/tree_graph.py's 200,000-task tree sum (scripts/bench graphs runs it too)

Checks per report: no script error (window.onerror writes into #script-errors,
and Chromium's console log is read); one lane per worker; the tasks drawn as
bars plus those inside per-pixel aggregates equal the tasks in the page's data
and the tasks the run finished; the memory panel's maximum equals the run's
peak bytes held (the tool's `peak bytes held`, RunStats::peak_held_bytes); the
limit line drawn exactly when a limit was set; spill/reload marks for the
spilling run; the failing key at the top of the failing run's page; the
screenshot has more than two colours in every panel; the 200k page is at most
20 MB.

usage: report_browser.py --tool build/tools/tessera --source-root . [--out DIR]
                         [--only NAME] [--screenshot-to docs/report.png] [--print-times]
Exit 77 (skipped) without chromium, unless CI=true.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--force-device-scale-factor=1"]
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def write_small_graph(path):
    """10 tasks: 4 loads, 4 incs, 1 sum of pairs, 1 total (a small dask-like graph)."""
    tok = "0123456789abcdef0123456789abcdef"
    tasks = []
    for i in range(4):
        tasks.append({"key": ["load-" + tok, i], "deps": [], "func": "load", "nbytes": 4 << 20})
        tasks.append({"key": ["inc-" + tok, i], "deps": [["load-" + tok, i]], "func": "inc", "nbytes": 4 << 20})
    tasks.append({"key": ["sum-partial-" + tok, 0], "deps": [["inc-" + tok, i] for i in range(4)],
                  "func": "sum", "nbytes": 8})
    tasks.append({"key": "total-" + tok, "deps": [["sum-partial-" + tok, 0]], "func": "sum", "nbytes": 8})
    json.dump({"format": "tessera-graph/1", "name": "small", "tasks": tasks, "outputs": ["total-" + tok]},
              open(path, "w"))
    return len(tasks)


def run_tool(tool, args):
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def chromium(binary, url, extra, timeout=180):
    with tempfile.TemporaryDirectory() as profile:
        p = subprocess.run([binary] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile, "--enable-logging=stderr",
                                                        "--v=0"] + extra + [url],
                           capture_output=True, text=True, timeout=timeout)
    return p.stdout, p.stderr


def attrs(dom, element_id):
    """The attributes of the element with id `element_id` in Chromium's dump."""
    m = re.search(r'<[a-z0-9]+\s([^>]*\bid="%s"[^>]*)>' % re.escape(element_id), dom)
    if not m:
        return {}
    return dict(re.findall(r'([a-z-]+)="([^"]*)"', m.group(1)) + re.findall(r'\b(hidden)\b()', m.group(1)))


def read_png(path):
    """(width, height, rows of RGBA/RGB tuples) of an 8-bit, non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG format"
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def colours_in(png, rect):
    w, h, bpp, rows = png
    x0, y0, rw, rh = rect
    seen = set()
    for y in range(max(0, y0), min(h, y0 + rh)):
        row = rows[y]
        for x in range(max(0, x0), min(w, x0 + rw)):
            seen.add(row[x * bpp:x * bpp + 3])
    return seen


def check_report(name, html_path, expect, browser, out, print_times, screenshot_to):
    size = os.path.getsize(html_path)
    text = open(html_path, encoding="utf-8").read()
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))
    ntasks = len(data["tasks"]["name"])
    url = "file://" + os.path.abspath(html_path)
    loads = []  # (ms from navigation to the end of the first drawing, the page's own clock; the DOM)
    for _ in range(3 if print_times else 1):
        dom, log = chromium(browser, url, ["--dump-dom"])
        m = re.search(r'data-draw-ms="([0-9.]+)"', dom)
        loads.append((float(m.group(1)) if m else float("nan"), dom))
    draw_ms, dom = loads[0]
    body = attrs(dom, "stream")
    if print_times:
        times = sorted(ms for ms, _ in loads)
        return size, ntasks, times
    errors = re.search(r'<pre id="script-errors">(.*?)</pre>', dom, re.S)
    check(errors is not None and errors.group(1).strip() == "", f"{name}: no script error in the page")
    console = [l for l in log.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    check(not console, f"{name}: nothing on the console {console[:3]}")
    check(ntasks == expect["tasks_run"], f"{name}: the page's data has the {expect['tasks_run']} tasks the run finished"
          f" (has {ntasks})")
    lanes = len(re.findall(r'class="lane" data-worker=', dom))
    check(lanes == expect["workers"] and body.get("data-lanes") == str(expect["workers"]),
          f"{name}: one lane per worker ({expect['workers']}; DOM {lanes}, drawn {body.get('data-lanes')})")
    bars, aggs, inside = (int(body.get("data-bars", -1)), int(body.get("data-aggregates", -1)),
                          int(body.get("data-aggregated", -1)))
    check(bars + inside == ntasks and aggs <= inside,
          f"{name}: {bars} bars + {inside} tasks in {aggs} aggregates = the {ntasks} tasks")
    mem = attrs(dom, "memory")
    check(mem.get("data-max-bytes") == str(expect["peak_bytes"]) and mem.get("data-held-drawn") == "1",
          f"{name}: memory panel's maximum {mem.get('data-max-bytes')} == peak bytes held {expect['peak_bytes']}")
    if expect.get("limit"):
        check(mem.get("data-limit-line") == str(expect["limit"]), f"{name}: limit line at {expect['limit']}")
    else:
        check("data-limit-line" not in mem, f"{name}: no limit line without a limit")
    if expect.get("reloads"):
        # The spill hook reports a result written out and still needed; RunStats also counts those
        # released while being written.
        kinds = data["spills"]["kind"]
        check(sum(kinds) == expect["reloads"] and 0 < len(kinds) - sum(kinds) <= expect["spills"],
              f"{name}: spill events {len(kinds) - sum(kinds)} (of {expect['spills']} spills), "
              f"reload events {sum(kinds)} == {expect['reloads']} reloads")
        check(int(mem.get("data-marks", 0)) == len(kinds),
              f"{name}: one mark per spill and reload event ({len(kinds)}; drawn {mem.get('data-marks')})")
    errs = attrs(dom, "errors")
    if expect.get("error_key"):
        check("hidden" not in errs and expect["error_key"] in dom and
              dom.find('id="errors"') < dom.find('id="summary"'),
              f"{name}: the failing key {expect['error_key'][:40]}... at the top")
    else:
        check("hidden" in errs, f"{name}: no error panel")
    if expect.get("zoom"):
        check_zoom(name, data, url, browser)
    if expect.get("hover"):
        check_hover(name, html_path, browser, out)
    if "max_mb" in expect:
        check(size <= expect["max_mb"] * 1e6, f"{name}: {size / 1e6:.1f} MB <= {expect['max_mb']} MB")
    # The screenshot: every panel has more than two colours.
    rects = {}
    for panel in ("summary", "stream", "memory", "progress"):
        r = attrs(dom, panel).get("data-rect")
        rects[panel] = [int(v) for v in r.split(",")] if r else None
    bottom = max(r[1] + r[3] for r in rects.values() if r) + 20
    png_path = os.path.join(out, name + ".png")
    chromium(browser, url, [f"--window-size=1280,{bottom}", "--screenshot=" + png_path])
    png = read_png(png_path)
    for panel, r in rects.items():
        n = len(colours_in(png, r)) if r else 0
        check(n > 2, f"{name}: screenshot's {panel} panel has {n} colours (> 2)")
    if screenshot_to:
        shutil.copyfile(png_path, screenshot_to)
        print(f"wrote {screenshot_to}")
    print(f"{name}: {size / 1e6:.2f} MB, {ntasks} tasks, opened and drawn in {draw_ms:.0f} ms")
    return size, ntasks, [draw_ms]


def check_zoom(name, data, url, browser):
    """Opened zoomed (#view=) on at most 1% of the run: the tasks drawn are those the window
    overlaps, as the page computes them (the same double arithmetic), and some are wide enough to
    be bars. The window is 200 durations wide of the task at its centre, the longest that allows,
    so that task is at least W/200 pixels wide whatever the machine's speed (a plain 1% of a
    200,000-task run can hold only sub-pixel tasks on a busy machine)."""
    t = data["tasks"]
    start = [s * 1e-9 for s in t["start"]]
    end = [(s + d) * 1e-9 for s, d in zip(t["start"], t["dur"])]
    t0, t1 = min(start), max(end)
    pad = max((t1 - t0) * 0.01, 1e-7)
    t0, t1 = t0 - pad, t1 + pad
    # The longest task that fits 200 times in 1% of the run (else the longest of all).
    fits = [i for i in range(len(start)) if 200 * (end[i] - start[i]) <= 0.01 * (t1 - t0)]
    longest = max(fits or range(len(start)), key=lambda i: end[i] - start[i])
    half = min(0.005 * (t1 - t0), 100 * (end[longest] - start[longest]))
    mid = 0.5 * (start[longest] + end[longest]) - t0
    a, b = mid - half, mid + half
    v0, v1 = max(t0, t0 + a), min(t1, t0 + b)
    expected = sum(1 for s, e in zip(start, end) if e >= v0 and s <= v1)
    dom, _ = chromium(browser, url + "#view=%r,%r" % (a, b), ["--dump-dom"])
    stream = attrs(dom, "stream")
    drawn, bars = int(stream.get("data-drawn", -1)), int(stream.get("data-bars", -1))
    check(drawn == expected and bars > 0,
          f"{name}: zoomed to {(b - a) / (t1 - t0):.2%} of the run: {drawn} tasks drawn ({bars} as bars) == {expected} in the window")


# Moves the mouse over the first task bar drawn, keeps the tooltip's text, then zooms in with the wheel.
HOVER = """<script>
const c = document.getElementById('stream-canvas'), r = c.getBoundingClientRect();
const dataset = document.getElementById('stream').dataset, before = dataset.drawn;
const [x, y] = document.body.dataset.firstBar.split(',').map(Number);
c.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + x, clientY: r.top + y, bubbles: true}));
document.body.dataset.tip = document.getElementById('tip').textContent;
c.dispatchEvent(new WheelEvent('wheel', {clientX: r.left + x, clientY: r.top + y, deltaY: -600, bubbles: true,
                                         cancelable: true}));
requestAnimationFrame(() => { document.body.dataset.zoomed = before + ' ' + dataset.drawn; });
</script></body>"""


def check_hover(name, html_path, browser, out):
    """The tooltip names key, function, duration and bytes; the wheel zooms in (fewer tasks drawn)."""
    page = os.path.join(out, name + "-hover.html")
    open(page, "w", encoding="utf-8").write(open(html_path, encoding="utf-8").read().replace("</body>", HOVER))
    # The zoom is drawn in the next animation frame. On a loaded machine headless
    # Chromium has dumped the page before producing one (no data-zoomed at all, once
    # in a CI run): such a load is repeated, up to three in all.
    for _ in range(3):
        dom, _ = chromium(browser, "file://" + os.path.abspath(page), ["--virtual-time-budget=3000", "--dump-dom"])
        body = attrs(dom, "report-body")
        if "data-zoomed" in body:
            break
    tip = body.get("data-tip", "")
    check(all(w in tip for w in ("key: ", "function: ", "duration: ", "bytes: ")),
          f"{name}: hovering a bar shows its key, function, duration and bytes ({tip[:80]})")
    before, _, after = body.get("data-zoomed", " ").partition(" ")
    check(before.isdigit() and after.isdigit() and int(after) < int(before),
          f"{name}: the wheel zooms in: tasks drawn {before} -> {after}")
    errors = re.search(r'<pre id="script-errors">(.*?)</pre>', dom, re.S)
    check(errors is not None and errors.group(1).strip() == "", f"{name}: no script error on hover and zoom")


def parse_run(stdout):
    get = lambda label: int(re.search(label + r"\s+(\d+)", stdout).group(1))
    m = re.search(r": (\d+) tasks on (\d+) worker", stdout)
    return {"tasks_run": int(m.group(1)), "workers": int(m.group(2)), "peak_bytes": get("peak bytes held")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--out")
    ap.add_argument("--only")
    ap.add_argument("--screenshot-to")
    ap.add_argument("--print-times", action="store_true")
    a = ap.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("chromium not found (scripts/setup installs it)")
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    out = a.out or tempfile.mkdtemp(prefix="tessera-report-")
    os.makedirs(out, exist_ok=True)
    graphs = os.path.join(a.source_root, "tests", "data", "graphs")
    small = os.path.join(out, "small.json")
    write_small_graph(small)
    runs = {}

    def wanted(name):
        return a.only in (None, name)

    if wanted("small"):
        rc, so, se = run_tool(a.tool, ["graph", "run", small, "--workers", "2", "--report", out + "/small.html"])
        check(rc == 0, f"small run exits 0 ({se.strip()})")
        runs["small"] = parse_run(so)
        runs["small"]["hover"] = True
    if wanted("failing"):
        rc, so, se = run_tool(a.tool, ["graph", "run", os.path.join(graphs, "rechunk_rows_to_cols.json"), "--workers",
                                       "2", "--memory-limit", "700000", "--report", out + "/failing.html"])
        check(rc == 1 and "cannot be met" in se, "failing run exits 1 with a MemoryLimitError")
        key = re.search(r"task (\('[^)]*\))", se).group(1)
        data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                    open(out + "/failing.html").read(), re.S).group(1))
        finished = sum(r["finished"] for r in data["runs"])
        runs["failing"] = {"tasks_run": finished, "workers": 2, "peak_bytes": data["runs"][0]["peak_bytes"],
                           "limit": 700000, "error_key": key}
    if wanted("spilling"):
        rc, so, se = run_tool(a.tool, ["graph", "run", os.path.join(graphs, "matmul.json"), "--workers", "2",
                                       "--memory-limit", "300000", "--report", out + "/spilling.html"])
        check(rc == 0, f"spilling run exits 0 ({se.strip()})")
        r = parse_run(so)
        spilled = int(re.search(r"bytes spilled\s+\d+ \((\d+) results", so).group(1))
        reloads = int(re.search(r"reloads\s+(\d+)", so).group(1))
        check(spilled > 0, f"spilling run spills ({spilled} results)")
        r.update(limit=300000, spills=spilled, reloads=reloads)
        runs["spilling"] = r
    if wanted("200k"):
        big = os.path.join(out, "200k.json")
        subprocess.run([sys.executable, os.path.join(a.source_root, "bench", "graphs", "tree_graph.py"), "100000", big],
                       check=True)
        n = len(json.load(open(big))["tasks"])
        rc, so, se = run_tool(a.tool, ["graph", "run", big, "--workers", "2", "--report", out + "/200k.html"])
        check(rc == 0, f"200k run exits 0 ({se.strip()})")
        r = parse_run(so)
        check(r["tasks_run"] == n, f"200k run ran {n} tasks")
        r["max_mb"] = 20
        r["zoom"] = True
        runs["200k"] = r
    figures = {}
    for name, expect in runs.items():
        figures[name] = check_report(name, os.path.join(out, name + ".html"), expect, browser, out,
                                     a.print_times, a.screenshot_to if name == "spilling" else None)
    if a.print_times:
        print("| report | tasks | size | open + draw, best of 3 (worst) |")
        print("|---|---|---|---|")
        for name, (size, ntasks, times) in figures.items():
            print(f"| {name} | {ntasks} | {size / 1e6:.2f} MB | {times[0]:.0f} ms ({times[-1]:.0f} ms) |")
    print(f"reports and screenshots in {out}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
