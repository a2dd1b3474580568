//! The schema as an append-only list of migrations.
//!
//! Migration `i` (0-based) moves the database from `PRAGMA user_version = i`
//! to `i + 1`. Never edit or reorder an entry that has shipped: append a new
//! one. Per-connection settings (WAL, foreign keys, busy timeout) are not
//! schema and live in [`super::Store::open`].
//!
//! Integers that are `u64` in Rust are stored as SQLite's signed 64-bit
//! integers; every count fits (below 2⁵³), seeds and signatures keep their bit
//! pattern.

use rusqlite::Connection;

use super::StoreError;

/// Every migration, oldest first.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs, workers, leases and the per-result histories.
    r#"
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    -- RunSpec as JSON; never changes after creation.
    spec         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('sprt', 'spsa', 'games')),
    priority     INTEGER NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('active', 'finished', 'stopped')),
    -- Pairs the run needs; NULL = open-ended (SPRT without a cap).
    target_pairs INTEGER,
    -- Fresh pairs handed out so far = the next fresh opening offset.
    pairs_issued INTEGER NOT NULL DEFAULT 0,
    -- Counted results, first player's view.
    pairs        INTEGER NOT NULL DEFAULT 0,
    penta_ll     INTEGER NOT NULL DEFAULT 0,
    penta_ld     INTEGER NOT NULL DEFAULT 0,
    penta_dd     INTEGER NOT NULL DEFAULT 0,
    penta_dw     INTEGER NOT NULL DEFAULT 0,
    penta_ww     INTEGER NOT NULL DEFAULT 0,
    wins         INTEGER NOT NULL DEFAULT 0,
    draws        INTEGER NOT NULL DEFAULT 0,
    losses       INTEGER NOT NULL DEFAULT 0,
    total_plies  INTEGER NOT NULL DEFAULT 0,
    -- SPRT: LLR and state after the last counted result.
    sprt_llr     REAL,
    sprt_state   TEXT CHECK (sprt_state IN ('continue', 'accepted_h0', 'accepted_h1')),
    -- SPSA: SpsaState as JSON, rewritten with every applied result.
    spsa_state   TEXT,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL
);

CREATE TABLE run_reasons (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    reason TEXT    NOT NULL,
    games  INTEGER NOT NULL,
    PRIMARY KEY (run_id, reason)
);

CREATE TABLE workers (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    threads       INTEGER NOT NULL,
    version       TEXT    NOT NULL,
    signature     INTEGER NOT NULL,
    registered_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL
);

CREATE TABLE leases (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs (id),
    worker_id      INTEGER NOT NULL REFERENCES workers (id),
    state          TEXT    NOT NULL
                   CHECK (state IN ('active', 'done', 'expired', 'released', 'cancelled')),
    -- The opening slice [opening_offset, opening_offset + pairs).
    opening_offset INTEGER NOT NULL,
    pairs          INTEGER NOT NULL,
    -- WorkSpec as JSON, exactly as handed out.
    work           TEXT    NOT NULL,
    -- SpsaRequest as JSON (SPSA leases only).
    spsa_request   TEXT,
    -- 1 once an expired or released lease's slice was handed out again.
    reissued       INTEGER NOT NULL DEFAULT 0,
    -- Pairs done at the last heartbeat.
    pairs_done     INTEGER NOT NULL DEFAULT 0,
    created_ms     INTEGER NOT NULL,
    deadline_ms    INTEGER NOT NULL,
    finished_ms    INTEGER
);

CREATE INDEX leases_by_run_state ON leases (run_id, state);
CREATE INDEX leases_by_state_deadline ON leases (state, deadline_ms);

-- One row per counted SPRT result.
CREATE TABLE sprt_history (
    lease_id INTEGER PRIMARY KEY REFERENCES leases (id),
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    pairs    INTEGER NOT NULL,
    llr      REAL    NOT NULL,
    unix_ms  INTEGER NOT NULL
);

-- One row per applied SPSA result.
CREATE TABLE spsa_history (
    lease_id INTEGER PRIMARY KEY REFERENCES leases (id),
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    iter     INTEGER NOT NULL,
    wins     INTEGER NOT NULL,
    draws    INTEGER NOT NULL,
    losses   INTEGER NOT NULL,
    -- θ after the update as a JSON array, in the order of the spec's params.
    theta    TEXT    NOT NULL,
    unix_ms  INTEGER NOT NULL
);
"#,
    // 2: access tokens (hashes only) and the token that registered each worker.
    r#"
CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    role       TEXT    NOT NULL CHECK (role IN ('worker', 'admin')),
    -- SHA-256 of the token text; the text itself is never stored.
    hash       BLOB    NOT NULL UNIQUE CHECK (length(hash) = 32),
    created_ms INTEGER NOT NULL,
    -- Set once the token is revoked; a revoked token never works again.
    revoked_ms INTEGER
);

-- The token key (tokens.id, or a negative number for an in-memory token)
-- that registered the worker; NULL for workers registered before tokens.
ALTER TABLE workers ADD COLUMN token_key INTEGER;

-- One row the store rewrites under synchronous = FULL after a batch of
-- commits: that commit syncs the WAL for the whole batch (group commit).
CREATE TABLE sync_point (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO sync_point (id, n) VALUES (1, 0);
"#,
    // 3: the engine registry (executables by SHA-256) and run flags.
    r#"
CREATE TABLE engine_binaries (
    -- SHA-256 of the executable, lowercase hex.
    sha256 TEXT PRIMARY KEY,
    bytes  BLOB NOT NULL
);
CREATE TABLE engines (
    name       TEXT    PRIMARY KEY,
    sha256     TEXT    NOT NULL REFERENCES engine_binaries(sha256),
    size       INTEGER NOT NULL,
    -- The `Nodes searched` count of the engine's bench.
    signature  INTEGER NOT NULL,
    protocol   TEXT    NOT NULL CHECK (protocol IN ('uci', 'ucci')),
    -- Options set after the handshake, as a JSON object.
    options    TEXT    NOT NULL,
    created_ms INTEGER NOT NULL
);
-- Why the system stopped a run (e.g. an engine signature mismatch).
CREATE TABLE run_flags (
    run_id  INTEGER PRIMARY KEY REFERENCES runs(id),
    message TEXT    NOT NULL,
    unix_ms INTEGER NOT NULL
);
"#,
    // 4: variants runs. `runs` is rebuilt to admit the kind 'variants' (a
    // CHECK cannot be altered); leases record their variant; per-variant
    // totals get their own rows.
    r#"
CREATE TABLE runs_new (
    id           INTEGER PRIMARY KEY,
    spec         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('sprt', 'spsa', 'games', 'variants')),
    priority     INTEGER NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('active', 'finished', 'stopped')),
    target_pairs INTEGER,
    pairs_issued INTEGER NOT NULL DEFAULT 0,
    pairs        INTEGER NOT NULL DEFAULT 0,
    penta_ll     INTEGER NOT NULL DEFAULT 0,
    penta_ld     INTEGER NOT NULL DEFAULT 0,
    penta_dd     INTEGER NOT NULL DEFAULT 0,
    penta_dw     INTEGER NOT NULL DEFAULT 0,
    penta_ww     INTEGER NOT NULL DEFAULT 0,
    wins         INTEGER NOT NULL DEFAULT 0,
    draws        INTEGER NOT NULL DEFAULT 0,
    losses       INTEGER NOT NULL DEFAULT 0,
    total_plies  INTEGER NOT NULL DEFAULT 0,
    sprt_llr     REAL,
    sprt_state   TEXT CHECK (sprt_state IN ('continue', 'accepted_h0', 'accepted_h1')),
    spsa_state   TEXT,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL
);
INSERT INTO runs_new SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;

-- Variants runs: index into the spec's rule list; NULL for other kinds.
ALTER TABLE leases ADD COLUMN variant INTEGER;

-- One row per variant of a variants run, rewritten with every counted result.
CREATE TABLE variant_totals (
    run_id  INTEGER NOT NULL REFERENCES runs (id),
    variant INTEGER NOT NULL,
    -- VariantTotals as JSON.
    totals  TEXT    NOT NULL,
    PRIMARY KEY (run_id, variant)
);
"#,
    // 5: a lease's work is its run's spec and its slice; the stored copy was
    // decoded on every heartbeat, submission and release and never read.
    r#"
ALTER TABLE leases DROP COLUMN work;
"#,
    // 6: the spin options an engine advertised at `engine add` (JSON list of
    // SpinOption; SPSA runs tune them), and the tune an SPRT run verifies.
    r#"
ALTER TABLE engines ADD COLUMN spin_options TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN verifies INTEGER REFERENCES runs (id);
"#,
    // 7: an engine's coordinate dialect (NULL: detected at the handshake) and
    // the UCI_Variant values it offered when registered, as JSON (`null`: no
    // UCI_Variant option; NULL: not probed, as for engines added before).
    r#"
ALTER TABLE engines ADD COLUMN coords TEXT CHECK (coords IN ('0-9', '1-10'));
ALTER TABLE engines ADD COLUMN variants TEXT;
"#,
    // 8: the run's totals after every counted result, for the web view's
    // Elo-against-games graph (sprt_history keeps only the LLR).
    r#"
CREATE TABLE run_history (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    pairs    INTEGER NOT NULL,
    penta_ll INTEGER NOT NULL,
    penta_ld INTEGER NOT NULL,
    penta_dd INTEGER NOT NULL,
    penta_dw INTEGER NOT NULL,
    penta_ww INTEGER NOT NULL,
    wins     INTEGER NOT NULL,
    draws    INTEGER NOT NULL,
    losses   INTEGER NOT NULL,
    unix_ms  INTEGER NOT NULL
);
CREATE INDEX run_history_by_run ON run_history (run_id, id);
"#,
    // 9: the game archive. The games of one counted result are stored with
    // it, in the same transaction: one compressed blob per result
    // (store::game_codec) and one row per game with what filters and
    // failure counts need.
    r#"
CREATE TABLE game_batches (
    lease_id INTEGER PRIMARY KEY REFERENCES leases (id),
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    -- The kept games in order of game_index, encoded and compressed.
    data     BLOB    NOT NULL
);

CREATE TABLE games (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs (id),
    lease_id      INTEGER NOT NULL REFERENCES game_batches (lease_id),
    worker_id     INTEGER NOT NULL REFERENCES workers (id),
    -- The game's place in its lease: pair p has games 2p and 2p + 1.
    game_index    INTEGER NOT NULL,
    -- The game's place in its batch's blob (retention may skip games).
    slot          INTEGER NOT NULL,
    opening_index INTEGER NOT NULL,
    -- Which player (0 or 1) had Red.
    red_player    INTEGER NOT NULL CHECK (red_player IN (0, 1)),
    result        TEXT    NOT NULL CHECK (result IN ('red', 'black', 'draw')),
    -- The end reason's token.
    reason        TEXT    NOT NULL,
    -- The player (0 or 1) that lost; NULL for a draw.
    loser         INTEGER CHECK (loser IN (0, 1)),
    -- Plies played, opening included.
    plies         INTEGER NOT NULL,
    -- For a time forfeit: how far the loser overran its time, in ms.
    overrun_ms    INTEGER,
    UNIQUE (lease_id, game_index),
    UNIQUE (lease_id, slot),
    CHECK ((result = 'draw') = (loser IS NULL))
);

CREATE INDEX games_by_run_reason ON games (run_id, reason);
CREATE INDEX games_by_run_worker ON games (run_id, worker_id);
"#,
    // 10: content-addressed blobs in chunks (engine executables and assets:
    // network files, opening books) and assets by name. The executables of
    // migration 3 move into chunks of xq_proto::blob::BLOB_CHUNK_BYTES
    // (1048576) bytes; `engines.sha256` now references `blobs`.
    r#"
ALTER TABLE engine_binaries RENAME TO blobs;
ALTER TABLE blobs ADD COLUMN size INTEGER NOT NULL DEFAULT 0 CHECK (size >= 0);
UPDATE blobs SET size = length(bytes);
-- Chunk `seq` (0-based) holds bytes [seq * 1048576, (seq + 1) * 1048576) of
-- the blob; every chunk but the last is full; a blob of size 0 has none.
CREATE TABLE blob_chunks (
    sha256 TEXT    NOT NULL REFERENCES blobs (sha256),
    seq    INTEGER NOT NULL CHECK (seq >= 0),
    data   BLOB    NOT NULL,
    PRIMARY KEY (sha256, seq)
);
WITH RECURSIVE parts (sha256, seq) AS (
    SELECT sha256, 0 FROM blobs WHERE size > 0
    UNION ALL
    SELECT parts.sha256, parts.seq + 1 FROM parts JOIN blobs USING (sha256)
     WHERE (parts.seq + 1) * 1048576 < blobs.size
)
INSERT INTO blob_chunks (sha256, seq, data)
SELECT parts.sha256, parts.seq, substr(blobs.bytes, parts.seq * 1048576 + 1, 1048576)
  FROM parts JOIN blobs USING (sha256);
ALTER TABLE blobs DROP COLUMN bytes;
CREATE TABLE assets (
    -- The name `asset:NAME` and `asset list` use; 1 to 128 characters.
    name       TEXT    PRIMARY KEY,
    sha256     TEXT    NOT NULL REFERENCES blobs (sha256),
    created_ms INTEGER NOT NULL
);
CREATE INDEX assets_by_sha256 ON assets (sha256);
"#,
    // 11 (issue 19): every counted
    // result per lease, written in the same transaction as the count; the
    // workers excluded from a run (their results kept, not counted); each
    // worker's measured speed.
    r#"
CREATE TABLE lease_results (
    lease_id    INTEGER PRIMARY KEY REFERENCES leases (id),
    run_id      INTEGER NOT NULL REFERENCES runs (id),
    worker_id   INTEGER NOT NULL REFERENCES workers (id),
    -- The lease's counts, first player's view, as in runs.
    pairs       INTEGER NOT NULL,
    penta_ll    INTEGER NOT NULL,
    penta_ld    INTEGER NOT NULL,
    penta_dd    INTEGER NOT NULL,
    penta_dw    INTEGER NOT NULL,
    penta_ww    INTEGER NOT NULL,
    wins        INTEGER NOT NULL,
    draws       INTEGER NOT NULL,
    losses      INTEGER NOT NULL,
    total_plies INTEGER NOT NULL,
    -- Games lost on time, and lost to an engine failure (crash, no start,
    -- illegal move), by either player.
    time_losses INTEGER NOT NULL,
    crashes     INTEGER NOT NULL,
    -- Games by end reason (JSON object) and a variants run's statistics
    -- (VariantStats as JSON; NULL for other kinds).
    reasons     TEXT    NOT NULL,
    variant     TEXT,
    -- Set once the worker was excluded from the run: the result is kept but
    -- no longer counted in the run's totals.
    excluded_ms INTEGER,
    CHECK (pairs = penta_ll + penta_ld + penta_dd + penta_dw + penta_ww),
    CHECK (wins + draws + losses = 2 * pairs)
);
CREATE INDEX lease_results_by_run_worker ON lease_results (run_id, worker_id);

CREATE TABLE run_excluded_workers (
    run_id    INTEGER NOT NULL REFERENCES runs (id),
    worker_id INTEGER NOT NULL REFERENCES workers (id),
    -- Why: the residual or the failure rates that flagged the worker.
    reason    TEXT    NOT NULL,
    unix_ms   INTEGER NOT NULL,
    PRIMARY KEY (run_id, worker_id)
);

-- Nodes per second of the worker's `xq-engine bench` at its start; NULL for
-- a worker that did not measure it.
ALTER TABLE workers ADD COLUMN bench_nps INTEGER;
"#,
    // 12 (issue 29): the expired and released leases whose slice is still
    // to be handed out again, so finding one reads only those rows, not
    // every lease of the run.
    r#"
CREATE INDEX leases_to_reissue ON leases (run_id, opening_offset)
    WHERE reissued = 0 AND state IN ('expired', 'released');
"#,
    // 13 (issue 31): users with a role and an argon2id password hash (PHC
    // string; NULL: no password, the user cannot sign in). Every token
    // belongs to a user, every run has its author. An existing database
    // upgrades in place: a user `admin` (role admin, trusted, no password)
    // owns its tokens and is the author of its runs.
    r#"
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    role          TEXT    NOT NULL CHECK (role IN ('developer', 'approver', 'admin')),
    password_hash TEXT CHECK (password_hash IS NULL OR password_hash LIKE '$argon2%'),
    trusted       INTEGER NOT NULL DEFAULT 0 CHECK (trusted IN (0, 1)),
    created_ms    INTEGER NOT NULL
);
INSERT INTO users (name, role, trusted, created_ms)
    SELECT 'admin', 'admin', 1,
           COALESCE((SELECT MIN(created_ms) FROM tokens), (SELECT MIN(created_ms) FROM runs), 0)
    WHERE EXISTS (SELECT 1 FROM tokens) OR EXISTS (SELECT 1 FROM runs);
ALTER TABLE tokens ADD COLUMN user_id INTEGER REFERENCES users (id);
UPDATE tokens SET user_id = (SELECT id FROM users WHERE name = 'admin');
ALTER TABLE runs ADD COLUMN author_id INTEGER REFERENCES users (id);
UPDATE runs SET author_id = (SELECT id FROM users WHERE name = 'admin');
CREATE INDEX runs_by_author ON runs (author_id);
"#,
    // 14 (issue 31): the events log, one row per change, written in the
    // change's own transaction.
    r#"
CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    time_ms INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    user_id INTEGER REFERENCES users (id),
    kind    TEXT    NOT NULL CHECK (kind IN ('create', 'approve', 'reject', 'modify', 'stop',
                                             'resume', 'exclude', 'user', 'token')),
    run_id  INTEGER REFERENCES runs (id),
    detail  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX events_by_run ON events (run_id);
CREATE INDEX events_by_actor ON events (actor);
"#,
    // 15 (issue 31): approval. `runs` is rebuilt to admit the states
    // 'pending' (an untrusted developer's test waiting for an approver) and
    // 'rejected', with the rejection's reason.
    r#"
CREATE TABLE runs_new (
    id           INTEGER PRIMARY KEY,
    spec         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('sprt', 'spsa', 'games', 'variants')),
    priority     INTEGER NOT NULL,
    state        TEXT    NOT NULL
                 CHECK (state IN ('pending', 'active', 'finished', 'stopped', 'rejected')),
    target_pairs INTEGER,
    pairs_issued INTEGER NOT NULL DEFAULT 0,
    pairs        INTEGER NOT NULL DEFAULT 0,
    penta_ll     INTEGER NOT NULL DEFAULT 0,
    penta_ld     INTEGER NOT NULL DEFAULT 0,
    penta_dd     INTEGER NOT NULL DEFAULT 0,
    penta_dw     INTEGER NOT NULL DEFAULT 0,
    penta_ww     INTEGER NOT NULL DEFAULT 0,
    wins         INTEGER NOT NULL DEFAULT 0,
    draws        INTEGER NOT NULL DEFAULT 0,
    losses       INTEGER NOT NULL DEFAULT 0,
    total_plies  INTEGER NOT NULL DEFAULT 0,
    sprt_llr     REAL,
    sprt_state   TEXT CHECK (sprt_state IN ('continue', 'accepted_h0', 'accepted_h1')),
    spsa_state   TEXT,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL,
    verifies     INTEGER REFERENCES runs (id),
    author_id    INTEGER REFERENCES users (id),
    -- Why an approver rejected the test (state 'rejected'), shown to its author.
    rejection    TEXT
);
INSERT INTO runs_new (id, spec, kind, priority, state, target_pairs, pairs_issued, pairs, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses, total_plies, sprt_llr, sprt_state, spsa_state, created_ms, updated_ms, verifies, author_id) SELECT id, spec, kind, priority, state, target_pairs, pairs_issued, pairs, penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses, total_plies, sprt_llr, sprt_state, spsa_state, created_ms, updated_ms, verifies, author_id FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_by_author ON runs (author_id);
"#,
    // 16 (issue 31): token roles 'worker' and 'personal' (a person's token,
    // acting as its user; it was called 'admin'). `tokens` is rebuilt for
    // the CHECK, 'admin' rows become 'personal', and a user's tokens are
    // found through an index.
    r#"
CREATE TABLE tokens_new (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    role       TEXT    NOT NULL CHECK (role IN ('worker', 'personal')),
    -- SHA-256 of the token text; the text itself is never stored.
    hash       BLOB    NOT NULL UNIQUE CHECK (length(hash) = 32),
    created_ms INTEGER NOT NULL,
    -- Set once the token is revoked; a revoked token never works again.
    revoked_ms INTEGER,
    user_id    INTEGER REFERENCES users (id)
);
INSERT INTO tokens_new (id, name, role, hash, created_ms, revoked_ms, user_id)
    SELECT id, name, CASE role WHEN 'admin' THEN 'personal' ELSE role END,
           hash, created_ms, revoked_ms, user_id
    FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;
CREATE INDEX tokens_by_user ON tokens (user_id);
"#,
    // 17 (issue 31): the web view's sign-in sessions, by the SHA-256 hash of
    // the cookie's secret (never the secret), each with its end.
    r#"
CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY,
    hash       BLOB    NOT NULL UNIQUE CHECK (length(hash) = 32),
    user_id    INTEGER NOT NULL REFERENCES users (id),
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL CHECK (expires_ms > created_ms)
);
CREATE INDEX sessions_by_user ON sessions (user_id);
"#,
    // 18 (issue 31): changing a running test. A run's throughput share
    // (100 = the normal share; among runs of equal priority, pairs in flight
    // in proportion to it). From this version a run's spec changes with its
    // cap and priority, and `priority` and `target_pairs` with it, in the
    // same statement.
    r#"
ALTER TABLE runs ADD COLUMN share INTEGER NOT NULL DEFAULT 100 CHECK (share > 0);
"#,
    // 19 (issue 32): engines and assets over the wire. Every engine and
    // asset has an owner, the user who registered it (existing ones: the
    // user `admin`, made here if the registry had entries before users).
    // An upload writes its blob's chunks in small transactions as they
    // arrive: until its hash is checked the blob row carries `pending_ms`
    // and no reader sees it. `uploader_id` charges a blob to the user whose
    // upload stored it (upload quotas). Events get the kinds `engine` and
    // `asset` (`events` is rebuilt for the CHECK).
    r#"
INSERT INTO users (name, role, trusted, created_ms)
    SELECT 'admin', 'admin', 1,
           COALESCE((SELECT MIN(created_ms) FROM engines), (SELECT MIN(created_ms) FROM assets), 0)
    WHERE NOT EXISTS (SELECT 1 FROM users WHERE name = 'admin')
      AND (EXISTS (SELECT 1 FROM engines) OR EXISTS (SELECT 1 FROM assets));
-- Set for every row: a name belongs to the user who registered it.
ALTER TABLE engines ADD COLUMN owner_id INTEGER REFERENCES users (id);
UPDATE engines SET owner_id = (SELECT id FROM users WHERE name = 'admin');
ALTER TABLE assets ADD COLUMN owner_id INTEGER REFERENCES users (id);
UPDATE assets SET owner_id = (SELECT id FROM users WHERE name = 'admin');
-- Unix ms an upload over the wire began; NULL once the blob is complete
-- (its size and SHA-256 checked). Readers see only complete blobs.
ALTER TABLE blobs ADD COLUMN pending_ms INTEGER;
-- The user whose upload stored the blob; NULL for the database file's
-- `engine add`/`asset add` and blobs from before this version.
ALTER TABLE blobs ADD COLUMN uploader_id INTEGER REFERENCES users (id);
CREATE INDEX blobs_by_uploader ON blobs (uploader_id) WHERE uploader_id IS NOT NULL;
CREATE TABLE events_new (
    id      INTEGER PRIMARY KEY,
    time_ms INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    user_id INTEGER REFERENCES users (id),
    kind    TEXT    NOT NULL CHECK (kind IN ('create', 'approve', 'reject', 'modify', 'stop',
                                             'resume', 'exclude', 'user', 'token', 'engine',
                                             'asset')),
    run_id  INTEGER REFERENCES runs (id),
    detail  TEXT    NOT NULL DEFAULT ''
);
INSERT INTO events_new (id, time_ms, actor, user_id, kind, run_id, detail)
    SELECT id, time_ms, actor, user_id, kind, run_id, detail FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_by_run ON events (run_id);
CREATE INDEX events_by_actor ON events (actor);
"#,
    // 20 (issue 32): the machine each worker reports, and an engine's
    // executables by instruction set. `workers.machine` is its JSON (CPU
    // model, ISA, flags, cores, memory in MiB); NULL: a worker that reported
    // none. Every executable of an engine moves to `engine_binaries`, tagged
    // with the ARCH value it needs ('' for the untagged one any worker may
    // take); an engine keeps its protocol, options and bench signature, which
    // all its executables share.
    r#"
ALTER TABLE workers ADD COLUMN machine TEXT;
CREATE TABLE engine_binaries (
    engine     TEXT    NOT NULL REFERENCES engines (name),
    -- 'x86-64-avx2', 'armv8-dotprod', ... or '' for the untagged executable.
    arch       TEXT    NOT NULL CHECK (length(arch) <= 32),
    sha256     TEXT    NOT NULL REFERENCES blobs (sha256),
    size       INTEGER NOT NULL CHECK (size >= 0),
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (engine, arch)
);
INSERT INTO engine_binaries (engine, arch, sha256, size, created_ms)
SELECT name, '', sha256, size, created_ms FROM engines;
ALTER TABLE engines DROP COLUMN sha256;
ALTER TABLE engines DROP COLUMN size;
"#,
    // 21 (issue 32): build from a commit. The build tools each worker reported (names
    // separated by single spaces, sorted; '' for none, as every worker
    // registered before), and the builds of a run's source engines that
    // failed, one per worker and run (a worker that failed gets no more of
    // the run's leases).
    r#"
ALTER TABLE workers ADD COLUMN tools TEXT NOT NULL DEFAULT '';

CREATE TABLE build_failures (
    run_id    INTEGER NOT NULL REFERENCES runs (id),
    worker_id INTEGER NOT NULL REFERENCES workers (id),
    lease_id  INTEGER NOT NULL REFERENCES leases (id),
    -- The source that did not build.
    repo      TEXT    NOT NULL,
    commit_id TEXT    NOT NULL CHECK (length(commit_id) = 40),
    -- What failed, one line, and the end of the build's output (at most
    -- 8192 bytes of UTF-8).
    reason    TEXT    NOT NULL,
    log_tail  TEXT    NOT NULL CHECK (length(CAST(log_tail AS BLOB)) <= 8192),
    unix_ms   INTEGER NOT NULL,
    PRIMARY KEY (run_id, worker_id)
);
"#,
    // 22 (issue 33): worker versions and self-update. The target triple each
    // worker was built for ('' for one that did not say, as every worker
    // registered before), the version it replaced itself from (`xq-worker
    // work --auto-update`), and its last failed update: the version it
    // tried (NULL when it found no release), why, and when. Worker releases
    // are uploaded `xq-worker` executables by version and target; workers
    // older than the newest required one are refused.
    r#"
ALTER TABLE workers ADD COLUMN target TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN updated_from TEXT;
ALTER TABLE workers ADD COLUMN update_failed_to TEXT;
ALTER TABLE workers ADD COLUMN update_failure TEXT;
ALTER TABLE workers ADD COLUMN update_failed_ms INTEGER;

CREATE TABLE worker_releases (
    -- Dot-separated decimal numbers, compared number by number in Rust.
    version    TEXT    NOT NULL CHECK (length(version) BETWEEN 1 AND 64),
    target     TEXT    NOT NULL CHECK (length(target) BETWEEN 1 AND 64),
    sha256     TEXT    NOT NULL REFERENCES blobs (sha256),
    size       INTEGER NOT NULL CHECK (size >= 0),
    required   INTEGER NOT NULL CHECK (required IN (0, 1)),
    owner_id   INTEGER NOT NULL REFERENCES users (id),
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (target, version)
);
"#,
    // 23 (issue 33): each worker's speed with a run's base engine, measured
    // by the worker before its first lease of a run with a speed rule, and
    // the factor its time limits are scaled by; the latest per worker and run.
    r#"
CREATE TABLE run_worker_speeds (
    run_id      INTEGER NOT NULL REFERENCES runs (id),
    worker_id   INTEGER NOT NULL REFERENCES workers (id),
    -- The measured engine: its registry name, or 'built-in'.
    engine      TEXT    NOT NULL CHECK (length(engine) BETWEEN 1 AND 128),
    -- Nodes per second, one search thread; 0: it could not be measured.
    nps         INTEGER NOT NULL CHECK (nps >= 0),
    factor      REAL    NOT NULL CHECK (factor > 0),
    -- 'bench' (the engine's own bench) or 'search' (a fixed search).
    method      TEXT    NOT NULL CHECK (method IN ('bench', 'search')),
    measured_ms INTEGER NOT NULL,
    PRIMARY KEY (run_id, worker_id)
);
CREATE INDEX run_worker_speeds_by_worker ON run_worker_speeds (worker_id);
"#,
    // 24 (issue 34): each run's pairs in active leases, kept by triggers on
    // every insert, change and removal of a lease, so that handing out a
    // lease and counting a result no longer sum the run's active leases
    // (1–2 ms each at 10,000 leases in play).
    r#"
ALTER TABLE runs ADD COLUMN pairs_in_flight INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET pairs_in_flight =
    (SELECT COALESCE(SUM(l.pairs), 0) FROM leases l
     WHERE l.run_id = runs.id AND l.state = 'active');
CREATE TRIGGER leases_in_flight_insert AFTER INSERT ON leases WHEN NEW.state = 'active'
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight + NEW.pairs WHERE id = NEW.run_id;
END;
CREATE TRIGGER leases_in_flight_update AFTER UPDATE OF state, pairs, run_id ON leases
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight - OLD.pairs
    WHERE id = OLD.run_id AND OLD.state = 'active';
    UPDATE runs SET pairs_in_flight = pairs_in_flight + NEW.pairs
    WHERE id = NEW.run_id AND NEW.state = 'active';
END;
CREATE TRIGGER leases_in_flight_delete AFTER DELETE ON leases WHEN OLD.state = 'active'
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight - OLD.pairs WHERE id = OLD.run_id;
END;
"#,
    // 25 (issue 36): datagen runs. `runs` is rebuilt to admit the kind
    // 'datagen' (a CHECK cannot be altered); the lease triggers that keep
    // `pairs_in_flight` name `runs`, so they are dropped first and made
    // again. A datagen run keeps its Red-view totals (results, game lengths)
    // in `variant_totals`, as variant 0.
    r#"
DROP TRIGGER leases_in_flight_insert;
DROP TRIGGER leases_in_flight_update;
DROP TRIGGER leases_in_flight_delete;
CREATE TABLE runs_new (
    id              INTEGER PRIMARY KEY,
    spec            TEXT    NOT NULL,
    kind            TEXT    NOT NULL
                    CHECK (kind IN ('sprt', 'spsa', 'games', 'variants', 'datagen')),
    priority        INTEGER NOT NULL,
    state           TEXT    NOT NULL
                    CHECK (state IN ('pending', 'active', 'finished', 'stopped', 'rejected')),
    target_pairs    INTEGER,
    pairs_issued    INTEGER NOT NULL DEFAULT 0,
    pairs           INTEGER NOT NULL DEFAULT 0,
    penta_ll        INTEGER NOT NULL DEFAULT 0,
    penta_ld        INTEGER NOT NULL DEFAULT 0,
    penta_dd        INTEGER NOT NULL DEFAULT 0,
    penta_dw        INTEGER NOT NULL DEFAULT 0,
    penta_ww        INTEGER NOT NULL DEFAULT 0,
    wins            INTEGER NOT NULL DEFAULT 0,
    draws           INTEGER NOT NULL DEFAULT 0,
    losses          INTEGER NOT NULL DEFAULT 0,
    total_plies     INTEGER NOT NULL DEFAULT 0,
    sprt_llr        REAL,
    sprt_state      TEXT CHECK (sprt_state IN ('continue', 'accepted_h0', 'accepted_h1')),
    spsa_state      TEXT,
    created_ms      INTEGER NOT NULL,
    updated_ms      INTEGER NOT NULL,
    verifies        INTEGER REFERENCES runs (id),
    author_id       INTEGER REFERENCES users (id),
    -- Why an approver rejected the test (state 'rejected'), shown to its author.
    rejection       TEXT,
    share           INTEGER NOT NULL DEFAULT 100 CHECK (share > 0),
    pairs_in_flight INTEGER NOT NULL DEFAULT 0
);
INSERT INTO runs_new (id, spec, kind, priority, state, target_pairs, pairs_issued, pairs,
                      penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses,
                      total_plies, sprt_llr, sprt_state, spsa_state, created_ms, updated_ms,
                      verifies, author_id, rejection, share, pairs_in_flight)
    SELECT id, spec, kind, priority, state, target_pairs, pairs_issued, pairs,
           penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses,
           total_plies, sprt_llr, sprt_state, spsa_state, created_ms, updated_ms,
           verifies, author_id, rejection, share, pairs_in_flight
    FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_by_author ON runs (author_id);
CREATE TRIGGER leases_in_flight_insert AFTER INSERT ON leases WHEN NEW.state = 'active'
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight + NEW.pairs WHERE id = NEW.run_id;
END;
CREATE TRIGGER leases_in_flight_update AFTER UPDATE OF state, pairs, run_id ON leases
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight - OLD.pairs
    WHERE id = OLD.run_id AND OLD.state = 'active';
    UPDATE runs SET pairs_in_flight = pairs_in_flight + NEW.pairs
    WHERE id = NEW.run_id AND NEW.state = 'active';
END;
CREATE TRIGGER leases_in_flight_delete AFTER DELETE ON leases WHEN OLD.state = 'active'
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight - OLD.pairs WHERE id = OLD.run_id;
END;
"#,
    // 26 (issue 48): kinds own their progress. What a run's kind keeps
    // beside the shared totals is one JSON value, `runs.progress`, that the
    // kind's own file writes and reads (`Kind::read_progress`); `runs.kind`
    // is plain text that the store checks against the spec. So a new kind
    // needs neither a rebuild nor a column. The values move in: an SPRT's
    // LLR and state (`{"llr":…,"state":…}`), a tune's state (its JSON as it
    // was), a variants run's totals (a JSON array in the spec's order, null
    // for a variant without a result) and a datagen run's totals (its
    // `variant_totals` row "variant 0"); `variant_totals` goes. `runs` is
    // rebuilt a last time to drop the CHECK on `kind` and the three columns:
    // its index and foreign keys are kept, and the lease triggers that keep
    // `pairs_in_flight` (they name `runs`) are dropped first and made again.
    r#"
DROP TRIGGER leases_in_flight_insert;
DROP TRIGGER leases_in_flight_update;
DROP TRIGGER leases_in_flight_delete;
CREATE TABLE runs_new (
    id              INTEGER PRIMARY KEY,
    -- RunSpec as JSON.
    spec            TEXT    NOT NULL,
    -- The spec's kind ('sprt', 'spsa', …), checked in Rust, not here.
    kind            TEXT    NOT NULL,
    priority        INTEGER NOT NULL,
    state           TEXT    NOT NULL
                    CHECK (state IN ('pending', 'active', 'finished', 'stopped', 'rejected')),
    target_pairs    INTEGER,
    pairs_issued    INTEGER NOT NULL DEFAULT 0,
    pairs           INTEGER NOT NULL DEFAULT 0,
    penta_ll        INTEGER NOT NULL DEFAULT 0,
    penta_ld        INTEGER NOT NULL DEFAULT 0,
    penta_dd        INTEGER NOT NULL DEFAULT 0,
    penta_dw        INTEGER NOT NULL DEFAULT 0,
    penta_ww        INTEGER NOT NULL DEFAULT 0,
    wins            INTEGER NOT NULL DEFAULT 0,
    draws           INTEGER NOT NULL DEFAULT 0,
    losses          INTEGER NOT NULL DEFAULT 0,
    total_plies     INTEGER NOT NULL DEFAULT 0,
    -- The kind's progress as JSON, in the form its kind writes; NULL while
    -- it has kept none.
    progress        TEXT,
    created_ms      INTEGER NOT NULL,
    updated_ms      INTEGER NOT NULL,
    verifies        INTEGER REFERENCES runs (id),
    author_id       INTEGER REFERENCES users (id),
    -- Why an approver rejected the test (state 'rejected'), shown to its author.
    rejection       TEXT,
    share           INTEGER NOT NULL DEFAULT 100 CHECK (share > 0),
    pairs_in_flight INTEGER NOT NULL DEFAULT 0
);
INSERT INTO runs_new (id, spec, kind, priority, state, target_pairs, pairs_issued, pairs,
                      penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses,
                      total_plies, progress, created_ms, updated_ms, verifies, author_id,
                      rejection, share, pairs_in_flight)
    SELECT id, spec, kind, priority, state, target_pairs, pairs_issued, pairs,
           penta_ll, penta_ld, penta_dd, penta_dw, penta_ww, wins, draws, losses,
           total_plies,
           CASE kind
               WHEN 'sprt' THEN
                   CASE WHEN sprt_llr IS NOT NULL AND sprt_state IS NOT NULL
                        THEN json_object('llr', sprt_llr, 'state', sprt_state) END
               WHEN 'spsa' THEN spsa_state
               WHEN 'variants' THEN
                   (SELECT json_group_array(json(t.totals) ORDER BY r.key)
                    FROM json_each(runs.spec, '$.kind.variants.rules') r
                    LEFT JOIN variant_totals t ON t.run_id = runs.id AND t.variant = r.key)
               WHEN 'datagen' THEN
                   (SELECT json(t.totals) FROM variant_totals t
                    WHERE t.run_id = runs.id AND t.variant = 0)
           END,
           created_ms, updated_ms, verifies, author_id, rejection, share, pairs_in_flight
    FROM runs;
DROP TABLE variant_totals;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_by_author ON runs (author_id);
CREATE TRIGGER leases_in_flight_insert AFTER INSERT ON leases WHEN NEW.state = 'active'
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight + NEW.pairs WHERE id = NEW.run_id;
END;
CREATE TRIGGER leases_in_flight_update AFTER UPDATE OF state, pairs, run_id ON leases
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight - OLD.pairs
    WHERE id = OLD.run_id AND OLD.state = 'active';
    UPDATE runs SET pairs_in_flight = pairs_in_flight + NEW.pairs
    WHERE id = NEW.run_id AND NEW.state = 'active';
END;
CREATE TRIGGER leases_in_flight_delete AFTER DELETE ON leases WHEN OLD.state = 'active'
BEGIN
    UPDATE runs SET pairs_in_flight = pairs_in_flight - OLD.pairs WHERE id = OLD.run_id;
END;
"#,
    // 27 (issue 48): an event's kind is plain text that `EventKind::parse`
    // checks as it reads, as a run's kind is since 26, so a new kind of
    // event needs no table rebuild; this is the last. Worker releases,
    // logged as `engine` events until now (their detail begins `worker
    // release `, an engine's `engine '`), get their own kind.
    r#"
CREATE TABLE events_new (
    id      INTEGER PRIMARY KEY,
    time_ms INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    user_id INTEGER REFERENCES users (id),
    kind    TEXT    NOT NULL,
    run_id  INTEGER REFERENCES runs (id),
    detail  TEXT    NOT NULL DEFAULT ''
);
INSERT INTO events_new (id, time_ms, actor, user_id, kind, run_id, detail)
    SELECT id, time_ms, actor, user_id,
           CASE WHEN kind = 'engine' AND detail LIKE 'worker release %' THEN 'worker_release'
                ELSE kind END,
           run_id, detail
    FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_by_run ON events (run_id);
CREATE INDEX events_by_actor ON events (actor);
"#,
    // 28 (issue 50): an engine's signature may be a fixed search's node
    // count (`signature` then counts `go depth signature_depth`); 0 keeps
    // the meaning it had, a bench count (or none, with `signature` 0).
    r#"
ALTER TABLE engines ADD COLUMN signature_depth INTEGER NOT NULL DEFAULT 0;
"#,
    // 29 (issue 50): a worker's identity across restarts and updates: the
    // machine id it keeps in its state directory (32 lowercase hex digits;
    // NULL: none, as for every worker registered before). A worker that
    // registers with the machine id of a row its token registered takes
    // that row again (`store::workers::register`).
    r#"
ALTER TABLE workers ADD COLUMN machine_id TEXT
    CHECK (machine_id IS NULL OR length(machine_id) = 32);
CREATE INDEX workers_by_machine_id ON workers (machine_id, token_key)
    WHERE machine_id IS NOT NULL;
"#,
    // 30 (issue 50): blobs that nothing references are deleted after a
    // grace period (`store::blobs::collect`), counted from when their
    // upload began: `stored_ms`, set as an upload completes (unix ms). The
    // blobs stored before get this migration's time, and so a whole grace
    // period too.
    r#"
ALTER TABLE blobs ADD COLUMN stored_ms INTEGER;
UPDATE blobs SET stored_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
    WHERE pending_ms IS NULL;
"#,
    // 31 (issue 50): which engine builds a worker played, with each counted
    // result: the ARCH values its machine took for the lease's two players
    // (the choice the worker makes, `WorkSpec::builds_for`), as 'A B' with
    // '-' for a player that played no tagged build; NULL when neither did,
    // as for every result before.
    r#"
ALTER TABLE lease_results ADD COLUMN builds TEXT;
"#,
];

/// A migrated in-memory database, for the store's unit tests.
#[cfg(test)]
pub(crate) fn memory() -> Connection {
    let mut conn = Connection::open_in_memory().expect("an in-memory database");
    migrate(&mut conn).expect("the migrations apply");
    conn
}

/// Brings the schema up to date in one transaction per migration. Foreign
/// keys are off meanwhile (a table rebuild needs that, and it cannot change
/// inside a transaction); each migration checks them before it commits.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let enforced: bool = conn.pragma_query_value(None, "foreign_keys", |row| row.get(0))?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let result = apply(conn);
    conn.pragma_update(None, "foreign_keys", enforced)?;
    result
}

fn apply(conn: &mut Connection) -> Result<(), StoreError> {
    let version = version(conn)?;
    if version > MIGRATIONS.len() {
        return Err(StoreError::Schema(format!(
            "database schema version {version} is newer than this coordinator's {}",
            MIGRATIONS.len()
        )));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        if tx.prepare("PRAGMA foreign_key_check")?.exists([])? {
            return Err(StoreError::Schema(format!(
                "migration {} breaks a foreign key",
                index + 1
            )));
        }
        tx.pragma_update(None, "user_version", (index + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

/// The schema version of `conn` (`PRAGMA user_version`).
pub fn version(conn: &Connection) -> Result<usize, StoreError> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    usize::try_from(version)
        .map_err(|_| StoreError::Schema(format!("invalid schema version {version}")))
}

/// One schema object as SQLite stores it: `(type, name, sql)`.
pub type SchemaEntry = (String, String, Option<String>);

/// Every schema object of `conn` except SQLite's own, sorted.
pub fn schema(conn: &Connection) -> Result<Vec<SchemaEntry>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'
         ORDER BY type, name",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The schema the first `version` migrations make, as [`schema`] lists it:
/// a database at that version made by this project has exactly these objects.
pub fn schema_at(version: usize) -> Result<Vec<SchemaEntry>, StoreError> {
    if version > MIGRATIONS.len() {
        return Err(StoreError::Schema(format!(
            "schema version {version} is newer than this coordinator's {}",
            MIGRATIONS.len()
        )));
    }
    let mut conn = Connection::open_in_memory()?;
    for sql in &MIGRATIONS[..version] {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.commit()?;
    }
    schema(&conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_validate_on_an_in_memory_database() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
        conn.execute_batch("PRAGMA foreign_key_check; PRAGMA integrity_check;")
            .unwrap();
        // Running again is a no-op.
        migrate(&mut conn).unwrap();
        assert_eq!(schema(&conn).unwrap(), schema_at(MIGRATIONS.len()).unwrap());
    }

    #[test]
    fn the_variants_migration_keeps_runs_and_their_leases() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                 VALUES ('{}', 'games', 0, 'active', 1, 1);
             INSERT INTO workers (name, threads, version, signature, registered_ms, last_seen_ms)
                 VALUES ('w', 1, '0', 0, 1, 1);
             INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs, work,
                                 created_ms, deadline_ms)
                 VALUES (1, 1, 'active', 0, 4, '{}', 1, 2);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let kept: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM runs JOIN leases ON leases.run_id = runs.id",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(kept, 1);
        conn.execute(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
             VALUES ('{}', 'variants', 0, 'active', 1, 1)",
            [],
        )
        .unwrap();
        let enforced: bool = conn
            .pragma_query_value(None, "foreign_keys", |r| r.get(0))
            .unwrap();
        assert!(enforced);
        assert!(
            conn.execute("INSERT INTO run_reasons VALUES (99, 'checkmate', 2)", [])
                .is_err()
        );
    }

    /// Every foreign key of every table, as `PRAGMA foreign_key_list` gives
    /// them: `(table, referenced table, from, to)`.
    fn foreign_keys(conn: &Connection) -> Vec<(String, String, String, String)> {
        conn.prepare(
            "SELECT m.name, f.\"table\", f.\"from\", f.\"to\"
             FROM sqlite_master m, pragma_foreign_key_list(m.name) f
             WHERE m.type = 'table' ORDER BY 1, 2, 3",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    #[test]
    fn the_progress_migration_keeps_every_index_trigger_and_foreign_key_of_runs() {
        let at = |version: usize| {
            let conn = Connection::open_in_memory().unwrap();
            for sql in &MIGRATIONS[..version] {
                conn.execute_batch(sql).unwrap();
            }
            conn
        };
        let (before, after) = (at(25), at(26));
        let others = |conn: &Connection| -> Vec<SchemaEntry> {
            schema(conn)
                .unwrap()
                .into_iter()
                .filter(|(kind, name, _)| kind != "table" || name != "runs")
                .filter(|(_, name, _)| name != "variant_totals")
                .collect()
        };
        assert_eq!(
            others(&after),
            others(&before),
            "indexes, triggers and the other tables"
        );
        let no_variant_totals = |mut fks: Vec<(String, String, String, String)>| {
            fks.retain(|fk| fk.0 != "variant_totals");
            fks
        };
        assert_eq!(
            foreign_keys(&after),
            no_variant_totals(foreign_keys(&before))
        );
        let columns = |conn: &Connection| -> Vec<String> {
            conn.prepare("SELECT name FROM pragma_table_info('runs')")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let mut kept = columns(&before);
        kept.retain(|c| !["sprt_llr", "sprt_state", "spsa_state"].contains(&c.as_str()));
        let mut now = columns(&after);
        now.retain(|c| c != "progress");
        assert_eq!(now, kept);
        // A kind the schema has never heard of is stored; Rust checks it.
        after
            .execute(
                "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                 VALUES ('{}', 'sixth', 0, 'active', 1, 1)",
                [],
            )
            .unwrap();
    }

    #[test]
    fn the_game_archive_refuses_rows_that_contradict_themselves() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        migrate(&mut conn).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (spec, kind, priority, state, created_ms, updated_ms)
                 VALUES ('{}', 'sprt', 0, 'active', 1, 1);
             INSERT INTO workers (name, threads, version, signature, registered_ms, last_seen_ms)
                 VALUES ('w', 1, '0', 0, 1, 1);
             INSERT INTO leases (run_id, worker_id, state, opening_offset, pairs,
                                 created_ms, deadline_ms)
                 VALUES (1, 1, 'done', 0, 1, 1, 2);
             INSERT INTO game_batches (lease_id, run_id, data) VALUES (1, 1, x'01');",
        )
        .unwrap();
        let insert = |index: i64, result: &str, loser: Option<i64>| {
            conn.execute(
                "INSERT INTO games (run_id, lease_id, worker_id, game_index, slot, opening_index,
                                    red_player, result, reason, loser, plies)
                 VALUES (1, 1, 1, ?1, ?1, 0, 0, ?2, 'checkmate', ?3, 40)",
                rusqlite::params![index, result, loser],
            )
        };
        insert(0, "red", Some(1)).unwrap();
        assert!(insert(0, "black", Some(0)).is_err(), "a game stored twice");
        assert!(insert(1, "draw", Some(0)).is_err(), "a draw with a loser");
        assert!(insert(1, "red", None).is_err(), "a win without a loser");
        assert!(insert(1, "white", Some(0)).is_err(), "an unknown result");
        insert(1, "draw", None).unwrap();
        assert!(
            conn.execute(
                "INSERT INTO game_batches (lease_id, run_id, data) VALUES (9, 1, x'01')",
                []
            )
            .is_err(),
            "a batch of no lease"
        );
    }

    #[test]
    fn a_registry_from_before_users_belongs_to_a_new_admin() {
        let mut conn = Connection::open_in_memory().unwrap();
        for (i, sql) in MIGRATIONS[..18].iter().enumerate() {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", i as i64 + 1)
                .unwrap();
        }
        conn.execute_batch(
            "INSERT INTO blobs (sha256, size) VALUES ('aa', 0);
             INSERT INTO engines (name, sha256, size, signature, protocol, options, created_ms)
                 VALUES ('e', 'aa', 0, 1, 'uci', '{}', 50);
             INSERT INTO assets (name, sha256, created_ms) VALUES ('a', 'aa', 40);",
        )
        .unwrap();
        assert_eq!(
            conn.query_row("SELECT COUNT(*) FROM users", [], |r| r.get::<_, i64>(0))
                .unwrap(),
            0
        );
        migrate(&mut conn).unwrap();
        let owners: Vec<(String, i64)> = conn
            .prepare(
                "SELECT users.name, users.created_ms FROM engines JOIN users ON users.id = owner_id
                 UNION ALL
                 SELECT users.name, users.created_ms FROM assets JOIN users ON users.id = owner_id",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(owners, [("admin".to_owned(), 50), ("admin".to_owned(), 50)]);
        let mut empty = Connection::open_in_memory().unwrap();
        migrate(&mut empty).unwrap();
        assert_eq!(
            empty
                .query_row("SELECT COUNT(*) FROM users", [], |r| r.get::<_, i64>(0))
                .unwrap(),
            0,
            "no registry, no admin"
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", MIGRATIONS.len() as i64 + 1)
            .unwrap();
        assert!(matches!(migrate(&mut conn), Err(StoreError::Schema(_))));
    }
}
