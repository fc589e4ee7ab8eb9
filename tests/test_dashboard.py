"""``boanon dashboard`` in a real browser: Debian's headless Chromium, driven by Selenium, opens the
page of a real tuning run and checks what a person sees; the run then goes on and the page follows.

Chromium and chromedriver come from scripts/install-system-deps.sh (``make setup``), Selenium
from the dev extra; nothing is downloaded at test time (the driver's path is given, so Selenium
Manager never looks for one).
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from boanon.store import Store

ROOT = Path(__file__).resolve().parents[1]
BOANON = [str(Path(sys.executable).parent / "boanon")]


def tune(store: Path, budget: int, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*BOANON, "tune", "examples/synthetic.yaml", "--budget", str(budget), "--store",
                           str(store), *extra], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of 8 trials (6 initial, 2 proposed from a learned graph)."""
    store = tmp_path_factory.mktemp("dashboard") / "syn.db"
    tune(store, 8)
    return store


@contextmanager
def serving(*stores: Path):
    """``boanon dashboard STORE [STORE ...] --port 0`` in its own process; yields the page's URL."""
    proc = subprocess.Popen([*BOANON, "dashboard", *map(str, stores), "--port", "0", "--poll", "0.5"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, f"no URL in {line!r} ({proc.stderr.read() if proc.poll() is not None else ''})"
        yield found.group(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(run: Path):
    """``boanon dashboard RUN.db --port 0`` in its own process; yields the page's URL."""
    with serving(run) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "chromium and chromedriver missing: run scripts/install-system-deps.sh"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1800"):
        options.add_argument(arg)
    b = webdriver.Chrome(service=Service(driver), options=options)
    yield b
    b.quit()


def wait_for(browser, condition, timeout: float = 20.0, what: str = ""):
    """``condition`` comes true in time; elements the page redraws meanwhile are looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, timeout, poll_frequency=0.2,
                         ignored_exceptions=[StaleElementReferenceException])
    return wait.until(lambda b: condition(b), message=what)


def api(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path, timeout=10) as r:
        return json.load(r)


def rows(browser) -> list:
    from selenium.webdriver.common.by import By

    return browser.find_elements(By.CSS_SELECTOR, "#trial-table tbody tr")


def test_page_shows_the_run_and_follows_it(run: Path, server: str, browser) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server)
    wait_for(browser, lambda b: len(rows(b)) == 8, what="the trials table never showed the 8 trials")
    with Store(run, read_only=True, follow=True) as store:
        trials = store.trials()
        graph = store.graph(store.last_graph_id())

    # the convergence plot: one drawn point per measured trial, the best-so-far line, the default's line
    drawn = browser.execute_script(
        "const c = Chart.getChart('convergence'); return c.data.datasets.map((d, i) => "
        "[d.label, c.getDatasetMeta(i).data.length, c.isDatasetVisible(i)]);")
    points = sum(n for label, n, visible in drawn if label.startswith("trials:") and visible)
    assert points == 8
    assert any(label == "best so far" for label, _, _ in drawn)
    assert any(label == "default configuration (t0000)" for label, _, _ in drawn)
    assert "8 trials measured" in browser.find_element(By.ID, "progress-caption").text

    # the graph: every node of the run's graph drawn, the objective among them, inside the canvas
    wait_for(browser, lambda b: b.execute_script("return window.boanon.cy !== null"), what="no graph drawn")
    drawn_nodes = browser.execute_script(
        "return window.boanon.cy.nodes(\"[kind = 'node']\").map(n => n.id());")
    assert set(drawn_nodes) == set(graph.roles)
    assert "cost" in drawn_nodes
    inside = browser.execute_script(
        "const cy = window.boanon.cy, w = cy.width(), h = cy.height();"
        "return cy.nodes().every(n => { const p = n.renderedPosition();"
        " return p.x >= 0 && p.y >= 0 && p.x <= w && p.y <= h; });")
    assert inside, "some graph nodes are drawn outside the visible canvas"

    # a click on a trial's row shows its configuration
    t = trials[3]
    browser.find_element(By.CSS_SELECTOR, f"#trial-table tbody tr[data-trial='{t.name}']").click()
    config_rows = browser.find_elements(By.CSS_SELECTOR, "#trial-config tr")
    shown = {r.find_elements(By.TAG_NAME, "td")[0].text: r.find_elements(By.TAG_NAME, "td")[1].text
             for r in config_rows}
    assert set(shown) == set(t.config)
    for name, value in t.config.items():
        assert float(shown[name]) == pytest.approx(value, rel=1e-3), name
    detail = browser.find_element(By.ID, "trial-detail").text
    assert t.reason in detail and f"{t.name}" in detail and str(run.with_suffix(".trials") / t.name) in detail

    # a click on a point of the plot opens that trial too
    from selenium.webdriver.common.action_chains import ActionChains

    x, y, name = browser.execute_script(
        "const c = Chart.getChart('convergence'); const i = c.data.datasets.findIndex("
        "d => d.label.startsWith('trials:')); const e = c.getDatasetMeta(i).data[0];"
        "return [e.x, e.y, c.data.datasets[i].data[0].trial];")
    canvas = browser.find_element(By.ID, "convergence")
    ActionChains(browser).move_to_element_with_offset(canvas, x - canvas.rect["width"] / 2,
                                                      y - canvas.rect["height"] / 2).click().perform()
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#trial-detail h3").text.startswith(name),
             what=f"a click on {name}'s point did not open it")

    # sorting by the objective and filtering by status
    browser.find_element(By.CSS_SELECTOR, "#trial-table th[data-key='obj:cost']").click()
    order = [r.get_attribute("data-trial") for r in rows(browser)]
    assert order == [x.name for x in sorted(trials, key=lambda x: x.objectives["cost"])]
    browser.find_element(By.CSS_SELECTOR, "#status-filter button[data-key='failed']").click()
    assert rows(browser) == []
    browser.find_element(By.CSS_SELECTOR, "#status-filter button[data-key='all']").click()

    # the node models, fitted in the background, reach the page
    wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#fit-table tbody tr"), timeout=30,
             what="no node model fits shown")
    models = api(server, "api/models")
    assert models["status"] == "ready" and "cost" in models["nodes"]
    assert {e["param"] for e in models["effects"]} == set(trials[0].config)

    # live: the run goes on (in another process, writing the store the page reads) and the page follows
    tune(run, 10, "--resume")
    # a refresh during the tune can show the tenth trial running (10 rows, "9 trials measured"):
    # the page follows it to its end at a later refresh
    wait_for(browser, lambda b: len(rows(b)) == 10
             and "10 trials measured" in b.find_element(By.ID, "progress-caption").text,
             what="the page did not follow the run to 10 measured trials")


def test_a_count_of_one_is_written_in_the_singular(server: str, tmp_path: Path, browser) -> None:
    """The graph's caption said "1 objectives" and "12 params"; the workers chart of an
    early-stopped run on one worker "6 trials on 1 lanes": every count goes through one helper."""
    from selenium.webdriver.common.by import By

    from boanon.config import load_config
    from boanon.early_stopping import MedianStopping
    from boanon.executors import LocalExecutor
    from boanon.parallel import optimize_parallel
    from boanon.targets.sgd import SgdRunner
    from boanon.tuner import Tuner

    browser.get(server)
    wait_for(browser, lambda b: "objective" in b.find_element(By.ID, "graph-caption").text,
             what="the graph was never drawn")
    caption = browser.find_element(By.ID, "graph-caption").text
    assert "12 parameters, " in caption and "1 objective)" in caption, caption
    assert not re.search(r"\b1 [a-z]+s\b", caption), caption
    assert not browser.find_element(By.ID, "legend-bound").is_displayed()  # no bounded output: no key for one

    config = load_config(ROOT / "examples" / "sgd.yaml")  # the simulated cluster, fast, one worker
    tuner = Tuner(config.space, config.objectives, strategy="random", seed=3, n_init=6,
                  store=tmp_path / "sgd.db")
    runner = SgdRunner(pace=0.003, network="googlenet", iterations=12, warmup=2, noise_seed=1)
    with LocalExecutor(1, grace=1.0) as executor:
        optimize_parallel(tuner, runner, 6, executor, trials_dir=tmp_path / "sgd.trials",
                          stopper=MedianStopping(min_trials=2, min_steps=3))
    stopped = len(tuner.store.trials("stopped"))
    tuner.store.close()
    assert stopped, "the median rule stopped no trial: the workers chart is not shown"
    with serving(tmp_path / "sgd.db") as url:
        browser.get(url)
        wait_for(browser, lambda b: b.find_element(By.ID, "timeline-caption").text,
                 what="the workers chart was never drawn")
        caption = browser.find_element(By.ID, "timeline-caption").text
        assert caption.startswith("6 trials on 1 lane (") and f"; {stopped} stopped early." in caption, \
            caption


def test_the_best_configuration_marks_a_change_only_where_there_is_one(tmp_path: Path, browser) -> None:
    """A run whose best is still the default (t0000) said "Bold: differs from the default" over
    a table with nothing bold, and "0.0 % better" than itself; where the best differs, the
    caption counts the bold rows."""
    from selenium.webdriver.common.by import By

    def best_panel(b) -> tuple[str, int]:
        return (b.find_element(By.ID, "best-caption").text,
                len(b.find_elements(By.CSS_SELECTOR, "#best-config tr.changed")))

    store = tmp_path / "default.db"
    tune(store, 3)  # the default, then two Sobol points, both worse
    with Store(store, read_only=True) as s:
        assert min(s.trials(), key=lambda t: t.objectives["cost"]).name == "t0000"
    with serving(store) as url:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 3, what="the trials table never showed the 3 trials")
        caption, bold = best_panel(browser)
        assert not bold, caption
        assert caption.endswith("It is the default configuration: no trial has beaten it yet."), caption
        progress = browser.find_element(By.ID, "progress-caption").text
        assert "the default configuration (t0000) itself" in progress and "% better" not in progress, progress
    # a run whose best differs from the default on any machine: Sobol points, no model (whether a
    # model's proposal beat the default turned on the floating point of the machine fitting it)
    store = latency_run(tmp_path / "better.db", "random", 6)
    with Store(store, read_only=True) as s:
        default, *others = s.trials()
    best = min(others, key=lambda t: t.objectives["response_time"])
    assert best.objectives["response_time"] < default.objectives["response_time"]
    differ = sum(best.config[p] != default.config[p] for p in default.config)
    with serving(store) as url:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 6, what="the trials table never showed the 6 trials")
        caption, bold = best_panel(browser)
    assert bold == differ > 0, caption
    assert re.search(rf"Bold: the {bold} parameters? that differs? from the default\.$", caption), caption


def test_the_graph_draws_a_bounded_output_with_its_bound(tmp_path: Path, synthetic_run, browser) -> None:
    """``outputs: [{name: g0_load, max: 0.6}]``: the run models g0_load and steers it, but the
    page drew only the objectives' ancestors, without it; it is a node named with its bound, in
    red, and its panel says what the bound is."""
    from selenium.webdriver.common.by import By

    store = synthetic_run(tmp_path, budget=9, outputs=[{"name": "g0_load", "max": 0.6}])
    with serving(store) as url:
        browser.get(url)
        label = "const n = window.boanon.cy && window.boanon.cy.getElementById('g0_load'); " \
                "return n && n.length ? n.data('label') : null;"
        wait_for(browser, lambda b: b.execute_script(label), what="g0_load was never drawn")
        assert browser.execute_script(label) == "g0_load <= 0.6"
        border = "return window.boanon.cy.getElementById('g0_load').style('border-color')"
        assert browser.execute_script(border) == "rgb(179,64,61)"
        assert "bounded outputs" in browser.find_element(By.ID, "graph-caption").text
        assert browser.find_element(By.ID, "legend-bound").is_displayed()
        browser.execute_script("window.boanon.cy.getElementById('g0_load').emit('tap')")
        wait_for(browser, lambda b: b.find_elements(By.ID, "node-bound"), what="no bound in the node's panel")
        assert browser.find_element(By.ID, "node-bound").text.startswith("output constraint: g0_load <= 0.6")


# a slow network for the first graph the page asks for (its default scope): its answer is held 3 s
HOLD_FIRST_GRAPH = """
const send = window.fetch;
window.held = 0;
window.fetch = async (url, options) => {
  const answer = await send(url, options);
  if (String(url).includes("/api/graph?scope=auto") && !window.held++) {
    await new Promise((done) => setTimeout(done, 3000));
  }
  return answer;
};
"""


def test_a_scope_picked_while_the_first_graph_loads_is_the_one_drawn(server: str, browser) -> None:
    """A scope clicked while the page's first graph (the default scope) was on its way was drawn,
    then that slower answer arrived and was drawn over it: the page showed the default scope
    while the user had picked another (under load: the graph key test failed so)."""
    from selenium.webdriver.common.by import By

    hold = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_FIRST_GRAPH})
    try:
        browser.get(server)
        wait_for(browser, lambda b: b.execute_script("return window.held") == 1,
                 what="the page never asked for its first graph")
        browser.find_element(By.CSS_SELECTOR, "#graph-scope button[data-scope='all']").click()
        caption = lambda b: b.find_element(By.ID, "graph-caption").text  # noqa: E731
        wait_for(browser, lambda b: caption(b).startswith("The whole graph"),
                 what="the whole graph was never drawn")
        # the first update ends (the page says "live") once the held answer has been handled
        wait_for(browser, lambda b: "ok" in b.find_element(By.ID, "live").get_attribute("class"),
                 what="the page's first update never ended")
        assert caption(browser).startswith("The whole graph"), caption(browser)
        picked = browser.find_element(By.CSS_SELECTOR, "#graph-scope button.on")
        assert picked.get_attribute("data-scope") == "all"
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", hold)


def test_the_graph_key_names_only_what_the_picture_holds(tmp_path: Path, synthetic_run, browser) -> None:
    """The key always showed "folded group" and "function / formula" (and the fallback and
    expression edges), whatever the picture held; each entry is shown exactly when the drawn
    graph has one, and folding a group brings "folded group" into the key."""
    from selenium.webdriver.common.by import By

    from boanon.synthetic import SyntheticSystem

    drawn_js = """const cy = window.boanon.cy; return {
        folded: cy.nodes("[kind = 'folded']").length, bound: cy.nodes("[?bounded]").length,
        form: cy.nodes("[form = 'function'], [form = 'formula']").length,
        fallback: cy.edges("[style = 'dotted']").length, expression: cy.edges("[?annotated]").length};"""
    entries = {"folded": "folded group", "form": "function / formula", "bound": "output constraint",
               "fallback": "fallback parameter", "expression": "read by a node's expression"}

    def key_matches_picture(b) -> bool:
        drawn = b.execute_script(drawn_js)
        shown = {k: any(e.text.startswith(text) and e.is_displayed()
                        for e in b.find_elements(By.CSS_SELECTOR, "#graph-legend > span"))
                 for k, text in entries.items()}
        return shown == {k: drawn[k] > 0 for k in entries}

    def tap_first(kind: str) -> None:
        browser.execute_script(f"window.boanon.cy.nodes(\"[kind = '{kind}']\")[0].emit('tap')")

    # the system's true graph, given: its name groups are there on any machine (a graph learned
    # from 8 trials held one or none, as the floating point of the machine fitting it decided)
    graph = tmp_path / "true-graph.json"
    SyntheticSystem(n_params=12, n_groups=4, seed=0).true_graph().save(graph)
    with serving(synthetic_run(tmp_path, budget=9, graph=str(graph))) as url:
        browser.get(url)
        browser.find_element(By.CSS_SELECTOR, "#graph-scope button[data-scope='all']").click()
        wait_for(browser, lambda b: b.find_element(By.ID, "graph-caption").text.startswith("The whole graph"),
                 what="the whole graph was never drawn")
        assert browser.execute_script(drawn_js)["folded"] == 0  # a small graph opens unfolded
        assert key_matches_picture(browser)
        tap_first("group")  # fold it
        wait_for(browser, lambda b: b.execute_script(drawn_js)["folded"] == 1, what="the group never folded")
        assert key_matches_picture(browser)
        tap_first("folded")  # open it again
        wait_for(browser, lambda b: b.execute_script(drawn_js)["folded"] == 0, what="the group never opened")
        assert key_matches_picture(browser)


LOGGY = """#!/bin/sh
# a system that logs a file per step, links out of its directory, hides a lock, nests a folder,
# dumps a core (sparse) over the 64 MiB the dashboard serves
out="$1"
i=0; while [ $i -lt 80 ]; do echo "step $i" > "$out/step-$i.log"; i=$((i+1)); done
ln -s /etc/hostname "$out/host-link"
echo locked > "$out/.lock"
mkdir "$out/sub"
truncate -s 70M "$out/core"
printf '{"objectives": {"cost": %s}}' "$2" > "$out/result.json"
"""


def test_the_run_view_names_no_trial_file_and_one_trial_lists_a_bounded_few(tmp_path: Path, browser) -> None:
    """/api/run listed every file of every trial's directory at every poll (a system logging a
    file per step sent hundreds of names per trial, links leading out of the run among them, with
    no size). It names none; a trial opened lists its plain files, its own first, at most 50 with
    their sizes, and counts the rest (a file over 64 MiB is listed, not linked: /logs refuses it);
    a name that is no trial of the run is refused."""
    from selenium.webdriver.common.by import By

    from boanon.dashboard.data import MAX_TRIAL_FILES

    (tmp_path / "loggy.sh").write_text(LOGGY)
    (tmp_path / "loggy.sh").chmod(0o755)
    (tmp_path / "tune.yaml").write_text(json.dumps({
        "space": {"x": {"type": "float", "low": 0.0, "high": 1.0, "default": 0.5}},
        "objectives": [{"name": "cost"}], "strategy": "random", "n_init": 2, "seed": 0,
        "runner": {"command": [str(tmp_path / "loggy.sh"), "{trial_dir}", "{x}"]}, "adapter": "table"}))
    store = tmp_path / "loggy.db"
    subprocess.run([*BOANON, "tune", str(tmp_path / "tune.yaml"), "--budget", "2", "--store", str(store)],
                   cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    folder = tmp_path / "loggy.trials" / "t0000"
    plain = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.is_symlink()
                   and not p.name.startswith("."))
    with serving(store) as url:
        with urllib.request.urlopen(url + "api/run", timeout=10) as r:
            body = r.read().decode()
        assert "step-" not in body and "host-link" not in body and "log_files" not in body
        listed = api(url, "api/trial-files?trial=t0000")
        names = [f["name"] for f in listed["files"]]
        assert len(names) == MAX_TRIAL_FILES and listed["more"] == len(plain) - MAX_TRIAL_FILES
        assert names[:6] == ["config.json", "core", "result.json", "stderr.txt", "stdout.txt", "step-0.log"]
        assert names[6:8] == ["step-1.log", "step-2.log"]  # in number order, not step-10 after step-1
        assert [f["name"] for f in listed["files"] if not f["served"]] == ["core"]  # over 64 MiB
        assert all(f["bytes"] == (folder / f["name"]).stat().st_size for f in listed["files"])
        for bad in ("..", "../..", "t0000/..", "t9999"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url + "api/trial-files?trial=" + urllib.parse.quote(bad), timeout=10)
            assert refused.value.code == 400
            assert f"no trial {bad!r} in the run" in refused.value.read().decode()

        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 2, what="the trials table never showed the 2 trials")
        browser.find_element(By.CSS_SELECTOR, "#trial-table tbody tr[data-trial='t0000']").click()
        wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#trial-files a"),
                 what="the trial's files were never listed")
        links = browser.find_elements(By.CSS_SELECTOR, "#trial-files a")
        assert [a.text for a in links] == [n for n in names if n != "core"]  # the core is not linked
        assert links[1].find_element(By.XPATH, "..").text == \
            f"result.json ({(folder / 'result.json').stat().st_size} B)"
        items = browser.find_elements(By.CSS_SELECTOR, "#trial-files li")
        assert items[1].text == "core (70 MiB, too large to open here: it is in the directory above)"
        more = len(plain) - MAX_TRIAL_FILES
        assert f"and {more} more files, not listed" in browser.find_element(By.ID, "trial-files").text
        with urllib.request.urlopen(links[1].get_attribute("href"), timeout=10) as r:
            assert r.read() == (folder / "result.json").read_bytes()


LINE_AT = """
const [id, label, x0, x1] = arguments, c = Chart.getChart(id), r = c.currentDevicePixelRatio;
const color = c.data.datasets.find((d) => d.label === label).borderColor;
const want = [1, 3, 5].map((k) => parseInt(color.slice(k, k + 2), 16));
const [left, right] = [x0, x1].map((x) => Math.round(c.scales.x.getPixelForValue(x) * r));
// the plot area's rows only: the legend's swatch of the line, above it, has the line's colour
const [top, bottom] = [c.chartArea.top, c.chartArea.bottom].map((y) => Math.round(y * r));
const ys = [];
for (let px = left; px <= right; px++) {  // a span of columns: another line may cross one of them
  const column = c.ctx.getImageData(px, top, 1, bottom - top).data;
  for (let i = 0; i < bottom - top; i++) {
    const hit = column[4 * i + 3] > 200 && want.every((v, k) => Math.abs(column[4 * i + k] - v) < 16);
    if (hit) ys.push((top + i) / r);
  }
}
return ys.length ? ys.reduce((a, b) => a + b) / ys.length : null;
"""
"""The mean height (CSS pixels) at which the line ``label`` of chart ``id`` is drawn between
``x0`` and ``x1``: read off the canvas, where the reader sees it."""


def test_the_best_so_far_steps_down_at_the_trial_that_improved(tmp_path: Path, browser) -> None:
    """The best-so-far line was drawn with Chart.js's ``stepped: "after"``, which drops at the
    trial before the improving one: the page showed a trial's value before it had run."""
    store = latency_run(tmp_path / "steps.db", "random", 8)
    with serving(store) as url:
        browser.get(url)
        wait_for(browser, lambda b: b.execute_script("return Chart.getChart('convergence') !== undefined"),
                 what="no convergence chart")
        best = api(url, "api/run")["convergence"][0]["best"]
        pixels = "const s = Chart.getChart('convergence').scales.y; " \
                 "return [...arguments].map((v) => s.getPixelForValue(v))"
        changes = [(a, b, *browser.execute_script(pixels, a["y"], b["y"]))
                   for a, b in zip(best, best[1:], strict=False) if b["y"] != a["y"]]
        changes = [c for c in changes if abs(c[2] - c[3]) > 20]  # far enough apart to tell on the canvas
        assert changes, f"no improvement large enough to see: {best}"
        for before, after, old, new in changes:
            span = after["x"] - before["x"]
            y = browser.execute_script(LINE_AT, "convergence", "best so far", before["x"] + 0.2 * span,
                                       after["x"] - 0.2 * span)
            assert y == pytest.approx(old, abs=3), (before, after, y, old, new)  # the old best, not the new


def test_the_pareto_front_is_drawn_as_the_staircase_its_trials_attain(tmp_path: Path, browser) -> None:
    """Two front points were joined by a straight line, as if the trade-offs between them had
    been reached; between two of them (both minimised) the front holds the left one's value up
    to the right one, as ``boanon plot --kind pareto`` draws it."""
    store = tmp_path / "mo.db"
    # Sobol points, no model: a front of four points on any machine (the structured run's front held
    # one point or two, as the floating point of the machine fitting its models decided)
    subprocess.run([*BOANON, "tune", "examples/synthetic-multiobjective.yaml", "--budget", "14", "--strategy",
                    "random", "--store", str(store)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                   check=True)
    with serving(store) as url:
        browser.get(url)
        wait_for(browser, lambda b: b.execute_script("return Chart.getChart('pareto-chart') !== undefined"),
                 what="no Pareto chart")
        front = sorted(q["values"] for q in api(url, "api/run")["pareto"]["points"] if q["front"])
        assert len(front) >= 2, front
        pixels = "const s = Chart.getChart('pareto-chart').scales.y; " \
                 "return [...arguments].map((v) => s.getPixelForValue(v))"
        for (x0, y0), (x1, y1) in zip(front, front[1:], strict=False):
            left, right = browser.execute_script(pixels, y0, y1)
            span = x1 - x0
            y = browser.execute_script(LINE_AT, "pareto-chart", "Pareto front", x0 + 0.2 * span,
                                       x1 - 0.2 * span)
            assert abs(left - right) > 20 and y == pytest.approx(left, abs=3), (front, y, left, right)


def trade_off(config: dict, sign: int) -> dict:
    """Two objectives that trade off along ``k``: ``a`` and ``b`` both grow (min a, max b) or part."""
    return {"a": float(config["k"]), "b": float(config["k"]) * sign + 10}


@pytest.mark.parametrize("da, db, sign", [("minimize", "maximize", 1), ("maximize", "maximize", -1)])
def test_the_pareto_staircase_holds_the_value_of_the_point_better_on_the_x_axis(tmp_path: Path, browser,
                                                                                 da, db, sign) -> None:
    """Between two front points the line holds the ``y`` of the one better in ``x`` (the region the
    trials attain), whatever the directions: a minimised time beside a maximised ratio, or two
    maxima, stepped in ``y`` first and drew a corner better than both points."""
    from boanon.dashboard.app import Dashboard, RunView
    from boanon.objectives import Objective
    from boanon.runners.function import CallableRunner
    from boanon.space import Space
    from boanon.tuner import Tuner

    space = Space.from_dict({"k": {"type": "int", "low": 1, "high": 9, "default": 2}})
    store = tmp_path / "front.db"
    objectives = [Objective("a", da), Objective("b", db)]
    with Tuner(space, objectives, strategy="random", seed=0, store=store) as tuner:
        for k in (2, 5, 8):
            tuner.enqueue({"k": k})
        tuner.optimize(CallableRunner(trade_off, sign=sign), 3, trials_dir=tmp_path / "front.trials")
    server = Dashboard(RunView(store, poll_s=0.5, min_model_interval_s=0.0), port=0)
    url = server.start()
    try:
        browser.get(url)
        wait_for(browser, lambda b: b.execute_script("return Chart.getChart('pareto-chart') !== undefined"),
                 what="no Pareto chart")
        front = sorted(q["values"] for q in api(url, "api/run")["pareto"]["points"] if q["front"])
        assert len(front) == 3, front
        pixels = "const s = Chart.getChart('pareto-chart').scales.y; return s.getPixelForValue(arguments[0])"
        for (x0, y0), (x1, y1) in zip(front, front[1:], strict=False):
            held = y0 if da == "minimize" else y1  # the y of the point better in x
            y = browser.execute_script(LINE_AT, "pareto-chart", "Pareto front", x0 + 0.3 * (x1 - x0),
                                       x1 - 0.3 * (x1 - x0))
            assert y == pytest.approx(browser.execute_script(pixels, held), abs=3), (front, y)
    finally:
        server.stop()


def test_an_opened_trial_says_which_output_constraint_it_or_the_default_breaks(tmp_path: Path, synthetic_run,
                                                                                browser) -> None:
    """Under ``g0_load <= 0.6`` the default (0.98) is infeasible: an opened trial was compared
    "against the default configuration (t0000)" as with a baseline to deploy, and an infeasible
    trial's panel said only "done"."""
    from selenium.webdriver.common.by import By

    from boanon.multiobjective import OutputConstraint
    from boanon.results import is_feasible

    store = synthetic_run(tmp_path, budget=6, outputs=[{"name": "g0_load", "max": 0.6}])
    bound = [OutputConstraint("g0_load", max=0.6)]
    with Store(store, read_only=True) as s:
        done = s.trials("done")
    assert not is_feasible(done[0], bound)
    feasible = next(t.name for t in done if is_feasible(t, bound))
    infeasible = next(t.name for t in done[1:] if not is_feasible(t, bound))
    with serving(store) as url:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 6, what="the trials table never showed the 6 trials")

        def open_trial(name: str) -> None:
            browser.find_element(By.CSS_SELECTOR, f"#trial-table tbody tr[data-trial='{name}']").click()
            heading = lambda b: b.find_element(By.CSS_SELECTOR, "#trial-detail h3").text  # noqa: E731
            wait_for(browser, lambda b: heading(b).startswith(name), what=f"{name} did not open")

        open_trial(feasible)
        assert browser.find_element(By.ID, "vs-default").text.startswith(
            "against the default configuration (t0000, infeasible: breaks g0_load <= 0.6): ")
        assert not browser.find_elements(By.ID, "trial-breaks")
        open_trial(infeasible)
        assert browser.find_element(By.ID, "trial-breaks").text == "infeasible: breaks g0_load <= 0.6"


def test_tune_serves_the_dashboard_while_it_runs(tmp_path: Path) -> None:
    """``boanon tune --dashboard``: the URL printed answers while trials run, and not after."""
    config = tmp_path / "slow.yaml"
    text = (ROOT / "examples/synthetic.yaml").read_text()
    config.write_text(text.replace("n_groups: 4}", "n_groups: 4, delay: 0.3}"))
    proc = subprocess.Popen([*BOANON, "tune", str(config), "--budget", "8", "--store", str(tmp_path / "r.db"),
                             "--dashboard", "--dashboard-port", "0"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = None
        for line in proc.stdout:
            found = re.search(r"dashboard: (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found.group(1)
                break
        assert url, "boanon tune --dashboard printed no URL"
        seen = api(url, "api/run")
        assert seen["summary"]["store"] == str(tmp_path / "r.db")
        assert seen["summary"]["counts"]["done"] < 8  # answered while the run was going on
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert "best:" in rest
    with pytest.raises(OSError):  # the server ended with the run
        api(url, "api/run")


def test_a_plain_gp_run_shows_effects_without_node_models(tmp_path: Path, browser) -> None:
    """A run whose surrogate is the plain GP has no per-node models; its parameter effects still show."""
    from selenium.webdriver.common.by import By

    from boanon.dashboard.app import Dashboard, RunView
    from boanon.runners.function import CallableRunner
    from boanon.synthetic import SyntheticSystem
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, seed=1)
    tuner = Tuner(system.space, ["cost"], strategy="gp", n_init=4, store=tmp_path / "gp.db")
    tuner.optimize(CallableRunner(system.evaluate), 6, trials_dir=tmp_path / "gp.trials")
    server = Dashboard(RunView(tmp_path / "gp.db", poll_s=0.5), port=0)
    url = server.start()
    try:
        browser.get(url)
        bars = "const c = Chart.getChart('effect-ranking'); return c ? c.data.labels : [];"
        wait_for(browser, lambda b: b.execute_script(bars), timeout=30, what="no parameter effects drawn")
        assert sorted(browser.execute_script(bars)) == sorted(system.space.names)
        assert "no per-node models" in browser.find_element(By.ID, "fit-caption").text
    finally:
        server.stop()


def latency(config: dict) -> dict:
    """A small system whose numbers have units: a declared one (``cache``: MiB, the objective
    ``response_time``: ms) and ones its names say (``wait_us``, ``read_bytes``)."""
    wait = (config["cache"] - 40) ** 2 / 10 + 30 * config["threads"]
    return {"response_time": 1 + wait / 1000, "wait_us": wait, "read_bytes": 4096 * config["cache"]}


def latency_run(store: Path, strategy: str, budget: int, seed: int = 0) -> Path:
    """A real run of :func:`latency` into ``store`` (its trials beside it); returns ``store``."""
    from boanon.objectives import Objective
    from boanon.runners.function import CallableRunner
    from boanon.space import Space
    from boanon.tuner import Tuner

    space = Space.from_dict({"cache": {"type": "int", "low": 8, "high": 64, "default": 16, "unit": "MiB"},
                             "threads": {"type": "float", "low": 0.0, "high": 4.0, "default": 1.0}})
    tuner = Tuner(space, [Objective("response_time", unit="ms")], strategy=strategy, n_init=4, seed=seed,
                  store=store)
    tuner.optimize(CallableRunner(latency), budget, trials_dir=store.with_suffix(".trials"))
    tuner.store.close()
    return store


def test_a_trial_a_dead_run_left_behind_is_shown_interrupted(tmp_path: Path, browser) -> None:
    """A trial the store closed after a kill is counted in the header, has its own filter tab,
    and no run time (the store knows when the run came back, not when it died)."""
    from selenium.webdriver.common.by import By

    from boanon.dashboard.app import Dashboard, RunView
    from boanon.store import Store

    store = latency_run(tmp_path / "died.db", "gp", 4)
    with Store(store) as s:
        s.start_trial({"cache": 20, "threads": 2.0})  # the run dies while this one runs
    with Store(store) as s:
        (died,) = s.recover()
        s.start_trial({"cache": 30, "threads": 1.0})  # the resumed run's trial, beside it in time
    server = Dashboard(RunView(store, poll_s=0.5, min_model_interval_s=0.0), port=0)
    url = server.start()
    try:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 6, what="the trials table never showed the 6 trials")
        assert "4 done · 0 stopped · 0 failed · 1 interrupted · 1 running" in \
            browser.find_element(By.ID, "run-facts").text
        browser.find_element(By.CSS_SELECTOR, "#status-filter button[data-key='interrupted']").click()
        assert [r.get_attribute("data-trial") for r in rows(browser)] == [died.name]
        rows(browser)[0].click()
        assert "ran –" in browser.find_element(By.ID, "trial-detail").text
    finally:
        server.stop()


def test_a_killed_runs_running_trials_do_not_grow_on_the_workers_chart(tmp_path: Path, browser) -> None:
    """Two trials a SIGKILLed ``--workers 2`` run left ``running``: the header says the process
    has ended, and their bars are marks at their start (end unknown), not bars that grow with the
    server's clock for as long as the page is open (a day later, a day long)."""
    import json as json_module
    import socket
    import time

    from selenium.webdriver.common.by import By

    from boanon.dashboard.app import Dashboard, RunView
    from boanon.store import ACTIVITY_NOTE, Store

    store = latency_run(tmp_path / "killed.db", "gp", 4)
    dead = subprocess.Popen(["true"])
    dead.wait()
    with Store(store) as s:
        s.start_trial({"cache": 20, "threads": 2.0})
        s.start_trial({"cache": 30, "threads": 1.0})
        activity = {"state": "running trials", "since": s.trials()[-1].started, "pid": dead.pid,
                    "host": socket.gethostname()}
        s.set_note(ACTIVITY_NOTE, json_module.dumps(activity))
    server = Dashboard(RunView(store, poll_s=0.5, min_model_interval_s=0.0), port=0)
    url = server.start()
    try:
        browser.get(url)
        bars = ("const c = Chart.getChart('timeline-chart'); if (!c) return null; const d = c.data.datasets"
                ".find((x) => x.label === 'running'); return d ? d.data.map((p) => p.x) : null;")
        wait_for(browser, lambda b: b.execute_script(bars), what="the workers chart never drew its trials")
        assert "the tuning process has ended (killed?)" in browser.find_element(By.ID, "run-facts").text
        time.sleep(3.0)  # polls every 0.5 s: a bar that follows the server clock (whole seconds) grew
        running = browser.execute_script(bars)
        assert len(running) == 2 and all(end - start < 0.5 for start, end in running), running
    finally:
        server.stop()


def test_units_are_shown_on_axes_tables_best_configuration_and_effects(tmp_path: Path, browser) -> None:
    """Units declared on a parameter and an objective, and read off metric names, are shown
    wherever their numbers are: the convergence and slice axes, the header, the best
    configuration, the trials table, a trial's detail, the parallel coordinates, the effects."""
    from selenium.webdriver.common.by import By

    from boanon.dashboard.app import Dashboard, RunView

    store = latency_run(tmp_path / "units.db", "gp", 5)
    server = Dashboard(RunView(store, poll_s=0.5, min_model_interval_s=0.0), port=0)
    url = server.start()
    try:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 5, what="the trials table never showed the 5 trials")
        axis = "return Chart.getChart('{}').options.scales.{}.title.text"
        assert browser.execute_script(axis.format("convergence", "y")).startswith("response_time (ms)")
        assert browser.execute_script(axis.format("slice-chart", "y")).startswith("response_time (ms)")
        assert " ms in t" in browser.find_element(By.ID, "run-facts").text
        caption = browser.find_element(By.ID, "best-caption").text  # a design point is proposed by no model
        assert re.search(r" ms, (from the initial design|proposed by the gp surrogate)\.", caption), caption
        best = {tr.find_elements(By.TAG_NAME, "td")[0].text: tr.find_elements(By.TAG_NAME, "td")[1].text
                for tr in browser.find_elements(By.CSS_SELECTOR, "#best-config tr")[1:]}
        assert best["cache"].endswith(" MiB") and not best["threads"].endswith("MiB")
        heads = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#trial-table th")]
        assert "response_time (ms)" in heads
        labels = browser.execute_script(  # read at once: the axes are redrawn when the model's ranking comes
            "return [...document.querySelectorAll('#parcoords text.axis-label')].map(t => t.textContent)")
        assert "cache (MiB)" in labels and "response_time (ms)" in labels
        inside = browser.execute_script(  # the axes' names, units and all, are not cut at the ends
            "const s = document.getElementById('parcoords').getBoundingClientRect();"
            "return [...document.querySelectorAll('#parcoords text.axis-label')].every(t => {"
            " const r = t.getBoundingClientRect(); return r.left >= s.left && r.right <= s.right; });")
        assert inside, "a parallel coordinates axis label is cut at the chart's edge"
        browser.find_element(By.CSS_SELECTOR, "#trial-table tbody tr[data-trial='t0001']").click()
        metrics = dict(browser.execute_script(
            "return [...document.querySelectorAll('#trial-metrics tr')].map(r => [...r.cells].slice(0, 2)"
            ".map(c => c.textContent))"))
        assert metrics["wait_us"].endswith(" µs") and metrics["read_bytes"].endswith(" B")
        wait_for(browser, lambda b: b.execute_script("return Chart.getChart('effect-curve') !== undefined"),
                 timeout=60, what="no effects drawn")
        assert browser.execute_script(axis.format("effect-curve", "y")) == "predicted response_time (ms)"
        browser.execute_script("window.boanon.effectParam = 'cache'; drawEffects()")
        assert browser.execute_script(axis.format("effect-curve", "x")).startswith("cache (MiB); ")
        assert " ms to " in browser.find_element(By.ID, "effect-caption").text
    finally:
        server.stop()


def compression(config: dict) -> dict:
    """A small system with a categorical and a boolean parameter beside a number."""
    speed = {"zstd": 1.0, "xz": 4.0, "LZ4": 0.5}[config["codec"]]
    return {"seconds": speed * (1 + config["level"] / 9) + 0.5 * config["long"]}


def test_a_categorical_parameter_has_its_place_on_the_parallel_coordinates_and_slice(tmp_path: Path,
                                                                                  browser) -> None:
    """A category (``codec: zstd``) has no number of its own: each trial sits at its choice's index
    among the space's choices, labelled with the choice, so every measured trial is a line of the
    parallel coordinates and a point of the slice (the page drew no line and no point at all); a
    switch's axis reads false and true, even when every trial had it off (it read -0.5 and 0.5);
    the text filter ``codec=LZ4`` finds the LZ4 trial (it compared ``LZ4`` with ``lz4``)."""
    from selenium.webdriver.common.by import By

    from boanon.dashboard.app import Dashboard, RunView
    from boanon.objectives import Objective
    from boanon.runners.function import CallableRunner
    from boanon.space import Space
    from boanon.tuner import Tuner

    space = Space.from_dict({"codec": {"type": "categorical", "choices": ["zstd", "xz", "LZ4"],
                                       "default": "zstd"},
                             "level": {"type": "int", "low": 1, "high": 9, "default": 3},
                             "long": {"type": "bool", "default": False}})
    store = tmp_path / "codec.db"
    with Tuner(space, [Objective("seconds")], strategy="random", seed=0, store=store) as tuner:
        for codec, level in (("zstd", 3), ("xz", 6), ("LZ4", 1), ("zstd", 9), ("xz", 2)):
            tuner.enqueue({"codec": codec, "level": level, "long": False})
        tuner.optimize(CallableRunner(compression), 5, trials_dir=tmp_path / "codec.trials")
        codecs = {t.name: t.config["codec"] for t in tuner.store.trials()}
    server = Dashboard(RunView(store, poll_s=0.5, min_model_interval_s=0.0), port=0)
    url = server.start()
    try:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 5, what="the trials table never showed the 5 trials")
        lines = "return document.querySelectorAll('#parcoords polyline').length"
        wait_for(browser, lambda b: b.execute_script(lines) == 5, timeout=5,
                 what="not every trial is a line of the parallel coordinates")
        ticks = browser.execute_script("return [...document.querySelectorAll('#parcoords text.tick')]"
                                       ".map(t => t.textContent)")
        assert {"zstd", "xz", "LZ4", "false", "true"} <= set(ticks), ticks  # a switch off in every trial too
        browser.find_element(By.CSS_SELECTOR, "#slice-param option[value='codec']").click()
        points = browser.execute_script("return Chart.getChart('slice-chart').data.datasets[0].data"
                                        ".map(p => [p.trial, p.x])")
        assert {trial: ["zstd", "xz", "LZ4"][x] for trial, x in points} == codecs
        labels = browser.execute_script("const s = Chart.getChart('slice-chart').scales.x;"
                                        "return s.ticks.map(t => String(t.label))")
        assert [label for label in labels if label] == ["zstd", "xz", "LZ4"], labels
        # the filter compares a category as typed, whatever its case (the term is read lower-case)
        browser.find_element(By.ID, "trial-search").send_keys("codec=LZ4")
        assert [r.get_attribute("data-trial") for r in rows(browser)] == ["t0002"]
    finally:
        server.stop()


def test_several_studies_side_by_side(tmp_path: Path, browser) -> None:
    """``boanon dashboard A.db B.db``: a selector picks the study every panel shows (its trials,
    its log files), one chart overlays each study's best so far, and neither store is written."""
    import hashlib

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    stores = {"gp": latency_run(tmp_path / "gp.db", "gp", 5, seed=1),
              "random": latency_run(tmp_path / "random.db", "random", 7, seed=1)}
    digest = {n: hashlib.sha256(p.read_bytes()).hexdigest() for n, p in stores.items()}
    with serving(stores["gp"], stores["random"]) as url:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 5, what="the first study's 5 trials never showed")
        wait_for(browser, lambda b: b.find_element(By.ID, "studies").is_displayed(), what="no studies panel")
        select = Select(browser.find_element(By.ID, "study-select"))
        assert [o.text for o in select.options] == ["gp.db", "random.db"]
        overlay = "return Chart.getChart('studies-chart').data.datasets.map(d => [d.label, d.data.length])"
        wait_for(browser, lambda b: len(b.execute_script(overlay)) == 2, what="no overlaid lines")
        assert browser.execute_script(overlay) == [["gp.db (gp)", 5], ["random.db (random)", 7]]
        assert "best response_time (ms) so far" == browser.execute_script(
            "return Chart.getChart('studies-chart').options.scales.y.title.text")

        select.select_by_visible_text("random.db")
        wait_for(browser, lambda b: len(rows(b)) == 7, what="the second study's 7 trials not shown")
        assert browser.find_element(By.ID, "store").text == str(stores["random"])
        browser.find_element(By.CSS_SELECTOR, "#trial-table tbody tr[data-trial='t0006']").click()
        link = wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#trial-detail ul a"),
                        what="the trial's files were never listed")[0]  # asked for when it is opened
        assert "/logs-1/t0006/" in link.get_attribute("href")
        with urllib.request.urlopen(link.get_attribute("href"), timeout=10) as r:
            assert r.read() == (tmp_path / "random.trials" / "t0006" / link.text).read_bytes()

        browser.find_element(By.CSS_SELECTOR, "#studies-table tbody tr[data-study='0']").click()
        wait_for(browser, lambda b: len(rows(b)) == 5, what="the first study's row did not open it")
        assert api(url, "api/run?study=1")["summary"]["counts"]["done"] == 7
    assert {n: hashlib.sha256(p.read_bytes()).hexdigest() for n, p in stores.items()} == digest


# --- an SGD-size run (35 parameters, ~105 nodes): what a user sees -----------------------------------
@pytest.fixture(scope="module")
def sgd_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated SGD cluster's run from its logs (examples/sgd-from-logs.yaml) at a budget of 3:
    its initial design (the default and one Sobol point: a third of the budget, at least two) and
    one proposal from the graph learned from the 40 logged trials; the next proposal comes live."""
    store = tmp_path_factory.mktemp("sgd") / "sgd.db"
    subprocess.run([*BOANON, "tune", "examples/sgd-from-logs.yaml", "--budget", "3", "--store", str(store)],
                   cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    return store


def status_node_models(store: Path) -> dict[str, tuple[str, int]]:
    """``boanon status``'s node models: node -> (model, number of parents)."""
    out = subprocess.run([*BOANON, "status", str(store)], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert max(len(line) for line in out.splitlines()) <= 100, "status lines are wrapped"
    joined = re.sub(r"\n {6}", " ", out)  # a wrapped line continues two columns further in
    section = joined.split("node models (", 1)[1].split("\n", 1)[1]
    found = {}
    for line in section.splitlines():
        m = re.match(r"^ {4}(\S+): (.+?), (\d+) parents?\b", line)
        if not m:
            break
        found[m[1]] = (m[2], int(m[3]))
    return found


def watch_the_next_proposal_live(sgd_run: Path, browser) -> None:
    """``boanon tune --dashboard`` resumes the SGD run for its next proposal: the page says a
    proposal is being computed, shows the new trial, says the run finished and is still served
    after it (a view of the store); when the server goes, the page keeps its last state."""
    from selenium.webdriver.common.by import By

    proc = subprocess.Popen([*BOANON, "tune", "examples/sgd-from-logs.yaml", "--budget", "4", "--store",
                             str(sgd_run), "--resume", "--dashboard", "--dashboard-port", "0",
                             "--dashboard-keep", "120"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = next((m.group(1) for line in proc.stdout
                    if (m := re.search(r"dashboard: (http://127\.0\.0\.1:\d+/)", line))), None)
        assert url, "boanon tune --dashboard printed no URL"
        browser.get(url)
        activity = lambda b: (b.find_elements(By.ID, "activity") or [None])[0]  # noqa: E731
        wait_for(browser, lambda b: activity(b) is not None and "computing a proposal" in activity(b).text,
                 timeout=120, what="the page never said a proposal was being computed")
        wait_for(browser, lambda b: len(rows(b)) == 4, timeout=300,
                 what="the page did not show the new trial")
        wait_for(browser, lambda b: activity(b) is not None and activity(b).text == "run finished",
                 what="the page did not say the run finished")
        assert any("the run is over; the dashboard stays up" in line for line in proc.stdout)
        assert api(url, "api/run")["summary"]["counts"]["done"] == 4  # still served after the run
        proc.send_signal(signal.SIGTERM)  # as Ctrl-C: the server stops
        assert proc.wait(timeout=30) == 0
        wait_for(browser, lambda b: "server stopped" in b.find_element(By.ID, "updated").text,
                 what="the page did not say its server stopped")
        assert len(rows(browser)) == 4  # its last state is kept
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_the_sgd_run_live_then_read_at_35_parameters(sgd_run: Path, browser) -> None:
    """An SGD-size run (35 parameters, ~105 nodes): its first proposal watched live, then the
    finished run's page as a user reads it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    watch_the_next_proposal_live(sgd_run, browser)
    with serving(sgd_run) as url:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 4, what="the trials table never showed the 4 trials")
        assert "35 parameters" in browser.find_element(By.ID, "run-facts").text

        # the graph opens on the objective's strongest paths, labels at a readable size, no __task__
        drawn_js = "return window.boanon.cy !== null && !!window.boanon.graph"
        wait_for(browser, lambda b: b.execute_script(drawn_js), what="no graph drawn")
        view = browser.execute_script("return window.boanon.graph")
        assert view["scope"] == "neighbourhood" and view["ancestry_nodes"] > 30
        drawn = browser.execute_script("return window.boanon.cy.nodes(\"[kind = 'node']\").map(n => n.id());")
        assert "iteration_time" in drawn and len(drawn) <= 30
        assert "__task__" not in drawn and "__task__" not in view["names"]
        smallest = browser.execute_script(
            "const cy = window.boanon.cy; return Math.min(...cy.nodes().map(n => "
            "parseFloat(n.style('font-size')) * cy.zoom()));")
        assert smallest >= 9, f"graph labels drawn at {smallest:.1f} px"
        browser.execute_script("window.boanon.cy.zoom(0.01)")  # zooming out stops at readable labels
        assert browser.execute_script("return window.boanon.cy.zoom() * 12") >= 9

        # search by name: a node off the first view, shown with its ancestors and descendants
        hidden = next(n for n in view["names"] if n not in drawn and n.startswith("m3_"))
        search = browser.find_element(By.ID, "node-search")
        search.send_keys(hidden + Keys.ENTER)
        wait_for(browser, lambda b: b.execute_script("return window.boanon.graph.scope === 'node'"),
                 what=f"searching {hidden} did not focus the graph on it")
        shown = set(browser.execute_script(
            "return window.boanon.cy.nodes(\"[kind = 'node']\").map(n => n.id());"))
        assert hidden in shown and "iteration_time" in shown  # the objective is among its descendants

        # the node-fit table shows the model status reports, node by node
        wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#fit-table tbody tr"), timeout=120,
                 what="no node model fits shown")
        table = {}
        for tr in browser.find_elements(By.CSS_SELECTOR, "#fit-table tbody tr"):
            cells = [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            table[cells[0]] = (cells[1], int(cells[2]))
        assert table == status_node_models(sgd_run)
        assert any(label != "gp" for label, _ in table.values())  # forms and relations, not all "gp"
        node = next(n for n, (label, _) in table.items() if "relation" in label or "form" in label)
        browser.execute_script(f"window.boanon.cy.getElementById('{node}').emit('tap')")
        panel = browser.find_element(By.ID, "node-model").text
        assert table[node][0] in panel and f"on {table[node][1]} parents" in panel

        # the text filter matches surrogates as words, not every reason that names them
        search = browser.find_element(By.ID, "trial-search")
        search.send_keys("init")
        assert {r.find_elements(By.TAG_NAME, "td")[5].text for r in rows(browser)} == {"init"}
        assert len(rows(browser)) == 2  # the design of a budget of 3
        search.clear()
        search.send_keys("why:sobol")
        assert len(rows(browser)) == 1
        search.clear()
        search.send_keys(" ")
        search.send_keys(Keys.BACKSPACE)

        # brushing an axis of the parallel coordinates filters the table
        axis = browser.find_element(By.CSS_SELECTOR, "#parcoords rect.hit[data-axis='iteration_time']")
        ActionChains(browser).move_to_element_with_offset(axis, 0, axis.rect["height"] / 2 - 4) \
            .click_and_hold().move_by_offset(0, -axis.rect["height"] / 3).release().perform()
        low, high = browser.execute_script("return window.boanon.brush.iteration_time")
        with Store(sgd_run, read_only=True) as store:
            kept = {t.name for t in store.trials() if low <= t.objectives["iteration_time"] <= high}
        assert 0 < len(kept) < 4
        assert {r.get_attribute("data-trial") for r in rows(browser)} == kept


def test_objective_tabs_drive_every_panel(tmp_path: Path, browser) -> None:
    """Two objectives, the default configuration infeasible: the second tab switches the best
    configuration, the effects and the slice to it; no gain over the infeasible default is
    claimed; the hypervolume's reference point is fixed from the initial design and shown."""
    from selenium.webdriver.common.by import By

    from boanon.dashboard.app import Dashboard, RunView
    from boanon.multiobjective import OutputConstraint
    from boanon.report import history_reference_point
    from boanon.runners.function import CallableRunner
    from boanon.synthetic import SyntheticSystem
    from boanon.tuner import Tuner, best_trial

    system = SyntheticSystem(n_params=4, n_groups=2, n_objectives=2, seed=2)
    at_default = system.evaluate(system.space.default())
    metric = next(k for k in at_default if k not in ("cost", "cost2"))
    bound = OutputConstraint(metric, min=at_default[metric] + 1e-9)  # the default just misses it
    tuner = Tuner(system.space, ["cost", "cost2"], strategy="gp", n_init=5, seed=0, store=tmp_path / "mo.db",
                  output_constraints=[bound])
    tuner.optimize(CallableRunner(system.evaluate), 7, trials_dir=tmp_path / "mo.trials")
    trials = tuner.store.trials()
    objectives, done = tuner.objectives, [t for t in trials if t.status == "done"]
    assert not bound.holds(trials[0].metrics[metric]) and any(bound.holds(t.metrics[metric]) for t in done)
    server = Dashboard(RunView(tmp_path / "mo.db", poll_s=0.5, min_model_interval_s=0.0), port=0)
    url = server.start()
    try:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 7, what="the trials table never showed the 7 trials")
        caption = browser.find_element(By.ID, "progress-caption").text
        assert "infeasible: no gain over it is claimed" in caption and "% better" not in caption
        ref, _ = history_reference_point(trials, objectives, [bound])
        hv = browser.find_element(By.ID, "hv-caption").text
        assert all(f"{o.name} = " in hv for o in objectives) and "run's start" in hv
        assert browser.execute_script("return window.boanon.run.pareto.ref") == pytest.approx(ref)
        wait_for(browser, lambda b: b.execute_script("return Chart.getChart('effect-ranking') !== undefined"),
                 timeout=60, what="no effects drawn")

        browser.find_element(By.CSS_SELECTOR, "#objective-tabs button[data-key='1']").click()
        best2 = best_trial(done, objectives[1], [bound])
        assert browser.find_element(By.ID, "best-head").text == "Best configuration by cost2"
        assert browser.find_element(By.ID, "best-caption").text.startswith(f"{best2.name}: cost2 = ")
        assert browser.find_element(By.ID, "effects-head").text == "Parameter effects on cost2"
        title = browser.execute_script("return Chart.getChart('effect-ranking').options.plugins.title.text")
        assert "predicted cost2" in title
        curve = browser.execute_script(
            "return Chart.getChart('effect-curve').data.datasets.map(d => d.label)")
        assert "cost2 (mean)" in curve
        best1 = best_trial(done, objectives[0], [bound])  # one base for both tabs' curves, named
        held = browser.execute_script("return Chart.getChart('effect-curve').options.scales.x.title.text")
        assert f"others at {best1.name}'s values (the best by {objectives[0].name})" in held
        slice_axis = "return Chart.getChart('slice-chart').options.scales.y.title.text"
        assert "cost2" in browser.execute_script(slice_axis)
        assert "cost2" in browser.find_element(By.ID, "progress-caption").text
    finally:
        server.stop()


def test_finished_trials_that_all_break_a_constraint_are_not_called_none(tmp_path: Path, browser) -> None:
    """Every finished trial infeasible: the best configuration panel said "no finished trial
    yet" beside a header counting them done; it says none meets the output constraints."""
    from selenium.webdriver.common.by import By

    from boanon.multiobjective import OutputConstraint
    from boanon.runners.function import CallableRunner
    from boanon.synthetic import SyntheticSystem
    from boanon.tuner import Tuner

    system = SyntheticSystem(n_params=4, n_groups=2, seed=2)
    tuner = Tuner(system.space, ["cost"], strategy="random", n_init=3, seed=0, store=tmp_path / "inf.db",
                  output_constraints=[OutputConstraint("cost", max=-1e9)])
    tuner.optimize(CallableRunner(system.evaluate), 3, trials_dir=tmp_path / "inf.trials")
    tuner.store.close()
    with serving(tmp_path / "inf.db") as url:
        browser.get(url)
        wait_for(browser, lambda b: len(rows(b)) == 3, what="the trials table never showed the 3 trials")
        caption = browser.find_element(By.ID, "best-caption").text
        assert caption == "none of the 3 finished trials meets the output constraints yet", caption
