"""Regenerate the dashboard's screenshots in docs/img/ from stored runs (headless Chromium).

    python scripts/dashboard-screenshots.py SGD.db MO.db docs/img [OTHER.db ...]

``SGD.db``: a run of examples/sgd-from-logs.yaml (35 parameters); ``MO.db``: a run of
examples/synthetic-multiobjective.yaml (two objectives, for the Pareto front); ``OTHER.db``:
studies compared with ``SGD.db`` (e.g. the same file with ``--strategy gp``). Each store is
served read-only by the dashboard in this process; nothing is written but the images.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from boanon.dashboard.app import Dashboard, RunView


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--hide-scrollbars"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def open_run(b: webdriver.Chrome, store: Path, *others: Path) -> Dashboard:
    server = Dashboard([RunView(s, poll_s=1.0, min_model_interval_s=0.0) for s in (store, *others)], port=0)
    b.get(server.start())
    deadline = time.monotonic() + 180
    while not b.execute_script("return !!(window.boanon.models && window.boanon.models.status === 'ready'"
                               " && window.boanon.cy)"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{store}: the page's model views never became ready")
        time.sleep(1)
    time.sleep(1)
    return server


def shoot(b: webdriver.Chrome, selector: str, path: Path) -> None:
    element = b.find_element("css selector", selector)
    b.execute_script("arguments[0].scrollIntoView()", element)
    time.sleep(0.5)
    element.screenshot(str(path))
    print(f"wrote {path}")


def main(sgd: Path, mo: Path, out: Path, others: list[Path]) -> None:
    b = browser()
    try:
        if others:
            server = open_run(b, sgd, *others)
            shoot(b, "#studies", out / "dashboard-studies.png")
            server.stop()
        server = open_run(b, sgd)
        summary = b.execute_script("return window.boanon.run.summary")
        best = summary["best"][summary["objectives"][0]["name"]]["trial"]
        b.execute_script(f"document.querySelector(\"#trial-table tbody tr[data-trial='{best}']\").click()")
        b.execute_script("window.scrollTo(0, 0)")
        time.sleep(0.5)
        b.save_screenshot(str(out / "dashboard-run.png"))
        print(f"wrote {out / 'dashboard-run.png'}")
        node = b.execute_script(  # a learned relation drawn in the first view, nearest the middle
            "const m = window.boanon.models.nodes, cy = window.boanon.cy;"
            "const away = (n) => Math.abs(cy.getElementById(n).renderedPosition().x - cy.width() / 2);"
            "return Object.keys(m).filter(n => cy.getElementById(n).length"
            " && m[n].label.startsWith('relation') && window.boanon.graph.objectives.indexOf(n) < 0)"
            ".sort((a, b) => away(a) - away(b))[0]")
        b.execute_script(f"window.boanon.cy.getElementById('{node}').emit('tap')")
        shoot(b, "#graph", out / "dashboard-graph.png")
        shoot(b, "#space", out / "dashboard-space.png")
        shoot(b, "#models", out / "dashboard-models.png")
        shoot(b, "#effects", out / "dashboard-effects.png")
        server.stop()
        server = open_run(b, mo)
        shoot(b, "#pareto", out / "dashboard-pareto.png")
        server.stop()
    finally:
        b.quit()


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), [Path(a) for a in sys.argv[4:]])
