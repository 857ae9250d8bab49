"""The viewer in a real headless browser: Debian's chromium driven by Playwright.

The server runs with uvicorn on a free loopback port in a background thread; "agents" write
through the core on a second connection to the same database, as another process would.
Screenshots land in ``test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from colony_tasks.domain import chains, sessions
from colony_tasks.store import Store
from colony_tasks.usecases import actions
from colony_tasks.viewer import create_app
from colony_tasks.viewer.server import allowed_hosts, bind, start_in_thread, url_for
from tests.support import TESTS, regionwork
from tests.support.gitutil import git, make_repo
from tests.support.helpers import join

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(
        f"{CHROMIUM} is not installed (apt-get install -y chromium); CI installs it.",
        allow_module_level=True,
    )
playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
expect = playwright_api.expect

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = TESTS / "test-artifacts"
TOKEN = "browser-test-token-0123456789"
WAIT_MS = 8000

XSS_CORPUS = [
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 1">',
    "<img src=x onerror=window.__xss=1>",
    '"><svg onload="window.__xss = 1">',
    "'><svg/onload=window.__xss=1>",
    '<a href="javascript:window.__xss=1">click me</a>',
    "javascript:window.__xss=1",
    '<iframe src="javascript:window.__xss=1"></iframe>',
    "<body onload=window.__xss=1>",
    '<details open ontoggle="window.__xss=1">',
    "<style>@import 'x';</style><div style=\"background:url(javascript:window.__xss=1)\">",
    "</textarea><script>window.__xss=1</script>",
    "</li></ol><script>alert(1)</script>",
    "{{ 7*7 }} {% raw %}<b>jinja</b>{% endraw %}",
    '<math><mi xlink:href="javascript:window.__xss=1">x</mi></math>',
    "<input autofocus onfocus=window.__xss=1>",
]


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def served(tmp_path: Path, repo: Path):
    """A populated store, the viewer serving it on a free port, and an agents' connection."""
    db = tmp_path / "colony.db"
    agents = Store(db)
    world = populate(agents, repo)
    viewer_store = Store(db)
    app = create_app(
        viewer_store,
        TOKEN,
        human_name="alice",
        cwd=str(repo),
        allowed_hosts=allowed_hosts("127.0.0.1"),
    )
    sock = bind("127.0.0.1", 0)
    server, runner = start_in_thread(app, sock)
    base = url_for(sock).rstrip("/")
    yield {"base": base, "agents": agents, **world}
    server.should_exit = True
    runner.join(timeout=10)
    sock.close()
    viewer_store.close()
    agents.close()


@pytest.fixture
def page(browser, served):
    context = browser.new_context(viewport={"width": 1360, "height": 1000})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    opened.dialogs = dialogs
    yield opened
    context.close()


def populate(store: Store, repo: Path) -> dict:
    (repo / "src").mkdir(exist_ok=True)
    a = join(store, "sess-a", "claude", repo)
    b = join(store, "sess-b", "codex", repo)
    alice = sessions.human_session(store, "alice", str(repo))
    actions.post(store, "sess-a", "Starting on the retry policy in src/retry.py.")
    question = actions.ask(store, "sess-b", "Which backoff should we use?", to=a.session.handle)
    actions.answer(store, "sess-a", question.id, "Exponential with jitter, capped at 30 s.")
    actions.record_decision(
        store, "sess-b", "Use httpx for the HTTP client", rationale="async support and timeouts"
    )
    actions.report_blocker(
        store, "sess-b", "Staging is down; integration tests fail.", waiting_on="ops"
    )
    handoff = actions.hand_off(
        store,
        "sess-a",
        "Docs need a pass after the API change",
        to=b.session.handle,
        files=["docs/guide.md"],
    )
    actions.accept_handoff(store, "sess-b", handoff.id)
    actions.claim(store, "sess-a", ["src/retry.py"], note="retry policy")
    actions.claim(store, "sess-b", ["src/**"], note="refactor")
    actions.ask(store, "sess-a", "Who owns the staging config?", to="any")
    web = make_repo(repo.parent / "webapp")
    git(web, "checkout", "-q", "-b", "feature/login")
    c = join(store, "sess-c", "claude", web)
    actions.post(store, "sess-c", "Login form wired to the new session API.")
    actions.hand_off(store, "sess-c", "CSS polish for the login page is yours if you want it")
    actions.claim(store, "sess-c", ["web/login/**"], note="login page")
    chain = chains.create(store, alice, "API review")
    chains.add(store, alice, chain.id, b.session.handle, "Review the API shape in src/api.py")
    actions.chain_say(store, "sess-b", chain.id, "Looks fine; rename fetch() to get().")
    chains.add(store, alice, chain.id, a.session.handle, "Do you agree with the rename?")
    return {"task_id": a.task.id, "chain_id": chain.id, "a": a, "b": b, "c": c}


def open_page(page, served, path: str) -> None:
    page.goto(f"{served['base']}{path}{'&' if '?' in path else '?'}token={TOKEN}")
    expect(page.locator(".topbar")).to_be_visible()


def test_another_local_server_the_browser_visits_receives_nothing_that_grants_access(page, served):
    """Cookies ignore ports: a cookie of 127.0.0.1 goes to every local server. The viewer sets
    none; its pages live under the run's secret prefix, which goes only to the viewer."""
    import http.server
    import threading

    received: list[dict[str, str]] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            received.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(b"<p>other</p>")

        def log_message(self, *args: object) -> None:
            pass

    other = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        open_page(page, served, f"/tasks/{served['task_id']}")
        assert f"/{TOKEN}/tasks/" in page.url and "token=" not in page.url
        assert page.context.cookies() == []
        page.click("a.brand")  # a link of the page keeps the prefix
        assert page.url.endswith(f"/{TOKEN}/")
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        assert received and "cookie" not in received[0]
        assert TOKEN not in repr(received)
    finally:
        other.shutdown()
        other.server_close()


def test_thread_page_shows_a_message_posted_after_it_loaded(page, served):
    open_page(page, served, f"/tasks/{served['task_id']}")
    assert "token=" not in page.url
    actions.post(served["agents"], "sess-b", "Posted after the page loaded: tests are green")
    expect(page.locator("#thread")).to_contain_text("tests are green", timeout=WAIT_MS)
    expect(page.locator("#live-dot.ok")).to_be_attached(timeout=WAIT_MS)


def test_human_post_through_the_form_appears_in_the_thread(page, served):
    open_page(page, served, f"/tasks/{served['task_id']}")
    page.fill("#compose-form textarea[name=text]", "Posted by a human from the page")
    page.select_option("#compose-form select[name=kind]", "decision")
    page.click("#compose-form button[type=submit]")
    item = page.locator("#thread .msg-decision", has_text="Posted by a human from the page")
    expect(item).to_be_visible(timeout=WAIT_MS)
    expect(item).to_contain_text("alice")


def test_chain_post_out_of_turn_shows_the_core_sentence(page, served):
    open_page(page, served, f"/tasks/{served['chain_id']}")
    expect(page.locator("#turn-holder")).to_have_text(served["a"].session.handle)
    page.fill("#compose-form textarea[name=text]", "Me first")
    page.click("#compose-form button[type=submit]")
    expect(page.locator("#post-error")).to_contain_text("only the turn holder may post")


def test_human_takes_a_chain_turn_once_it_comes_back_to_them(page, served):
    chain_id = served["chain_id"]
    open_page(page, served, f"/tasks/{chain_id}")
    expect(page.locator("#turn-hint")).to_contain_text("only the turn holder may post")
    actions.chain_say(served["agents"], "sess-a", chain_id, "Agreed: rename it to get().")
    expect(page.locator("#turn-hint")).to_contain_text("It is your turn", timeout=WAIT_MS)
    expect(page.locator("#turn-holder")).to_have_text("alice")
    page.fill("#compose-form textarea[name=text]", "Rename approved; closing soon.")
    page.click("#compose-form button[type=submit]")
    item = page.locator("#thread .msg", has_text="Rename approved; closing soon.")
    expect(item).to_contain_text("turn 6", timeout=WAIT_MS)


def test_lanes_page_shows_new_open_items_without_reload(page, served):
    open_page(page, served, "/")
    actions.ask(served["agents"], "sess-b", "Can someone review the pool sizes?", to="any")
    expect(page.locator("#live")).to_contain_text("review the pool sizes", timeout=WAIT_MS)


def test_conflicts_page_shows_a_new_overlap_without_reload(page, served, repo, tmp_path, home):
    agents = served["agents"]
    main, feature = regionwork.two_trees(repo, tmp_path)
    regionwork.start(agents, main, "s1", "claude")
    regionwork.start(agents, feature, "s2", "codex")
    regionwork.edit(
        agents, "s1", "claude", main, "core.py", "    step_3 = 3\n", "    step_3 = 33\n"
    )
    open_page(page, served, "/conflicts")
    expect(page.locator("#live")).to_contain_text("No two live sessions changed the same file")
    regionwork.edit(
        agents, "s2", "codex", feature, "core.py", "    step_4 = 4\n", "    step_4 = 44\n"
    )
    row = page.locator("#live tbody.conflict")
    expect(row).to_contain_text("overlap: git will conflict", timeout=WAIT_MS)
    expect(row).to_contain_text("L7-8 (in def retry)")


def test_xss_corpus_never_executes(page, served):
    agents, task_id = served["agents"], served["task_id"]
    before = [actions.post(agents, "sess-a", text).id for text in XSS_CORPUS[:8]]
    actions.claim(agents, "sess-b", ['src/"><img src=x onerror=window.__xss=1>.py'])
    open_page(page, served, f"/tasks/{task_id}")
    after = [actions.post(agents, "sess-b", text).id for text in XSS_CORPUS[8:]]
    expect(page.locator(f"#m{after[-1]}")).to_be_attached(timeout=WAIT_MS)  # the live path
    for obs_id, text in zip(before + after, XSS_CORPUS, strict=True):
        assert page.locator(f"#m{obs_id} .text").inner_text() == text
    for path in ("/", "/claims", "/sessions", "/search?q=script%20onerror%20svg"):
        open_page(page, served, path)
        page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.dialogs == []


def test_screenshots_of_the_thread_chain_lanes_and_claims(page, served):
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        "viewer-thread.png": f"/tasks/{served['task_id']}",
        "viewer-chain.png": f"/tasks/{served['chain_id']}",
        "viewer-lanes.png": "/",
        "viewer-claims.png": "/claims",
        "viewer-sessions.png": "/sessions",
        "viewer-search.png": "/search?q=retry%20backoff",
    }
    for name, path in shots.items():
        open_page(page, served, path)
        if page.locator("[data-live-src]").count():
            expect(page.locator("#live-dot.ok")).to_be_attached(timeout=WAIT_MS)
        page.screenshot(path=str(ARTIFACTS / name), full_page=True)
        assert (ARTIFACTS / name).stat().st_size > 10_000


def test_participants_card_text_stays_inside_the_card_at_1400_px(browser, served):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        opened = context.new_page()
        for task in (served["task_id"], served["chain_id"]):
            open_page(opened, served, f"/tasks/{task}")
            card = opened.locator("section.side-block", has_text="Participants").first
            expect(card).to_be_visible()
            # One look at the card: what overflows, and where it is (the live page may replace
            # the card right after, so the picture is cut from the page, not the element).
            found = card.evaluate(
                """card => {
                    const box = card.getBoundingClientRect();
                    const out = [];
                    for (const el of card.querySelectorAll('*')) {
                        const r = el.getBoundingClientRect();
                        if (r.width === 0) continue;
                        if (r.right > box.right + 0.5 || r.left < box.left - 0.5
                            || el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
                            out.push(el.tagName + '.' + el.className + ': ' + el.textContent.trim().slice(0, 40));
                    }
                    const clip = {x: box.left + window.scrollX, y: box.top + window.scrollY,
                                  width: box.width, height: box.height};
                    return {out, clip};
                }"""
            )
            ARTIFACTS.mkdir(exist_ok=True)
            opened.screenshot(
                path=str(ARTIFACTS / f"viewer-participants-{task}.png"),
                clip=found["clip"],
                full_page=True,
            )
            assert found["out"] == [], found["out"]
    finally:
        context.close()
