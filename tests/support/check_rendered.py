#!/usr/bin/env python3
"""Runs an MPI program under the preload, renders its report with
scripts/papshim-report and checks what came out.

    check_rendered.py --report PREFIX --out DIR --late-rank R -- command...

Checks: every call site of the report (up to the script's --top) has a
figure DIR/site<N>.png that is a PNG of at least 400x300 pixels and 10 KB;
DIR/index.html embeds each of them as a base64 data URI and names every
call site drawn; the first call site's figure and the page name rank R
first among the latest ranks.  Then --compare of the report with itself
prints a table with a B/A ratio of 1.00 for every site and writes a page
with that table; a missing and a damaged report are each refused with one
line and exit status 2.
"""
import argparse
import base64
import html
import json
import os
import shutil
import struct
import subprocess
import sys

from check_report import run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "papshim-report")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fail(msg):
    print("check_rendered: FAIL: " + msg)
    sys.exit(1)


def render(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def check_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != PNG_MAGIC or data[12:16] != b"IHDR":
        fail("%s is not a PNG" % path)
    w, h = struct.unpack(">II", data[16:24])
    if w < 400 or h < 300 or len(data) < 10000:
        fail("%s: %dx%d pixels, %d bytes: too small to hold the figure" % (path, w, h, len(data)))
    return data


def check_errors(out):
    for bad, want in (("/nonexistent/papshim-report.json", "cannot read"), (os.path.join(out, "bad.json"),
                                                                            "not valid JSON")):
        if "bad.json" in bad:
            with open(bad, "w") as f:
                f.write('{"tool": "papshim", ')
        r = render(bad, "-o", os.path.join(out, "unused"))
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or want not in lines[0]:
            fail("%s: expected one line with '%s' and exit 2, got %d: %r" % (bad, want, r.returncode, r.stderr))


def check_other_interpreter(report, out):
    """A Python without matplotlib first (a venv here; pyenv or a module
    Python in real life): the script falls back to /usr/bin/python3 once,
    and without that fallback names the interpreter it tried."""
    venv = os.path.join(out, "venv")
    shutil.rmtree(venv, ignore_errors=True)
    if subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv]).returncode != 0:
        fail("cannot make a venv to stand for a Python without matplotlib")
    python = os.path.join(venv, "bin", "python3")
    if subprocess.run([python, "-c", "import matplotlib"], stderr=subprocess.DEVNULL).returncode == 0:
        fail("the venv imports matplotlib: it cannot stand for a Python without it")
    dest = os.path.join(out, "other-python")
    r = subprocess.run([python, SCRIPT, report, "-o", dest], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(os.path.join(dest, "index.html")):
        fail("from a Python without matplotlib: exit %d, %r" % (r.returncode, r.stderr))
    env = dict(os.environ, PAPSHIM_REPORT_REEXEC="1")
    r = subprocess.run([python, SCRIPT, report, "-o", dest], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env)
    if r.returncode != 2 or python not in r.stderr or "python3-matplotlib" not in r.stderr:
        fail("without the fallback: expected exit 2 naming %s, got %d: %r" % (python, r.returncode, r.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--late-rank", type=int, required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    run = run_program(a.command)
    if run.returncode != 0:
        fail("the program exited with %d" % run.returncode)
    shutil.rmtree(a.out, ignore_errors=True)
    r = render(a.report + ".json", "-o", a.out)
    print(r.stdout + r.stderr)
    if r.returncode != 0:
        fail("papshim-report exited with %d" % r.returncode)
    with open(a.report + ".json") as f:
        rep = json.load(f)
    with open(os.path.join(a.out, "index.html"), encoding="utf-8") as f:
        page = f.read()
    sites = rep["callsites"][:12]
    for i, s in enumerate(sites, 1):
        data = check_png(os.path.join(a.out, "site%d.png" % i))
        if base64.b64encode(data).decode("ascii") not in page:
            fail("index.html does not embed site%d.png" % i)
        name = html.escape("%s at %s" % (s["op"], s["file_line"] or s["location"]))
        if name not in page:
            fail("index.html does not name call site %s" % name)
    if page.count("data:image/png;base64,") != len(sites):
        fail("index.html embeds %d images for %d call sites" % (page.count("data:image/png;base64,"), len(sites)))
    host = html.escape(rep["hosts"][a.late_rank])
    if "latest ranks: rank %d on %s" % (a.late_rank, host) not in page:
        fail("index.html does not name rank %d on %s first among the latest ranks" % (a.late_rank, host))
    if rep["callsites"][0]["lateness"]["worst"][0]["rank"] != a.late_rank:
        fail("the report's latest rank is not %d: %s" % (a.late_rank, rep["callsites"][0]["lateness"]["worst"]))

    cmp_out = a.out + "-compare"
    r = render("--compare", a.report + ".json", a.report + ".json", "-o", cmp_out)
    print(r.stdout + r.stderr)
    rows = [l for l in r.stdout.splitlines() if " at " in l and "ranks)" in l]
    if r.returncode != 0 or len(rows) != len(rep["callsites"]) or not all(" 1.00 " in l for l in rows):
        fail("--compare of a report with itself: %d rows for %d sites, exit %d" % (len(rows), len(rep["callsites"]),
                                                                               r.returncode))
    with open(os.path.join(cmp_out, "index.html"), encoding="utf-8") as f:
        if "<table>" not in f.read():
            fail("the comparison page has no table")
    check_errors(a.out)
    check_other_interpreter(a.report + ".json", a.out)
    print("check_rendered: %d figures, the page and the comparison hold; rank %d named latest"
          % (len(sites), a.late_rank))


if __name__ == "__main__":
    main()
