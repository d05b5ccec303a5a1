#!/usr/bin/env python3
"""How long `graphscope report` pages take to write and to open in a browser,
and how large they are: transformers' Llama (392 nodes) with its profile, and
a 100k-node graph alone and with a 1M-record profile (bench_profile's). The
anchor, opened side by side in the same browser: the SVG that
`graphscope dump --svg` draws of the same graph (no script, no data).

Opening time is the page's own: from navigation start to the end of its
drawing (performance.now() when report.js has drawn everything), or for the
SVG its load event, in headless Debian chromium, a fresh tab each call.
  bench/report_open.py BUILD_DIR [RUNS] [--screenshot PNG]
"""
import os
import statistics
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build"))
runs = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 5
shot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
gs = os.path.join(build, "apps/graphscope")
out = os.path.join(build, "bench_data/report")
os.makedirs(out, exist_ok=True)
big = os.path.join(build, "bench_data/profile100000")
if not os.path.exists(os.path.join(big, "trace.json")):
    os.makedirs(big, exist_ok=True)
    subprocess.run([os.path.join(build, "bench/bench_profile"), "100000", "10", big], check=True, stdout=subprocess.DEVNULL)

os.chdir(root)  # pages name their inputs as given: relative to the checkout
llama = "tests/data/origins/llama_profile/"
cases = [
    ("llama392+profile", [llama + "graph-2.json", "--trace", llama + "trace-2.json"], llama + "graph-2.json"),
    ("100k graph", [os.path.join(big, "graph.json")], None),
    ("100k+1M-record profile", [os.path.join(big, "graph.json"), "--trace", os.path.join(big, "trace.json")], None),
]

o = Options()
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,1000"):
    o.add_argument(a)
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
d.set_page_load_timeout(300)


def open_ms(path, is_report):
    d.switch_to.new_window("tab")
    d.get("file://" + os.path.abspath(path))
    if is_report:
        for _ in range(3000):
            if d.execute_script("return document.body && document.body.dataset.ready") == "1":
                break
            time.sleep(0.01)
        ms = float(d.execute_script("return +document.body.dataset.drawnMs"))
    else:
        ms = float(d.execute_script("return performance.getEntriesByType('navigation')[0].loadEventEnd"))
    return ms


print("== %d cores, %s; %d opens each" % (os.cpu_count(), d.capabilities.get("browserVersion", "?"), runs))
print("%-24s %9s %10s %28s %28s" % ("page", "MB", "write s", "open ms median (min..max)", "anchor SVG open ms"))
for name, args, svg_of in cases:
    page = os.path.join(out, name.replace(" ", "_").replace("+", "_") + ".html")
    t = time.monotonic()
    subprocess.run([gs, "report", *args, "-o", page], check=True)
    write_s = time.monotonic() - t
    ms = [open_ms(page, True) for _ in range(runs)]
    anchor = "-"
    if svg_of:
        svg = page[:-5] + ".svg"
        subprocess.run([gs, "dump", svg_of, "--svg", "-o", svg], check=True)
        am = [open_ms(svg, False) for _ in range(runs)]
        anchor = "%.0f (%.0f..%.0f)" % (statistics.median(am), min(am), max(am))
    print("%-24s %9.2f %10.2f %28s %28s" % (name, os.path.getsize(page) / 1e6, write_s,
                                            "%.0f (%.0f..%.0f)" % (statistics.median(ms), min(ms), max(ms)), anchor))
    if shot and name.startswith("llama"):
        d.switch_to.new_window("tab")
        d.get("file://" + os.path.abspath(page))
        box = d.find_element(By.ID, "gs-search")
        box.send_keys("self_attn.q_proj", Keys.ENTER)
        time.sleep(0.5)
        d.save_screenshot(shot)
d.quit()
