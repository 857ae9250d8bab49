"""The ordered, named migrations of the colony database.

Each migration runs in one ``BEGIN IMMEDIATE`` transaction together with the row that records
it in ``schema_migrations`` and the bump of ``PRAGMA user_version``; a failing migration leaves
the database at the previous version. Never edit an applied migration: add a new one.
"""

from __future__ import annotations

from collections import namedtuple

Migration = namedtuple("Migration", "version name sql")


CORE = """
CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
);
CREATE TABLE lanes (
    id INTEGER PRIMARY KEY,
    repo_id TEXT NOT NULL,
    root TEXT NOT NULL,
    repo_name TEXT NOT NULL,
    branch TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (repo_id, branch)
);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    handle TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    cwd TEXT NOT NULL DEFAULT '',
    lane_id INTEGER REFERENCES lanes(id),
    agent_pid INTEGER,
    started_at REAL NOT NULL,
    last_seen_at REAL NOT NULL,
    ended_at REAL
);
CREATE INDEX sessions_agent_pid ON sessions(agent_pid);
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    mode TEXT NOT NULL DEFAULT 'task',
    status TEXT NOT NULL DEFAULT 'open',
    lane_id INTEGER REFERENCES lanes(id),
    created_by TEXT,
    created_at REAL NOT NULL,
    closed_at REAL
);
CREATE UNIQUE INDEX tasks_one_open_lane_task ON tasks(lane_id)
    WHERE mode = 'lane' AND status = 'open';
CREATE TABLE participants (
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    session_id TEXT NOT NULL REFERENCES sessions(id),
    joined_at REAL NOT NULL,
    cursor INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (task_id, session_id)
) WITHOUT ROWID;
CREATE INDEX participants_session ON participants(session_id);
CREATE TABLE observations (
    id INTEGER PRIMARY KEY,
    session_id TEXT,
    task_id INTEGER,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL
);
CREATE INDEX observations_task ON observations(task_id, id);
CREATE INDEX observations_session ON observations(session_id, id);
CREATE INDEX observations_kind ON observations(kind, id);
CREATE TABLE observation_paths (
    observation_id INTEGER NOT NULL,
    repo_id TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (observation_id, path)
) WITHOUT ROWID;
CREATE INDEX observation_paths_path ON observation_paths(repo_id, path);
CREATE VIRTUAL TABLE observations_fts USING fts5(
    text,
    content = 'observations',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER observations_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER observations_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER observations_fts_update AFTER UPDATE OF text ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO observations_fts(rowid, text) VALUES (new.id, new.text);
END;
"""

THREAD = """
ALTER TABLE observations ADD COLUMN to_target TEXT;
ALTER TABLE observations ADD COLUMN in_reply_to INTEGER;
ALTER TABLE observations ADD COLUMN urgent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observations ADD COLUMN status TEXT;
ALTER TABLE observations ADD COLUMN resolved_by TEXT;
ALTER TABLE observations ADD COLUMN resolved_at REAL;
CREATE INDEX observations_open ON observations(task_id, status) WHERE status IS NOT NULL;
CREATE TABLE recipients (
    observation_id INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    delivered_at REAL,
    PRIMARY KEY (observation_id, session_id)
) WITHOUT ROWID;
CREATE INDEX recipients_session ON recipients(session_id, state);
CREATE TABLE claims (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    task_id INTEGER,
    repo_id TEXT NOT NULL,
    lane_id INTEGER,
    pattern TEXT NOT NULL,
    is_glob INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    renewed_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    released_at REAL
);
CREATE INDEX claims_live ON claims(repo_id, pattern) WHERE released_at IS NULL;
CREATE INDEX claims_session ON claims(session_id) WHERE released_at IS NULL;
"""

VECTORS = """
CREATE TABLE vectors (
    id INTEGER PRIMARY KEY,
    observation_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (observation_id, model)
);
CREATE INDEX vectors_model_hash ON vectors(model, content_hash);
CREATE TABLE embed_leases (
    model TEXT NOT NULL,
    observation_id INTEGER NOT NULL,
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (model, observation_id)
) WITHOUT ROWID;
"""

CHAINS = """
ALTER TABLE tasks ADD COLUMN coordinator TEXT;
ALTER TABLE tasks ADD COLUMN turn_holder TEXT;
ALTER TABLE tasks ADD COLUMN turn_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observations ADD COLUMN turn INTEGER;
CREATE INDEX observations_task_kind ON observations(task_id, kind, id);
"""

# SQLite 3.40's integrity_check reports a false "NULL value" for a WITHOUT ROWID table whose
# non-key column sits between its key columns; put the key columns first.
PATHS_ORDER = """
CREATE TABLE observation_paths_new (
    observation_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    repo_id TEXT NOT NULL,
    PRIMARY KEY (observation_id, path)
) WITHOUT ROWID;
INSERT INTO observation_paths_new(observation_id, path, repo_id)
    SELECT observation_id, path, repo_id FROM observation_paths;
DROP TABLE observation_paths;
ALTER TABLE observation_paths_new RENAME TO observation_paths;
CREATE INDEX observation_paths_path ON observation_paths(repo_id, path);
"""

# Hooks ask on every prompt whether this session sent something that can no longer be
# delivered; the answer must not depend on how much the session has written.
UNDELIVERABLE = """
CREATE INDEX recipients_undeliverable ON recipients(observation_id)
    WHERE state = 'undeliverable';
"""

# One vocabulary for task status and mode (colony_tasks.base.kinds): closing a chain used to set
# 'completed' while every filter asked for 'done'. The triggers make the store refuse any other
# value, whatever a client sends.
TASK_VOCABULARY = """
UPDATE tasks SET status = 'done' WHERE status != 'open';
CREATE TRIGGER tasks_vocabulary_insert BEFORE INSERT ON tasks
WHEN NEW.status NOT IN ('open', 'done') OR NEW.mode NOT IN ('lane', 'task', 'chain')
BEGIN SELECT RAISE(ABORT, 'task status must be open or done; mode lane, task or chain'); END;
CREATE TRIGGER tasks_vocabulary_update BEFORE UPDATE OF status, mode ON tasks
WHEN NEW.status NOT IN ('open', 'done') OR NEW.mode NOT IN ('lane', 'task', 'chain')
BEGIN SELECT RAISE(ABORT, 'task status must be open or done; mode lane, task or chain'); END;
"""

# A glob claim keeps the regular expression that gitignore semantics compile it to (by
# pathspec, when the claim is made), so a hook matches an edited path with the standard
# library's re instead of importing pathspec on every edit.
CLAIM_REGEX = """
ALTER TABLE claims ADD COLUMN regex TEXT;
"""

# Plans: work items of a task with their dependencies. ``files`` is a JSON list of
# repo-relative paths or globs the item owns; ``owner`` the session that took it. A session
# that asked for work when nothing was ready waits in ``work_waiters`` until something is.
WORK_ITEMS = """
CREATE TABLE work_items (
    id INTEGER PRIMARY KEY,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    files TEXT NOT NULL DEFAULT '[]',
    state TEXT NOT NULL DEFAULT 'open',
    owner TEXT,
    reason TEXT,
    summary TEXT,
    created_by TEXT,
    created_at REAL NOT NULL,
    taken_at REAL,
    finished_at REAL
);
CREATE INDEX work_items_task ON work_items(task_id, state, id);
CREATE INDEX work_items_owner ON work_items(owner) WHERE state = 'taken';
CREATE TABLE work_deps (
    item_id INTEGER NOT NULL,
    depends_on INTEGER NOT NULL,
    PRIMARY KEY (item_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX work_deps_on ON work_deps(depends_on);
CREATE TABLE work_waiters (
    task_id INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    since REAL NOT NULL,
    PRIMARY KEY (task_id, session_id)
) WITHOUT ROWID;
CREATE TRIGGER work_items_state_insert BEFORE INSERT ON work_items
WHEN NEW.state NOT IN ('open', 'taken', 'done', 'blocked', 'dropped')
BEGIN SELECT RAISE(ABORT, 'work state must be open, taken, done, blocked or dropped'); END;
CREATE TRIGGER work_items_state_update BEFORE UPDATE OF state ON work_items
WHEN NEW.state NOT IN ('open', 'taken', 'done', 'blocked', 'dropped')
BEGIN SELECT RAISE(ABORT, 'work state must be open, taken, done, blocked or dropped'); END;
"""

# A per-session key, shown only in that session's own SessionStart briefing. When the MCP
# server cannot tell its caller from process ancestry, an explicit session_id must carry it
# (colony_tasks.domain.identity); it lives apart from sessions so it is never read with a session.
#
# hook_events: the fingerprint of each hook payload seen in the last minute. When the same
# hooks are installed twice (user and project scope, or an old plugin beside an install),
# the agent runs both with byte-identical input; only the first one acts.
IDENTITY = """
CREATE TABLE session_keys (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    key TEXT NOT NULL
);
CREATE TABLE hook_events (
    fingerprint TEXT PRIMARY KEY,
    seen_at REAL NOT NULL
);
"""

# The dependency graph of each indexed work tree: the one definition of its tables
# (colony_tasks.depgraph.rows turns a graph into these rows and back).
# ``repo`` is the work tree's real path; ``edits_seen`` is the last edit observation the
# indexer has applied to it. Hooks never read these tables: the indexer addresses each
# interface change to the sessions it affects (``recipients``).
DEPENDENCY_GRAPH = """
CREATE TABLE dep_files (
    repo TEXT NOT NULL,
    path TEXT NOT NULL,
    lang TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    error TEXT,
    specs_json TEXT NOT NULL,
    surface_json TEXT NOT NULL,
    PRIMARY KEY (repo, path)
) WITHOUT ROWID;
CREATE TABLE dep_edges (
    repo TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    names_json TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (repo, src, dst)
) WITHOUT ROWID;
CREATE INDEX dep_edges_by_dst ON dep_edges (repo, dst, src);
CREATE TABLE dep_repos (
    repo TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    config_json TEXT NOT NULL,
    skipped_json TEXT NOT NULL,
    built_at TEXT NOT NULL,
    edits_seen INTEGER NOT NULL DEFAULT 0
);
"""

# Who is who when sessions of several machines share a store (team mode): the developer and
# machine each session runs on, shown next to its handle ("codex-91bc (bob@ci-runner-3)").
TEAM_IDENTITY = """
ALTER TABLE sessions ADD COLUMN machine TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN developer TEXT NOT NULL DEFAULT '';
"""

# The live glob claims of a repository, found without reading its literal claims: every
# claim check reads them, and a repository may hold 100k literal claims.
CLAIM_GLOBS = """
CREATE INDEX claims_globs ON claims(repo_id) WHERE released_at IS NULL AND is_glob = 1;
"""

# What a live session is waiting on, when it is not acting (colony_tasks.usecases.events): '' (acting),
# 'human' (the agent asked its human and waits: Claude Code's idle and permission prompts) or
# 'cut-off:<error>' (its model API refused it: a rate limit, an overloaded API); since when.
# Any later event of the session clears it.
#
# read_notes: the files another session held when this session read them and was told so,
# once per session and file.
SESSION_WAITING = """
ALTER TABLE sessions ADD COLUMN waiting TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN waiting_since REAL;
CREATE TABLE read_notes (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    PRIMARY KEY (session_id, path)
) WITHOUT ROWID;
"""

# Waking an idle session (colony_tasks.domain.wake): ``recipients.via`` says how an item reached its
# recipient when not by its own next hook ('wake': a background wait woke the idle session;
# 'stop': Codex's stop gate kept it working), ``told_at`` when its sender was told so (once).
# ``sessions.wake_since``: the session idles with a wake wait held (the relay's), since when;
# ``stop_blocks``: how many stops in a row the stop gate has held back.
WAKE = """
ALTER TABLE recipients ADD COLUMN via TEXT;
ALTER TABLE recipients ADD COLUMN told_at REAL;
ALTER TABLE sessions ADD COLUMN wake_since REAL;
ALTER TABLE sessions ADD COLUMN stop_blocks INTEGER NOT NULL DEFAULT 0;
CREATE INDEX recipients_woke ON recipients(observation_id) WHERE via IS NOT NULL AND told_at IS NULL;
"""

# Session keys are derived on the session's machine and stored only as a hash
# (colony_tasks.base.keys): the raw keys of older versions are dropped; each session gets its hash
# at its next SessionStart. PostgreSQL migration 16 does the same and adds the member guards.
SESSION_KEY_HASHES = """
DELETE FROM session_keys;
ALTER TABLE session_keys RENAME COLUMN key TO key_hash;
"""

# An automatic claim (the one a session's edit makes on the file it edited) is marked by a
# flag, not recognised by its note; the claims made so far are recognised by that note once
# ('auto: edited', colony_tasks.domain.claims.AUTO_NOTE). PostgreSQL migration 17 does the same.
CLAIM_AUTO = """
ALTER TABLE claims ADD COLUMN auto INTEGER NOT NULL DEFAULT 0;
UPDATE claims SET auto = 1 WHERE note = 'auto: edited';
"""

# Regions (colony_tasks.domain.regions): per session and file, the base it started from and
# what it changed as ranges of base lines, and the overlaps it was told about. PostgreSQL
# migration 18 adds the same table.
REGIONS = """
CREATE TABLE regions (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    repo_id TEXT NOT NULL,
    lane_id INTEGER REFERENCES lanes(id),
    path TEXT NOT NULL,
    base TEXT,
    base_hash TEXT NOT NULL DEFAULT '',
    changes TEXT NOT NULL DEFAULT '[]',
    told TEXT NOT NULL DEFAULT '[]',
    updated_at REAL NOT NULL,
    PRIMARY KEY (session_id, path)
);
CREATE INDEX regions_repo_path ON regions(repo_id, path);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "core", CORE),
    Migration(2, "thread", THREAD),
    Migration(3, "vectors", VECTORS),
    Migration(4, "chains", CHAINS),
    Migration(5, "paths_key_first", PATHS_ORDER),
    Migration(6, "undeliverable_index", UNDELIVERABLE),
    Migration(7, "task_vocabulary", TASK_VOCABULARY),
    Migration(8, "claim_regex", CLAIM_REGEX),
    Migration(9, "work_items", WORK_ITEMS),
    Migration(10, "identity", IDENTITY),
    Migration(11, "dependency_graph", DEPENDENCY_GRAPH),
    Migration(12, "team_identity", TEAM_IDENTITY),
    Migration(13, "claim_globs_index", CLAIM_GLOBS),
    Migration(14, "session_waiting", SESSION_WAITING),
    Migration(15, "wake", WAKE),
    Migration(16, "session_key_hashes", SESSION_KEY_HASHES),
    Migration(17, "claim_auto", CLAIM_AUTO),
    Migration(18, "regions", REGIONS),
)

LATEST = MIGRATIONS[-1].version
