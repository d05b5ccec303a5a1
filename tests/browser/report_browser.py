#!/usr/bin/env python3
"""graphscope report in a real browser: Debian's chromium, headless, driven by
chromedriver through Selenium (python3-selenium). Reports are made from the
recordings in tests/data by the graphscope binary under test; for each the
page must load with no console error, show the document's node count, find
and select a kernel by name, show a node's details when it is clicked with
the mouse, and show an account whose parts add up to the makespan; a graph of
hostile names must show its picture, not an XML error. On a profile, a diff
and a run directory page every node is selected and what its details show is
checked against the document it came from (`profile --json`, `diff --json`,
`ranks --json`), and a run's ledger, the page's first section, against
`ledger --json`; every shape's colour is checked against the rule it follows
(the delay's band of the threshold, the diff status of all the nodes it
draws), the legend must explain them, a fitted picture must keep its labels
readable and the details must stay inside the window. A screenshot of each
page is written to --out (CI keeps it as an artifact).

Exit 0 pass, 1 fail, 77 skipped (no chromium, chromedriver or Selenium; with
GRAPHSCOPE_REQUIRE_BROWSER set, as .ci/run sets it, their absence is a failure).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

SKIP = 77


def missing_tools():
    if not shutil.which("chromium") and not os.path.exists("/usr/bin/chromium"):
        return "chromium"
    if not os.path.exists("/usr/bin/chromedriver"):
        return "chromedriver"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "python3-selenium"
    return None


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def graph_nodes(path):
    """Root nodes and mangled kernel names of a graphscope or PyTorch JSON."""
    with open(path) as f:
        d = json.load(f)
    nodes = d["nodes"]
    return len(nodes), [n.get("kernel_name") or "" for n in nodes]


class Browser:
    def __init__(self, out):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        o = Options()
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--window-size=1500,1000", "--user-data-dir=" + os.path.join(out, ".chromium-profile")):
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
        self.d.set_page_load_timeout(60)
        self.out = out

    def quit(self):
        self.d.quit()

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def open(self, path):
        t = time.monotonic()
        self.d.get("file://" + os.path.abspath(path))
        for _ in range(200):
            if self.js("return document.body && document.body.dataset.ready") == "1":
                break
            time.sleep(0.05)
        self.errors()
        check(self.js("return document.body.dataset.ready") == "1", "the page never finished drawing")
        # Milliseconds from navigation start to the end of drawing, as the page measured them.
        return int(self.js("return +document.body.dataset.drawnMs")) / 1000.0

    def errors(self):
        logs = self.d.get_log("browser")
        bad = [e for e in logs if e.get("level") == "SEVERE"]
        check(not bad, "console errors: " + "; ".join(e.get("message", "") for e in bad))

    def click(self, element):
        from selenium.webdriver.common.action_chains import ActionChains
        ActionChains(self.d).move_to_element(element).click().perform()

    def shot(self, name):
        path = os.path.join(self.out, name + ".png")
        self.d.save_screenshot(path)
        return path

    def search(self, query):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
        box = self.d.find_element(By.ID, "gs-search")
        box.clear()
        box.send_keys(query, Keys.ENTER)
        time.sleep(0.2)
        return int(self.js("return +document.getElementById('gs-match-count').dataset.count"))


def check_count(b, expected):
    shown = int(b.js("return +document.getElementById('gs-node-count').dataset.count"))
    text = b.js("return document.getElementById('gs-node-count').textContent")
    check(shown == expected, "the page shows %d nodes, the document has %d" % (shown, expected))
    check(text.startswith(str(expected) + " node"), "node count text %r" % text)


def check_search(b, query, kernel_names):
    expected = sum(1 for k in kernel_names if query.lower() in k.lower())
    check(expected > 0, "test setup: no kernel matches %r" % query)
    found = b.search(query)
    check(found == expected, "search %r found %d nodes, the document has %d" % (query, found, expected))
    sel = b.js("return document.getElementById('details').dataset.node")
    check(sel is not None, "search selected no node")
    check(query.lower() in kernel_names[int(sel)].lower(), "search selected node %s, not a %s" % (sel, query))
    if b.js("return !!document.querySelector('#gs-view-0 svg')"):
        n = b.js("return document.querySelectorAll('#gs-view-0 g.node.gs-sel').length")
        check(n > 0, "search selected nothing in the picture")


def click_visible_node(b, view="gs-view-0"):
    """Clicks, with the mouse, a node shape the view shows; returns the nodes it draws."""
    info = b.js("""
      const view = document.getElementById(arguments[0]), r = view.getBoundingClientRect();
      for (const g of view.querySelectorAll('g.node')) {
        const q = g.getBoundingClientRect();
        const cx = q.left + q.width / 2, cy = q.top + q.height / 2;
        if (cx > r.left + 5 && cx < r.right - 5 && cy > r.top + 5 && cy < r.bottom - 5 &&
            document.elementFromPoint(cx, cy) && g.contains(document.elementFromPoint(cx, cy)))
          return [g.querySelector('title').textContent, Array.from(view.querySelectorAll('g.node')).indexOf(g)];
      }
      return null;""", view)
    check(info is not None, "no node of the picture is in view to click")
    from selenium.webdriver.common.by import By
    shape = b.d.find_elements(By.CSS_SELECTOR, "#%s g.node" % view)[info[1]]
    b.click(shape)
    time.sleep(0.1)
    head = b.js("return document.querySelector('#details h3') && document.querySelector('#details h3').textContent")
    check(head, "clicking %s showed no details" % info[0])
    return info[0], head


def check_click(b):
    title, head = click_visible_node(b)
    # g0_nN draws node N (folded: copy 1's node); g0_runN a box whose first node is N.
    first = int(title.split("_n")[-1]) if "_n" in title else int(title.split("_run")[-1])
    check(("node %d:" % first) in head, "clicked %s, details say %r" % (title, head))
    rows = b.js("return Array.from(document.querySelectorAll('#details td:first-child')).map(t => t.textContent)")
    check("type" in rows and "ids" in rows, "details lack type or ids: %r" % rows)
    return rows


def check_account(b):
    parts = b.js("return Array.from(document.querySelectorAll('#gs-account-bar > div')).map(d => +d.dataset.ns)")
    makespan = int(b.js("return +document.getElementById('gs-makespan').dataset.ns"))
    total = int(b.js("return +document.getElementById('gs-account-sum').dataset.ns"))
    check(parts and sum(parts) == makespan, "the bar's parts add up to %d ns, the makespan is %d ns" % (sum(parts), makespan))
    check(total == makespan, "the table's sum %d ns is not the makespan %d ns" % (total, makespan))
    shown = b.js("return [document.getElementById('gs-makespan').textContent, document.getElementById('gs-account-sum').textContent]")
    check(shown[0] == shown[1], "the page shows makespan %s and sum %s" % tuple(shown))


NUM = r"(-?[0-9]+(?:\.[0-9]+)?) \u00b5s"


def profile_json(gs, graph, trace):
    r = subprocess.run([gs, "profile", "--graph", graph, "--trace", trace, "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "graphscope profile --json: exit %d: %s" % (r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def check_every_node(b, gs, graph, trace, gi=0):
    """Selects every node of graph gi as a click does and checks its details
    against `graphscope profile --json` of the same inputs: no null,
    undefined or NaN anywhere, the verdict the report gives, the delay, and
    a duration inside its own range over the replays. Returns the count."""
    import re
    r = subprocess.run([gs, "profile", "--graph", graph, "--trace", trace, "--json"], capture_output=True, text=True)
    check(r.returncode == 0, "graphscope profile --json: exit %d: %s" % (r.returncode, r.stderr.strip()))
    nodes = json.loads(r.stdout)["nodes"]
    for v, want in enumerate(nodes):
        rows = b.js("""
          window.graphscopeSelect(arguments[0], arguments[1]);
          const box = document.getElementById('details');
          return [box.textContent, Array.from(box.querySelectorAll('tr')).map(
            (tr) => [tr.children[0].textContent, tr.children[1] ? tr.children[1].textContent : ''])];""", gi, v)
        text, table = rows[0], dict(rows[1])
        check(not re.search(r"\bnull\b|undefined|NaN", text), "node %d's details read %r" % (v, text[:300]))
        if not want["replays"]:
            # No record: the page must say so, not show times it does not have.
            check("no record" in table.get("profile", "") and "delay" not in table and "start" not in table,
                  "node %d has no record, the page shows %r" % (v, table))
            continue
        verdict = table.get("verdict", "")
        check(verdict.split(" ")[0] == want["verdict"], "node %d: the page says verdict %r, the report %r" % (v, verdict, want["verdict"]))
        delay = re.match(NUM, table.get("delay", ""))
        check(delay and abs(float(delay.group(1)) - want["delay_us"]) <= 0.0051 + 0.0006 * abs(want["delay_us"]),
              "node %d: the page says delay %r, the report %s us" % (v, table.get("delay"), want["delay_us"]))
        d = table.get("duration", "")
        m = re.findall(NUM, d)
        if "over" in d:
            head, lo, hi = (float(x) for x in m[:3])
            check(lo <= head <= hi, "node %d: duration %r outside its own range" % (v, d))
    return len(nodes)


def page_data(b):
    """The page's own data (the JSON the C++ side wrote into #gs-data)."""
    return b.js("return JSON.parse(document.getElementById('gs-data').textContent)")


def shapes_of(data, gi):
    """Shape name (the SVG <title>) -> the nodes it draws, in node order."""
    g = data["graphs"][gi]
    out = {}
    for v, s in enumerate(g["shape"]):
        if s is not None and s >= 0:
            out.setdefault(data["strings"][s], []).append(v)
    return out


def luminance(rgb):
    def lin(c):
        c /= 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(rgb[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(x, y):
    a, b = luminance(x), luminance(y)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


# The delay rule the legend states: bands start at these multiples of the
# profile's threshold; a node's band is the last one its delay reaches.
BAND_STARTS = (0.0, 0.5, 1.0, 2.0, 4.0)


def delay_band(delay, threshold):
    band = 0
    for k, f in enumerate(BAND_STARTS):
        if k and delay > 0 and delay >= f * threshold:
            band = k
    return band


def us_text(x):
    """report.js's us(): microseconds as the page writes them."""
    a = abs(x)
    return ("%.1f" % x if a >= 100 else "%.2f" % x if a >= 1 else "%.3f" % x) + " \u00b5s"


def shape_paint(b, view):
    """title -> (fill of its outline, [fills of its texts]) for every shape of a view."""
    return {t: (f, tf) for t, f, tf in b.js("""
      return Array.from(document.querySelectorAll('#' + arguments[0] + ' g.node')).map((g) => {
        const s = g.querySelector('polygon, path, ellipse');
        return [g.querySelector('title').textContent, s ? s.getAttribute('fill') : null,
                Array.from(g.querySelectorAll('text')).map((t) => t.getAttribute('fill'))];
      });""", view)}


def check_delay_colours(b, prof, gi=0, view="gs-view-0"):
    """Every shape of a profiled picture is filled by the threshold rule
    (the strongest band among the nodes a box of several is drawn from;
    grey without a record), its labels in the colour that reads on the
    fill; the legend shows the bands in microseconds and explains every
    verdict word. Returns the shapes checked and the bands seen."""
    import re
    data = page_data(b)
    g, bands = data["graphs"][gi], data["delay_bands"]
    check([x["from"] for x in bands] == list(BAND_STARTS),
          "the page's delay bands %r are not the documented rule" % [x["from"] for x in bands])
    for k in range(1, len(bands)):
        check(luminance(bands[k]["fill"]) < luminance(bands[k - 1]["fill"]), "band %d is not stronger than band %d" % (k, k - 1))
    th = prof["threshold_us"]
    nodes = prof["nodes"]
    paint = shape_paint(b, view)
    checked, seen = 0, set()
    for name, drawn in shapes_of(data, gi).items():
        if name not in paint:
            continue
        # The nodes the shape is drawn from: a folded repeat draws copy 1's.
        own = [v for v in drawn if g["repeat"][v] < 0 or g["copy"][v] == 0] or drawn
        want = max(delay_band(nodes[v]["delay_us"], th) if nodes[v]["replays"] else -1 for v in own)
        fill = bands[want]["fill"] if want >= 0 else data["no_record_fill"]
        got, texts = paint[name]
        check(got is not None and got.lower() == fill.lower(),
              "%s (nodes %s, delays %s us, threshold %s us) is filled %s, the rule gives %s"
              % (name, own[:4], [nodes[v]["delay_us"] for v in own[:4]], th, got, fill))
        ink = "#ffffff" if contrast(fill, "#ffffff") > contrast(fill, "#000000") else "#000000"
        check(contrast(fill, ink) >= 4.5, "%s: its label reads %.1f:1 on %s" % (name, contrast(fill, ink), fill))
        for t in texts:
            check((t or "#000000").lower() in (("#ffffff", "white") if ink == "#ffffff" else ("#000000", "black")),
                  "%s: a label in %s on %s (it reads in %s)" % (name, t, fill, ink))
        checked += 1
        seen.add(want)
    legend = b.js("const l = document.getElementById('gs-legend'); return l && [l.textContent, l.dataset.thresholdUs, "
                  "Array.from(l.querySelectorAll('.lg-band .lg-sw')).map((s) => getComputedStyle(s).backgroundColor)]")
    check(legend, "the page has no legend")
    text, shown_th, swatches = legend
    check(abs(float(shown_th) - th) < 1e-9, "the legend's threshold %s is not the profile's %s us" % (shown_th, th))
    for word in ("real", "fake", "none", "blocking", "?", "\u00b5s", "no record", "threshold of " + us_text(th)):
        check(word in text, "the legend does not explain %r: %r" % (word, text[:400]))
    for k in range(1, len(bands)):
        check(us_text(bands[k]["from"] * th) in text,
              "the legend does not give band %d's start %s: %r" % (k, us_text(bands[k]["from"] * th), text[:400]))

    def rgb(h):
        return "rgb(%d, %d, %d)" % tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
    check(swatches == [rgb(x["fill"]) for x in bands] + [rgb(data["no_record_fill"])],
          "the legend's swatches %r are not the bands' fills" % swatches)
    return checked, sorted(seen)


def check_readable_fit(b, views):
    """A fitted picture keeps its labels readable: a scale of at least the
    page's minimum (its 10 pt labels at 8 px or more)."""
    least = b.js("return window.graphscopeMinScale")
    check(least and least >= 0.8, "the page sets no minimum scale (%r)" % least)
    scales = []
    for view in views:
        k = b.js("const s = document.querySelector('#' + arguments[0] + ' svg'); return s ? s.getScreenCTM().a : null", view)
        check(k is not None and k >= least * 0.99, "%s opens at scale %.2f: its labels are %.1f px" % (view, k or 0, 10 * (k or 0)))
        scales.append(k)
    return scales


def check_details_fit(b):
    """The details stay inside the window whatever they list, and their
    text inside them (wrapped, or cut with the whole on hover): no
    sideways scrolling."""
    w = b.js("const d = document.getElementById('details'), r = d.getBoundingClientRect();"
             "return [r.left, r.right, window.innerWidth, document.documentElement.scrollWidth, d.scrollWidth, d.clientWidth]")
    check(w[1] <= w[2] + 0.5 and w[3] <= w[2] + 0.5,
          "the details reach %d px in a window of %d (the page is %d px wide)" % (w[1], w[2], w[3]))
    check(w[4] <= w[5] + 1, "the details' text is %d px wide in %d px: it scrolls sideways" % (w[4], w[5]))


def click_shape(b, view, title):
    """A click on a shape, as the mouse gives it (through the picture's own handler)."""
    b.js("""const t = Array.from(document.querySelectorAll('#' + arguments[0] + ' g.node title')).find((x) => x.textContent === arguments[1]);
            t.parentNode.querySelector('polygon, path, ellipse, text').dispatchEvent(new MouseEvent('click', { bubbles: true }));""",
         view, title)


def check_many_selected(b, view="gs-view-0", least=8):
    """Clicks the shape that draws the most nodes (at least `least`, with the
    longest names): the details list them and stay inside the window."""
    data = page_data(b)
    gi = int(view.rsplit("-", 1)[1])
    shapes = shapes_of(data, gi)
    name = max(shapes, key=lambda s: (len(shapes[s]), max(len(data["strings"][data["graphs"][gi]["name"][v]]) for v in shapes[s])))
    check(len(shapes[name]) >= least, "no shape draws %d nodes (at most %d)" % (least, len(shapes[name])))
    click_shape(b, view, name)
    listed = b.js("return document.querySelectorAll('#details .results span.link').length")
    check(listed == len(shapes[name]), "clicking %s (%d nodes) lists %d" % (name, len(shapes[name]), listed))
    check_details_fit(b)
    return len(shapes[name])


def check_ranks_numbers(b, ranks):
    """The ranks section's numbers (cells that carry data-key and
    data-value: makespans, critical paths, time in and waited at
    collectives, arrived last) against `graphscope ranks --json`: each
    value as the document has it, its text as report.js's us() writes it.
    Returns the numbers checked."""
    cells = b.js("""return Array.from(document.querySelectorAll('#gs-ranks td[data-key]')).map((td) => {
        const table = td.closest('table'), tr = td.closest('tr');
        return [table.id, tr.dataset.rank, td.dataset.key, td.dataset.value, td.textContent]; });""")
    check(cells, "the run page shows no numbers of graphscope ranks")
    n = 0
    for table, rank, key, value, text in cells:
        parts = table.split("-")  # gs-ranks-profile-K or gs-ranks-waits-K-POSITION
        row = ranks["graphs"][int(parts[3])]
        if parts[2] == "profile":
            entry = next(x for x in row["ranks"] if str(x["rank"]) == rank)
            want = (entry.get("profile") or {}).get(key)
        else:
            wait = next(w for w in row["collective_waits"] if w["position"] == int(parts[4]))
            want = next(x for x in wait["ranks"] if str(x["rank"]) == rank)[key]
        where = "%s rank %s %s" % (table, rank, key)
        if want is None:
            check(value == "" and text == "-", "%s: the page shows %r, graphscope ranks has none" % (where, text))
        else:
            check(value != "" and abs(float(value) - want) <= 1e-9 + 1e-9 * abs(want),
                  "%s: the page has %r, graphscope ranks %r" % (where, value, want))
            if key.endswith("_us"):
                check(text == us_text(want), "%s: the page shows %r for %r us" % (where, text, want))
            else:
                check(text.startswith(str(want) + " of "), "%s: the page shows %r for %r" % (where, text, want))
        n += 1
    return n


DIFF_WORDS = (("the same in both", "only in A (removed)", "changed", "an edge changed"),
              ("the same in both", "only in B (inserted)", "changed", "an edge changed"))


def ledger_us(v):
    """A time in microseconds as graphscope ledger prints it (ledger_text.cc)."""
    if v >= 1e6:
        return "%.2f s" % (v / 1e6)
    if v >= 1000:
        return "%.2f ms" % (v / 1000)
    return "%.1f \u00b5s" % v


def check_ledger_numbers(b, ledger):
    """The ledger section's graph tables (nodes, launches, capture and the
    other cells that carry data-key), its timelines, eager and origin tables against
    `graphscope ledger --json`: each value the page holds equals the
    document's, and the text shown is the value as the ledger's text writes it."""
    cells, rows = 0, 0
    for k, p in enumerate(ledger["processes"]):
        if not p["graphs"]:
            continue
        shown = b.js("""return Array.from(document.querySelectorAll('#gs-ledger-graphs-' + arguments[0] + ' tr[data-exec-graph]')).map((tr) => ({
            id: +tr.dataset.execGraph, version: +tr.dataset.version,
            cells: Object.fromEntries(Array.from(tr.querySelectorAll('td[data-key]')).map((td) => [td.dataset.key, [td.dataset.value, td.textContent]]))}))""", k)
        check(len(shown) == len(p["graphs"]), "pid %s: the ledger section lists %d graphs, graphscope ledger %d" % (p["pid"], len(shown), len(p["graphs"])))
        for row, g in zip(shown, p["graphs"]):
            where = "pid %s exec graph %d" % (p["pid"], g["exec_graph_id"])
            check(row["id"] == g["exec_graph_id"] and row["version"] == g["version"], "%s: the row is of exec graph %d" % (where, row["id"]))
            for key in ("nodes", "launches", "capture_ms"):
                check(key in row["cells"] or key not in g, "%s: the page shows no %s" % (where, key))
            for key, (value, text) in row["cells"].items():
                if key not in g:
                    check(value == "" and text.strip() in ("-", "yes", "never"), "%s %s: the page shows %r, the ledger has none" % (where, key, text))
                    continue
                check(value != "" and float(value) == g[key], "%s %s: the page holds %r, the ledger %r" % (where, key, value, g[key]))
                want = {"nodes": str(g["nodes"]), "launches": str(g.get("launches")),
                        "capture_ms": ledger_us(g.get("capture_ms", 0) * 1000), "instantiate_ms": ledger_us(g.get("instantiate_ms", 0) * 1000),
                        "makespan_us": ledger_us(g.get("makespan_us", 0))}.get(key)
                if key == "replay_gpu_us":
                    want = ("" if g["replay_gpu_from"] == "records" else "~") + ledger_us(g[key])
                if key == "first_launch_s" and "last_launch_s" in g:
                    want = "%.1f-%.1f s" % (g["first_launch_s"], g["last_launch_s"])
                if want is not None:
                    check(text == want, "%s %s: the page shows %r, the ledger's %r reads %r" % (where, key, text, g[key], want))
                cells += 1
            rows += 1
        w = p.get("work")
        if not w:
            continue
        bins = b.js("""return Array.from(document.querySelectorAll('#gs-ledger-timeline-' + arguments[0] + ' g.gs-bin')).map((g) =>
            [+g.dataset.graphUs, +g.dataset.eagerUs])""", k)
        check(bins == [[float(x) for x in t] for t in w["timeline"]], "pid %s: the timeline draws %r, the ledger has %r" % (p["pid"], bins, w["timeline"]))
        box = b.js("""const s = document.getElementById('gs-ledger-timeline-' + arguments[0]).getBoundingClientRect(),
            o = document.getElementById('gs-ledger').getBoundingClientRect(); return [s.left, s.right, o.left, o.right]""", k)
        check(box[0] >= box[2] and box[1] <= box[3], "pid %s: the timeline (%r) leaves the section" % (p["pid"], box))
        top = b.js("""return Array.from(document.querySelectorAll('#gs-ledger-eager-' + arguments[0] + ' tr.gs-eager-row, #gs-ledger-eager-' +
            arguments[0] + ' tr.gs-eager-rest')).map((tr) => Object.fromEntries(Array.from(tr.querySelectorAll('td[data-key]')).map((td) => [td.dataset.key, td.dataset.value])))""", k)
        rest = [{"gpu_us": w["rest_us"], "launches": w["rest_launches"]}] if w["rest_launches"] else []
        check(len(top) == len(w["top"]) + len(rest), "pid %s: the eager table has %d rows, the ledger %d and %d of the rest" % (p["pid"], len(top), len(w["top"]), len(rest)))
        for e, row in zip(w["top"] + rest, top):
            for key in ("gpu_us", "launches"):
                value = row.get(key, row.get("rest_" + ("us" if key == "gpu_us" else key)))
                check(value is not None and float(value) == e[key], "pid %s eager %s %s: the page holds %r, the ledger %r" % (p["pid"], e.get("name", "(the rest)")[:40], key, value, e[key]))
                cells += 1
        if "sites" in w:
            # Eager work by origin: each place's GPU time and launches, and its text.
            sites = b.js("""return Array.from(document.querySelectorAll('#gs-ledger-sites-' + arguments[0] + ' tr.gs-site-row')).map((tr) => ({
                cells: Object.fromEntries(Array.from(tr.querySelectorAll('td[data-key]')).map((td) => [td.dataset.key, td.dataset.value])),
                where: tr.querySelector('.gs-ledger-where .gs-ledger-site-inline').textContent}))""", k)
            check(len(sites) == len(w["sites"]), "pid %s: the origin table has %d rows, the ledger %d" % (p["pid"], len(sites), len(w["sites"])))
            for x, row in zip(w["sites"], sites):
                check(row["where"] == (x["where"] or "(unknown)"), "pid %s: an origin row reads %r, the ledger %r" % (p["pid"], row["where"], x["where"]))
                for key in ("gpu_us", "launches") + (("launches_after_captures",) if "captures_end_s" in w else ()):
                    value = row["cells"].get(key)
                    check(value is not None and float(value) == x[key], "pid %s site %s %s: the page holds %r, the ledger %r" % (p["pid"], x["where"][:40], key, value, x[key]))
                    cells += 1
        if "in_graph_share" in w:
            share = b.js("const e = document.querySelector('#gs-ledger-work-' + arguments[0] + ' .gs-ledger-big'); return e && e.dataset.value", k)
            check(share is not None and float(share) == w["in_graph_share"], "pid %s: in-graph share %r, the ledger %r" % (p["pid"], share, w["in_graph_share"]))
    check(rows, "the ledger section shows no graph")
    return cells, rows


def field_text(v):
    if v is None:
        return "none"
    if isinstance(v, list):
        return "x".join(str(x) for x in v)
    return str(v)


def diff_marks(doc):
    """Per node of A and of B what `graphscope diff --json` says it is: 0 the
    same, 1 only on its side, 2 changed, 3 an edge of it changed; and why."""
    r = doc["root"]
    na, nb = r["nodes"]["a"], r["nodes"]["b"]
    m, why = ([0] * na, [0] * nb), ([""] * na, [""] * nb)
    for g in r["removed_nodes"]:
        for v in g["nodes"]:
            m[0][v] = 1
    for g in r["added_nodes"]:
        for v in g["nodes"]:
            m[1][v] = 1
    for g in r["changed_nodes"]:
        w = "; ".join("%s %s -> %s" % (c["field"], field_text(c["a"]), field_text(c["b"])) for c in g["changes"])
        for x, y in g["nodes"]:
            m[0][x], m[1][y], why[0][x], why[1][y] = 2, 2, w, w
    a_to_b = r["a_to_b"]
    ends = [(0, e) for g in r["removed_edges"] + r["retyped_edges"] for e in g["edges"]]
    ends += [(1, e) for g in r["added_edges"] for e in g["edges"]]
    ends += [(1, (a_to_b[x], a_to_b[y])) for g in r["retyped_edges"] for x, y in g["edges"]]
    for side, (x, y) in ends:
        for v in (x, y):
            if v is not None and m[side][v] == 0:
                m[side][v] = 3
    return m, why


def shape_class(marks):
    """The class (colour) of a shape drawing nodes of these statuses."""
    n = [marks.count(k) for k in range(4)]
    if n[1] and n[1] == len(marks):
        return "gs-d1"
    if n[1]:
        return "gs-dp"
    return "gs-d2" if n[2] else "gs-d3" if n[3] else ""


def check_diff_page(b, gs, a_path, b_path):
    """Every node of both sides selected: the status, why and partner its
    details give are `graphscope diff --json`'s; every shape's class (its
    colour) follows all the nodes it draws, and a shape of several, clicked,
    counts them as its class says; the text is `graphscope diff`'s.
    Returns (nodes of A, nodes of B, shapes)."""
    import re
    r = subprocess.run([gs, "diff", "--json", a_path, b_path], capture_output=True, text=True)
    check(r.returncode in (0, 1), "graphscope diff --json: exit %d: %s" % (r.returncode, r.stderr.strip()))
    doc = json.loads(r.stdout)
    text = subprocess.run([gs, "diff", a_path, b_path], capture_output=True, text=True).stdout
    check(b.js("return document.getElementById('gs-diff-text').textContent") == text, "the page's diff text is not graphscope diff's")
    check(b.js("return !!document.getElementById('gs-legend')"), "the diff page has no legend")
    legend = b.js("return document.getElementById('gs-legend').textContent")
    for word in ("the same in both", "removed", "inserted", "changed", "an edge changed", "partly"):
        check(word in legend, "the diff legend does not explain %r" % word)
    marks, why = diff_marks(doc)
    a_to_b = doc["root"]["a_to_b"]
    b_to_a = [None] * doc["root"]["nodes"]["b"]
    for x, y in enumerate(a_to_b):
        if y is not None:
            b_to_a[y] = x
    for gi, partners in ((0, a_to_b), (1, b_to_a)):
        for v in range(len(marks[gi])):
            box = b.js("""
              window.graphscopeSelect(arguments[0], arguments[1]);
              const box = document.getElementById('details');
              return [box.textContent, box.querySelector('h3').textContent, Array.from(box.querySelectorAll('tr')).map(
                (tr) => [tr.children[0].textContent, tr.children[1] ? tr.children[1].textContent : ''])];""", gi, v)
            text_all, head, table = box[0], box[1], dict(box[2])
            where = "%s node %d" % ("AB"[gi], v)
            check(not re.search(r"\bnull\b|undefined|NaN", text_all), "%s's details read %r" % (where, text_all[:300]))
            check(head.startswith("%s: node %d: " % ("AB"[gi], v)), "%s: the details are of %r" % (where, head))
            want = DIFF_WORDS[gi][marks[gi][v]] + (": " + why[gi][v] if why[gi][v] else "")
            got = table.get("diff", "")
            check(got.startswith(want), "%s: the page says %r, graphscope diff %r" % (where, got, want))
            other = "in B" if gi == 0 else "in A"
            if partners[v] is None:
                check(other not in table, "%s is only on its side, the page names a partner %r" % (where, table.get(other)))
            else:
                check(table.get(other, "").startswith("node %d " % partners[v]),
                      "%s: the page gives partner %r, graphscope diff node %d" % (where, table.get(other), partners[v]))
    data = page_data(b)
    shapes = 0
    for gi in (0, 1):
        view = "gs-view-%d" % gi
        classes = dict(b.js("""return Array.from(document.querySelectorAll('#' + arguments[0] + ' g.node')).map((g) =>
            [g.querySelector('title').textContent, Array.from(g.classList).filter((c) => /^gs-d/.test(c)).join(' ')]);""", view))
        for name, drawn in shapes_of(data, gi).items():
            if name not in classes:
                continue
            want = shape_class([marks[gi][v] for v in drawn])
            check(classes[name] == want, "%s %s draws nodes %s (%s): its class is %r, their status gives %r"
                  % ("AB"[gi], name, drawn[:6], [marks[gi][v] for v in drawn[:6]], classes[name], want))
            if len(drawn) > 1:
                click_shape(b, view, name)
                counts = b.js("const c = document.querySelector('#details .gs-dcount'); return c && c.dataset.counts")
                check(counts == ",".join(str([marks[gi][v] for v in drawn].count(k)) for k in range(4)),
                      "%s %s: clicked, it counts %r of its %d nodes" % ("AB"[gi], name, counts, len(drawn)))
                check_details_fit(b)
            shapes += 1
    return len(marks[0]), len(marks[1]), shapes


def report(gs, out, name, args):
    path = os.path.join(out, name + ".html")
    r = subprocess.run([gs, "report", *args, "-o", path], capture_output=True, text=True)
    check(r.returncode == 0, "graphscope report %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphscope", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated cases to run (default: all)")
    a = ap.parse_args()
    gone = missing_tools()
    if gone:
        print("report_browser: %s is not installed" % gone)
        return 1 if os.environ.get("GRAPHSCOPE_REQUIRE_BROWSER") else SKIP
    os.makedirs(a.out, exist_ok=True)
    data = a.data
    b = Browser(a.out)
    failures = []

    def case(name, fn):
        try:
            fn()
            print("ok    %s" % name)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its case
            failures.append(name)
            print("FAIL  %s: %s" % (name, e))
            if not isinstance(e, Failure):  # a fault of the test itself: where
                import traceback
                traceback.print_exc()
            try:
                b.shot(name + ".failed")
            except Exception:  # noqa: BLE001
                pass

    def llama():
        g = os.path.join(data, "origins/llama_profile/graph-2.json")
        page = report(a.graphscope, a.out, "llama_profile", [g, "--trace", os.path.join(data, "origins/llama_profile/trace-2.json")])
        took = b.open(page)
        print("      llama_profile.html: %.0f KB, drawn in %.2f s" % (os.path.getsize(page) / 1024, took))
        n, kernels = graph_nodes(g)
        check_count(b, n)
        check_account(b)
        checked = check_every_node(b, a.graphscope, g, os.path.join(data, "origins/llama_profile/trace-2.json"))
        print("      llama_profile: %d nodes selected, each checked against the profile report" % checked)
        prof = profile_json(a.graphscope, g, os.path.join(data, "origins/llama_profile/trace-2.json"))
        shapes, bands = check_delay_colours(b, prof)
        print("      llama_profile: %d shapes filled by the threshold rule (bands %s), legend present" % (shapes, bands))
        check_readable_fit(b, ["gs-view-0"])
        many = check_many_selected(b)
        print("      llama_profile: a shape of %d nodes selected, the details stay in the window" % many)
        b.shot("llama_profile.0_many_selected")
        rows = check_click(b)
        check("origin" in rows and "verdict" in rows, "Llama node details lack origin or verdict: %r" % rows)
        b.shot("llama_profile.1_click")
        check_search(b, "elementwise_kernel", kernels)
        b.shot("llama_profile.2_search")
        # By module: the q_proj GEMMs of all eight layers, drawn as one shape of the folded layer.
        with open(g) as f:
            nodes = json.load(f)["nodes"]
        q = "self_attn.q_proj"
        expected = sum(1 for x in nodes if q in ((x.get("origin") or {}).get("module") or ""))
        found = b.search(q)
        check(found == expected and expected % 8 == 0 and expected > 0,
              "search %r found %d nodes, the document has %d" % (q, found, expected))
        shapes = b.js("return document.querySelectorAll('#gs-view-0 g.node.gs-sel').length")
        check(shapes == expected // 8, "the %d q_proj nodes of 8 layers are drawn by %d shapes of the folded picture, not %d"
              % (expected, shapes, expected // 8))
        # Each result names its kernel by its tile, the GEMM apart from its split-k, and then the node's
        # module: "40 sm80_xmma_gemm_f32_tn_n_tile32x32x8_ffma (model.layers.0.self_attn.q_proj)".
        texts = b.js("return [...document.querySelectorAll('#gs-results > span')].map((s) => s.textContent)")
        check(len(texts) == expected and all(t.endswith(".self_attn.q_proj)") and "tile32x32x8" in t for t in texts),
              "search results lack the module or the tile: %r" % texts[:3])
        kinds = set(t.split(" ")[1] for t in texts)
        check(len(kinds) == 2, "the q_proj GEMM and its split-k read alike, or more: %r" % kinds)
        b.shot("llama_profile.2b_search_module")
        b.js("document.getElementById('gs-account').scrollIntoView()")
        b.shot("llama_profile.3_account")

    def torch_no_ids():
        page = report(a.graphscope, a.out, "torch_four_branch", [os.path.join(data, "torch/torch_four_branch.debug_dump.dot"),
                                                                 "--trace", os.path.join(data, "torch/torch_four_branch.kineto.json")])
        b.open(page)
        doc = subprocess.run([a.graphscope, "dump", "--json", os.path.join(data, "torch/torch_four_branch.debug_dump.dot")],
                             capture_output=True, text=True, check=True).stdout
        nodes = json.loads(doc)["nodes"]
        check_count(b, len(nodes))
        check_account(b)
        check_click(b)
        check_search(b, "gemm", [x.get("kernel_name") or "" for x in nodes])
        b.shot("torch_four_branch.1_search")
        b.js("document.getElementById('gs-account').scrollIntoView()")
        b.shot("torch_four_branch.2_account")

    def copies_fake():
        g = os.path.join(data, "profiles/copies.c8.graph.json")
        page = report(a.graphscope, a.out, "copies_fake", [g, "--trace", os.path.join(data, "profiles/copies.c8.trace.json")])
        b.open(page)
        check_count(b, graph_nodes(g)[0])
        check_account(b)
        checked = check_every_node(b, a.graphscope, g, os.path.join(data, "profiles/copies.c8.trace.json"))
        print("      copies_fake: %d nodes selected, each checked against the profile report" % checked)
        shapes, bands = check_delay_colours(b, profile_json(a.graphscope, g, os.path.join(data, "profiles/copies.c8.trace.json")))
        check(max(bands) >= 2, "copies.c8's blocking delays are drawn in bands %s, none past the threshold" % bands)
        print("      copies_fake: %d shapes filled by the threshold rule (bands %s), legend present" % (shapes, bands))
        b.shot("copies_fake.0_colours")
        from selenium.webdriver.common.by import By
        rows = b.d.find_elements(By.CSS_SELECTOR, "#gs-fake tr.pick")
        check(rows, "no fake dependency listed")
        b.click(rows[0])
        time.sleep(0.1)
        verdict = b.js("return document.querySelector('#details .verdict-fake') && document.querySelector('#details .verdict-fake').textContent")
        check(verdict and verdict.startswith("fake"), "clicking a fake dependency's row did not show a fake node")
        items = b.js("return document.querySelectorAll('#gs-timeline rect.item').length")
        check(items > 0, "the timeline has no records")
        b.js("document.getElementById('gs-tables').scrollIntoView()")
        b.shot("copies_fake.1_fake_row")

    def diff():
        ga, gb = os.path.join(data, "captures/two_graphs.forward.json"), os.path.join(data, "captures/two_graphs.backward.json")
        page = report(a.graphscope, a.out, "diff", [ga, gb])
        b.open(page)
        check_count(b, graph_nodes(ga)[0] + graph_nodes(gb)[0])
        check(b.js("return document.querySelectorAll('.view svg').length") == 2, "the diff does not show both graphs")
        marked = b.js("return document.querySelectorAll('#gs-view-0 g.node.gs-d1, #gs-view-0 g.node.gs-d2, #gs-view-1 g.node.gs-d1, #gs-view-1 g.node.gs-d2').length")
        check(marked > 0, "no changed node is marked")
        check_click(b)
        rows = b.js("return Array.from(document.querySelectorAll('#details td:first-child')).map(t => t.textContent)")
        check("diff" in rows, "a diff node's details do not say how it differs")
        b.shot("diff.1_click")
        na, nb, shapes = check_diff_page(b, a.graphscope, ga, gb)
        print("      diff (two_graphs): %d + %d nodes selected, %d shapes, each checked against graphscope diff --json" % (na, nb, shapes))

    def diff_llama():
        # The 2-layer Llama against the 8-layer one: six layers inserted.
        ga, gb = os.path.join(data, "python/llama.graph_data.json"), os.path.join(data, "origins/llama8.graph.json")
        page = report(a.graphscope, a.out, "diff_llama", [ga, gb])
        b.open(page)
        check_count(b, graph_nodes(ga)[0] + graph_nodes(gb)[0])
        scales = check_readable_fit(b, ["gs-view-0", "gs-view-1"])
        b.shot("diff_llama.0_open")
        na, nb, shapes = check_diff_page(b, a.graphscope, ga, gb)
        print("      diff_llama: %d + %d nodes selected, %d shapes, each checked against graphscope diff --json; opened at scales %s"
              % (na, nb, shapes, ", ".join("%.2f" % k for k in scales)))
        # A kernel of B's folded layer, drawn for its 8 copies: matched in two, inserted in six.
        layer = [(name, drawn) for name, drawn in shapes_of(page_data(b), 1).items() if "_n" in name and len(drawn) == 8]
        check(layer, "B's picture has no kernel drawn for the 8 layers")
        click_shape(b, "gs-view-1", layer[0][0])
        counts = b.js("return document.querySelector('#details .gs-dcount').textContent")
        check(counts == "8 nodes: 2 the same in both, 6 only in B (inserted)", "B's layer kernel: %r" % counts)
        b.shot("diff_llama.1_layer_clicked")
        b.js("document.getElementById('gs-diff-text').scrollIntoView()")
        b.shot("diff_llama.2_text")

    def run_prof():
        # A two-rank profile run: every node of every rank's graph against
        # graphscope profile --json of that rank's graph and trace, the ranks'
        # numbers against graphscope ranks --json.
        run = os.path.join(data, "ranks/r_prof")
        page = report(a.graphscope, a.out, "run_prof", [run])
        b.open(page)
        d = page_data(b)
        total, graphs = 0, 0
        for gi, g in enumerate(d["graphs"]):
            if not g.get("profile"):
                continue
            proc = d["run"]["processes"][g["process"]]
            files = [os.path.join(run, proc["dir"], "%s-%d.json" % (k, g["exec_graph_id"])) for k in ("graph", "trace")]
            check(all(os.path.exists(f) for f in files), "graph %d's files %s are not in the run" % (gi, files))
            total += check_every_node(b, a.graphscope, files[0], files[1], gi)
            b.js("window.graphscopeSelect(arguments[0], 0)", gi)
            shapes, bands = check_delay_colours(b, profile_json(a.graphscope, *files))
            print("      run_prof: graph %d (%s): %d shapes filled by the threshold rule (bands %s), legend present" % (gi, g["label"], shapes, bands))
            check_readable_fit(b, ["gs-view-0"])
            check_many_selected(b, least=2)
            graphs += 1
        check(graphs >= 2, "the run page shows %d profiled graphs" % graphs)
        print("      run_prof: %d nodes of %d graphs selected, each checked against its rank's profile report" % (total, graphs))
        ranks = json.loads(subprocess.run([a.graphscope, "ranks", "--json", run], capture_output=True, text=True).stdout)
        cells = check_ranks_numbers(b, ranks)
        print("      run_prof: %d numbers of the ranks section checked against graphscope ranks --json" % cells)
        b.shot("run_prof.0_ranks")
        b.js("document.getElementById('gs-graph').scrollIntoView()")
        b.shot("run_prof.1_graph")

    def exec_dir():
        page = report(a.graphscope, a.out, "exec_profile", [os.path.join(data, "attach/profile")])
        b.open(page)
        from selenium.webdriver.common.by import By
        check(b.d.find_elements(By.ID, "gs-index"), "no index of processes")
        links = b.d.find_elements(By.CSS_SELECTOR, "#gs-index span.link")
        check(links, "the index links no graph")
        b.click(links[0])
        time.sleep(0.1)
        check_account(b)
        run = os.path.join(data, "attach/profile/pid-787")
        gi = int(b.js("return +document.getElementById('details').dataset.graph || 0"))
        checked = check_every_node(b, a.graphscope, os.path.join(run, "graph-2.json"), os.path.join(run, "trace-2.json"), gi)
        print("      exec_profile: %d nodes selected, each checked against the profile report" % checked)
        shapes, bands = check_delay_colours(b, profile_json(a.graphscope, os.path.join(run, "graph-2.json"), os.path.join(run, "trace-2.json")))
        print("      exec_profile: %d shapes filled by the threshold rule (bands %s), legend present" % (shapes, bands))
        check_click(b)
        b.shot("exec_profile.1_graph")

    def run_ledger():
        # A recorded run of tests/data/ledger: its ledger is the page's first
        # section, and the numbers its tables and chart show are graphscope
        # ledger --json's for the directory.
        run = os.path.join(data, "ledger/compile_shapes.profile")
        page = report(a.graphscope, a.out, "run_ledger", [run])
        b.open(page)
        first = b.js("const s = document.querySelector('#app > section'); return s && s.id")
        check(first == "gs-ledger", "the run page's first section is %r, not the ledger" % first)
        ledger = json.loads(subprocess.run([a.graphscope, "ledger", "--json", run], capture_output=True, text=True, check=True).stdout)
        cells, rows = check_ledger_numbers(b, ledger)
        print("      run_ledger: %d numbers of %d graphs' rows checked against graphscope ledger --json" % (cells, rows))
        wide = b.js("const s = document.getElementById('gs-ledger'); return [s.scrollWidth, s.clientWidth]")
        check(wide[0] <= wide[1], "the ledger section is %d px wide in a %d px section" % tuple(wide))
        b.shot("run_ledger.0_ledger")
        # A graph's row opens its graph on the page.
        from selenium.webdriver.common.by import By
        links = b.d.find_elements(By.CSS_SELECTOR, "#gs-ledger .gs-ledger-graphs td.gs-ledger-name span.link")
        check(links, "the ledger's graphs link no graph of the page")
        link = links[-1]
        gi, name = int(link.get_attribute("data-graph")), link.text
        b.click(link)
        time.sleep(0.2)
        label = b.js("return document.querySelector('#gs-graph h2').textContent")
        want = page_data(b)["graphs"][gi]["label"]
        check(label.startswith(want + " "), "%s's link opened %r, not %r" % (name, label, want))
        check(want.endswith(" graph " + name.split(" ")[2]), "%s's link names page graph %r" % (name, want))
        # An eager kernel that a graph also runs: its note opens that node.
        nodes = b.d.find_elements(By.CSS_SELECTOR, "#gs-ledger [id^=gs-ledger-eager-] span.link[data-node]")
        check(nodes, "no eager kernel names the graph node that runs it")
        gi, v = int(nodes[0].get_attribute("data-graph")), nodes[0].get_attribute("data-node")
        b.js("arguments[0].scrollIntoView({block: 'center'})", nodes[0])
        b.click(nodes[0])
        time.sleep(0.2)
        shown = b.js("const d = document.getElementById('details'); return [d.dataset.graph, d.dataset.node]")
        check(shown == [str(gi), v], "the eager kernel's note opened %r, not graph %d node %s" % (shown, gi, v))
        b.errors()

    def nvidia_dot():
        page = report(a.graphscope, a.out, "conditional_dot", [os.path.join(data, "nvidia/conditional.dot")])
        b.open(page)
        doc = subprocess.run([a.graphscope, "dump", "--json", os.path.join(data, "nvidia/conditional.dot")],
                             capture_output=True, text=True, check=True).stdout
        check_count(b, len(json.loads(doc)["nodes"]))
        check_click(b)
        b.shot("conditional_dot.1_click")

    def hostile_names():
        # Names XML cannot hold (U+FFFE, U+FFFF), references Graphviz would
        # decode, terminal controls: the picture still shows, with no XML
        # error in its pane, and the names can be searched.
        g = os.path.join(data, "derived/hostile_names.json")
        page = report(a.graphscope, a.out, "hostile_names", [g])
        b.open(page)
        n, kernels = graph_nodes(g)
        check_count(b, n)
        check(not b.js("return !!document.querySelector('parsererror')"), "the picture pane shows an XML error")
        check(b.js("return document.querySelectorAll('#gs-view-0 svg g.node').length") > 0, "the picture draws no node")
        check_click(b)
        check_search(b, "fj_square", kernels)
        b.shot("hostile_names.1_search")

    def live_pages():
        # Pages written live on the H100 (tests/data/reports): they must still open.
        for page in ("llama8.live.html", "mixed.live.html"):
            b.open(os.path.join(data, "reports", page))
            check_account(b)
            check_click(b)
            b.shot("live." + page[:-5])

    for name, fn in (("live_pages", live_pages), ("run_ledger", run_ledger), ("llama_profile", llama), ("torch_four_branch", torch_no_ids), ("copies_fake", copies_fake),
                     ("diff", diff), ("diff_llama", diff_llama), ("run_prof", run_prof), ("exec_profile", exec_dir), ("conditional_dot", nvidia_dot),
                     ("hostile_names", hostile_names)):
        if not a.only or name in a.only.split(","):
            case(name, fn)
    b.quit()
    print("screenshots in %s" % a.out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
