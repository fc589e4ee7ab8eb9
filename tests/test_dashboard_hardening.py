"""The dashboard under hostile files and heavy load: a runner-written HTML file is shown as text
and its script never runs (a real Chromium), every response carries a Content-Security-Policy
and ``nosniff``, and many concurrent clients share one read of the store."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from boanon.dashboard.app import Dashboard, RunView

ROOT = Path(__file__).resolve().parents[1]
EVIL = ("<html><head><title>harmless</title></head><body>"
        "<script>document.title = 'script ran'; window.ran = true;</script></body></html>")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of 3 trials, one of whose directories holds a runner-written ``evil.html``."""
    store = tmp_path_factory.mktemp("hardening") / "syn.db"
    subprocess.run([str(Path(sys.executable).parent / "boanon"), "tune", "examples/synthetic.yaml",
                    "--budget", "3", "--store", str(store)], cwd=ROOT, check=True, capture_output=True,
                   timeout=300)
    (store.with_suffix(".trials") / "t0000" / "evil.html").write_text(EVIL)
    return store


@pytest.fixture(scope="module")
def served(run: Path):
    """A real server (uvicorn in a thread of this process) over the run: (view, URL)."""
    view = RunView(run)
    dashboard = Dashboard(view, port=0)
    url = dashboard.start()
    yield view, url
    dashboard.stop()


def _get(url: str) -> tuple[bytes, dict[str, str]]:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read(), {k.lower(): v for k, v in r.headers.items()}


@pytest.mark.parametrize("path", ["", "api/run", "api/graph", "static/dashboard.js", "logs/t0000/evil.html",
                                  "logs/t0000/config.json"])
def test_every_response_carries_a_policy_and_nosniff(served, path: str) -> None:
    _, url = served
    _, headers = _get(url + path)
    assert headers["x-content-type-options"] == "nosniff"
    assert "default-src" in headers["content-security-policy"]
    if path.startswith("logs/"):
        assert headers["content-type"].startswith("text/plain")
        assert "sandbox" in headers["content-security-policy"]
    else:
        assert "script-src 'self'" in headers["content-security-policy"]


def test_a_runner_written_html_file_is_shown_as_text_and_its_script_never_runs(served) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    _, url = served
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "chromium and chromedriver missing: run scripts/install-system-deps.sh"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        browser.get(url + "logs/t0000/evil.html")
        assert browser.execute_script("return window.ran === true") is False
        assert browser.title != "script ran"
        assert "document.title = 'script ran'" in browser.find_element("tag name", "body").text
    finally:
        browser.quit()


@pytest.fixture(scope="module")
def unlisted(run: Path) -> Path:
    """Trial t0000's directory, given what a runner may leave beside its plain files: a hidden
    lock, a sub-folder's file, a link (inside the run), a core dump over the served size
    (sparse), and a folder beside the trials' that is no trial of the run."""
    trials = run.with_suffix(".trials")
    folder = trials / "t0000"
    (folder / ".lock").write_text("locked")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.txt").write_text("inner")
    (folder / "config-link").symlink_to(folder / "config.json")
    with open(folder / "core", "wb") as f:
        f.truncate(64 * 2**20 + 1)  # docs/dashboard.md: up to 64 MiB is served
    (trials / "stray").mkdir()
    (trials / "stray" / "a.txt").write_text("stray")
    outside = run.parent / "outside"  # a trial's directory replaced by a link out of the run
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    shutil.rmtree(trials / "t0001")
    (trials / "t0001").symlink_to(outside)
    return folder


@pytest.mark.parametrize(("path", "status", "says"), [
    ("logs/t0000/.lock", 403, "'.lock' is not served: it is hidden"),
    ("logs/t0000/%2Elock", 403, "'.lock' is not served: it is hidden"),
    ("logs/t0000/sub/inner.txt", 403, "'sub/inner.txt' is not served: only the files of the trial's own "
                                      "directory are"),
    ("logs/t0000/%2E%2E/t0001/config.json", 403, "'../t0001/config.json' is not served: only the files"),
    ("logs/t0000/sub", 403, "'sub' is not served: it is not a plain file (a link or a folder)"),
    ("logs/t0000/config-link", 403, "'config-link' is not served: it is not a plain file"),
    ("logs/t0000/core", 403, f"'core' is not served: it is {64 * 2**20 + 1} bytes, over the 64 MiB served"),
    ("logs/stray/a.txt", 404, "no trial 'stray' in the run"),
    ("logs/t0000/missing.log", 404, "no file 'missing.log' in the trial's directory"),
    ("logs/t0001/secret.txt", 403, "the directory of trial 't0001' is a link (it may lead out of the run)")])
def test_logs_serves_only_what_the_trial_s_listing_shows(served, unlisted: Path, path: str, status: int,
                                                        says: str) -> None:
    """``/logs`` served any file under the trials' folder asked for by URL: a hidden lock, a
    sub-folder's file, a link, a core dump of any size, a folder that is no trial's. It serves
    what ``/api/trial-files`` lists and refuses the rest saying why (a real server, real files)."""
    _, url = served
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(url + path)
    assert refused.value.code == status
    assert says in refused.value.read().decode()
    assert "sandbox" in refused.value.headers["content-security-policy"]


def test_a_trial_directory_that_links_out_of_the_run_is_neither_listed_nor_served(served, unlisted) -> None:
    """Round 35's static files refused a path whose real location left the trials' folder; the
    listing-based ``/logs`` served a trial directory that is a link to anywhere."""
    _, url = served
    with pytest.raises(urllib.error.HTTPError) as refused:
        _get(url + "api/trial-files?trial=t0001")
    assert refused.value.code == 403
    assert "the directory of trial 't0001' is a link" in refused.value.read().decode()


def test_every_file_the_listing_links_is_served_whole(served, unlisted: Path) -> None:
    import json

    _, url = served
    listed = {f["name"]: f for f in json.loads(_get(url + "api/trial-files?trial=t0000")[0])["files"]}
    assert {".lock", "sub", "config-link"}.isdisjoint(listed)
    assert listed["core"] == {"name": "core", "bytes": (unlisted / "core").stat().st_size, "served": False}
    served_names = [n for n, f in listed.items() if f["served"]]
    assert {"config.json", "evil.html"} <= set(served_names)
    for name in served_names:
        assert _get(url + "logs/t0000/" + name)[0] == (unlisted / name).read_bytes()


def test_concurrent_clients_share_one_read_of_the_store(served) -> None:
    """50 clients at once, the store unchanged: the trials table is read once, not 50 times
    (each read is the slow part at hundreds of trials)."""
    view, url = served
    _get(url + "api/run")  # warm: the first read after start-up
    reads: list[str] = []
    view.store._conn.set_trace_callback(  # a real count of the SQL the store runs
        lambda sql: reads.append(sql) if sql.startswith("SELECT * FROM trials") else None)
    try:
        with sqlite3.connect(view.store.path) as writer:  # another process's commit: a new version
            writer.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', '1')")
        bodies: list[bytes] = []
        errors: list[BaseException] = []
        barrier = threading.Barrier(50)

        def client() -> None:
            try:
                barrier.wait()
                bodies.append(_get(url + "api/run")[0])
            except BaseException as exc:  # noqa: BLE001  (reported below)
                errors.append(exc)
        threads = [threading.Thread(target=client) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        view.store._conn.set_trace_callback(None)
    assert not errors, errors[0]
    assert len(bodies) == 50 and len(set(bodies)) == 1
    assert len(reads) == 1, f"{len(reads)} reads of the trials table for 50 concurrent requests"


def test_concurrent_clients_share_one_encoding_of_the_run(served, monkeypatch) -> None:
    """Encoding a few hundred trials as JSON, not the read, is what 200 clients waited on: 50
    requests for an unchanged store encode the run view once (each used to encode it again)."""
    from boanon.dashboard import app as dashboard_app

    view, url = served
    encoded: list[int] = []
    real = dashboard_app.dump_json
    monkeypatch.setattr(dashboard_app, "dump_json", lambda value: encoded.append(1) or real(value))
    with sqlite3.connect(view.store.path) as writer:  # a new version: nothing cached for it yet
        writer.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', '2')")
    barrier = threading.Barrier(50)
    bodies: list[bytes] = []

    def client() -> None:
        barrier.wait()
        bodies.append(_get(url + "api/run")[0])
    threads = [threading.Thread(target=client) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(bodies) == 50 and len(set(bodies)) == 1
    assert len(encoded) == 1, f"the run view was encoded {len(encoded)} times for 50 requests"


def test_stopping_the_dashboard_waits_for_a_model_computation_under_way(run: Path) -> None:
    """``boanon tune --dashboard`` stopped by SIGTERM exited with SIGABRT now and then: the
    process finalised while the models' daemon thread was still fitting. ``stop`` now waits."""
    import time

    view = RunView(run, min_model_interval_s=0.0)
    dashboard = Dashboard(view, port=0)
    dashboard.start()
    view.models.get("slow", lambda: time.sleep(1.5) or {"done": True})
    dashboard.stop()
    assert not any(t.name == "boanon-dashboard-models" and t.is_alive() for t in threading.enumerate())
    assert view.models.get("slow", dict)["done"] is True  # it finished, not abandoned
