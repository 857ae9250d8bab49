"""The labelled corpus of ``bench/search_eval.py``: a web app's agent history and queries over it.

Three agents work on one web app (a Python API, a browser viewer, Postgres, Redis, GitHub
Actions): ``ash`` (Claude, backend), ``birch`` (Codex, frontend) and ``cedar`` (Claude, infra
and tests). :data:`CORE` holds the hand-written observations that carry information (prompts,
edits, commands, decisions, questions, answers, notes, blockers, handoffs), each under a short
key. :func:`filler` generates the routine traffic around them: edits that only tidy, test and git
commands, progress chatter and status questions over the same files and topic words, none of
which answers a query.

:data:`QUERIES` are (style, query, relevant keys). ``paraphrase`` queries describe the need in
other words than the observation uses; ``keyword`` queries are the terse terms someone who
remembers the wording would type; ``mixed`` are natural questions that share a word or two.
A key is relevant when the observation itself holds the answer (the decision, the fix, the
answer to a question), not when it merely asks or mentions the topic. The labels were written
with the corpus, before any method was run, and were not changed to suit a method.
"""

from __future__ import annotations

import random

AGENTS = {
    "ash": ("eval-ash", "claude-ash", "claude"),
    "birch": ("eval-birch", "codex-birch", "codex"),
    "cedar": ("eval-cedar", "claude-cedar", "claude"),
}

TASKS = {
    "auth": "Harden the auth middleware",
    "retry": "Retries for outbound HTTP calls",
    "viewer": "Viewer layout and theming",
    "migrations": "Teams: schema migrations",
    "cache": "Cache the project summary",
    "ci": "Faster, less flaky CI",
    "ratelimit": "Rate limiting on the public API",
    "ops": "webapp main (lane task)",
}

# (key, kind, agent, task, text)
CORE: list[tuple[str, str, str, str, str]] = [
    # -- auth middleware ------------------------------------------------------------------------
    (
        "auth-prompt",
        "prompt",
        "ash",
        "auth",
        "The auth middleware lets expired JWTs through when the clock on a box drifts. Harden"
        " it: reject expired tokens with a small leeway, and keep /healthz reachable.",
    ),
    (
        "auth-edit-exp",
        "edit",
        "ash",
        "auth",
        "edited api/middleware/auth.py: verify the exp and nbf claims with a 30 s leeway;"
        " answer 401 with a WWW-Authenticate header instead of a bare 403",
    ),
    (
        "auth-edit-public",
        "edit",
        "ash",
        "auth",
        "edited api/middleware/auth.py: skip authentication for PUBLIC_PATHS"
        " (/healthz, /metrics, /login, /auth/refresh)",
    ),
    (
        "auth-cmd-expired",
        "command",
        "ash",
        "auth",
        "pytest -q tests/test_auth_middleware.py -k expired",
    ),
    (
        "auth-decision-leeway",
        "decision",
        "ash",
        "auth",
        "Clock-skew leeway for token expiry is 30 seconds, not 5 minutes. Five minutes would let a"
        " revoked session keep working far too long; 30 s covers the NTP drift we see on our hosts.",
    ),
    (
        "auth-question-refresh",
        "question",
        "birch",
        "auth",
        "When the access token expires in the middle of a session, should the viewer call"
        " /auth/refresh itself, or does the middleware rotate it and set a new cookie?",
    ),
    (
        "auth-answer-refresh",
        "answer",
        "ash",
        "auth",
        "The middleware never rotates tokens. On a 401 the client calls POST /auth/refresh with"
        " the refresh cookie, then replays the original request once; a second 401 goes to the"
        " login page.",
    ),
    (
        "auth-decision-cookie",
        "decision",
        "ash",
        "auth",
        "Session cookie flags: HttpOnly, Secure, SameSite=Lax. SameSite=Strict broke the OAuth"
        " redirect back from the identity provider, so Lax it is.",
    ),
    (
        "auth-blocker-jwks",
        "blocker",
        "ash",
        "auth",
        "Blocked: the staging identity provider rotated its signing keys and our JWKS cache keeps"
        " the old key for 24 h, so every login on staging fails with 'signature verification"
        " failed'.",
    ),
    (
        "auth-note-jwks-fix",
        "note",
        "ash",
        "auth",
        "Staging logins work again: when a token names an unknown kid we refetch the JWKS"
        " document once (at most every 5 minutes) instead of waiting for the 24 h cache to expire.",
    ),
    (
        "auth-note-flaky",
        "note",
        "cedar",
        "auth",
        "test_expired_token_rejected in tests/test_auth_middleware.py is flaky, failing about 1"
        " run in 20 on CI. It mints a token with exp=now+1 and sleeps 1.1 s, but with the 30 s"
        " leeway the token is still accepted; it only passes when the runner's clock jumps.",
    ),
    (
        "auth-edit-flaky",
        "edit",
        "cedar",
        "auth",
        "edited tests/test_auth_middleware.py: freeze time with the fake clock fixture instead of"
        " sleep(); mint the expired token with exp 60 s in the past",
    ),
    (
        "auth-handoff",
        "handoff",
        "ash",
        "auth",
        "Handing the auth middleware over to cedar: leeway and public paths are merged. Left to"
        " do: role checks for the /admin routes (TODO in api/middleware/auth.py). Suite is green"
        " apart from the known flaky expiry test.",
    ),
    ("auth-accept", "accept", "cedar", "auth", "Accepted the auth middleware handoff from ash."),
    (
        "auth-edit-admin",
        "edit",
        "cedar",
        "auth",
        "edited api/middleware/auth.py: require the 'admin' role claim on /admin/* routes",
    ),
    (
        "auth-decision-status",
        "decision",
        "cedar",
        "auth",
        "Status codes: 401 when credentials are missing, expired or invalid; 403 when the token is"
        " valid but lacks the role. The viewer only redirects to the login page on 401.",
    ),
    (
        "auth-note-logout",
        "note",
        "ash",
        "auth",
        "Logout now revokes the refresh token server-side (denylist in Redis until its natural"
        " expiry) besides clearing the cookie, so a stolen refresh cookie stops working.",
    ),
    # -- retries for outbound calls -------------------------------------------------------------
    (
        "retry-prompt",
        "prompt",
        "ash",
        "retry",
        "Calls to the payments provider fail now and then with a 502 and we show that error"
        " straight to users. Add retries to the HTTP client, but never charge anyone twice.",
    ),
    (
        "retry-question-post",
        "question",
        "ash",
        "retry",
        "Should POST requests to the payments API be retried at all? They are not idempotent"
        " unless we send an Idempotency-Key.",
    ),
    (
        "retry-answer-post",
        "answer",
        "cedar",
        "retry",
        "Retry a POST only when it carries an Idempotency-Key header: the provider deduplicates on"
        " it for 24 h. Otherwise only GET, PUT and DELETE are retried.",
    ),
    (
        "retry-decision",
        "decision",
        "ash",
        "retry",
        "Outbound client policy: at most 3 attempts, exponential backoff from 200 ms with full"
        " jitter, capped at 5 s. Only connection errors, 502, 503 and 504 qualify (and a"
        " Retry-After header is honoured); a 4xx is never tried again.",
    ),
    (
        "retry-blocker-urllib3",
        "blocker",
        "ash",
        "retry",
        "Blocked: urllib3's Retry has no jitter option in the version we pin (1.26) and requests"
        " won't let us upgrade to 2.x yet.",
    ),
    (
        "retry-note-transport",
        "note",
        "ash",
        "retry",
        "Not waiting for the urllib3 upgrade: wrote our own small transport wrapper around"
        " httpx instead (about 60 lines), which also lets us log every attempt.",
    ),
    (
        "retry-edit-transport",
        "edit",
        "ash",
        "retry",
        "edited api/clients/http.py: wrap send() in RetryingTransport with backoff, jitter and a"
        " per-attempt log line",
    ),
    (
        "retry-edit-idem",
        "edit",
        "ash",
        "retry",
        "edited api/clients/payments.py: generate one Idempotency-Key per charge and reuse it on"
        " every attempt of that charge",
    ),
    ("retry-cmd", "command", "ash", "retry", "pytest -q tests/test_http_client.py -k retry"),
    (
        "retry-edit-test",
        "edit",
        "ash",
        "retry",
        "edited tests/test_http_client.py: fake transport answering 503, 503, 200 to check three"
        " attempts, plus a case for Retry-After",
    ),
    (
        "retry-note-budget",
        "note",
        "ash",
        "retry",
        "Added a retry budget: retries may add at most 10% extra requests per host over a 10 s"
        " window, so when the provider is down we don't pile a storm of extra traffic on top.",
    ),
    (
        "retry-note-timeouts",
        "note",
        "ash",
        "retry",
        "Timeouts per attempt: 2 s connect, 10 s read. The overall deadline for one call,"
        " attempts included, is 20 s.",
    ),
    (
        "retry-question-budget",
        "question",
        "birch",
        "retry",
        "Does the viewer need to show anything while the API is retrying the payment call, or is"
        " that invisible to the browser?",
    ),
    (
        "retry-answer-budget",
        "answer",
        "ash",
        "retry",
        "Invisible: it happens server-side within the 20 s deadline. Keep the spinner; after 20 s"
        " you get a 504 and should show the 'try again' banner.",
    ),
    # -- viewer layout and theming --------------------------------------------------------------
    (
        "viewer-prompt",
        "prompt",
        "birch",
        "viewer",
        "The viewer looks broken on phones: the sidebar covers the content and long code lines"
        " push the whole page sideways. Fix the layout, and add a dark mode while you're there.",
    ),
    (
        "viewer-edit-overflow",
        "edit",
        "birch",
        "viewer",
        "edited web/viewer/styles.css: pre and code blocks get overflow-x: auto and max-width:"
        " 100%, so long lines scroll inside the block",
    ),
    (
        "viewer-edit-sidebar",
        "edit",
        "birch",
        "viewer",
        "edited web/viewer/styles.css: below 768px the sidebar becomes an off-canvas drawer"
        " opened by the menu button",
    ),
    (
        "viewer-decision-dark",
        "decision",
        "birch",
        "viewer",
        "Dark mode follows prefers-color-scheme, with a manual toggle remembered in localStorage."
        " All colours are CSS custom properties (--bg, --fg, --accent) set on :root and"
        " overridden under [data-theme=dark].",
    ),
    (
        "viewer-question-font",
        "question",
        "birch",
        "viewer",
        "Should we self-host the Inter font or keep the system font stack? Self-hosting adds"
        " about 90 KB to the first load.",
    ),
    (
        "viewer-answer-font",
        "answer",
        "ash",
        "viewer",
        "Keep the system font stack. First-load weight matters more to us than the typeface.",
    ),
    (
        "viewer-note-sticky",
        "note",
        "birch",
        "viewer",
        "Table header in the runs view is sticky now (position: sticky; top: 0). It slid under"
        " the top bar at first; fixed by offsetting top by the --bar-height variable.",
    ),
    (
        "viewer-blocker-safari",
        "blocker",
        "birch",
        "viewer",
        "Blocked on Safari 15: the backdrop-filter blur behind the drawer makes scrolling janky on"
        " iPhones. Need a real device to profile, or we drop the blur.",
    ),
    (
        "viewer-note-safari",
        "note",
        "birch",
        "viewer",
        "Dropped the blur on the mobile drawer: a solid background at 0.96 opacity instead."
        " Scrolling is smooth on iOS now.",
    ),
    (
        "viewer-edit-contrast",
        "edit",
        "birch",
        "viewer",
        "edited web/viewer/theme.css: raise muted text to a 4.5:1 contrast ratio in both themes"
        " (the accessibility audit flagged #9aa on white)",
    ),
    (
        "viewer-cmd-playwright",
        "command",
        "birch",
        "viewer",
        "npx playwright test viewer/mobile.spec.ts --project=webkit",
    ),
    (
        "viewer-note-flash",
        "note",
        "birch",
        "viewer",
        "Fixed the flash of the light theme on page load: the theme snippet now runs inline in"
        " <head>, before the stylesheet applies.",
    ),
    (
        "viewer-edit-print",
        "edit",
        "birch",
        "viewer",
        "edited web/viewer/print.css: hide the sidebar and top bar when printing and expand"
        " collapsed sections",
    ),
    (
        "viewer-decision-units",
        "decision",
        "birch",
        "viewer",
        "Spacing and type sizes in rem only, from a 4-step scale; no px outside borders. Makes"
        " the browser's zoom and font-size settings work.",
    ),
    # -- migrations -----------------------------------------------------------------------------
    (
        "mig-prompt",
        "prompt",
        "cedar",
        "migrations",
        "We need teams inside organisations: a teams table and a team_id on projects. No"
        " downtime: the projects table has 40M rows in production.",
    ),
    (
        "mig-decision-expand",
        "decision",
        "cedar",
        "migrations",
        "Plan for projects.team_id, expand then contract: 1) add the column nullable with no"
        " default (instant in Postgres), 2) backfill in batches of 10k by id range, 3) add the"
        " foreign key NOT VALID and VALIDATE it separately, 4) set NOT NULL in a later release.",
    ),
    (
        "mig-edit-0042",
        "edit",
        "cedar",
        "migrations",
        "edited migrations/versions/0042_add_teams.py: create the teams table and a nullable"
        " projects.team_id",
    ),
    (
        "mig-edit-backfill",
        "edit",
        "cedar",
        "migrations",
        "edited scripts/backfill_team_id.py: update 10k rows per transaction by id range with a"
        " 50 ms pause between batches",
    ),
    (
        "mig-blocker-lock",
        "blocker",
        "cedar",
        "migrations",
        "Blocker: 0042 hung on staging for 6 minutes waiting for an ACCESS EXCLUSIVE lock behind a"
        " long analytics query, and every request touching projects queued up behind it.",
    ),
    (
        "mig-decision-locktimeout",
        "decision",
        "cedar",
        "migrations",
        "Every migration now starts with SET lock_timeout = '5s' and statement_timeout = '15min'."
        " If the lock isn't granted it fails fast and we re-run the deploy, rather than stalling"
        " traffic.",
    ),
    (
        "mig-question-down",
        "question",
        "birch",
        "migrations",
        "Do we still write downgrade() for alembic migrations? Nobody has ever run one in"
        " production.",
    ),
    (
        "mig-answer-down",
        "answer",
        "cedar",
        "migrations",
        "Yes for schema-only migrations: they are cheap and we use them in local dev. Data"
        " migrations may raise NotImplementedError in downgrade() with a comment describing the"
        " manual way back.",
    ),
    ("mig-cmd-sql", "command", "cedar", "migrations", "alembic upgrade head --sql > /tmp/0042.sql"),
    ("mig-cmd-down", "command", "cedar", "migrations", "alembic downgrade -1"),
    (
        "mig-note-index",
        "note",
        "cedar",
        "migrations",
        "The projects(team_id) index is built with CREATE INDEX CONCURRENTLY in its own migration"
        " (0043) marked to run outside a transaction, since alembic wraps each migration in one.",
    ),
    (
        "mig-note-squash",
        "note",
        "cedar",
        "migrations",
        "Squashed migrations 0001-0030 into a single baseline; a fresh dev database now builds in"
        " 3 s instead of 40 s.",
    ),
    (
        "mig-note-backfill-done",
        "note",
        "cedar",
        "migrations",
        "team_id backfill finished in production: 40.2M rows in 3 h 10 min, replica lag stayed"
        " under 2 s the whole time.",
    ),
    # -- caching --------------------------------------------------------------------------------
    (
        "cache-prompt",
        "prompt",
        "ash",
        "cache",
        "GET /api/projects/:id/summary takes 800 ms. Cache it, but people must see their own"
        " edits immediately.",
    ),
    (
        "cache-decision",
        "decision",
        "ash",
        "cache",
        "Project summaries go to Redis with a 10-minute TTL, keyed by project id plus a version"
        " number. Every write to the project bumps the version, so a stale entry is never read and"
        " no explicit delete is needed.",
    ),
    (
        "cache-edit-lock",
        "edit",
        "ash",
        "cache",
        "edited api/cache/summary.py: get_or_compute() takes a per-key Redis lock so only one"
        " worker recomputes a missing summary",
    ),
    (
        "cache-note-stampede",
        "note",
        "ash",
        "cache",
        "Saw a thundering herd after the deploy flushed Redis: 200 workers recomputed the same"
        " summaries at once. The per-key lock plus early probabilistic refresh stopped it.",
    ),
    (
        "cache-question-key",
        "question",
        "ash",
        "cache",
        "Can we cache one summary per project, or do the keys need the user? The counts are"
        " filtered by what the viewer may see.",
    ),
    (
        "cache-answer-key",
        "answer",
        "cedar",
        "cache",
        "Key by (project, role): the counts differ by role, never by individual user, so per-user"
        " keys would only multiply memory.",
    ),
    (
        "cache-note-rename",
        "note",
        "ash",
        "cache",
        "Bug: the summary kept the old project name after a rename, because renames go through a"
        " raw SQL path that never bumped the version. Moved the bump into the ORM after_update"
        " hook.",
    ),
    (
        "cache-cmd-scan",
        "command",
        "ash",
        "cache",
        "redis-cli --scan --pattern 'summary:*' | wc -l",
    ),
    (
        "cache-edit-headers",
        "edit",
        "ash",
        "cache",
        "edited api/views/assets.py: fingerprinted static assets get Cache-Control: public,"
        " max-age=31536000, immutable; HTML pages get no-cache",
    ),
    (
        "cache-note-memory",
        "note",
        "cedar",
        "cache",
        "Redis on staging hit maxmemory and started refusing writes; set maxmemory-policy to"
        " allkeys-lru so it evicts instead.",
    ),
    (
        "cache-note-hitrate",
        "note",
        "ash",
        "cache",
        "Summary endpoint after a day in production: 94% served from Redis, p50 down from 800 ms"
        " to 35 ms.",
    ),
    # -- CI -------------------------------------------------------------------------------------
    (
        "ci-prompt",
        "prompt",
        "cedar",
        "ci",
        "CI takes 25 minutes per PR. Get it under 10, and find out why it keeps failing at random.",
    ),
    (
        "ci-edit-shards",
        "edit",
        "cedar",
        "ci",
        "edited .github/workflows/ci.yml: split the test job into 4 shards with pytest-split; lint"
        " and type-check run as parallel jobs",
    ),
    (
        "ci-edit-depcache",
        "edit",
        "cedar",
        "ci",
        "edited .github/workflows/ci.yml: cache ~/.cache/pip and node_modules keyed on the"
        " lockfile hashes",
    ),
    (
        "ci-decision-matrix",
        "decision",
        "cedar",
        "ci",
        "The full interpreter matrix (3.11, 3.12, 3.13) runs only on main; pull requests test on"
        " 3.12 alone. Saves about 60% of runner minutes.",
    ),
    (
        "ci-note-duration",
        "note",
        "cedar",
        "ci",
        "PR pipeline is down to 8 min p50 from 25: sharding saved 11 min, dependency caching 4,"
        " dropping the duplicate docs build 2.",
    ),
    (
        "ci-note-port",
        "note",
        "cedar",
        "ci",
        "Another intermittent failure: tests/test_webhooks.py binds a local server to port 8081"
        " and collides when two shards share a runner. Switched to port 0 and read back the"
        " assigned port.",
    ),
    (
        "ci-note-order",
        "note",
        "cedar",
        "ci",
        "test_cache_invalidation passes alone but fails in the full run: an earlier test leaves a"
        " mocked Redis client patched at module level. Added a fixture that restores it.",
    ),
    (
        "ci-decision-quarantine",
        "decision",
        "cedar",
        "ci",
        "Flaky test policy: mark it @pytest.mark.flaky and open an issue. Quarantined tests run in"
        " a separate non-blocking job and must be fixed or deleted within two weeks.",
    ),
    (
        "ci-blocker-macos",
        "blocker",
        "cedar",
        "ci",
        "Blocked: the hosted macOS runners are queued 40+ minutes today. Dropping macOS from the"
        " PR matrix until the queue recovers.",
    ),
    ("ci-cmd-log", "command", "cedar", "ci", "gh run view 8123 --log-failed"),
    (
        "ci-cmd-order",
        "command",
        "cedar",
        "ci",
        "pytest -p no:randomly tests/test_cache.py::test_cache_invalidation",
    ),
    (
        "ci-note-rerun",
        "note",
        "cedar",
        "ci",
        "pytest-rerunfailures is enabled in the quarantine job only; the blocking job never"
        " reruns, so a new flake still turns it red.",
    ),
    (
        "ci-question-required",
        "question",
        "ash",
        "ci",
        "Which checks are required before merging now that the tests are sharded?",
    ),
    (
        "ci-answer-required",
        "answer",
        "cedar",
        "ci",
        "Required: lint, type-check and all 4 test shards (the 'tests-ok' summary job). The"
        " quarantine job and the docs build are informational.",
    ),
    # -- rate limiting --------------------------------------------------------------------------
    (
        "rl-prompt",
        "prompt",
        "ash",
        "ratelimit",
        "Someone is hammering /api/search from a handful of IPs and the database is melting. Add"
        " rate limiting to the public API.",
    ),
    (
        "rl-decision",
        "decision",
        "ash",
        "ratelimit",
        "Limits: a token bucket per API key (600 requests/min, burst 100) and per client IP for"
        " anonymous traffic (60/min). Bucket state lives in Redis so every instance shares it.",
    ),
    (
        "rl-edit",
        "edit",
        "ash",
        "ratelimit",
        "edited api/middleware/ratelimit.py: token bucket as a Redis Lua script; over the limit"
        " answer 429 with Retry-After and X-RateLimit-Remaining",
    ),
    (
        "rl-question-ip",
        "question",
        "ash",
        "ratelimit",
        "Behind the load balancer every request comes from 10.0.0.x. How do we get the real client"
        " address for the per-IP limit?",
    ),
    (
        "rl-answer-ip",
        "answer",
        "cedar",
        "ratelimit",
        "Take the right-most address in X-Forwarded-For that isn't one of our load balancers"
        " (trust only their CIDR). Never take the header as-is, clients can spoof it.",
    ),
    (
        "rl-note-login",
        "note",
        "ash",
        "ratelimit",
        "The limiter runs before authentication, so brute-force attempts on /login are throttled"
        " too; /login has its own stricter limit of 10 per minute per IP.",
    ),
    (
        "rl-blocker-cluster",
        "blocker",
        "ash",
        "ratelimit",
        "Blocked: the Lua script fails on the Redis cluster with CROSSSLOT because the bucket's"
        " two keys hash to different slots.",
    ),
    (
        "rl-note-hashtag",
        "note",
        "ash",
        "ratelimit",
        "CROSSSLOT fixed: both bucket keys now share a {client} hash tag, so they land in the same"
        " slot.",
    ),
    (
        "rl-cmd-load",
        "command",
        "ash",
        "ratelimit",
        "hey -n 2000 -c 50 'http://localhost:8000/api/search?q=test'",
    ),
    (
        "rl-note-loadtest",
        "note",
        "ash",
        "ratelimit",
        "Load test with the limiter on: p99 stays at 120 ms with 50 concurrent clients; clients"
        " over their limit get a 429 in about 2 ms.",
    ),
    # -- everything else on the main lane -------------------------------------------------------
    (
        "log-decision",
        "decision",
        "cedar",
        "ops",
        "Structured logs: one JSON object per line with request_id, user_id and route on every"
        " record. The id comes from X-Request-ID or is generated at the edge, and is echoed in"
        " the response.",
    ),
    (
        "log-edit",
        "edit",
        "cedar",
        "ops",
        "edited api/logging.py: add RequestIdFilter and the JSON formatter",
    ),
    (
        "deploy-note-rollback",
        "note",
        "cedar",
        "ops",
        "Rolled back release 2024.06.3 in production: the new worker image lacked the libmagic"
        " system package and file uploads crashed. 2024.06.2 was back in 4 minutes.",
    ),
    (
        "deploy-decision-canary",
        "decision",
        "cedar",
        "ops",
        "Releases go out as a canary: 5% of traffic for 15 minutes, rolled back automatically if"
        " the 5xx rate goes over 1%.",
    ),
    (
        "webhook-decision",
        "decision",
        "ash",
        "ops",
        "Incoming webhooks are verified with HMAC-SHA256 over the raw body plus the timestamp"
        " header; events with a timestamp older than 5 minutes are rejected to stop replays.",
    ),
    (
        "webhook-note-bug",
        "note",
        "ash",
        "ops",
        "Every webhook signature check was failing: the framework parsed and re-serialised the"
        " JSON before we computed the HMAC. We now hash the raw request.body bytes.",
    ),
    (
        "email-note-queue",
        "note",
        "ash",
        "ops",
        "Password reset emails were sent inside the request; they now go through the background"
        " job queue (RQ) with 5 retries, so a slow SMTP server no longer times the request out.",
    ),
    (
        "pwreset-decision",
        "decision",
        "ash",
        "ops",
        "Password reset tokens are single use, expire after 30 minutes and are stored hashed;"
        " asking for a new one invalidates the previous.",
    ),
    (
        "tz-note",
        "note",
        "ash",
        "ops",
        "The monthly usage report was a day off for customers in Asia: we grouped by date in UTC."
        " Now timestamps are converted to the organisation's timezone before truncating to days.",
    ),
    (
        "upload-decision",
        "decision",
        "cedar",
        "ops",
        "Uploads: at most 25 MB per file, enforced by nginx client_max_body_size and again in the"
        " app. Bigger files go straight from the browser to S3 with presigned URLs.",
    ),
    (
        "deps-note-pydantic",
        "note",
        "ash",
        "ops",
        "Upgraded pydantic to v2: .dict() became .model_dump(), validators became"
        " field_validator, and the orjson config is gone (serialisation is faster anyway).",
    ),
    (
        "worker-note-leak",
        "note",
        "cedar",
        "ops",
        "Worker memory grew 50 MB an hour: the PDF renderer kept every font object in a"
        " module-level dict. Bounded it to 32 entries, and workers now restart after 1000 jobs.",
    ),
    (
        "cors-decision",
        "decision",
        "ash",
        "ops",
        "CORS allows only our own origins, plus localhost:5173 in development. Credentials are"
        " allowed, so never a wildcard origin.",
    ),
    (
        "flags-decision",
        "decision",
        "ash",
        "ops",
        "Feature flags live in the flags table and are cached per process for 30 s. New features"
        " ship dark and are switched on per organisation.",
    ),
    (
        "pagination-note",
        "note",
        "ash",
        "ops",
        "Search results use keyset pagination on (score, id) instead of OFFSET: page 500 used to"
        " take 4 s.",
    ),
    (
        "secrets-decision",
        "decision",
        "cedar",
        "ops",
        "Third-party credentials moved out of .env files into the cloud secret manager; the app"
        " reads them at start-up and CI gets short-lived ones through OIDC.",
    ),
    (
        "backup-note",
        "note",
        "cedar",
        "ops",
        "The nightly pg_dump had been failing silently for a week because the disk was full."
        " There is now an alert when the last good dump is older than 26 hours.",
    ),
    (
        "health-edit",
        "edit",
        "cedar",
        "ops",
        "edited api/views/health.py: /healthz pings Postgres and Redis with a 500 ms timeout each"
        " and answers 503 when either is down, so the load balancer drains the instance",
    ),
    (
        "ops-question-sentry",
        "question",
        "birch",
        "ops",
        "Are frontend errors going anywhere? I can't find the viewer's exceptions in Sentry.",
    ),
    (
        "ops-answer-sentry",
        "answer",
        "cedar",
        "ops",
        "Not yet: only the API reports to Sentry. Add the browser SDK with the release tag from"
        " the build and a 10% sample rate for performance traces.",
    ),
    (
        "ops-handoff-viewer",
        "handoff",
        "birch",
        "ops",
        "Handing the viewer to ash for the week: dark mode and the mobile drawer are merged;"
        " open item is the print stylesheet for long reports.",
    ),
    (
        "ops-note-n1",
        "note",
        "ash",
        "ops",
        "The projects list issued one query per row for the owner (N+1); added selectinload on"
        " Project.owner, the page now runs 3 queries instead of 103.",
    ),
    (
        "ops-decision-uuid",
        "decision",
        "cedar",
        "ops",
        "Public ids are UUIDv7 strings; integer primary keys stay internal and never appear in"
        " URLs.",
    ),
    (
        "ops-note-pool",
        "note",
        "cedar",
        "ops",
        "Saw 'remaining connection slots are reserved' errors at peak: each of 12 instances had a"
        " pool of 20. Put PgBouncer in transaction mode in front of Postgres.",
    ),
    (
        "ops-blocker-dns",
        "blocker",
        "cedar",
        "ops",
        "Blocked: the new staging domain's TLS certificate can't be issued until the DNS change"
        " propagates; waiting on the registrar.",
    ),
]


# (style, query, relevant keys)
QUERIES: list[tuple[str, str, tuple[str, ...]]] = [
    # -- paraphrases: the need in other words ---------------------------------------------------
    ("paraphrase", "where did we settle how failed calls are repeated?", ("retry-decision",)),
    (
        "paraphrase",
        "how long after it runs out is a login credential still honoured",
        ("auth-decision-leeway", "auth-edit-exp"),
    ),
    (
        "paraphrase",
        "why could nobody sign in on the pre-production environment",
        ("auth-blocker-jwks", "auth-note-jwks-fix"),
    ),
    (
        "paraphrase",
        "what should the browser do when someone's session runs out while they are using the app",
        ("auth-answer-refresh",),
    ),
    ("paraphrase", "which URLs can be reached without signing in", ("auth-edit-public",)),
    (
        "paraphrase",
        "making sure a customer is never billed twice when we try again",
        ("retry-answer-post", "retry-edit-idem"),
    ),
    (
        "paraphrase",
        "keep our repeated requests from overwhelming a provider that is already down",
        ("retry-note-budget",),
    ),
    (
        "paraphrase",
        "on a phone the page scrolls left and right because of wide snippets",
        ("viewer-edit-overflow",),
    ),
    ("paraphrase", "how does the night theme choose its colours", ("viewer-decision-dark",)),
    (
        "paraphrase",
        "white flicker before the dark colours show up when the page opens",
        ("viewer-note-flash",),
    ),
    ("paraphrase", "which typeface did we end up with", ("viewer-answer-font",)),
    (
        "paraphrase",
        "the slide-out menu stutters on Apple handsets",
        ("viewer-blocker-safari", "viewer-note-safari"),
    ),
    (
        "paraphrase",
        "how do we add a field to a huge table without taking the site offline",
        ("mig-decision-expand",),
    ),
    (
        "paraphrase",
        "a schema change froze all requests on the staging server",
        ("mig-blocker-lock", "mig-decision-locktimeout"),
    ),
    (
        "paraphrase",
        "do we bother writing the reverse step of a schema change",
        ("mig-answer-down",),
    ),
    (
        "paraphrase",
        "how did we avoid hurting the read replicas while filling in the new column for old rows",
        ("mig-edit-backfill", "mig-note-backfill-done", "mig-decision-expand"),
    ),
    (
        "paraphrase",
        "people must see their own changes at once even though the result is stored",
        ("cache-decision",),
    ),
    (
        "paraphrase",
        "every server recomputed the same thing at the same moment right after a release",
        ("cache-note-stampede",),
    ),
    ("paraphrase", "renamed project still shows its old title", ("cache-note-rename",)),
    (
        "paraphrase",
        "how long may browsers hold on to our scripts and stylesheets",
        ("cache-edit-headers",),
    ),
    (
        "paraphrase",
        "what made the pull request checks so much quicker",
        ("ci-note-duration", "ci-edit-shards", "ci-edit-depcache"),
    ),
    (
        "paraphrase",
        "which interpreter versions are exercised on a pull request",
        ("ci-decision-matrix",),
    ),
    (
        "paraphrase",
        "what do we do with checks that only fail some of the time",
        ("ci-decision-quarantine",),
    ),
    (
        "paraphrase",
        "two parallel test groups fighting over the same socket",
        ("ci-note-port",),
    ),
    (
        "paraphrase",
        "a test passes on its own but breaks when the whole suite runs",
        ("ci-note-order",),
    ),
    (
        "paraphrase",
        "what did we do about a few addresses flooding the search endpoint",
        ("rl-decision", "rl-edit"),
    ),
    (
        "paraphrase",
        "finding the caller's true address behind the proxy",
        ("rl-answer-ip",),
    ),
    ("paraphrase", "slowing down password guessing", ("rl-note-login",)),
    (
        "paraphrase",
        "how can we follow one request through all the log lines",
        ("log-decision", "log-edit"),
    ),
    ("paraphrase", "why did we go back to the previous build", ("deploy-note-rollback",)),
    (
        "paraphrase",
        "ship to a small slice of users first and undo automatically if errors rise",
        ("deploy-decision-canary",),
    ),
    (
        "paraphrase",
        "reject forged or replayed callbacks from outside services",
        ("webhook-decision",),
    ),
    (
        "paraphrase",
        "figures for customers in Asia landed on the wrong date",
        ("tz-note",),
    ),
    ("paraphrase", "how long is a forgotten-password link good for", ("pwreset-decision",)),
    (
        "paraphrase",
        "background process keeps using more RAM over time",
        ("worker-note-leak",),
    ),
    ("paraphrase", "biggest attachment a user can send us", ("upload-decision",)),
    (
        "paraphrase",
        "which websites may call our backend from the browser",
        ("cors-decision",),
    ),
    (
        "paraphrase",
        "turn a new capability on for a single customer only",
        ("flags-decision",),
    ),
    ("paraphrase", "deep result pages used to be very slow", ("pagination-note",)),
    (
        "paraphrase",
        "were the nightly copies of the database actually being made",
        ("backup-note",),
    ),
    (
        "paraphrase",
        "too many open connections to the database at peak hours",
        ("ops-note-pool",),
    ),
    (
        "paraphrase",
        "the list page was firing a query for every row",
        ("ops-note-n1",),
    ),
    (
        "paraphrase",
        "do client-side crashes get reported anywhere",
        ("ops-answer-sentry",),
    ),
    # -- keywords: the terms someone who remembers the wording types ----------------------------
    ("keyword", "auth middleware flaky test", ("auth-note-flaky", "auth-edit-flaky")),
    ("keyword", "JWT leeway", ("auth-decision-leeway", "auth-edit-exp")),
    ("keyword", "JWKS kid refetch", ("auth-note-jwks-fix",)),
    ("keyword", "SameSite cookie", ("auth-decision-cookie",)),
    ("keyword", "401 vs 403 status codes", ("auth-decision-status",)),
    ("keyword", "retry backoff jitter", ("retry-decision", "retry-edit-transport")),
    ("keyword", "Idempotency-Key POST", ("retry-answer-post", "retry-edit-idem")),
    ("keyword", "urllib3 jitter", ("retry-blocker-urllib3", "retry-note-transport")),
    ("keyword", "retry budget", ("retry-note-budget",)),
    ("keyword", "prefers-color-scheme dark mode", ("viewer-decision-dark",)),
    ("keyword", "sticky table header", ("viewer-note-sticky",)),
    ("keyword", "sidebar drawer 768px", ("viewer-edit-sidebar",)),
    ("keyword", "lock_timeout migration", ("mig-decision-locktimeout",)),
    ("keyword", "CREATE INDEX CONCURRENTLY", ("mig-note-index",)),
    ("keyword", "alembic downgrade policy", ("mig-answer-down",)),
    ("keyword", "team_id backfill batches", ("mig-edit-backfill", "mig-decision-expand")),
    ("keyword", "Redis TTL summary version", ("cache-decision",)),
    ("keyword", "thundering herd", ("cache-note-stampede",)),
    ("keyword", "Cache-Control immutable", ("cache-edit-headers",)),
    ("keyword", "maxmemory allkeys-lru", ("cache-note-memory",)),
    ("keyword", "pytest-split shards", ("ci-edit-shards",)),
    ("keyword", "flaky quarantine", ("ci-decision-quarantine", "ci-note-rerun")),
    ("keyword", "webhooks test port 8081", ("ci-note-port",)),
    ("keyword", "token bucket 429", ("rl-decision", "rl-edit")),
    ("keyword", "X-Forwarded-For", ("rl-answer-ip",)),
    ("keyword", "CROSSSLOT hash tag", ("rl-note-hashtag",)),
    ("keyword", "HMAC webhook signature", ("webhook-decision", "webhook-note-bug")),
    ("keyword", "libmagic rollback", ("deploy-note-rollback",)),
    ("keyword", "pydantic v2 model_dump", ("deps-note-pydantic",)),
    ("keyword", "keyset pagination", ("pagination-note",)),
    ("keyword", "canary 5xx", ("deploy-decision-canary",)),
    ("keyword", "PgBouncer", ("ops-note-pool",)),
    # -- natural questions that share a word or two with the answer -----------------------------
    (
        "mixed",
        "why was the expired token test failing on CI",
        ("auth-note-flaky", "auth-edit-flaky"),
    ),
    (
        "mixed",
        "should we retry POST requests to payments",
        ("retry-answer-post",),
    ),
    ("mixed", "what timeouts does the payment client use", ("retry-note-timeouts",)),
    ("mixed", "how do we key the summary cache", ("cache-answer-key", "cache-decision")),
    ("mixed", "which checks are required to merge", ("ci-answer-required",)),
    ("mixed", "what is the rate limit for anonymous users", ("rl-decision",)),
    ("mixed", "why did the migration hang on staging", ("mig-blocker-lock",)),
    ("mixed", "does logout revoke the refresh token", ("auth-note-logout",)),
]


# -- routine traffic around the core ----------------------------------------------------------

FILES = {
    "auth": [
        "api/middleware/auth.py",
        "api/auth/tokens.py",
        "api/auth/views.py",
        "tests/test_auth_middleware.py",
        "tests/test_tokens.py",
    ],
    "retry": [
        "api/clients/http.py",
        "api/clients/payments.py",
        "tests/test_http_client.py",
        "tests/test_payments.py",
    ],
    "viewer": [
        "web/viewer/styles.css",
        "web/viewer/theme.css",
        "web/viewer/app.ts",
        "web/viewer/sidebar.ts",
        "web/viewer/runs_table.ts",
        "web/viewer/print.css",
    ],
    "migrations": [
        "migrations/versions/0042_add_teams.py",
        "migrations/versions/0043_team_index.py",
        "migrations/env.py",
        "api/models/project.py",
        "api/models/team.py",
        "scripts/backfill_team_id.py",
    ],
    "cache": [
        "api/cache/summary.py",
        "api/cache/redis.py",
        "api/views/projects.py",
        "api/views/assets.py",
        "tests/test_cache.py",
    ],
    "ci": [
        ".github/workflows/ci.yml",
        ".github/workflows/release.yml",
        "tests/conftest.py",
        "tests/test_webhooks.py",
        "pyproject.toml",
    ],
    "ratelimit": [
        "api/middleware/ratelimit.py",
        "api/middleware/ratelimit.lua",
        "tests/test_ratelimit.py",
        "api/settings.py",
    ],
    "ops": [
        "api/logging.py",
        "api/views/health.py",
        "api/webhooks.py",
        "api/emails.py",
        "api/reports/usage.py",
        "api/uploads.py",
        "api/flags.py",
        "deploy/nginx.conf",
        "deploy/Dockerfile",
        "README.md",
    ],
}

TOPIC_WORDS = {
    "auth": [
        "auth middleware",
        "token handling",
        "login flow",
        "auth tests",
        "session cookie code",
    ],
    "retry": ["retry work", "HTTP client", "payments client", "retry tests", "outbound calls"],
    "viewer": ["viewer CSS", "dark mode", "mobile layout", "sidebar", "runs table"],
    "migrations": ["teams migration", "alembic migrations", "team_id backfill", "project model"],
    "cache": ["summary cache", "Redis cache", "cache tests", "project summary endpoint"],
    "ci": ["CI pipeline", "workflow file", "test shards", "flaky tests", "CI config"],
    "ratelimit": ["rate limiter", "rate limiting", "limiter tests", "Lua script"],
    "ops": ["logging setup", "health check", "webhooks", "usage report", "upload handling"],
}

TIDY = [
    "sort imports",
    "fix a typo in a docstring",
    "rename a local variable",
    "add type hints",
    "remove an unused import",
    "reformat with ruff",
    "extract a small helper",
    "inline a constant",
    "update a comment",
    "add a debug log line",
    "split a long function",
    "move a fixture",
    "tighten an assertion message",
    "drop dead code",
    "reorder parameters",
]

COMMANDS = [
    "pytest -q {test}",
    "pytest -q {test} -x",
    "pytest -q tests/ -k {word}",
    "git diff {file}",
    "git add {file}",
    "git log --oneline -5 -- {file}",
    "rg -n {word} api/",
    "ruff check {file}",
    "ruff format {file}",
    "mypy api/",
    "git status",
    "git pull --rebase origin main",
    "npm run build",
    "npm test -- --watch=false",
    "docker compose up -d redis postgres",
    "alembic history | head",
    "make lint",
    "cat {file}",
]

CHATTER = [
    "looking at {file} now",
    "tests pass locally: {n} passed, {k} skipped",
    "{n} passed, 1 failed in {file}; rerunning",
    "pushed the {topic} branch, PR #{pr}",
    "rebased the {topic} branch on main, no conflicts",
    "rebased on main; resolved a conflict in {file}",
    "CI is green on PR #{pr}",
    "CI red on PR #{pr}, looking",
    "review comments on PR #{pr} addressed",
    "picking up the {topic} again after lunch",
    "done for today with the {topic}; will continue tomorrow",
    "paired with {other} on the {topic} for half an hour",
    "the {topic} diff is getting big, splitting it into two PRs",
    "ran the full suite twice, both green",
    "lint clean after the {topic} changes",
]

PROMPTS = [
    "run the tests again",
    "please tidy up {file}",
    "rebase on main and fix the conflicts in {file}",
    "what's the status of the {topic}?",
    "commit what you have for the {topic}",
    "open a PR for the {topic}",
    "look at the review comments on PR #{pr}",
    "can you check why CI is red on PR #{pr}?",
    "keep going with the {topic}",
    "squash the {topic} commits before merging",
]

STATUS_QUESTIONS = [
    ("are you still editing {file}? I need to touch it for a rename", "done with it, go ahead"),
    ("is PR #{pr} ready for review?", "yes, ready"),
    ("can I merge PR #{pr}?", "give me ten minutes, fixing one test"),
    ("who owns the {topic} now?", "{other} does"),
    ("any objection to me reformatting {file}?", "none, go ahead"),
]

KIND_WEIGHTS = (
    ("edit", 34),
    ("command", 30),
    ("note", 14),
    ("prompt", 10),
    ("qa", 6),
    ("claim", 6),
)


def filler(n: int, seed: int = 7) -> list[tuple[str, str, str, str]]:
    """``n`` routine observations (kind, agent, task, text) that answer no query."""
    rng = random.Random(seed)
    kinds = [k for k, _ in KIND_WEIGHTS]
    weights = [w for _, w in KIND_WEIGHTS]
    agents = list(AGENTS)
    out: list[tuple[str, str, str, str]] = []
    while len(out) < n:
        task = rng.choice(list(FILES))
        agent = rng.choice(agents)
        other = AGENTS[rng.choice([a for a in agents if a != agent])][1]
        file = rng.choice(FILES[task])
        tests = [f for f in FILES[task] if f.startswith("tests/")] or ["tests/"]
        fields = {
            "file": file,
            "test": rng.choice(tests),
            "word": rng.choice(["retry", "cache", "token", "limit", "team_id", "theme", "flaky"]),
            "topic": rng.choice(TOPIC_WORDS[task]),
            "other": other,
            "pr": rng.randint(300, 480),
            "n": rng.randint(40, 400),
            "k": rng.randint(0, 9),
        }
        kind = rng.choices(kinds, weights=weights)[0]
        if kind == "edit":
            out.append(("edit", agent, task, f"edited {file}: {rng.choice(TIDY)}"))
        elif kind == "command":
            out.append(("command", agent, task, rng.choice(COMMANDS).format(**fields)))
        elif kind == "note":
            out.append(("note", agent, task, rng.choice(CHATTER).format(**fields)))
        elif kind == "prompt":
            out.append(("prompt", agent, task, rng.choice(PROMPTS).format(**fields)))
        elif kind == "qa":
            question, answer = rng.choice(STATUS_QUESTIONS)
            out.append(("question", agent, task, question.format(**fields)))
            out.append(("answer", rng.choice(agents), task, answer.format(**fields)))
        else:
            out.append(("claim", agent, task, f"claimed {file}"))
            out.append(("release", agent, task, f"released {file}"))
    return out[:n]
