#!/usr/bin/python3
"""browser_test.py -- `gsanalyze html` in headless Chromium (standard library only).

    browser_test.py simgpu --gsanalyze G --traces-tool T --agent libgsagent.so --simgpu-lib DIR
                           --workload workload_data_starved --work-dir DIR
    browser_test.py large  --gsanalyze G --traces-tool T --work-dir DIR
    browser_test.py ranks  --gsanalyze G --traces-tool T --job-dir JOB --work-dir DIR

simgpu: a real trace -- the data_starved workload under the agent on simgpu.
large:  the benchmark's synthetic trace of >= 1,000,000 records (analyzer/testing/trace_files.h):
        the page must stay under 5 MB, load in time and draw a frame quickly (decimation).
ranks:  the 4-rank straggler job tests/multirank leaves in JOB (its ctest fixture), with --what-if:
        the Ranks section shows a row per rank and names the straggler as `report --json` does,
        with its stacks and the predicted step as a before/after pair of bars and the numbers.

Chromium runs headless with the DevTools protocol on a pipe (--remote-debugging-pipe: fd 3 in,
fd 4 out, NUL-terminated JSON), loads the report from a file:// URL and checks:
  - no console errors, no uncaught exceptions (also the page's own #gs-errors box), no request
    other than the page itself (self-contained);
  - the timeline's lanes: one per device (len(devices) of `gsanalyze report --json`), device lanes
    carrying intervals.count idle intervals, stream lanes carrying kernels+copies+memsets; for the
    simgpu trace also the streams and host threads the Chrome export names, and its API calls;
  - how full the kernels kept the devices: the devices' SM coverage rows and the under-filled
    kernel rows as `report --json` has them, the timeline's under-filled shade only on devices
    with SM coverage, and its legend entry;
  - the flame graph has one element per node of the report's stack tree (the tree as embedded,
    checked against `report --json`'s own tree where both keep a node), a real mouse click on a
    frame zooms to it (it becomes the focus and spans the graph's width), the search finds frames;
  - zooming the timeline narrows the view; a frame draws in bounded rectangles and time; hovering
    each lane gives its tooltip, the wheel zooms, a drag pans, a longest-interval row shows it;
  - simgpu (with --what-if): a before/after pair of bars under each predicted recommendation and
    the replay check line;
  - a screenshot is written to WORK_DIR/report.png for people to look at.
Exit 0 pass, 1 fail, 77 (ctest SKIP) when no Chromium is installed.
"""
import argparse
import base64
import fcntl
import glob
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                "tests", "testlib"))
import gstest  # noqa: E402  (tests/testlib: check/fail/exit_status)

SKIP = 77
MAX_PAGE_BYTES = 5 * 1024 * 1024
LOAD_BUDGET_S = 60.0        # navigation to load event, generous for a loaded 2-core machine
DRAW_BUDGET_MS = 3000.0     # one full timeline frame at the widest zoom
MAX_THREAD_LANES = 64       # TimelineOptions::max_threads


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe."""

    def __init__(self, chromium, profile_dir):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # Keep our ends away from 3/4, which the child's ends are moved to.
        to_child_r, from_child_w = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w)]

        def child_fds():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        args = [chromium, "--headless=new", "--remote-debugging-pipe", "--user-data-dir=" + profile_dir,
                "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--hide-scrollbars", "--window-size=1400,1000",
                "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.log = open(os.path.join(profile_dir, "chromium.log"), "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(to_child_r)
        os.close(from_child_w)
        self.next_id = 0
        self.buf = b""
        self.events = []
        self.session = None

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            r, _, _ = select.select([self.from_child], [], [], left)
            if r:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the pipe (see its log)")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=60, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def open(self):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})

    def eval(self, expression, timeout=60):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in r:
            raise RuntimeError("page threw evaluating %s: %s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params = {"type": kind, "x": x, "y": y}
            if kind != "mouseMoved":
                params.update(button="left", clickCount=1)
            self.call("Input.dispatchMouseEvent", params)

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=10)
        except Exception:  # noqa: BLE001 -- it is going away either way
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(cmd, timeout=300, env=None):
    print("run: %s" % " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        gstest.fail("%s exited %d: %s %s" % (os.path.basename(cmd[0]), p.returncode, p.stdout[-2000:],
                                             p.stderr[-2000:]))
        sys.exit(gstest.exit_status())
    return p


def simgpu_trace(args, work):
    out = os.path.join(work, "out")
    os.makedirs(out)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GS_", "SIMGPU_")) and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    env.update(LD_LIBRARY_PATH=args.simgpu_lib, LD_PRELOAD=args.agent, GS_OUTPUT=out + "/")
    run([args.workload, "--steps", "12"], timeout=180, env=env)
    traces = glob.glob(os.path.join(out, "*.gstrace"))
    if len(traces) != 1:
        gstest.fail("expected one trace in %s, found %s" % (out, traces))
    return traces[0]


def chrome_export_counts(args, trace, work):
    """Streams, host threads and API calls as the Chrome export names them (an independent reading
    of the same trace)."""
    path = os.path.join(work, "trace.json")
    run([args.gsanalyze, "export", "--chrome", path, trace])
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu_pid_base = 1000000000
    streams, threads, api_calls = set(), set(), 0
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            if e["pid"] >= gpu_pid_base and e["args"]["name"].startswith("stream "):
                streams.add((e["pid"], e["tid"]))
            elif e["pid"] < gpu_pid_base:
                threads.add((e["pid"], e["tid"]))
        elif e.get("ph") == "X" and e.get("cat") == "cuda_api":
            api_calls += 1
    return len(streams), len(threads), api_calls


def tree_nodes(node):
    return 1 + sum(tree_nodes(c) for c in node.get("children", []))


def embedded_report(page):
    m = re.search(r'<script type="application/json" id="gs-report">(.*?)</script>', page, re.S)
    return json.loads(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=("simgpu", "large", "ranks"))
    ap.add_argument("--gsanalyze", required=True)
    ap.add_argument("--traces-tool", required=True)
    ap.add_argument("--agent")
    ap.add_argument("--simgpu-lib")
    ap.add_argument("--workload")
    ap.add_argument("--job-dir", help="ranks: the multi-rank job's traces")
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()

    chromium = find_chromium()
    if not chromium:
        print("SKIP: no Chromium installed (tools/setup installs Debian's chromium); "
              "the HTML report was not checked in a browser")
        return SKIP
    if args.case == "ranks":
        traces = sorted(glob.glob(os.path.join(args.job_dir or "", "*.gstrace")))
        if not traces:
            print("SKIP: no multi-rank job in %s (tests/multirank's straggler case leaves it there)" % args.job_dir)
            return SKIP

    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if args.case == "ranks":
        return ranks_case(args, chromium, traces, work)
    if args.case == "simgpu":
        trace = simgpu_trace(args, work)
    else:
        trace = os.path.join(work, "large.gstrace")
        run([args.traces_tool, "large", trace, "1000000"])

    page_path = os.path.join(work, "report.html")
    t = time.time()
    what_if = ["--what-if"] if args.case == "simgpu" else []  # the predictions beside the advice
    run([args.gsanalyze, "html", trace, "-o", page_path] + what_if)
    print("gsanalyze html: %.1f s" % (time.time() - t))
    rep = json.loads(run([args.gsanalyze, "report", "--json", trace] + what_if).stdout)
    size = os.path.getsize(page_path)
    print("page: %s, %d bytes" % (page_path, size))
    gstest.check(size < MAX_PAGE_BYTES, "page is %d bytes, over %d" % (size, MAX_PAGE_BYTES))
    with open(page_path, encoding="utf-8") as f:
        embedded = embedded_report(f.read())
    gstest.check(embedded is not None, "no gs-report JSON in the page")
    if embedded is None:
        return gstest.exit_status()
    # The embedded report is the JSON report (same analysis); only the tree is kept finer.
    for key in ("idle_ns", "utilization", "steady_utilization", "causes", "recommendations", "copies", "memory"):
        gstest.check(embedded[key] == rep[key], "embedded report's %s differs from report --json's" % key)
    gstest.check(embedded.get("replay") == rep.get("replay"), "embedded report's replay differs from report --json's")
    predicted = sum(1 for r in rep["recommendations"] if "prediction" in r)
    if what_if:
        gstest.check(predicted >= 1, "--what-if on the data_starved trace predicted nothing: %s" % rep.get("replay"))
    gstest.check(tree_nodes(embedded["stack_tree"]) >= tree_nodes(rep["stack_tree"]),
                 "the page's stack tree has fewer nodes than report --json's")

    profile = tempfile.mkdtemp(prefix="gs-chromium-")
    browser = Browser(chromium, profile)
    try:
        browser.open()
        url = "file://" + os.path.abspath(page_path)
        t = time.time()
        browser.call("Page.navigate", {"url": url})
        browser.wait_event("Page.loadEventFired", LOAD_BUDGET_S)
        load_s = time.time() - t
        print("load: %.2f s" % load_s)
        gstest.check(load_s < LOAD_BUDGET_S, "page took %.1f s to load" % load_s)
        gstest.check(browser.eval("!!(window.gsReport && window.gsReport.ready)"), "gsReport not ready")
        check_page(browser, rep, embedded, args, trace, work)
        shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        png = os.path.join(work, "report.png")
        with open(png, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print("screenshot: %s" % png)
        check_console(browser, url)
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    return gstest.exit_status()


def open_page(browser, page_path):
    url = "file://" + os.path.abspath(page_path)
    browser.call("Page.navigate", {"url": url})
    browser.wait_event("Page.loadEventFired", LOAD_BUDGET_S)
    gstest.check(browser.eval("!!(window.gsReport && window.gsReport.ready)"), "gsReport not ready")
    return url


def ranks_case(args, chromium, traces, work):
    page_path = os.path.join(work, "ranks.html")
    run([args.gsanalyze, "html"] + traces + ["-o", page_path, "--what-if"])
    ranks = json.loads(run([args.gsanalyze, "report", "--json", "--what-if"] + traces).stdout).get("ranks")
    with open(page_path, encoding="utf-8") as f:
        embedded = embedded_report(f.read())
    gstest.check(embedded is not None and embedded.get("ranks") == ranks,
                 "the page's embedded ranks differ from report --json's")
    if not ranks or not ranks.get("straggler"):
        gstest.fail("the job's report names no straggler: %s" % (ranks or {}).get("notes"))
        return gstest.exit_status()
    straggler = ranks["straggler"]
    prediction = straggler.get("prediction") or {}
    gstest.check(prediction.get("ok"), "--what-if gave the straggler no prediction: %s" % prediction.get("reason"))
    profile = tempfile.mkdtemp(prefix="gs-chromium-")
    browser = Browser(chromium, profile)
    try:
        browser.open()
        url = open_page(browser, page_path)
        shown = browser.eval("""(() => {
            const s = document.getElementById('ranks-section'), box = document.getElementById('ranks');
            const rows = Array.from(box.querySelectorAll('table tr')).slice(1).map(r => r.cells[0].textContent);
            const st = box.querySelector('.straggler');
            return {hidden: s.hidden, rows: rows, straggler: st ? st.firstChild.textContent : null,
                    stacks: st ? st.querySelectorAll('.straggler-stack').length : 0,
                    bars: st ? Array.from(st.querySelectorAll('.what-if-row')).map(r => r.textContent) : [],
                    text: st && st.querySelector('.what-if-text') ? st.querySelector('.what-if-text').textContent : ''};
            })()""")
        print("ranks section: %s" % json.dumps(shown)[:1500])
        gstest.check(not shown["hidden"], "the Ranks section is hidden for a %d-rank job" % len(traces))
        gstest.check(shown["rows"] == [r["label"] for r in ranks["rows"]],
                     "rank rows %s, report --json has %s" % (shown["rows"], [r["label"] for r in ranks["rows"]]))
        gstest.check(shown["straggler"] is not None and straggler["label"] in shown["straggler"],
                     "the straggler line %r does not name %r" % (shown["straggler"], straggler["label"]))
        gstest.check(shown["stacks"] == min(3, len(straggler.get("stacks") or [])),
                     "%d straggler stacks shown of %d" % (shown["stacks"], len(straggler.get("stacks") or [])))
        if prediction.get("ok"):
            gstest.check(len(shown["bars"]) == 2 and shown["bars"][0].startswith("before")
                         and shown["bars"][1].startswith("after the fix"),
                         "no before/after bars for the straggler's prediction: %s" % shown["bars"])
            gstest.check(shown["text"].startswith("What-if") and "step " in shown["text"],
                         "the prediction's numbers are missing: %r" % shown["text"])
        shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(os.path.join(work, "ranks.png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        check_console(browser, url)
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    return gstest.exit_status()


def check_console(browser, url):
    errors = browser.eval("Array.from(document.querySelectorAll('#gs-errors .gs-error')).map(e => e.textContent)")
    gstest.check(not errors, "the page recorded errors: %s" % errors)
    for e in browser.events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            gstest.fail("uncaught exception: %s" % json.dumps(p)[:500])
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            gstest.fail("console.%s: %s" % (p["type"], json.dumps(p.get("args"))[:500]))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            gstest.fail("log error: %s" % json.dumps(p["entry"])[:500])
        elif m == "Network.requestWillBeSent":
            req = p["request"]["url"]
            if req != url and not req.startswith(("data:", "about:")):
                gstest.fail("the page fetched %s (it must be self-contained)" % req)


def check_page(browser, rep, embedded, args, trace, work):
    lanes = browser.eval("""(() => {
        const out = {};
        for (const e of document.querySelectorAll('#lane-labels .lane')) {
          const k = e.dataset.kind;
          out[k] = out[k] || {count: 0, segments: 0};
          out[k].count++; out[k].segments += Number(e.dataset.segments);
        }
        return out; })()""")
    print("lanes: %s" % lanes)
    dev, streams, threads = (lanes.get(k, {"count": 0, "segments": 0}) for k in ("device", "stream", "thread"))
    gstest.check(browser.eval("gsReport.lanes") == sum(k["count"] for k in lanes.values()),
                 "gsReport.lanes disagrees with the lane labels")
    gstest.check(set(lanes) <= {"device", "stream", "thread", "nvtx"}, "unknown lane kinds: %s" % sorted(lanes))
    gstest.check(lanes.get("nvtx", {"count": 0})["count"] <= threads["count"], "more NVTX lanes than threads")
    gstest.check(dev["count"] == len(rep["devices"]),
                 "device lanes: %d, report devices: %d" % (dev["count"], len(rep["devices"])))
    gstest.check(dev["segments"] == rep["intervals"]["count"],
                 "idle intervals on device lanes: %d, report: %d" % (dev["segments"], rep["intervals"]["count"]))
    work_items = sum(d["kernels"] + d["copies"] + d["memsets"] for d in rep["devices"])
    gstest.check(streams["segments"] == work_items,
                 "device work on stream lanes: %d, report kernels+copies+memsets: %d" % (streams["segments"], work_items))
    gstest.check(streams["count"] >= len(rep["devices"]) and threads["count"] >= 1, "no stream or thread lanes")
    if args.case == "simgpu":
        n_streams, n_threads, api_calls = chrome_export_counts(args, trace, work)
        gstest.check(streams["count"] == n_streams, "stream lanes: %d, Chrome export streams: %d" % (streams["count"], n_streams))
        gstest.check(threads["count"] == min(n_threads, MAX_THREAD_LANES),
                     "thread lanes: %d, Chrome export threads: %d" % (threads["count"], n_threads))
        gstest.check(threads["segments"] == api_calls, "API calls on thread lanes: %d, Chrome export: %d" % (
            threads["segments"], api_calls))
        gstest.check(browser.eval("gsReport.exact") is True, "a small trace should keep every segment")
    else:
        gstest.check(browser.eval("gsReport.exact") is False,
                     "a million-record trace should be over the exact-segment budget (decimated)")

    # How full the kernels kept the devices (JSON.md devices[] and kernel_configs[]): a device row
    # with an SM coverage for each device the report gives one, a table row for each launch
    # configuration that left SMs without work, and the under-filled shade (with its legend entry)
    # on device lanes only where the report has SM coverage.
    fill = browser.eval("gsReport.fill")
    print("fill: %s" % fill)
    covered = sum(1 for d in rep["devices"] if d.get("sm_coverage_utilization") is not None)
    underfilled = sum(1 for k in rep["kernel_configs"] if k["underfilled_ns"] > 0)
    gstest.check(fill["devices"] == covered, "devices with an SM coverage: page %d, report %d" % (fill["devices"], covered))
    gstest.check(fill["kernels"] == underfilled and
                 browser.eval("Math.max(0, document.querySelectorAll('#kernels tr').length - 1)") == underfilled,
                 "under-filled kernel rows: %s, report %d" % (fill["kernels"], underfilled))
    gstest.check(fill["lanes"] <= covered, "%d device lanes shaded under-filled, %d devices with SM coverage" % (
        fill["lanes"], covered))
    legend = browser.eval("document.getElementById('legend').textContent")
    gstest.check(("under-filled" in legend) == (fill["lanes"] > 0), "legend: %r with %d shaded lanes" % (legend, fill["lanes"]))

    # What each fix buys (--what-if): a before/after pair of bars under each predicted
    # recommendation, the after bar no longer than the before one where the fix saves time, and
    # the replay check's line.
    predicted = sum(1 for r in rep["recommendations"] if "prediction" in r)
    bars = browser.eval("""Array.from(document.querySelectorAll('#recommendations .what-if')).map(w =>
        Array.from(w.querySelectorAll('.what-if-bar')).map(b => b.getBoundingClientRect().width))""")
    gstest.check(len(bars) == predicted, "what-if boxes: page %d, report %d predictions" % (len(bars), predicted))
    for pair in bars:
        gstest.check(len(pair) == 2 and pair[1] <= pair[0] + 0.5, "before/after bars: %s" % pair)
    check_text = browser.eval("(document.querySelector('#recommendations .replay-check') || {}).textContent || ''")
    gstest.check(("Replay check" in check_text) == ("replay" in rep), "replay check line: %r" % check_text)

    # A frame at the widest zoom, timed; its rectangles are bounded by pixels, not events.
    frame = browser.eval("""(() => { gsReport.setView(0, gsReport.view().span); const t = performance.now();
        gsReport.draw(); return {ms: performance.now() - t, rects: gsReport.stats.rects,
        width: document.getElementById('timeline-canvas').clientWidth}; })()""")
    print("frame: %s" % frame)
    gstest.check(frame["ms"] < DRAW_BUDGET_MS, "a timeline frame took %.0f ms" % frame["ms"])
    gstest.check(frame["rects"] > 0, "the timeline drew nothing")
    bound = browser.eval("gsReport.lanes") * frame["width"] * (2 + len(rep["causes"]))
    gstest.check(frame["rects"] <= bound, "%d rectangles drawn, over %d (not decimated?)" % (frame["rects"], bound))
    zoomed = browser.eval("(() => { const a = gsReport.view(); gsReport.zoom(0.1); const b = gsReport.view();"
                          " return [a.t1 - a.t0, b.t1 - b.t0, gsReport.stats.rects]; })()")
    gstest.check(zoomed[1] < zoomed[0] * 0.2 and zoomed[2] > 0, "zooming the timeline: %s" % zoomed)
    browser.eval("gsReport.setView(0, gsReport.view().span)")

    # The mouse, as a person uses it: hover every lane (tooltips), wheel to zoom in, drag to pan.
    browser.eval("document.getElementById('timeline').scrollIntoView()")
    box = browser.eval("""(() => { const r = document.getElementById('timeline-canvas').getBoundingClientRect();
        const ys = Array.from(document.querySelectorAll('#lane-labels .lane')).map(e => {
          const b = e.getBoundingClientRect(); return b.top + b.height / 2; });
        return {left: r.left, width: r.width, ys: ys}; })()""")
    tips = set()
    for y in box["ys"]:
        browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box["left"] + box["width"] / 3, "y": y})
        tips.add(browser.eval("document.getElementById('tooltip').textContent"))
    gstest.check(len(tips) == len(box["ys"]), "hovering %d lanes gave %d different tooltips" % (len(box["ys"]), len(tips)))
    before = browser.eval("gsReport.view()")
    x, y = box["left"] + box["width"] / 2, box["ys"][0]
    browser.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": -120})
    wheeled = browser.eval("new Promise(r => requestAnimationFrame(() => r(gsReport.view())))")
    gstest.check(wheeled["t1"] - wheeled["t0"] < before["t1"] - before["t0"], "the wheel did not zoom in: %s -> %s" % (
        before, wheeled))
    browser.call("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1})
    browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x + 200, "y": y, "button": "left"})
    browser.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x + 200, "y": y, "button": "left", "clickCount": 1})
    dragged = browser.eval("gsReport.view()")
    gstest.check(dragged["t0"] < wheeled["t0"], "dragging right did not pan to earlier times: %s -> %s" % (wheeled, dragged))
    # A longest-interval row shows its interval.
    rows = browser.eval("document.querySelectorAll('#intervals tr').length - 1")
    gstest.check(rows == len(rep["intervals"]["longest"]), "longest intervals: %d rows, report %d" % (
        rows, len(rep["intervals"]["longest"])))
    if rows > 0:
        first = rep["intervals"]["longest"][0]
        shown = browser.eval("""(() => { document.querySelectorAll('#intervals tr')[1].click();
            return gsReport.view(); })()""")
        start = first["start_ns"] - browser.eval("JSON.parse(document.getElementById('gs-timeline').textContent).start")
        gstest.check(shown["t0"] <= start and shown["t1"] >= start + first["duration_ns"]
                     and shown["t1"] - shown["t0"] <= max(4 * first["duration_ns"], 4000) + 1,
                     "clicking the longest interval showed %s, not its %d ns at %d" % (shown, first["duration_ns"], start))
    browser.eval("gsReport.setView(0, gsReport.view().span)")

    # Flame graph: one element per node of the embedded tree.
    nodes = tree_nodes(embedded["stack_tree"])
    elements = browser.eval("document.querySelectorAll('#flame .flame-frame').length")
    gstest.check(elements == nodes == browser.eval("gsReport.flame.nodes"),
                 "flame graph elements: %s, stack tree nodes: %d" % (elements, nodes))
    if nodes < 2:
        gstest.fail("the stack tree has no frames under its root: nothing to click")
        return
    # Click (a real mouse event at its centre) the deepest frame at least 30 px wide, not the root.
    target = browser.eval("""(() => {
        const box = document.getElementById('flame').getBoundingClientRect();
        let best = null;
        for (const e of document.querySelectorAll('#flame .flame-frame')) {
          const r = e.getBoundingClientRect(), d = Number(e.dataset.depth);
          if (d < 1 || r.width < 30 || e.style.display === 'none') continue;
          if (!best || d > best.depth) best = {index: Number(e.dataset.index), depth: d, name: e.textContent,
              x: r.left + r.width / 2, y: r.top + r.height / 2, width: r.width};
        }
        if (best) best.full = box.width;
        return best; })()""")
    gstest.check(target is not None, "no flame frame wide enough to click")
    if target is None:
        return
    browser.eval("document.getElementById('flame').scrollIntoView()")
    target = browser.eval("""(() => { const e = document.querySelector('#flame .flame-frame[data-index="%d"]');
        const r = e.getBoundingClientRect(); return {index: %d, x: r.left + r.width / 2, y: r.top + r.height / 2,
        name: e.textContent}; })()""" % (target["index"], target["index"]))
    browser.click(target["x"], target["y"])
    after = browser.eval("""(() => { const e = document.querySelector('#flame .flame-frame[data-index="%d"]');
        return {focus: gsReport.flame.focus(), width: e.getBoundingClientRect().width,
                full: document.getElementById('flame').clientWidth}; })()""" % target["index"])
    print("flame click on %r: %s" % (target["name"], after))
    gstest.check(after["focus"] == target["index"], "clicking %r did not zoom to it: %s" % (target["name"], after))
    gstest.check(abs(after["width"] - after["full"]) <= 2, "the zoomed frame does not span the graph: %s" % after)
    # Search for the clicked frame's function: at least it matches.
    found = browser.eval("gsReport.flame.search(%s)" % json.dumps(re.escape(target["name"].split(" (")[0])))
    gstest.check(found >= 1, "searching for %r found %s frames" % (target["name"], found))


if __name__ == "__main__":
    sys.exit(main())
