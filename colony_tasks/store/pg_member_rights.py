"""PostgreSQL migration 16, the team's member rights: the guards that hold each member (a
database role other than the tables' owner) to rows of its own sessions.

Apart from :mod:`colony_tasks.store.pg_schema`, which lists it with the other migrations, for
its size: a trigger function per kind of row, and the block that installs them. Applied; never
edit it: a change to a guard is a new migration that replaces the function.
"""

from __future__ import annotations

# Team members act only as themselves (SQLite migration 16 hashes the session keys too).
# The database role is the developer: a session belongs to the role that inserted it
# (``owner``, set by the server). Every role but the tables' owner (the admin, who runs
# ``migrate``) is a member, held by the guards below to rows of its own sessions; the
# cross-developer steps of the core (answering or accepting what is addressed to you, taking
# a ready item, releasing what a handoff or an item you manage moves, expiring a lapsed claim,
# passing a chain turn back) are the only changes a member makes to others' rows. A refusal
# raises SQLSTATE CT403 (:class:`colony_tasks.base.errors.NotAllowed` in the store). Session keys
# are stored as hashes and readable only by their owner; the migration record is the admin's.
# The guard functions run with a fixed search_path, so a member's temporary table cannot
# stand in for ``sessions``.
MEMBER_RIGHTS = r"""
DELETE FROM session_keys;
ALTER TABLE session_keys RENAME COLUMN key TO key_hash;
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ALTER COLUMN owner SET DEFAULT current_user;

CREATE FUNCTION colony_is_admin(rel oid) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT pg_catalog.pg_has_role(current_user, c.relowner, 'MEMBER')
    FROM pg_catalog.pg_class c WHERE c.oid = rel
$$;
CREATE FUNCTION colony_mine(sid text) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM sessions s WHERE s.id = sid AND s.owner = current_user)
$$;
CREATE FUNCTION colony_refuse(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'CT403', MESSAGE = 'Refused by the team store: ' || what;
END $$;

CREATE FUNCTION colony_guard_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' THEN
        NEW.owner := current_user;
        NEW.developer := current_user;
        RETURN NEW;
    END IF;
    IF OLD.owner IS DISTINCT FROM current_user THEN
        PERFORM colony_refuse(format('session %s belongs to %s; a member changes only its'
            ' own sessions.', OLD.handle, COALESCE(NULLIF(OLD.owner, ''), 'no member')));
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    IF (NEW.id, NEW.owner, NEW.agent, NEW.developer, NEW.handle)
        IS DISTINCT FROM (OLD.id, OLD.owner, OLD.agent, OLD.developer, OLD.handle) THEN
        PERFORM colony_refuse(format('the id, owner, agent kind, developer and handle of'
            ' session %s never change.', OLD.handle));
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION colony_guard_own_rows() RETURNS trigger LANGUAGE plpgsql AS $$
-- session_keys, read_notes, participants, work_waiters: rows of the member's own sessions,
-- except that anyone adds a session to a task (chains, reassignment) and empties a task's
-- waiting list (finishing an item wakes its waiters).
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' AND (TG_TABLE_NAME = 'participants' OR colony_mine(NEW.session_id)) THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' AND (TG_TABLE_NAME = 'work_waiters' OR colony_mine(OLD.session_id)) THEN
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND colony_mine(OLD.session_id) AND NEW.session_id = OLD.session_id THEN
        RETURN NEW;
    END IF;
    PERFORM colony_refuse(format('%s rows of another member''s session.', TG_TABLE_NAME));
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_observations() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    resolver sessions%ROWTYPE;
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF NOT colony_mine(NEW.session_id) THEN
            PERFORM colony_refuse('a member posts only as one of its own sessions.');
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM colony_refuse('the record is never deleted by a member.');
    END IF;
    IF (NEW.id, NEW.session_id, NEW.task_id, NEW.kind, NEW.text, NEW.meta, NEW.created_at,
        NEW.to_target, NEW.in_reply_to, NEW.urgent, NEW.turn)
        IS DISTINCT FROM (OLD.id, OLD.session_id, OLD.task_id, OLD.kind, OLD.text, OLD.meta,
        OLD.created_at, OLD.to_target, OLD.in_reply_to, OLD.urgent, OLD.turn) THEN
        PERFORM colony_refuse(format('what observation %s says never changes.', OLD.id));
    END IF;
    IF colony_mine(OLD.session_id) AND (NEW.resolved_by IS NULL
        OR NEW.resolved_by IS NOT DISTINCT FROM OLD.resolved_by OR colony_mine(NEW.resolved_by))
    THEN
        RETURN NEW;  -- its author withdraws or reopens it, never in another's name
    END IF;
    SELECT * INTO resolver FROM sessions WHERE id = NEW.resolved_by;
    IF NOT FOUND OR resolver.owner IS DISTINCT FROM current_user THEN
        PERFORM colony_refuse(format('observation %s is another member''s; it is answered,'
            ' accepted or resolved only in the name of one of your own sessions.', OLD.id));
    END IF;
    IF NOT ((OLD.kind = 'question' AND OLD.status = 'pending' AND NEW.status = 'answered')
        OR (OLD.kind = 'handoff' AND OLD.status = 'pending' AND NEW.status = 'accepted')
        OR (OLD.kind = 'blocker' AND OLD.status = 'open' AND NEW.status = 'resolved')) THEN
        PERFORM colony_refuse(format('%s %s cannot go from %s to %s by another member.',
            OLD.kind, OLD.id, OLD.status, NEW.status));
    END IF;
    IF OLD.kind <> 'blocker' AND OLD.to_target IS NOT NULL
        AND OLD.to_target NOT IN (resolver.handle, resolver.agent) THEN
        PERFORM colony_refuse(format('%s %s is addressed to %s, not to %s.',
            OLD.kind, OLD.id, OLD.to_target, resolver.handle));
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION colony_guard_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
-- observation_paths and recipients: written with the member's own observation; a recipient
-- marks what it received, the author what it was told could not be delivered.
DECLARE
    author text;
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    SELECT o.session_id INTO author FROM observations o
        WHERE o.id = CASE WHEN TG_OP = 'INSERT' THEN NEW.observation_id
                          ELSE OLD.observation_id END;
    IF TG_OP = 'INSERT' AND colony_mine(author) THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'recipients' THEN
        IF (NEW.observation_id, NEW.session_id) = (OLD.observation_id, OLD.session_id)
            AND (colony_mine(OLD.session_id) OR (colony_mine(author)
                 AND OLD.state = 'undeliverable' AND NEW.state = 'undeliverable-reported')
              -- the author is told once that its item woke its recipient (colony_tasks.domain.wake)
              OR (colony_mine(author) AND OLD.told_at IS NULL AND NEW.told_at IS NOT NULL
                 AND (NEW.state, NEW.via) IS NOT DISTINCT FROM (OLD.state, OLD.via))) THEN
            RETURN NEW;
        END IF;
    END IF;
    PERFORM colony_refuse(format('%s of another member''s observation.', TG_TABLE_NAME));
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_claims() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF NOT colony_mine(NEW.session_id) THEN
            PERFORM colony_refuse('a member claims only for its own sessions.');
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM colony_refuse('claims are released, never deleted, by a member.');
    END IF;
    IF colony_mine(OLD.session_id) AND NEW.session_id = OLD.session_id THEN
        RETURN NEW;
    END IF;
    -- Another member's claim: only released, and only when it lapsed, when a handoff of its
    -- holder was accepted by you, or when it holds a work item you planned or coordinate.
    IF OLD.released_at IS NULL AND NEW.released_at IS NOT NULL
        AND (NEW.id, NEW.session_id, NEW.task_id, NEW.repo_id, NEW.lane_id, NEW.pattern,
             NEW.is_glob, NEW.note, NEW.created_at, NEW.renewed_at, NEW.expires_at, NEW.regex)
            IS NOT DISTINCT FROM (OLD.id, OLD.session_id, OLD.task_id, OLD.repo_id,
             OLD.lane_id, OLD.pattern, OLD.is_glob, OLD.note, OLD.created_at, OLD.renewed_at,
             OLD.expires_at, OLD.regex)
        AND ((NEW.released_at = OLD.expires_at
              AND OLD.expires_at <= extract(epoch FROM clock_timestamp()) + 300)
          OR EXISTS (SELECT 1 FROM observations h WHERE h.session_id = OLD.session_id
              AND h.kind = 'handoff' AND h.status = 'accepted' AND colony_mine(h.resolved_by))
          OR EXISTS (SELECT 1 FROM work_items w LEFT JOIN tasks t ON t.id = w.task_id
              WHERE w.owner = OLD.session_id
              AND (colony_mine(w.created_by) OR colony_mine(t.coordinator)))) THEN
        RETURN NEW;
    END IF;
    PERFORM colony_refuse(format('claim %s (%s) is another member''s.', OLD.id, OLD.pattern));
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_work() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    manager boolean;
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF NOT colony_mine(NEW.created_by)
            OR (NEW.owner IS NOT NULL AND NOT colony_mine(NEW.owner)) THEN
            PERFORM colony_refuse('a member plans work only as one of its own sessions.');
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM colony_refuse('work items are dropped, never deleted, by a member.');
    END IF;
    IF (NEW.id, NEW.task_id, NEW.title, NEW.description, NEW.files, NEW.created_by,
        NEW.created_at) IS DISTINCT FROM (OLD.id, OLD.task_id, OLD.title, OLD.description,
        OLD.files, OLD.created_by, OLD.created_at) THEN
        PERFORM colony_refuse(format('what work item %s says never changes.', OLD.id));
    END IF;
    SELECT colony_mine(OLD.created_by) OR colony_mine(OLD.owner) OR colony_mine(t.coordinator)
        INTO manager FROM tasks t WHERE t.id = OLD.task_id;
    IF manager THEN
        RETURN NEW;
    END IF;
    IF OLD.state IN ('open', 'blocked') AND NEW.state = 'taken' AND colony_mine(NEW.owner) THEN
        RETURN NEW;  -- taking an item anyone may take
    END IF;
    PERFORM colony_refuse(format('work item %s is another member''s; you may only take it'
        ' while it is open.', OLD.id));
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_work_deps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM work_items w WHERE w.id = NEW.item_id
        AND colony_mine(w.created_by)) THEN
        RETURN NEW;
    END IF;
    PERFORM colony_refuse('the dependencies of work items are set by their planner.');
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_tasks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF colony_is_admin(TG_RELID) THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF NOT colony_mine(NEW.created_by)
            OR (NEW.coordinator IS NOT NULL AND NOT colony_mine(NEW.coordinator))
            OR (NEW.turn_holder IS NOT NULL AND NOT colony_mine(NEW.turn_holder)) THEN
            PERFORM colony_refuse('a member creates tasks only as one of its own sessions.');
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM colony_refuse('tasks are closed, never deleted, by a member.');
    END IF;
    IF (NEW.id, NEW.mode, NEW.lane_id, NEW.created_by, NEW.created_at, NEW.coordinator)
        IS DISTINCT FROM (OLD.id, OLD.mode, OLD.lane_id, OLD.created_by, OLD.created_at,
        OLD.coordinator) THEN
        PERFORM colony_refuse(format('the mode, lane, creator and coordinator of task %s never'
            ' change.', OLD.id));
    END IF;
    IF colony_mine(OLD.created_by) OR colony_mine(OLD.coordinator) THEN
        RETURN NEW;
    END IF;
    -- A chain's turn holder numbers its post and hands the turn back to the coordinator.
    IF (NEW.title, NEW.status, NEW.closed_at) IS NOT DISTINCT FROM
        (OLD.title, OLD.status, OLD.closed_at)
        AND colony_mine(OLD.turn_holder)
        AND NEW.turn_holder IN (OLD.turn_holder, OLD.coordinator) THEN
        RETURN NEW;
    END IF;
    PERFORM colony_refuse(format('task %s is another member''s.', OLD.id));
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_insert_only() RETURNS trigger LANGUAGE plpgsql AS $$
-- lanes and the migration record: a member adds lanes and changes neither.
BEGIN
    IF colony_is_admin(TG_RELID) OR (TG_OP = 'INSERT' AND TG_TABLE_NAME = 'lanes') THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    PERFORM colony_refuse(format('%s %s by a member.', TG_OP, TG_TABLE_NAME));
    RETURN NULL;
END $$;

CREATE FUNCTION colony_guard_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT colony_is_admin(TG_RELID) THEN
        PERFORM colony_refuse(format('TRUNCATE %s by a member.', TG_TABLE_NAME));
    END IF;
    RETURN NULL;
END $$;

DO $$
DECLARE
    guards CONSTANT text[][] := ARRAY[
        ['sessions', 'colony_guard_sessions'],
        ['session_keys', 'colony_guard_own_rows'],
        ['read_notes', 'colony_guard_own_rows'],
        ['participants', 'colony_guard_own_rows'],
        ['work_waiters', 'colony_guard_own_rows'],
        ['observations', 'colony_guard_observations'],
        ['observation_paths', 'colony_guard_fanout'],
        ['recipients', 'colony_guard_fanout'],
        ['claims', 'colony_guard_claims'],
        ['work_items', 'colony_guard_work'],
        ['work_deps', 'colony_guard_work_deps'],
        ['tasks', 'colony_guard_tasks'],
        ['lanes', 'colony_guard_insert_only'],
        ['schema_migrations', 'colony_guard_insert_only']];
    fn text;
    grantee text;
BEGIN
    FOREACH fn IN ARRAY ARRAY['colony_is_admin(oid)', 'colony_mine(text)',
        'colony_refuse(text)', 'colony_guard_sessions()', 'colony_guard_own_rows()',
        'colony_guard_observations()', 'colony_guard_fanout()', 'colony_guard_claims()',
        'colony_guard_work()', 'colony_guard_work_deps()', 'colony_guard_tasks()',
        'colony_guard_insert_only()', 'colony_guard_truncate()'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', fn, current_schema());
    END LOOP;
    FOR i IN 1 .. array_length(guards, 1) LOOP
        EXECUTE format('CREATE TRIGGER colony_guard BEFORE INSERT OR UPDATE OR DELETE ON %I'
            ' FOR EACH ROW EXECUTE FUNCTION %I()', guards[i][1], guards[i][2]);
        EXECUTE format('CREATE TRIGGER colony_guard_truncate BEFORE TRUNCATE ON %I'
            ' FOR EACH STATEMENT EXECUTE FUNCTION colony_guard_truncate()', guards[i][1]);
    END LOOP;
    -- The migration record is the admin's, whatever default privileges granted.
    FOR grantee IN SELECT DISTINCT g.grantee FROM information_schema.role_table_grants g
        WHERE g.table_schema = current_schema() AND g.table_name = 'schema_migrations'
        AND g.privilege_type <> 'SELECT' AND g.grantee <> current_user LOOP
        EXECUTE 'REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON schema_migrations FROM '
            || CASE WHEN grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(grantee) END;
    END LOOP;
END $$;

ALTER TABLE session_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY colony_own_keys ON session_keys
    USING (colony_mine(session_id)) WITH CHECK (colony_mine(session_id));
"""
