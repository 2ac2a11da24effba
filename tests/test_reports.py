"""`volta check` over many files, and its SARIF and HTML reports.

- A set of files (and folders) gives a summary table and the worst exit code (1, 2, 3, 0).
- The SARIF log validates against the SARIF 2.1.0 schema (OASIS, vendored in tests/data): primary
  locations in the CUDA source when the PTX has `.loc`, the PTX lines as related locations, the
  invocation with its command line and exit code, bad input as a notification.
- The HTML report is rendered by a real headless Chromium (Debian's `chromium`; CI installs it):
  its layout is checked structurally (element boxes measured in the browser), not by pixels.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from volta.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
REGRESSION = ROOT / "tests" / "regression"
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


def volta(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback for volta {' '.join(map(str, args))}: {result.exception!r}"
    return result


# ---------------------------------------------------------------- many files
def test_many_files_summary_and_worst_exit_code(tmp_path):
    folder = tmp_path / "cases"
    folder.mkdir()
    for name in ("smem_raw_missing_barrier.ptx", "smem_raw_with_barrier.ptx"):
        shutil.copy(REGRESSION / name, folder / name)
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k() { add.u32 %r1, ; }\n")
    r = volta("check", folder, bad, EXAMPLES / "vector_add.ptx")
    assert r.exit_code == 1, r.output          # a bug found outranks bad input
    assert "4 files: 1 bug found, 1 bad input, 2 proved; exit 1 (bug found)" in r.output, r.output
    r = volta("check", bad, EXAMPLES / "vector_add.ptx")
    assert r.exit_code == 2 and "exit 2 (bad input)" in r.output
    out = json.loads(volta("check", folder, EXAMPLES / "vector_add.ptx", "--json").stdout)
    assert out["exit_code"] == 1 and len(out["files"]) == 3
    assert out["summary"] == {"race": 1, "race_free": 2}
    assert [f["file"] for f in out["files"]][:2] == [str(folder / "smem_raw_missing_barrier.ptx"),
                                                    str(folder / "smem_raw_with_barrier.ptx")]


def test_undecided_outranks_proved(tmp_path):
    from tests.test_cli import TEXREF_KERNEL

    tex = tmp_path / "tex.ptx"
    tex.write_text(TEXREF_KERNEL)
    r = volta("check", EXAMPLES / "vector_add.ptx", tex)
    assert r.exit_code == 3 and "exit 3 (undecided)" in r.output


def test_empty_folder_is_bad_input(tmp_path):
    r = volta("check", tmp_path)
    assert r.exit_code == 2 and "no .ptx file" in r.output


# ---------------------------------------------------------------- SARIF
def _sarif(tmp_path, *args) -> dict:
    path = tmp_path / "out.sarif"
    volta("check", *args, "--sarif", path)
    log = json.loads(path.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def test_sarif_validates_and_points_at_the_cuda_source(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)   # the PTX's .file is relative to the repository
    log = _sarif(tmp_path, "examples/saxpy.ptx", "--entry", "saxpy_oob")
    run = log["runs"][0]
    result = run["results"][0]
    assert result["ruleId"] == "out_of_bounds" and result["level"] == "error"
    primary = result["locations"][0]["physicalLocation"]
    assert primary["artifactLocation"]["uri"] == "examples/saxpy.cu" and primary["region"]["startLine"] == 13
    related = [loc["physicalLocation"]["artifactLocation"]["uri"] for loc in result["relatedLocations"]]
    assert "examples/saxpy.ptx" in related
    assert "x[1000000], one past the end of x" in result["message"]["text"]
    inv = run["invocations"][0]
    assert inv["exitCode"] == 1 and inv["executionSuccessful"] is True
    assert inv["startTimeUtc"].endswith("Z") and inv["endTimeUtc"] >= inv["startTimeUtc"]


def test_sarif_race_has_two_thread_flows_and_bad_input_is_a_notification(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k() { add.u32 %r1, ; }\n")
    log = _sarif(tmp_path, EXAMPLES / "racy_reduction.ptx", bad, EXAMPLES / "vector_add.ptx")
    run = log["runs"][0]
    race = next(r for r in run["results"] if r["ruleId"] == "race")
    flows = race["codeFlows"][0]["threadFlows"]
    assert [f["message"]["text"] for f in flows] == ["CTA (0, 0, 0) thread (1, 0, 0)", "CTA (0, 0, 0) thread (0, 0, 0)"]
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 1
    note = inv["toolExecutionNotifications"][0]
    assert note["level"] == "error" and note["locations"][0]["physicalLocation"]["region"]["startLine"] == 4


def test_sarif_for_an_undecided_file(tmp_path):
    from tests.test_cli import TEXREF_KERNEL

    tex = tmp_path / "tex.ptx"
    tex.write_text(TEXREF_KERNEL)
    log = _sarif(tmp_path, tex)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["undecided"]


# ---------------------------------------------------------------- HTML in a real browser
def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("no Chromium on PATH: CI must install Debian's chromium (.ci/run does)")
    pytest.skip("no Chromium on PATH (apt-get install chromium)")


_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--window-size=1280,2000"]

# Measured in the browser: the boxes of what the report shows, written into the page for --dump-dom.
_MEASURE = """
<script>
(function () {
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  const facts = {timelines: [], code: [], sections: document.querySelectorAll('section').length};
  for (const t of document.querySelectorAll('.timeline')) {
    facts.timelines.push({
      heads: [...t.querySelectorAll('.head[data-thread]')].map(h => ({thread: +h.dataset.thread, ...box(h)})),
      events: [...t.querySelectorAll('.event')].map(e => ({thread: +e.dataset.thread, time: +e.dataset.time,
                kind: e.dataset.kind, visible: getComputedStyle(e).display !== 'none', ...box(e)})),
      gap: [...t.querySelectorAll('[data-gap]')].map(box)});
  }
  for (const c of document.querySelectorAll('.code')) {
    facts.code.push([...c.querySelectorAll('.pane')].map(p => ({pane: p.dataset.pane, ...box(p),
      hit: (p.querySelector('.ln.hit') || {}).textContent || null})));
  }
  const pre = document.createElement('pre');
  pre.id = 'layout-facts';
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
})();
</script>
"""


def _render(browser: str, page: Path, tmp_path: Path) -> dict:
    measured = tmp_path / "measured.html"
    measured.write_text(page.read_text().replace("</body>", _MEASURE + "</body>"))
    profile = tmp_path / "profile"
    dom = subprocess.run([browser, *_FLAGS, f"--user-data-dir={profile}", "--dump-dom", measured.as_uri()],
                         capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="layout-facts">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    return json.loads(html.unescape(m.group(1)))


def test_html_report_renders_a_race_timeline_in_a_browser(tmp_path, monkeypatch):
    browser = _browser()
    monkeypatch.chdir(ROOT)
    oob = tmp_path / "saxpy_oob.ptx"       # the off-by-one kernel, its launch beside it
    shutil.copy(EXAMPLES / "saxpy.ptx", oob)
    oob.with_suffix(".json").write_text(json.dumps(dict(json.loads((EXAMPLES / "saxpy.json").read_text()),
                                                        kernel="saxpy_oob")))
    page = tmp_path / "report.html"
    r = volta("check", "examples/racy_reduction.ptx", oob, "--html", page)
    assert r.exit_code == 1 and page.exists()
    text = page.read_text()
    # self-contained: no script, nothing fetched
    assert "<script" not in text and not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', text)
    facts = _render(browser, page, tmp_path)
    assert facts["sections"] == 2
    (t,) = facts["timelines"]
    heads = sorted(t["heads"], key=lambda h: h["thread"])
    assert heads[0]["x"] + heads[0]["w"] <= heads[1]["x"] and abs(heads[0]["y"] - heads[1]["y"]) < 1
    assert abs(heads[0]["w"] - heads[1]["w"]) < 2               # two equal columns, side by side
    for e in t["events"]:                                       # each event in its thread's column
        col = heads[e["thread"]]
        assert e["visible"] and e["w"] > 0 and e["h"] > 0
        assert col["x"] - 1 <= e["x"] and e["x"] + e["w"] <= col["x"] + col["w"] + 1
    tops = [e["y"] for e in sorted(t["events"], key=lambda e: (e["time"], e["y"]))]
    assert tops == sorted(tops)                                 # emulator order, top to bottom
    accesses = [e for e in t["events"] if e["kind"] == "access"]
    assert len(accesses) == 2 and {a["thread"] for a in accesses} == {0, 1}
    syncs = [e for e in t["events"] if e["kind"] in ("arrive", "complete")]
    assert syncs and all(s["y"] < min(a["y"] for a in accesses) for s in syncs)   # the last barrier before
    (gap,) = t["gap"]
    assert accesses[0]["y"] < gap["y"] < accesses[1]["y"]
    # the PTX and the source side by side, the line of the finding marked in each
    panes = facts["code"]
    assert panes and all(len(p) == 2 and p[0]["pane"] == "ptx" and p[1]["pane"] == "source" for p in panes)
    for ptx, src in panes:
        assert abs(ptx["y"] - src["y"]) < 1 and ptx["x"] + ptx["w"] <= src["x"]
    saxpy = panes[-1]
    assert "ld.global.f32" in saxpy[0]["hit"] and "if (i <= n)" in saxpy[1]["hit"]


def test_html_report_screenshot(tmp_path, monkeypatch):
    """The page renders to a screenshot of the window's size with more than a blank page's bytes."""
    browser = _browser()
    monkeypatch.chdir(ROOT)
    page = tmp_path / "report.html"
    volta("check", "examples/racy_reduction.ptx", "--html", page)
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2000) and len(data) > 20_000


def test_html_never_overwrites(tmp_path):
    page = tmp_path / "report.html"
    page.write_text("keep")
    r = volta("check", EXAMPLES / "vector_add.ptx", "--html", page)
    assert r.exit_code == 2 and page.read_text() == "keep"
