"""The web viewer in-process: pages, JSON endpoints, the token guard, escaping, chain turns."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from colony_tasks.domain import chains, presence, sessions
from colony_tasks.search import semantic
from colony_tasks.usecases import actions
from colony_tasks.viewer import create_app
from colony_tasks.viewer.app import STATIC
from colony_tasks.viewer.security import CSP, host_of
from colony_tasks.viewer.server import allowed_hosts, is_loopback, warn_if_exposed
from tests.support.helpers import join, snapshot

TOKEN = "test-token-0123456789"
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=1">'


@pytest.fixture
def world(store, repo: Path, clock):
    """Two agents and a human on one lane, with every kind of thread item, and a chain."""
    (repo / "src").mkdir()
    a = join(store, "sess-a", "claude", repo)
    b = join(store, "sess-b", "codex", repo)
    alice = sessions.human_session(store, "alice", str(repo))
    task_id = a.task.id
    actions.post(store, "sess-a", "Starting on the retry policy")
    question = actions.ask(store, "sess-b", "Which backoff should we use?", to=a.session.handle)
    actions.answer(store, "sess-a", question.id, "Exponential, capped at 30s")
    actions.ask(store, "sess-a", "Who owns the staging config?")
    actions.record_decision(store, "sess-b", "Use httpx for the client", rationale="async support")
    actions.report_blocker(store, "sess-b", "staging is down", waiting_on="ops")
    handoff = actions.hand_off(
        store, "sess-a", "Take over the docs", to=b.session.handle, files=["docs/guide.md"]
    )
    actions.claim(store, "sess-a", ["src/retry.py"])
    actions.claim(store, "sess-b", ["src/**"])
    actions.accept_handoff(store, "sess-b", handoff.id)
    actions.hand_off(store, "sess-b", "Docs need a pass", to="any")
    chain = chains.create(store, alice, "API review")
    chains.add(store, alice, chain.id, b.session.handle, "Review the API shape")
    clock.advance(120)
    store.refresh_session("sess-a")
    return {"a": a, "b": b, "alice": alice, "task_id": task_id, "chain_id": chain.id}


@pytest.fixture
def anon(store, repo: Path):
    """A client that never had the token."""
    app = create_app(store, TOKEN, human_name="alice", cwd=str(repo))
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def client(store, repo: Path):
    """A browser that opened the printed URL: every page it follows stays under the run's
    prefix, ``/<token>/`` (its paths here are relative to it)."""
    app = create_app(store, TOKEN, human_name="alice", cwd=str(repo))
    with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as test_client:
        yield test_client


@pytest.fixture
def authed(client):
    """The same browser, having followed the printed URL (no cookie is set)."""
    response = client.get("/", follow_redirects=False)
    assert response.status_code == 200 and "set-cookie" not in response.headers
    return client


def text_of(response) -> str:
    """What a reader sees: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


# -- pages ------------------------------------------------------------------------------------


def test_lanes_page_lists_open_tasks_with_participants_open_items_and_chains(client, world):
    page = client.get("/")
    assert page.status_code == 200
    shown = text_of(page)
    assert "proj@main" in shown and "proj" in shown and "main" in shown
    assert world["a"].session.handle in shown and world["b"].session.handle in shown
    assert "Who owns the staging config?" in shown  # an open question
    assert "staging is down" in shown  # an open blocker
    assert "Docs need a pass" in shown  # a pending handoff
    assert "Which backoff should we use?" not in shown  # answered: no longer open
    assert "API review" in shown and "alice" in shown  # the chain and its coordinator
    assert re.search(r'class="turn-pill">\s*' + world["b"].session.handle, page.text)


def test_lanes_page_shows_online_idle_and_ended_participants(client, world, store, clock):
    clock.advance(10 * 60)
    store.refresh_session("sess-a")
    sessions.end_session(store, store.get_session("sess-b"))
    page = client.get("/partials/lanes").text
    assert "presence-online" in page and "presence-ended" in page
    clock.advance(presence.QUIET_AFTER + 60)  # the core's rule: idle when its claims go stale
    assert "presence-online" not in client.get("/partials/lanes").text


def test_thread_page_styles_each_kind_and_pairs_answers_with_questions(client, world):
    page = client.get(f"/tasks/{world['task_id']}")
    assert page.status_code == 200
    shown = text_of(page)
    for kind in ("question", "answer", "decision", "blocker"):
        assert f"msg msg-{kind}" in page.text
    assert "answers #" in shown and "Exponential, capped at 30s" in shown
    assert "answered by " + world["a"].session.handle in shown
    assert "handoff-bar status-accepted" in page.text
    assert "accepted by " + world["b"].session.handle in shown
    assert "handoff-bar status-pending" in page.text and "→ anyone" in shown


def test_chain_thread_shows_turn_bars_numbers_and_whose_turn(client, world):
    page = client.get(f"/tasks/{world['chain_id']}")
    shown = text_of(page)
    assert page.text.count("turn-bar") >= 2
    assert "turn 1" in shown and "turn 2" in shown
    assert f"alice → {world['b'].session.handle} added and given the turn" in shown
    assert f"whose turn: {world['b'].session.handle}" in shown
    assert "coordinator" in shown and "Participants" in shown


def test_activity_toggle_shows_prompts_edits_and_commands(client, world, store):
    store.add_observation(
        "edit", "src/retry.py (Edit)", session_id="sess-a", task_id=world["task_id"]
    )
    assert "src/retry.py (Edit)" not in client.get(f"/tasks/{world['task_id']}").text
    assert "src/retry.py (Edit)" in client.get(f"/tasks/{world['task_id']}?activity=1").text


def test_claims_page_shows_state_age_and_highlights_overlapping_claims(client, world, store, clock):
    page = client.get("/claims")
    shown = text_of(page)
    assert "src/retry.py" in shown and "src/**" in shown
    assert page.text.count('class="state-live conflict"') == 2
    assert "2 in conflict" in shown
    clock.advance(31 * 60)
    stale = client.get("/claims").text
    assert "state-stale" in stale


def test_claims_api_reports_who_each_claim_overlaps(client, world):
    repos = client.get("/api/claims").json()["repositories"]
    by_pattern = {c["pattern"]: c for c in repos[0]["claims"]}
    assert [o["pattern"] for o in by_pattern["src/**"]["conflicts_with"]] == ["src/retry.py"]
    assert by_pattern["src/retry.py"]["state"] == "live"


def test_sessions_page_lists_presence_lane_and_open_tasks(client, world):
    page = client.get("/sessions")
    shown = text_of(page)
    assert "alice" in shown and world["a"].session.handle in shown
    assert "proj@main" in shown and "API review" in shown
    data = client.get("/api/sessions").json()
    assert {s["handle"]: s["presence"] for s in data["sessions"]}[world["a"].session.handle] == (
        "online"
    )


def test_search_page_and_api_link_hits_into_threads(client, world):
    page = client.get("/search", params={"q": "backoff"})
    assert page.status_code == 200
    assert f'href="/tasks/{world["task_id"]}#m' in page.text
    assert "<mark>" in page.text
    hits = client.get("/api/search", params={"q": 'retry "policy'}).json()["hits"]
    assert hits and hits[0]["url"].startswith(f"/tasks/{world['task_id']}")
    assert client.get("/api/search", params={"q": ""}).json()["hits"] == []


def test_search_is_hybrid_like_the_cli_once_vectors_exist(client, world, store, home):
    actions.post(store, "sess-a", "the viewer stylesheet breaks on narrow screens")
    query = {"q": "css layout on mobile phones"}
    assert client.get("/api/search", params=query).json()["hits"] == []  # keywords only
    semantic.backfill(store, semantic.configured_embedder())
    hits = client.get("/api/search", params=query).json()["hits"]
    assert hits[0]["snippet"] == "the viewer stylesheet breaks on narrow screens"
    assert "narrow screens" in client.get("/search", params=query).text


def test_unknown_task_is_a_404_with_the_core_sentence(client, world):
    page = client.get("/tasks/999")
    assert page.status_code == 404 and "Task 999 does not exist" in page.text
    api = client.get("/api/tasks/999")
    assert api.status_code == 404 and "Task 999 does not exist" in api.json()["error"]


# -- JSON endpoints ---------------------------------------------------------------------------


def test_tasks_api_lists_tasks_and_chains_with_handles(client, world):
    data = client.get("/api/tasks").json()
    assert [t["title"] for t in data["tasks"]] == ["proj@main"]
    chain = data["chains"][0]
    assert chain["coordinator_handle"] == "alice"
    assert chain["turn_holder_handle"] == world["b"].session.handle


def test_task_api_returns_the_thread_and_open_state(client, world):
    data = client.get(f"/api/tasks/{world['task_id']}").json()
    assert data["task"]["id"] == world["task_id"]
    assert [q["text"] for q in data["questions"]] == ["Who owns the staging config?"]
    kinds = [item["kind"] for item in data["items"]]
    assert "decision" in kinds and "accept" in kinds
    handoff = next(i for i in data["items"] if i["kind"] == "handoff" and i["status"] == "accepted")
    assert handoff["resolved_by"] == world["b"].session.handle


def test_items_api_returns_only_items_after_the_given_id(client, world, store):
    last = client.get(f"/api/tasks/{world['task_id']}").json()["last_id"]
    assert client.get(f"/api/tasks/{world['task_id']}/items?after={last}").json()["items"] == []
    posted = actions.post(store, "sess-b", "tests are green")
    data = client.get(f"/api/tasks/{world['task_id']}/items?after={last}").json()
    assert [i["id"] for i in data["items"]] == [posted.id]
    assert data["last_id"] == posted.id


def test_live_endpoint_renders_new_items_and_the_sidebar(client, world, store):
    last = client.get(f"/api/tasks/{world['task_id']}").json()["last_id"]
    actions.post(store, "sess-b", "live <b>update</b>")
    data = client.get(f"/tasks/{world['task_id']}/live?after={last}").json()
    assert "live &lt;b&gt;update&lt;/b&gt;" in data["items_html"]
    assert "Participants" in data["side_html"] and data["last_id"] > last


# -- posting ----------------------------------------------------------------------------------


def test_a_page_under_the_prefix_fills_the_forms_with_the_token(authed, world):
    page = authed.get(f"/tasks/{world['task_id']}")
    assert f'name="token" value="{TOKEN}"' in page.text
    assert "posting as" in page.text


def _concrete(path: str, world: dict) -> str:
    return path.replace("{task_id:int}", str(world["task_id"]))


def test_every_route_refuses_a_read_without_the_token(anon, world, store):
    before = snapshot(store)
    gets = [
        _concrete(route.path, world)
        for route in anon.app.routes
        if "GET" in (getattr(route, "methods", None) or ())
    ]
    assert len(gets) >= 14  # every page, partial and API read
    static = [f"/static/{name.name}" for name in STATIC.iterdir()]
    for path in [*gets, *static, "/nonexistent", "/tasks/1/live?after=0"]:
        for headers in ({}, {"X-Colony-Token": "wrong"}, {"Cookie": "colony-viewer-default=x"}):
            response = anon.get(path, headers=headers, follow_redirects=False)
            assert response.status_code == 403, path
            assert "token" in response.text and "sess-a" not in response.text
        wrong = anon.get(f"{path}{'&' if '?' in path else '?'}token=wrong", follow_redirects=False)
        assert wrong.status_code == 403, path
    assert anon.get("/api/tasks").json()["error"].startswith("This request needs")
    assert snapshot(store) == before


def test_a_query_token_leads_under_the_prefix_and_no_cookie_grants_anything(anon, world):
    opened = anon.get(f"/tasks/{world['task_id']}?token={TOKEN}&activity=1")
    assert opened.status_code == 200 and "token=" not in str(opened.url)
    assert str(opened.url).startswith(f"http://testserver/{TOKEN}/tasks/")
    assert "activity=1" in str(opened.url) and "set-cookie" not in opened.headers
    # every link and form of the page stays under the prefix
    links = re.findall(r'(?:href|action|src|data-live-src)="([^"#]+)', opened.text)
    assert links and all(link.startswith(f"/{TOKEN}/") for link in links), links
    for path in ("/", "/api/tasks", "/claims", f"/static/{next(STATIC.iterdir()).name}"):
        assert anon.get(path).status_code == 403, path  # no cookie was left behind
        assert anon.get(f"/{TOKEN}{path}").status_code == 200, path
    assert anon.get(f"/{TOKEN}", follow_redirects=False).headers["location"] == f"/{TOKEN}/"
    # a prefix that is not the token, or only starts like it, is refused
    for wrong in (f"/{TOKEN[:-1]}/", f"/{TOKEN}x/", f"/x{TOKEN}/", f"/static/{TOKEN}/"):
        assert anon.get(wrong, follow_redirects=False).status_code == 403, wrong


def test_the_api_accepts_the_token_header_or_query(anon, world):
    assert anon.get("/api/tasks", headers={"X-Colony-Token": TOKEN}).status_code == 200
    assert anon.get(f"/api/tasks?token={TOKEN}").status_code == 200


def test_human_post_through_the_form_appears_in_the_thread(authed, world, store):
    response = authed.post(
        f"/tasks/{world['task_id']}/post",
        data={"token": TOKEN, "text": "Looks good to me", "kind": "decision"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    posted_id = int(response.headers["location"].rsplit("#m", 1)[1])
    obs = store.get_observation(posted_id)
    assert (obs.kind, obs.text, obs.handle) == ("decision", "Looks good to me", "alice")
    assert "Looks good to me" in authed.get(f"/tasks/{world['task_id']}").text


def test_a_refused_act_leaves_no_viewer_human_behind(store, repo: Path, world):
    app = create_app(store, TOKEN, human_name="zed", cwd=str(repo))
    with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as zed:
        refused = zed.post(
            f"/tasks/{world['task_id']}/post",
            data={"token": TOKEN, "text": "Yes", "kind": "answer", "reply_to": "99999"},
            follow_redirects=False,
        )
        assert refused.status_code == 404
        assert store.get_session("human:zed") is None
        done = zed.post(
            f"/tasks/{world['task_id']}/post",
            data={"token": TOKEN, "text": "hello", "kind": "note"},
            follow_redirects=False,
        )
        assert done.status_code == 303 and store.get_session("human:zed") is not None


def test_human_answers_a_question_from_the_reply_link(authed, world, store):
    question = actions.ask(store, "sess-a", "Ship it today?", to="alice")
    page = authed.get(f"/tasks/{world['task_id']}?reply={question.id}")
    assert f'name="reply_to" value="{question.id}"' in page.text
    assert '<option value="answer" selected>' in page.text
    authed.post(
        f"/tasks/{world['task_id']}/post",
        data={"token": TOKEN, "text": "Yes", "kind": "answer", "reply_to": str(question.id)},
    )
    assert store.resolution(question.id)[0] == "answered"


def test_answering_an_already_answered_question_keeps_the_text_as_a_note(authed, world, store):
    question = actions.ask(store, "sess-a", "Ship it today?", to="any")
    actions.answer(store, "sess-b", question.id, "Yes")
    page = authed.post(
        f"/tasks/{world['task_id']}/post",
        data={"token": TOKEN, "text": "Yes too", "kind": "answer", "reply_to": str(question.id)},
    )
    assert page.status_code == 200
    assert f"already answered by {world['b'].session.handle}" in text_of(page)
    assert store.timeline(world["task_id"], limit=1)[0].kind == "note"


@pytest.mark.parametrize(
    ("headers", "data"),
    [
        ({}, {"text": "sneaky"}),
        ({}, {"text": "sneaky", "token": "wrong"}),
        ({"X-Colony-Token": "wrong"}, {"text": "sneaky"}),
    ],
)
def test_post_without_the_token_is_rejected_and_changes_nothing(
    client, world, store, headers, data
):
    before = snapshot(store)
    for path in (f"/tasks/{world['task_id']}/post", f"/tasks/{world['chain_id']}/pass"):
        response = client.post(path, data=data, headers=headers)
        assert response.status_code == 403
        assert "token" in response.text
    response = client.post(
        f"/api/tasks/{world['task_id']}/messages", json={"text": "sneaky"}, headers=headers
    )
    assert response.status_code == 403
    assert snapshot(store) == before


def test_every_state_changing_route_demands_the_token(client, world, store):
    before = snapshot(store)
    posts = [
        route.path.replace("{task_id:int}", str(world["task_id"]))
        for route in client.app.routes
        if "POST" in (getattr(route, "methods", None) or ())
    ]
    assert len(posts) == 7  # post, pass, plan, withdraw, resolve; the API's messages and plan
    for path in posts:
        assert client.post(path, data={"text": "x"}).status_code == 403
    assert snapshot(store) == before


def test_chain_post_out_of_turn_is_rejected_with_the_core_sentence(authed, world, store):
    before = store.max_observation_id(world["chain_id"])
    response = authed.post(
        f"/tasks/{world['chain_id']}/post", data={"token": TOKEN, "text": "Me first"}
    )
    holder = world["b"].session.handle
    sentence = f"It is {holder}'s turn in chain {world['chain_id']}; only the turn holder may post."
    assert response.status_code == 403
    assert sentence in text_of(response)
    assert "Me first" in text_of(response)  # the draft is kept
    assert store.max_observation_id(world["chain_id"]) == before


def test_chain_turn_holder_human_takes_a_turn_and_passes_it(authed, world, store):
    chain_id, codex = world["chain_id"], world["b"].session.handle
    actions.chain_say(
        store, "sess-b", chain_id, "The API shape is fine"
    )  # the turn returns to alice
    response = authed.post(
        f"/tasks/{chain_id}/post", data={"token": TOKEN, "text": "Thanks, merging"}
    )
    assert response.status_code == 200  # redirected to the thread
    assert "Thanks, merging" in response.text
    authed.post(
        f"/tasks/{chain_id}/pass", data={"token": TOKEN, "to": codex, "prompt": "Write the docs"}
    )
    assert store.get_task(chain_id).turn_holder == "sess-b"


def test_json_post_with_the_header_token_posts_through_the_core(client, world, store):
    response = client.post(
        f"/api/tasks/{world['task_id']}/messages",
        json={"text": "From a script", "kind": "note"},
        headers={"X-Colony-Token": TOKEN},
    )
    assert response.status_code == 201
    assert store.get_observation(response.json()["id"]).text == "From a script"
    refused = client.post(
        f"/api/tasks/{world['chain_id']}/messages",
        json={"text": "out of turn"},
        headers={"X-Colony-Token": TOKEN},
    )
    assert refused.status_code == 403 and "only the turn holder may post" in refused.json()["error"]


# -- escaping and headers ---------------------------------------------------------------------


def test_message_text_is_escaped_everywhere_it_is_rendered(client, world, store):
    actions.post(store, "sess-a", XSS)
    actions.ask(store, "sess-b", XSS, to="any")
    actions.claim(store, "sess-a", ["src/<img src=x onerror=alert(1)>.py"])
    for path in ("/", f"/tasks/{world['task_id']}", "/claims", "/sessions"):
        page = client.get(path).text
        assert "<script>window" not in page and "<img src=x" not in page, path
    escaped = client.get(f"/tasks/{world['task_id']}").text
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in escaped
    assert "<script>window" not in client.get("/search", params={"q": "xss script"}).text


def test_every_response_carries_a_strict_content_security_policy(client, world):
    for path in ("/", f"/tasks/{world['task_id']}", "/api/tasks", "/static/viewer.js"):
        headers = client.get(path).headers
        assert headers["content-security-policy"] == CSP
        assert headers["x-content-type-options"] == "nosniff"
    assert "unsafe-inline" not in CSP and "script-src 'self'" in CSP


def test_pages_contain_no_inline_script_or_style(client, world):
    pages = ("/", f"/tasks/{world['task_id']}", "/claims", "/conflicts", "/sessions")
    for path in (*pages, "/search?q=retry"):
        page = client.get(path).text
        assert re.findall(r"<script(?![^>]*\bsrc=)", page) == [], path
        assert " style=" not in page and "<style" not in page, path
        assert not re.search(r"<[^>]+\son[a-z]+\s*=", page), path


def test_loopback_binding_rejects_foreign_host_headers(store, repo, world):
    app = create_app(store, TOKEN, cwd=str(repo), allowed_hosts=allowed_hosts("127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1:37777") as local:
        token = {"X-Colony-Token": TOKEN}
        assert local.get("/", headers=token).status_code == 200
        assert local.get("/", headers={**token, "host": "evil.example:37777"}).status_code == 421


def test_host_parsing_and_loopback_detection():
    assert host_of("[::1]:8000") == "::1" and host_of("localhost:1") == "localhost"
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and allowed_hosts("0.0.0.0") is None


def test_binding_beyond_loopback_warns_loudly():
    said: list[str] = []
    assert warn_if_exposed("0.0.0.0", said.append)
    assert "WARNING" in said[0] and "0.0.0.0" in said[0]
    assert not warn_if_exposed("127.0.0.1", said.append) and len(said) == 1


def test_create_app_refuses_an_empty_token(store):
    with pytest.raises(ValueError):
        create_app(store, "")


def test_viewer_command_is_registered_with_its_options():
    from click.testing import CliRunner

    from colony_tasks.cli import cli

    out = CliRunner().invoke(cli, ["viewer", "--help"]).output
    assert "--host" in out and "--port" in out and "--open" in out and "37777" in out


def test_the_human_withdraws_their_own_question_from_its_card(authed, world, store):
    mine = actions.ask(store, "human:alice", "Still needed?", to=world["a"].session.handle)
    theirs = actions.ask(store, "sess-a", "Which port?", to="alice")
    page = authed.get(f"/tasks/{world['task_id']}").text
    assert f'name="item_id" value="{mine.id}"' in page
    assert f'name="item_id" value="{theirs.id}"' not in page  # only its author may withdraw
    response = authed.post(
        f"/tasks/{world['task_id']}/withdraw",
        data={"token": TOKEN, "item_id": str(mine.id)},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert store.get_observation(mine.id).status == "withdrawn"
    refused = authed.post(
        f"/tasks/{world['task_id']}/withdraw", data={"token": TOKEN, "item_id": str(theirs.id)}
    )
    assert refused.status_code == 403 and "Only its author can withdraw" in text_of(refused)
    assert store.get_observation(theirs.id).status == "pending"


def test_the_human_resolves_a_blocker_from_its_card(authed, world, store):
    blocker = actions.report_blocker(store, "sess-b", "CI is red")
    page = authed.get(f"/tasks/{world['task_id']}").text
    assert f'name="blocker_id" value="{blocker.id}"' in page
    response = authed.post(
        f"/tasks/{world['task_id']}/resolve",
        data={"token": TOKEN, "blocker_id": str(blocker.id), "note": "fixed the flaky test"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert store.get_observation(blocker.id).status == "resolved"
    note = store.get_observation(int(response.headers["location"].rsplit("#m", 1)[1]))
    assert (note.text, note.handle, note.in_reply_to) == (
        "fixed the flaky test",
        "alice",
        blocker.id,
    )
    again = authed.post(
        f"/tasks/{world['task_id']}/resolve", data={"token": TOKEN, "blocker_id": str(blocker.id)}
    )
    assert again.status_code == 409 and "already resolved" in text_of(again)


def test_what_the_viewer_says_about_its_token_matches_what_it_enforces(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    from click.testing import CliRunner

    from colony_tasks.cli import cli
    from colony_tasks.viewer import server as server_mod

    started: list[str] = []
    monkeypatch.setattr(server_mod, "serve", lambda app, sock, url, **kw: started.append(url))
    monkeypatch.chdir(repo)
    run = CliRunner().invoke(cli, ["viewer", "--port", "0"])
    assert run.exit_code == 0 and started
    help_text = " ".join(CliRunner().invoke(cli, ["viewer", "--help"]).output.split())
    said: list[str] = []
    warn_if_exposed("0.0.0.0", said.append)
    banner = " ".join(line.strip("! ") for line in said[0].splitlines())
    # Reads need the token: a page without it is refused ...
    from colony_tasks.store import open_default

    store = open_default()
    try:
        with TestClient(create_app(store, "t0ken")) as client:
            assert client.get("/").status_code == 403
    finally:
        store.close()
    # ... and every text says so, none says only posting needs it.
    for text in (run.output, help_text, banner):
        assert "reads included" in text, text
        assert "osting from the page needs" not in text and "Posting still needs" not in text
