// report.js — the HTML report's renderer (no libraries, no network). It reads two JSON documents
// from the page: "gs-report" (gsanalyze's JSON report, analyzer/JSON.md) and "gs-timeline" (the
// decimated lanes, analyzer/report/html/timeline.h), and draws:
//   - the devices' GPU-Util beside how full their kernels kept them (SM coverage, est. occupancy);
//   - the timeline on one canvas: per device its busy time (a lighter shade where it was busy but
//     under-filled: SMs without work) and idle intervals coloured by cause, its streams, then the
//     host threads (API calls; thread states when the trace has samples).
//     Each frame draws at most a few rectangles per pixel column and lane: where segments would be
//     narrower than a pixel it draws per-pixel fractions from the bucket prefix sums instead;
//   - an icicle flame graph of idle time by host stack (DOM elements: click to zoom, search);
//   - the cause, recommendation, under-filled kernel, copy, memory and longest-interval panels.
// window.gsReport exposes counts and actions for tests (analyzer/report/html/test/browser_test.py).
(function () {
  "use strict";

  var report = JSON.parse(document.getElementById("gs-report").textContent);
  var tl = JSON.parse(document.getElementById("gs-timeline").textContent);

  var CAUSE_COLORS = {
    host_work: "#e4572e", allocator: "#a05195", pageable_copy: "#f3a712", launch_overhead: "#5b4bb7",
    device_wait: "#4f9fd1", launch_latency: "#8ab17d", other: "#9aa0a6"
  };
  var STATE_COLORS = {
    unsampled: "#c7ccd4", cpu: "#0f766e", io_wait: "#f3a712", lock_wait: "#e4572e", sleep: "#9ecae1", other: "#9aa0a6"
  };
  var BUSY_COLOR = "#2e9e5b", UNDERFILLED_COLOR = "#a9dcbc", API_COLOR = "#3b82c4", NVTX_COLOR = "#c9a227",
    AXIS_HEIGHT = 22;

  // ---- formatting ------------------------------------------------------------------------------
  function fmtNs(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 1 : 2) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 1 : 2) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 1 : 2) + " µs";
    return Math.round(ns) + " ns";
  }
  function fmtBytes(b) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b) + " " + units[i];
  }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function frameText(f) {
    var s = f.function || "(unknown)";
    if (f.file) s += " (" + f.file + (f.line ? ":" + f.line : "") + ")";
    return s;
  }
  function table(headers, rows) {
    var t = el("table"), tr = el("tr");
    headers.forEach(function (h) { var th = el("th", h.num ? "num" : "", typeof h === "string" ? h : h.text); tr.appendChild(th); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c, i) {
        var td = el("td", headers[i].num ? "num" : "");
        if (c instanceof Node) td.appendChild(c); else td.textContent = c;
        row.appendChild(td);
      });
      t.appendChild(row);
    });
    return t;
  }

  // ---- summary and losses (losses first: "losses are data") ------------------------------------
  function renderSummary() {
    var s = document.getElementById("summary");
    function metric(value, label) {
      var m = el("div", "metric");
      m.appendChild(el("b", "", value));
      m.appendChild(el("span", "", label));
      s.appendChild(m);
    }
    metric(pct(report.steady_utilization || 0), "steady-state GPU utilisation");
    metric(pct(report.utilization || 0), "utilisation over the whole trace");
    metric(fmtNs(report.idle_ns || 0), "steady-state idle, " + (report.intervals ? report.intervals.count : 0) + " intervals");
    metric(String((report.devices || []).length), "devices");
    metric(String(report.events || 0), "records in " + (report.traces || []).length + " trace(s)");
    var l = document.getElementById("losses"), losses = report.losses || {};
    if (losses.any) {
      var parts = [];
      Object.keys(losses).forEach(function (k) { if (k !== "any" && losses[k]) parts.push(k.replace(/_/g, " ") + ": " + losses[k]); });
      l.appendChild(el("div", "loss", "Data loss — " + parts.join(", ")));
    } else {
      l.appendChild(el("div", "ok", "No data lost."));
    }
    (report.warnings || []).forEach(function (w) { l.appendChild(el("div", "loss", "Warning: " + w)); });
    (report.notes || []).forEach(function (n) { l.appendChild(el("div", "ok", n)); });
  }

  // Per device: GPU-Util (a kernel ran) beside how full its kernels kept it, as the text report's
  // "filled:" line says it (JSON.md devices[]: null where the trace gives no launch configurations
  // or SM limits).
  var fillCounts = { devices: 0, kernels: 0 };
  function renderDevices() {
    var box = document.getElementById("devices"), devices = report.devices || [];
    var filled = devices.some(function (d) { return d.sm_coverage_utilization !== null && d.sm_coverage_utilization !== undefined; });
    if (!devices.length) return;
    var headers = ["device", { text: "GPU-Util", num: 1 }, { text: "steady state", num: 1 }];
    if (filled) headers.push({ text: "filled: SM coverage", num: 1 }, { text: "est. occupancy ≤", num: 1 });
    box.appendChild(table(headers, devices.map(function (d) {
      var row = [d.label, pct(d.utilization || 0), pct(d.steady_utilization || 0)];
      if (filled) {
        var known = d.sm_coverage_utilization !== null && d.sm_coverage_utilization !== undefined;
        if (known) fillCounts.devices++;
        row.push(known ? pct(d.sm_coverage_utilization) : "–",
                 d.est_occupancy_utilization !== null && d.est_occupancy_utilization !== undefined ? pct(d.est_occupancy_utilization) : "–");
      }
      return row;
    })));
    if (filled)
      box.appendChild(el("div", "muted", "GPU-Util counts a device busy while any kernel runs; SM coverage counts the share " +
        "of its SMs the running kernels gave blocks to, est. occupancy their resident warps (an upper bound)."));
  }

  // ---- timeline model --------------------------------------------------------------------------
  // Times inside the page are relative to tl.start (doubles stay exact for spans below 104 days).
  var T0 = tl.start, SPAN = Math.max(1, tl.end - tl.start);
  var ORIGIN = tl.origin - T0, WIDTH = tl.width, NB = tl.buckets;

  function prefix(values) {
    var p = new Float64Array(values.length + 1);
    for (var i = 0; i < values.length; i++) p[i + 1] = p[i] + values[i];
    return p;
  }
  // Sum of a bucket series over [t0, t1) (bucket values spread evenly inside their bucket).
  function rangeSum(p, t0, t1) {
    function at(t) {
      var f = (t - ORIGIN) / WIDTH;
      if (f <= 0) return 0;
      if (f >= NB) return p[NB];
      var i = Math.floor(f);
      return p[i] + (f - i) * (p[i + 1] - p[i]);
    }
    return at(t1) - at(t0);
  }
  function decodeExact(triples) {
    var n = triples.length / 3, start = new Float64Array(n), end = new Float64Array(n), label = new Int32Array(n);
    var t = 0;
    for (var i = 0; i < n; i++) {
      t += triples[3 * i];
      start[i] = t;
      end[i] = t + triples[3 * i + 1];
      label[i] = triples[3 * i + 2];
    }
    return { n: n, start: start, end: end, label: label };
  }
  // First segment that may end after t: segments of a lane do not overlap, so one step back from
  // the first start >= t is enough.
  function firstIndex(segs, t) {
    var lo = 0, hi = segs.n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (segs.start[mid] < t) lo = mid + 1; else hi = mid; }
    return lo > 0 && segs.end[lo - 1] > t ? lo - 1 : lo;
  }

  var lanes = tl.lanes.map(function (l) {
    var lane = { kind: l.kind, label: l.label, segments: l.segments, busy: prefix(l.busy || []), idle: {}, states: {} };
    Object.keys(l.idle || {}).forEach(function (c) { lane.idle[c] = prefix(l.idle[c]); });
    Object.keys(l.states || {}).forEach(function (s) { lane.states[s] = prefix(l.states[s]); });
    lane.hasStates = Object.keys(lane.states).length > 0;
    // A sample stands for its thread until the next one: the mean spacing of the lane's samples
    // (first to last sampled bucket over their count) is how long each is held when drawn.
    if (lane.hasStates) {
      var first = NB, last = -1, count = 0;
      Object.keys(l.states).forEach(function (s) {
        l.states[s].forEach(function (v, i) { if (v > 0) { first = Math.min(first, i); last = Math.max(last, i); count += v; } });
      });
      lane.samplePeriod = count > 1 ? (last - first + 1) * WIDTH / count : WIDTH;
    }
    lane.exact = l.exact ? decodeExact(l.exact) : null;
    lane.underfilled = l.underfilled ? prefix(l.underfilled) : null;
    if (l.work) { lane.work0 = l.work[0] - T0; lane.work1 = l.work[1] - T0; }
    lane.height = l.kind === "device" ? 24 : (lane.hasStates ? 26 : 16);
    return lane;
  });

  var canvas = document.getElementById("timeline-canvas"), ctx = canvas.getContext("2d");
  var view = { t0: 0, t1: SPAN }, cssWidth = 800, stats = { rects: 0, frames: 0, exactLanes: 0, bucketLanes: 0 };

  function laneTop(i) { var y = AXIS_HEIGHT; for (var k = 0; k < i; k++) y += lanes[k].height; return y; }
  var totalHeight = AXIS_HEIGHT + lanes.reduce(function (a, l) { return a + l.height; }, 0);

  function renderLabels() {
    var box = document.getElementById("lane-labels");
    var axis = el("div", "lane-label axis", lanes.length ? "time" : "no device work or API calls in this trace");
    axis.style.height = axis.style.lineHeight = AXIS_HEIGHT + "px";
    box.appendChild(axis);
    lanes.forEach(function (l) {
      var d = el("div", "lane-label lane " + l.kind, l.label);
      d.dataset.kind = l.kind;
      d.dataset.segments = String(l.segments);
      d.title = l.label + " — " + l.segments + " segments";
      d.style.height = d.style.lineHeight = l.height + "px";
      box.appendChild(d);
    });
  }

  function renderLegend() {
    var box = document.getElementById("legend");
    function item(color, text) {
      var s = el("span"), sw = el("span", "swatch");
      sw.style.background = color;
      s.appendChild(sw);
      s.appendChild(document.createTextNode(text));
      box.appendChild(s);
    }
    item(BUSY_COLOR, "device busy");
    if (lanes.some(function (l) { return l.underfilled; })) item(UNDERFILLED_COLOR, "device busy, under-filled (SMs without work)");
    tl.causes.forEach(function (c) { item(CAUSE_COLORS[c] || "#999", "idle: " + c.replace(/_/g, " ")); });
    item(API_COLOR, "host thread in a CUDA call");
    if (lanes.some(function (l) { return l.kind === "nvtx"; })) item(NVTX_COLOR, "NVTX range (outermost)");
    if (lanes.some(function (l) { return l.hasStates; }))
      tl.states.forEach(function (s) { item(STATE_COLORS[s] || "#999", "thread " + s.replace(/_/g, " ")); });
  }

  // Rectangles batched per colour: one fill per colour per frame, in the order the colours first
  // came, busy and under-filled first so that idle intervals are drawn over them.
  function Batch() { this.paths = {}; this.paths[BUSY_COLOR] = []; this.paths[UNDERFILLED_COLOR] = []; }
  Batch.prototype.rect = function (color, x, y, w, h) {
    var p = this.paths[color] || (this.paths[color] = []);
    p.push(x, y, w, h);
    stats.rects++;
  };
  Batch.prototype.flush = function () {
    var paths = this.paths;
    Object.keys(paths).forEach(function (color) {
      var p = paths[color];
      ctx.fillStyle = color;
      ctx.beginPath();
      for (var i = 0; i < p.length; i += 4) ctx.rect(p[i], p[i + 1], p[i + 2], p[i + 3]);
      ctx.fill();
    });
    Batch.call(this);
  };

  // Exact segments when they are wider than a pixel on average in view and the buckets would be
  // coarser than a pixel; per-pixel bucket fractions otherwise.
  function useExact(lane, nsPerPx, width) {
    if (!lane.exact) return false;
    if (WIDTH > nsPerPx) return true;
    var a = firstIndex(lane.exact, view.t0), b = firstIndex(lane.exact, view.t1);
    return b - a <= width / 2;
  }

  // Segments merged per pixel run of one colour. With `texts`, runs wide enough for a name get one.
  function drawExact(batch, segs, y, h, colorOf, nsPerPx, texts) {
    var i = firstIndex(segs, view.t0), runX0 = -1, runX1 = -1, runColor = null, runLabel = 0;
    function flush() {
      var w = Math.min(runX1, cssWidth) - runX0;
      batch.rect(runColor, runX0, y, w, h);
      if (texts && w >= 40) texts.push({ x: runX0, y: y + h / 2, w: w, text: tl.names[runLabel] || "" });
    }
    for (; i < segs.n && segs.start[i] < view.t1; i++) {
      var x0 = Math.max(0, Math.floor((segs.start[i] - view.t0) / nsPerPx));
      var x1 = Math.max(x0 + 1, Math.ceil((segs.end[i] - view.t0) / nsPerPx));
      var color = colorOf(segs.label[i]);
      if (color === runColor && x0 <= runX1) { runX1 = Math.max(runX1, x1); continue; }
      if (runColor !== null) flush();
      runX0 = x0; runX1 = x1; runColor = color; runLabel = segs.label[i];
    }
    if (runColor !== null) flush();
  }

  function drawLane(batch, lane, y, width, nsPerPx, texts) {
    var h = lane.height - 3, top = y + 1, exact = useExact(lane, nsPerPx, width), x, t0, t1, f;
    if (exact) stats.exactLanes++; else stats.bucketLanes++;
    if (lane.kind === "device") {
      if (exact) {
        // Busy across the steady window, the analysis' idle intervals over it.
        if (lane.work0 !== undefined && lane.work1 > view.t0 && lane.work0 < view.t1) {
          var bx0 = Math.max(0, (lane.work0 - view.t0) / nsPerPx), bx1 = Math.min(width, (lane.work1 - view.t0) / nsPerPx);
          batch.rect(BUSY_COLOR, bx0, top, Math.max(1, bx1 - bx0), h);
          drawUnderfilled(batch, lane, top, h, width, nsPerPx, Math.floor(bx0), Math.ceil(bx1), null);
        }
        drawExact(batch, lane.exact, top, h, function (c) { return CAUSE_COLORS[tl.causes[c]] || "#999"; }, nsPerPx);
        return;
      }
      var causes = Object.keys(lane.idle);
      for (x = 0; x < width; x++) {
        t0 = view.t0 + x * nsPerPx; t1 = t0 + nsPerPx;
        var norm = 1000 * (t1 - t0) / WIDTH, yy = top + h;
        f = rangeSum(lane.busy, t0, t1) / norm;
        if (f > 0.001) { var bh = Math.max(1, f * h); yy -= bh; batch.rect(BUSY_COLOR, x, yy, 1, bh); }
        if (f > 0.001 && lane.underfilled) drawUnderfilled(batch, lane, top, h, width, nsPerPx, x, x + 1, f);
        for (var k = 0; k < causes.length; k++) {
          f = rangeSum(lane.idle[causes[k]], t0, t1) / norm;
          if (f > 0.001) { var ih = Math.max(1, f * h); yy -= ih; batch.rect(CAUSE_COLORS[causes[k]] || "#999", x, yy, 1, ih); }
        }
      }
      return;
    }
    var color = lane.kind === "stream" ? BUSY_COLOR : lane.kind === "nvtx" ? NVTX_COLOR : API_COLOR;
    var rowH = lane.hasStates ? 14 : h;
    if (exact && lane.kind === "nvtx") {
      drawExact(batch, lane.exact, top, rowH, function (label) { return colorFor(tl.names[label] || ""); }, nsPerPx, texts);
    } else if (exact) {
      drawExact(batch, lane.exact, top, rowH, function () { return color; }, nsPerPx);
    } else {
      for (x = 0; x < width; x++) {
        t0 = view.t0 + x * nsPerPx; t1 = t0 + nsPerPx;
        f = rangeSum(lane.busy, t0, t1) / (1000 * nsPerPx / WIDTH);
        if (f > 0.001) { var fh = Math.max(2, Math.min(1, f) * rowH); batch.rect(color, x, top + rowH - fh, 1, fh); }
      }
    }
    if (lane.hasStates) {
      // The state most samples held in each pixel column (columns as wide as a bucket at least).
      var names = Object.keys(lane.states), step = Math.max(1, Math.ceil(WIDTH / nsPerPx));
      for (x = 0; x < width; x += step) {
        t0 = view.t0 + x * nsPerPx - lane.samplePeriod; t1 = view.t0 + (x + step) * nsPerPx;
        var best = null, bestCount = 0;
        for (var s = 0; s < names.length; s++) {
          var c = rangeSum(lane.states[names[s]], t0, t1);
          if (c > bestCount + 1e-9) { best = names[s]; bestCount = c; }
        }
        if (best) batch.rect(STATE_COLORS[best] || "#999", x, top + rowH + 2, step, h - rowH - 2);
      }
    }
  }

  // The under-filled share of each pixel column in [x0, x1), from the bottom of the lane: inside the
  // busy bar (at most `busy` of the lane when given).
  function drawUnderfilled(batch, lane, top, h, width, nsPerPx, x0, x1, busy) {
    if (!lane.underfilled) return;
    var norm = 1000 * nsPerPx / WIDTH;
    for (var x = Math.max(0, x0); x < Math.min(width, x1); x++) {
      var t0 = view.t0 + x * nsPerPx, f = rangeSum(lane.underfilled, t0, t0 + nsPerPx) / norm;
      if (busy !== null) f = Math.min(f, busy);
      if (f > 0.001) { var fh = Math.max(1, Math.min(1, f) * h); batch.rect(UNDERFILLED_COLOR, x, top + h - fh, 1, fh); }
    }
  }

  function drawAxis(width, nsPerPx) {
    ctx.fillStyle = "#667085";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    var span = view.t1 - view.t0, raw = span / Math.max(1, width / 110), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (s) { return s >= raw; })[0] || 10 * mag;
    for (var t = Math.ceil(view.t0 / step) * step; t < view.t1; t += step) {
      var x = Math.round((t - view.t0) / nsPerPx) + 0.5;
      ctx.fillRect(x, AXIS_HEIGHT - 5, 1, 5);
      ctx.fillText(fmtNs(t), x + 3, AXIS_HEIGHT / 2);
      ctx.fillStyle = "#eceef2";
      ctx.fillRect(x, AXIS_HEIGHT, 1, totalHeight - AXIS_HEIGHT);
      ctx.fillStyle = "#667085";
    }
  }

  function draw() {
    var box = document.getElementById("canvas-box"), dpr = window.devicePixelRatio || 1;
    cssWidth = Math.max(200, box.clientWidth);
    canvas.style.height = totalHeight + "px";
    if (canvas.width !== Math.round(cssWidth * dpr) || canvas.height !== Math.round(totalHeight * dpr)) {
      canvas.width = Math.round(cssWidth * dpr);
      canvas.height = Math.round(totalHeight * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssWidth, totalHeight);
    stats.rects = 0; stats.exactLanes = 0; stats.bucketLanes = 0; stats.frames++;
    var nsPerPx = (view.t1 - view.t0) / cssWidth;
    drawAxis(cssWidth, nsPerPx);
    var batch = new Batch(), y = AXIS_HEIGHT, texts = [];
    for (var i = 0; i < lanes.length; i++) {
      drawLane(batch, lanes[i], y, cssWidth, nsPerPx, texts);
      ctx.fillStyle = "#eceef2";
      ctx.fillRect(0, y + lanes[i].height - 1, cssWidth, 1);
      y += lanes[i].height;
    }
    batch.flush();
    ctx.fillStyle = "#1d2330";
    ctx.font = "10px system-ui, sans-serif";
    texts.forEach(function (t) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(t.x, t.y - 8, t.w - 2, 16);
      ctx.clip();
      ctx.fillText(t.text, t.x + 3, t.y);
      ctx.restore();
    });
    document.getElementById("view-range").textContent =
      fmtNs(view.t0) + " – " + fmtNs(view.t1) + " (" + fmtNs(view.t1 - view.t0) + " shown)";
    document.getElementById("detail").textContent = tl.exact
      ? "every segment kept (" + tl.exact_segments + ")"
      : "decimated: " + tl.records + " records over the " + tl.max_exact_segments +
        "-segment budget; detail down to " + fmtNs(WIDTH) + " buckets";
  }

  var pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; draw(); });
  }
  function setView(t0, t1) {
    var span = Math.max(1000, Math.min(t1 - t0, SPAN * 1.5));
    var mid = (t0 + t1) / 2;
    t0 = mid - span / 2; t1 = mid + span / 2;
    var pad = SPAN * 0.25;
    if (t0 < -pad) { t1 += -pad - t0; t0 = -pad; }
    if (t1 > SPAN + pad) { t0 -= t1 - SPAN - pad; t1 = SPAN + pad; }
    view.t0 = t0; view.t1 = t1;
    redraw();
  }
  function zoom(factor, atX) {
    var frac = atX === undefined ? 0.5 : atX / cssWidth, t = view.t0 + frac * (view.t1 - view.t0);
    var span = (view.t1 - view.t0) * factor;
    setView(t - frac * span, t - frac * span + span);
  }

  function laneAt(y) {
    var top = AXIS_HEIGHT;
    for (var i = 0; i < lanes.length; i++) { if (y >= top && y < top + lanes[i].height) return i; top += lanes[i].height; }
    return -1;
  }
  function describe(lane, t, nsPerPx) {
    var s = lane.label + "\n" + fmtNs(t);
    if (lane.exact) {
      var i = firstIndex(lane.exact, t - nsPerPx);
      if (i < lane.exact.n && lane.exact.start[i] <= t + nsPerPx) {
        var name = lane.kind === "device" ? "idle: " + tl.causes[lane.exact.label[i]] : tl.names[lane.exact.label[i]];
        return s + "\n" + name + ", " + fmtNs(lane.exact.end[i] - lane.exact.start[i]);
      }
    }
    var t0 = t - nsPerPx / 2, t1 = t + nsPerPx / 2, norm = 1000 * nsPerPx / WIDTH;
    s += "\n" + (lane.kind === "thread" ? "in CUDA calls " : lane.kind === "nvtx" ? "in ranges " : "busy ") + pct(Math.min(1, rangeSum(lane.busy, t0, t1) / norm));
    if (lane.underfilled) s += "\nbusy but under-filled " + pct(Math.min(1, rangeSum(lane.underfilled, t0, t1) / norm));
    Object.keys(lane.idle).forEach(function (c) {
      var f = rangeSum(lane.idle[c], t0, t1) / norm;
      if (f > 0.001) s += "\nidle " + c + " " + pct(f);
    });
    return s;
  }

  function wireTimeline() {
    var drag = null, tip = document.getElementById("tooltip");
    canvas.addEventListener("wheel", function (e) {
      e.preventDefault();
      zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX);
    }, { passive: false });
    canvas.addEventListener("mousedown", function (e) { drag = { x: e.clientX, t0: view.t0, t1: view.t1 }; canvas.style.cursor = "grabbing"; });
    window.addEventListener("mouseup", function () { drag = null; canvas.style.cursor = "grab"; });
    window.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var dt = (e.clientX - drag.x) * (drag.t1 - drag.t0) / cssWidth;
      setView(drag.t0 - dt, drag.t1 - dt);
    });
    canvas.addEventListener("mousemove", function (e) {
      var i = laneAt(e.offsetY);
      if (i < 0 || drag) { tip.style.display = "none"; return; }
      var nsPerPx = (view.t1 - view.t0) / cssWidth;
      tip.textContent = describe(lanes[i], view.t0 + e.offsetX * nsPerPx, nsPerPx);
      tip.style.display = "block";
      tip.style.left = Math.min(e.offsetX + 12, cssWidth - 260) + "px";
      tip.style.top = (e.offsetY + 12) + "px";
    });
    canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
    canvas.addEventListener("dblclick", function () { setView(0, SPAN); });
    document.getElementById("zoom-in").onclick = function () { zoom(0.5); };
    document.getElementById("zoom-out").onclick = function () { zoom(2); };
    document.getElementById("zoom-reset").onclick = function () { setView(0, SPAN); };
    window.addEventListener("resize", redraw);
  }

  // ---- flame graph (icicle: callers above callees) ----------------------------------------------
  var flame = { nodes: [], focus: 0, elements: [] };
  function buildFlame() {
    function visit(n, depth, parent, x) {
      var node = { frame: n, value: n.idle_ns || 0, depth: depth, parent: parent, x: x, children: [] };
      var index = flame.nodes.length;
      flame.nodes.push(node);
      var cx = x;
      (n.children || []).forEach(function (c) { node.children.push(visit(c, depth + 1, index, cx)); cx += c.idle_ns || 0; });
      return index;
    }
    if (report.stack_tree) visit(report.stack_tree, 0, -1, 0);
    var box = document.getElementById("flame"), maxDepth = 0;
    flame.nodes.forEach(function (n, i) {
      maxDepth = Math.max(maxDepth, n.depth);
      var d = el("div", "flame-frame", frameText(n.frame));
      d.dataset.index = String(i);
      d.dataset.depth = String(n.depth);
      d.title = frameText(n.frame) + (n.frame.module ? "\n" + n.frame.module : "") + "\nidle " + fmtNs(n.value) +
        " (" + pct(n.frame.share || 0) + " of idle time)";
      d.style.top = (n.depth * 18) + "px";
      d.style.background = colorFor(n.frame.function || "");
      d.addEventListener("click", function () { focusFlame(i); });
      box.appendChild(d);
      flame.elements.push(d);
    });
    box.style.height = ((maxDepth + 1) * 18 + 2) + "px";
    if (!flame.nodes.length || !flame.nodes[0].value) box.appendChild(el("div", "muted", "No idle time charged to host stacks."));
    document.getElementById("flame-search").addEventListener("input", function (e) { searchFlame(e.target.value); });
    layoutFlame();
  }
  function colorFor(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return "hsl(" + (10 + h % 40) + ", " + (65 + h % 20) + "%, " + (62 + (h >> 8) % 14) + "%)";
  }
  function isAncestor(a, b) {  // a is b or one of b's callers
    for (var i = b; i >= 0; i = flame.nodes[i].parent) if (i === a) return true;
    return false;
  }
  function layoutFlame() {
    var box = document.getElementById("flame"), width = box.clientWidth || 800, f = flame.nodes[flame.focus];
    if (!f) return;
    var scale = f.value > 0 ? width / f.value : 0;
    flame.nodes.forEach(function (n, i) {
      var d = flame.elements[i], left, w;
      if (isAncestor(i, flame.focus)) { left = 0; w = width; }
      else if (isAncestor(flame.focus, i)) { left = (n.x - f.x) * scale; w = n.value * scale; }
      else { d.style.display = "none"; return; }
      d.style.display = w >= 0.5 ? "block" : "none";
      d.style.left = left + "px";
      d.style.width = Math.max(1, w) + "px";
    });
  }
  function focusFlame(i) {
    flame.focus = i === flame.focus && i !== 0 ? Math.max(0, flame.nodes[i].parent) : i;
    layoutFlame();
  }
  function searchFlame(text) {
    var re = null, out = document.getElementById("flame-match");
    if (text) { try { re = new RegExp(text, "i"); } catch (err) { re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); } }
    var matched = 0, value = 0;
    flame.nodes.forEach(function (n, i) {
      var hit = re !== null && re.test(frameText(n.frame));
      flame.elements[i].classList.toggle("match", hit);
      flame.elements[i].classList.toggle("dim", re !== null && !hit);
      if (hit) {
        matched++;
        var outer = true;  // count a frame's time once, at its outermost match
        for (var p = n.parent; p >= 0; p = flame.nodes[p].parent) if (re.test(frameText(flame.nodes[p].frame))) outer = false;
        if (outer) value += n.value;
      }
    });
    var root = flame.nodes[0];
    out.textContent = re ? matched + " frames, " + fmtNs(value) + (root && root.value ? " (" + pct(value / root.value) + " of idle)" : "") : "";
    return matched;
  }

  // ---- panels ------------------------------------------------------------------------------------
  function renderCauses() {
    var box = document.getElementById("causes"), causes = (report.causes || []).filter(function (c) { return c.idle_ns > 0; });
    if (!causes.length) { box.appendChild(el("div", "muted", "No steady-state idle time.")); return; }
    box.appendChild(table(["cause", "", { text: "idle", num: 1 }, { text: "share", num: 1 }, { text: "intervals", num: 1 }, "what the evidence was"],
      causes.map(function (c) {
        var bar = el("div", "bar");
        bar.style.width = Math.max(1, 120 * c.share) + "px";
        bar.style.background = CAUSE_COLORS[c.cause] || "#999";
        return [c.cause.replace(/_/g, " "), bar, fmtNs(c.idle_ns), pct(c.share), String(c.intervals), c.description || ""];
      })));
    var states = report.host_work_states || {}, sampled = Object.keys(states).filter(function (k) { return k !== "unsampled" && states[k] > 0; });
    if (sampled.length)
      box.appendChild(el("div", "muted", "Host work by sampled thread state: " + sampled.map(function (k) { return k.replace(/_/g, " ") + " " + fmtNs(states[k]); }).join(", ")));
  }
  function renderRecommendations() {
    var box = document.getElementById("recommendations"), recs = report.recommendations || [];
    if (!recs.length) { box.appendChild(el("div", "muted", "None: the GPU was kept busy, or no cause is large enough to act on.")); return; }
    recs.forEach(function (r) {
      var d = el("div", "recommendation");
      d.appendChild(el("div", "", r.text));
      d.appendChild(el("div", "numbers", r.kind + " · addresses " + pct(r.idle_share || 0) + " of idle time" +
        (r.est_gain_ns ? " · estimated gain " + fmtNs(r.est_gain_ns) : "")));
      if (r.prediction) d.appendChild(renderPrediction(r.prediction));
      box.appendChild(d);
    });
    var replay = report.replay;  // gsanalyze html --what-if (JSON.md replay)
    if (replay && !replay.ok && !replay.replayed_wall_ns)
      box.appendChild(el("div", "muted replay-check", "Replay check: no prediction is shown: " + replay.reason + "."));
    else if (replay)
      box.appendChild(el("div", "muted replay-check", "Replay check: the traces' dependencies replay to " +
        fmtNs(replay.replayed_wall_ns) + " (measured " + fmtNs(replay.measured_wall_ns) + ", " +
        (replay.wall_error >= 0 ? "+" : "") + (100 * replay.wall_error).toFixed(1) + "%)" +
        (replay.ok ? ": within " + pct(replay.tolerance) + ", so each recommendation shows what it would buy."
                   : "; no prediction is shown: " + replay.reason + ".")));
  }
  // Before and after as two bars on one scale: rows of [label, ns, text after the time].
  function beforeAfterBars(rows) {
    var box = el("div", "what-if");
    var scale = Math.max.apply(null, rows.map(function (r) { return r[1]; })) || 1;
    rows.forEach(function (row) {
      var line = el("div", "what-if-row");
      line.appendChild(el("span", "what-if-label", row[0]));
      var bar = el("span", "what-if-bar");
      bar.style.width = (100 * row[1] / scale).toFixed(1) + "%";
      line.appendChild(bar);
      line.appendChild(el("span", "what-if-value", fmtNs(row[1]) + row[2]));
      box.appendChild(line);
    });
    return box;
  }
  // What a fix would buy (JSON.md recommendations[].prediction): run time and GPU-Util before and
  // after as two pairs of bars on one scale, and the numbers.
  function renderPrediction(p) {
    var box = beforeAfterBars([["before", p.wall_ns_before, " · GPU-Util " + pct(p.utilization_before)],
                               ["after the fix", p.wall_ns, " · GPU-Util " + pct(p.utilization)]]);
    var text = "What-if (replayed): run " + fmtNs(p.wall_ns_before) + " → " + fmtNs(p.wall_ns) +
      (p.step_ns ? ", step " + fmtNs(p.step_ns_before) + " → " + fmtNs(p.step_ns) : "") + ", GPU-Util " +
      pct(p.utilization_before) + " → " + pct(p.utilization);
    if (p.workers > 0) text += " with " + p.workers + (p.workers === 1 ? " input worker" : " input workers") +
      " (input preparation free: " + fmtNs(p.bound_wall_ns) + ", " + pct(p.bound_utilization) + ")";
    else if (p.bound_wall_ns > 0 && p.producers_unseen)
      text += " with input preparation free (the batches come from a queue whose producers the trace does not " +
        "show: how many more it takes is not predicted)";
    else if (p.bound_wall_ns > 0) text += " with input preparation free (no more workers fit the host's cores)";
    box.appendChild(el("div", "numbers what-if-text", text));
    return box;
  }
  // A multi-rank job (JSON.md ranks): a row per rank, the straggler with its evidence and stacks,
  // and with --what-if its prediction: the job's step with the straggler at the median rank's
  // host time, as the text report's "Ranks" section says it.
  function renderRanks() {
    var ranks = report.ranks;
    if (!ranks) return;
    document.getElementById("ranks-section").hidden = false;
    var box = document.getElementById("ranks"), rows = ranks.rows || [];
    box.appendChild(table(["rank", { text: "GPU-Util", num: 1 }, { text: "steady", num: 1 }, { text: "steps", num: 1 },
      { text: "waiting in collectives", num: 1 }, { text: "last at", num: 1 }, { text: "delay caused", num: 1 },
      { text: "host-bound idle", num: 1 }, "top cause"],
      rows.map(function (r) {
        return [r.label, pct(r.utilization || 0),
                pct(r.steady_utilization || 0), String(r.steps || 0), fmtNs(r.collective_wait_ns || 0),
                String(r.last_at_steps || 0), fmtNs(r.delay_caused_ns || 0), fmtNs(r.host_bound_idle_ns || 0),
                (r.top_cause || "").replace(/_/g, " ")];
      })));
    var clocks = ranks.clocks || {};
    box.appendChild(el("div", "muted", ranks.steps_compared + " steps compared" +
      (ranks.step_ns ? ", a step " + fmtNs(ranks.step_ns) : "") + (ranks.world_size ? ", world size " + ranks.world_size : "") +
      (clocks.method ? "; clocks: " + clocks.method : "")));
    var s = ranks.straggler;
    if (s) {
      var d = el("div", "recommendation straggler");
      d.appendChild(el("div", "", "Straggler: " + s.label + " was last at " + s.last_at_steps + " of " + s.steps_with_delay + " delayed steps, " + pct(s.delay_share || 0) +
        " of the job's wait (" + fmtNs(s.delay_caused_ns || 0) + ")."));
      if (s.evidence) d.appendChild(el("div", "numbers", s.evidence));
      (s.stacks || []).slice(0, 3).forEach(function (st) {
        d.appendChild(el("div", "numbers straggler-stack", fmtNs(st.step_host_bound_ns || st.idle_ns || 0) + " (" +
          (st.cause || "").replace(/_/g, " ") + "): " + (st.frames || []).slice(0, 4).join(" ← ")));
      });
      var p = s.prediction;
      if (p && p.ok) {
        d.appendChild(beforeAfterBars([["before", p.measured_step_ns, " a step · GPU-Util " + pct(p.measured_utilization)],
                                       ["after the fix", p.predicted_step_ns, " a step · GPU-Util " + pct(p.predicted_utilization)]]));
        d.appendChild(el("div", "numbers what-if-text", "What-if (replayed, the ranks joined at their collectives): step " +
          fmtNs(p.measured_step_ns) + " → " + fmtNs(p.predicted_step_ns) + ", run " + fmtNs(p.measured_wall_ns) + " → " +
          fmtNs(p.predicted_wall_ns) + ", GPU-Util " + pct(p.measured_utilization) + " → " + pct(p.predicted_utilization) +
          " with " + s.label + " at the median rank's host time; the join replays the steps to " + fmtNs(p.replayed_step_ns) +
          " (" + (p.step_error >= 0 ? "+" : "") + (100 * p.step_error).toFixed(1) + "%)."));
      } else if (p) {
        d.appendChild(el("div", "muted replay-check", "Replay check: no prediction is shown: " + p.reason + "."));
      }
      box.appendChild(d);
    }
    (ranks.notes || []).forEach(function (n) { box.appendChild(el("div", "muted", n)); });
  }

  // The launch configurations that left the most of their device empty (JSON.md kernel_configs[],
  // as the text report's "Under-filled kernels").
  function limiterText(k) {
    var l = k.limiter || "";
    return l.indexOf("registers") >= 0 ? "registers" : l.indexOf("shared_memory") >= 0 ? "shared memory"
      : l.indexOf("warps") >= 0 ? "warps" : "block slots";
  }
  function renderKernels() {
    var box = document.getElementById("kernels"), configs = report.kernel_configs || [];
    var rows = configs.filter(function (k) { return k.underfilled_ns > 0; });
    fillCounts.kernels = rows.length;
    if (!configs.length) { box.appendChild(el("div", "muted", "The trace gives no launch configurations.")); return; }
    if (!rows.length) { box.appendChild(el("div", "muted", "No kernel left SMs without work.")); return; }
    box.appendChild(table(["kernel", { text: "grid", num: 1 }, { text: "block", num: 1 }, { text: "launches", num: 1 },
      { text: "under-filled", num: 1 }, { text: "coverage", num: 1 }, { text: "blocks/SM", num: 1 }, { text: "waves", num: 1 },
      "launched from"],
      rows.map(function (k) {
        // From the launch site on, as the text report's "launched from" (JSON.md stacks[].site).
        var top = k.stacks && k.stacks.length ? k.stacks[0] : null;
        var site = top && top.frames.length
          ? top.frames.slice(top.site || 0, (top.site || 0) + 2).map(frameText).join(" ← ") : "–";
        // A trace without kernel names (the agent's event-pair fallback): as the text report says it.
        var shown = k.name || "(unnamed kernel: timed by event pairs)";
        var name = el("span", "", shown.length > 60 ? shown.slice(0, 59) + "…" : shown);
        name.title = shown;
        return [name, k.grid.join("×"), k.block.join("×"), String(k.count), fmtNs(k.underfilled_ns),
          pct(k.wave_coverage) + " of " + k.sms + " SMs",
          k.active_blocks_per_sm !== null ? k.active_blocks_per_sm + " (" + limiterText(k) + ")" : "–",
          k.waves !== null ? String(k.waves) : "–", site];
      })));
  }
  function renderCopies() {
    var box = document.getElementById("copies"), c = report.copies || {};
    if (!c.directions || !c.directions.length) { box.appendChild(el("div", "muted", "No copies.")); return; }
    box.appendChild(table(["direction", { text: "copies", num: 1 }, { text: "bytes", num: 1 }, { text: "device time", num: 1 },
      { text: "bandwidth", num: 1 }, { text: "pageable", num: 1 }, { text: "link share", num: 1 }],
      c.directions.map(function (d) {
        return [d.direction, String(d.count), fmtBytes(d.bytes), fmtNs(d.time_ns), fmtBytes(d.bandwidth) + "/s",
          fmtBytes(d.pageable_bytes), d.link_share !== undefined ? pct(d.link_share) : "–"];
      })));
    box.appendChild(el("div", "muted", pct(c.pageable_share || 0) + " of " + fmtBytes(c.bytes || 0) + " copied from pageable memory" +
      (c.est_pinning_gain_ns ? "; pinning would save about " + fmtNs(c.est_pinning_gain_ns) + " (" + c.gain_model + ")" : "")));
  }
  function renderMemory() {
    var box = document.getElementById("memory"), m = report.memory || {};
    box.appendChild(table(["", { text: "", num: 1 }], [
      ["peak allocated through the runtime", fmtBytes(m.peak_bytes || 0) + (m.total_memory ? " (" + pct(m.peak_share || 0) + " of " + fmtBytes(m.total_memory) + ")" : "")],
      ["peak reported usage", m.peak_usage_bytes ? fmtBytes(m.peak_usage_bytes) : "–"],
      ["device allocations / frees", (m.allocations || 0) + " / " + (m.frees || 0)],
      ["host (pinned) allocations", String(m.host_allocations || 0)],
      ["out-of-memory errors", String(m.oom_errors || 0)]]));
    if (m.explanation) box.appendChild(el("div", "loss", m.explanation));
  }
  function renderIntervals() {
    var box = document.getElementById("intervals"), rows = (report.intervals && report.intervals.longest) || [];
    if (!rows.length) { box.appendChild(el("div", "muted", "No idle intervals.")); return; }
    var t = table(["device", { text: "at", num: 1 }, { text: "length", num: 1 }, "cause", "evidence"],
      rows.map(function (r) { return [r.device, fmtNs(r.start_ns - T0), fmtNs(r.duration_ns), r.cause.replace(/_/g, " "), r.evidence]; }));
    Array.prototype.slice.call(t.querySelectorAll("tr"), 1).forEach(function (tr, i) {
      tr.addEventListener("click", function () {
        var r = rows[i], pad = Math.max(r.duration_ns, 1000);
        setView(r.start_ns - T0 - pad, r.end_ns - T0 + pad);
        document.getElementById("timeline-section").scrollIntoView();
      });
    });
    box.appendChild(t);
  }

  // ---- start -------------------------------------------------------------------------------------
  renderSummary();
  renderDevices();
  renderLegend();
  renderLabels();
  wireTimeline();
  draw();
  buildFlame();
  renderCauses();
  renderRecommendations();
  renderRanks();
  renderKernels();
  renderCopies();
  renderMemory();
  renderIntervals();
  window.addEventListener("resize", layoutFlame);

  window.gsReport = {
    ready: true,
    lanes: lanes.length,
    exact: tl.exact,
    stats: stats,
    view: function () { return { t0: view.t0, t1: view.t1, span: SPAN }; },
    setView: function (t0, t1) { setView(t0, t1); draw(); },
    zoom: function (factor) { zoom(factor); draw(); },
    draw: draw,
    // Devices shown with an SM coverage, under-filled kernel rows, device lanes with the shade.
    fill: { devices: fillCounts.devices, kernels: fillCounts.kernels,
            lanes: lanes.filter(function (l) { return l.underfilled; }).length },
    flame: {
      nodes: flame.nodes.length,
      focus: function () { return flame.focus; },
      search: searchFlame
    }
  };
})();
