/**
 * Schema of the single Engram SQLite file. Migration N (1-based) brings the file from
 * `PRAGMA user_version = N-1` to N. Append only: never edit a migration that shipped.
 */
import { presumedTagAuthor } from '../../domain/tag-authors.js';
import type BetterSqlite3 from 'better-sqlite3';

/** SQL, or a function for steps SQL alone cannot express; run inside a transaction. */
export type Migration = string | ((db: BetterSqlite3.Database) => void);

export const MIGRATIONS: readonly Migration[] = [
  // 1: control store, reflection store, event bus.
  `
  CREATE TABLE orgs (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE agents (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    type       TEXT NOT NULL,
    upstream   TEXT NOT NULL,  -- JSON UpstreamSettings
    memory     TEXT NOT NULL,  -- JSON MemorySettings
    secrets    TEXT NOT NULL,  -- SecretBox-sealed JSON AgentSecrets
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (org_id, name)
  );

  CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,
    agent_id     TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL,
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    last_used_at INTEGER
  );
  CREATE INDEX tokens_agent ON tokens(agent_id);

  -- No foreign key to agents: a request finishing after its agent was deleted must not
  -- fail on its last write; deleteAgent/deleteOrg remove these rows explicitly.
  CREATE TABLE conversations (
    agent_id   TEXT NOT NULL,
    id         TEXT NOT NULL,
    state      TEXT NOT NULL,  -- JSON ConversationState
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, id)
  ) WITHOUT ROWID;

  CREATE TABLE agent_indexes (
    agent_id   TEXT PRIMARY KEY,
    markdown   TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );

  CREATE TABLE reflections (
    seq          INTEGER PRIMARY KEY,  -- rowid, joins the FTS index
    agent_id     TEXT NOT NULL,
    id           TEXT NOT NULL,
    kind         TEXT NOT NULL,
    content      TEXT NOT NULL,
    topic        TEXT NOT NULL,
    tags         TEXT NOT NULL,  -- JSON string[]
    source       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    use_count    INTEGER NOT NULL DEFAULT 0,
    embedder_id  TEXT NOT NULL,
    vector       BLOB NOT NULL,  -- little-endian float32
    UNIQUE (agent_id, id)
  );
  CREATE INDEX reflections_recent ON reflections(agent_id, updated_at DESC, seq DESC);

  CREATE VIRTUAL TABLE reflections_fts USING fts5(
    content, topic, tags,
    content = 'reflections', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
  );

  -- Bumped on every change that affects the in-memory vector cache, by any connection,
  -- so a cache built from an older version is never used.
  CREATE TABLE reflection_versions (
    agent_id TEXT PRIMARY KEY,
    version  INTEGER NOT NULL
  );

  CREATE TRIGGER reflections_ai AFTER INSERT ON reflections BEGIN
    INSERT INTO reflections_fts(rowid, content, topic, tags) VALUES (new.seq, new.content, new.topic, new.tags);
    INSERT INTO reflection_versions(agent_id, version) VALUES (new.agent_id, 1)
      ON CONFLICT(agent_id) DO UPDATE SET version = version + 1;
  END;

  CREATE TRIGGER reflections_ad AFTER DELETE ON reflections BEGIN
    INSERT INTO reflections_fts(reflections_fts, rowid, content, topic, tags)
      VALUES ('delete', old.seq, old.content, old.topic, old.tags);
    UPDATE reflection_versions SET version = version + 1 WHERE agent_id = old.agent_id;
  END;

  CREATE TRIGGER reflections_au_text AFTER UPDATE OF content, topic, tags ON reflections BEGIN
    INSERT INTO reflections_fts(reflections_fts, rowid, content, topic, tags)
      VALUES ('delete', old.seq, old.content, old.topic, old.tags);
    INSERT INTO reflections_fts(rowid, content, topic, tags) VALUES (new.seq, new.content, new.topic, new.tags);
  END;

  CREATE TRIGGER reflections_au_vector AFTER UPDATE OF vector, kind ON reflections BEGIN
    UPDATE reflection_versions SET version = version + 1 WHERE agent_id = new.agent_id;
  END;

  -- AUTOINCREMENT: a sequence number is never reused, so a late ack of a deleted
  -- message can never hit a newer one.
  CREATE TABLE bus_messages (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    subject      TEXT NOT NULL,
    msg_id       TEXT,
    payload      TEXT NOT NULL,  -- JSON
    published_at INTEGER NOT NULL,
    due_at       INTEGER NOT NULL,  -- deliverable from; while leased, the lease expiry
    attempts     INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX bus_messages_due ON bus_messages(subject, due_at);
  CREATE UNIQUE INDEX bus_messages_msg_id ON bus_messages(subject, msg_id) WHERE msg_id IS NOT NULL;

  CREATE TABLE bus_dead_letters (
    seq          INTEGER PRIMARY KEY,
    subject      TEXT NOT NULL,
    payload      TEXT NOT NULL,
    attempts     INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    published_at INTEGER NOT NULL,
    failed_at    INTEGER NOT NULL
  );
  CREATE INDEX bus_dead_letters_subject ON bus_dead_letters(subject, failed_at);
  `,

  // 2: one FTS5 index per agent instead of one shared index kept by triggers, so a
  // keyword query only touches its own agent's rows (see keyword-index.ts). The
  // in-memory snapshots' version moves from reflection_versions to reflection_tenants.
  (db) => {
    db.exec(`
      DROP TRIGGER reflections_ai;
      DROP TRIGGER reflections_ad;
      DROP TRIGGER reflections_au_text;
      DROP TRIGGER reflections_au_vector;
      DROP TABLE reflections_fts;
      DROP TABLE reflection_versions;

      -- One FTS5 table per agent (reflections_fts_<n>), created on the agent's first
      -- write. version changes with every write to the agent's reflections, from any
      -- connection, so a snapshot built from an older version is never used.
      CREATE TABLE reflection_tenants (
        n        INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT NOT NULL UNIQUE,
        version  INTEGER NOT NULL
      );
    `);
    const agents = db.prepare('SELECT DISTINCT agent_id FROM reflections').pluck().all() as string[];
    const register = db.prepare('INSERT INTO reflection_tenants (agent_id, version) VALUES (?, 1) RETURNING n').pluck();
    for (const agentId of agents) {
      const n = register.get(agentId) as number;
      db.exec(
        `CREATE VIRTUAL TABLE ${keywordTableName(n)} USING fts5(
           content, topic, tags,
           content = '', contentless_delete = 1,
           tokenize = 'unicode61 remove_diacritics 2'
         )`,
      );
      db.prepare(
        `INSERT INTO ${keywordTableName(n)} (rowid, content, topic, tags)
         SELECT seq, content, topic, (SELECT group_concat(value, ' ') FROM json_each(reflections.tags))
         FROM reflections WHERE agent_id = ?`,
      ).run(agentId);
    }
  },

  // 3: the keyword index moves into memory, next to the vectors (keyword-index.ts): a
  // search then runs no FTS5 query, and a write maintains no FTS5 table. Conversation
  // states are rows of a few KB: in a WITHOUT ROWID table any row over ~1 KB spills to
  // an overflow page (two pages read per get, more written per put); a rowid table
  // keeps them inline up to ~4 KB.
  (db) => {
    const tenants = db.prepare('SELECT n FROM reflection_tenants').pluck().all() as number[];
    for (const n of tenants) db.exec(`DROP TABLE IF EXISTS ${keywordTableName(n)}`);
    db.exec(`
      CREATE TABLE conversations_v3 (
        agent_id   TEXT NOT NULL,
        id         TEXT NOT NULL,
        state      TEXT NOT NULL,  -- JSON ConversationState
        updated_at INTEGER NOT NULL,
        UNIQUE (agent_id, id)
      );
      INSERT INTO conversations_v3 (agent_id, id, state, updated_at)
        SELECT agent_id, id, state, updated_at FROM conversations;
      DROP TABLE conversations;
      ALTER TABLE conversations_v3 RENAME TO conversations;
    `);
  },

  // 4: conversations idle for long are pruned (Control.pruneConversations); the
  // index keeps that a range delete instead of a scan.
  `CREATE INDEX conversations_by_activity ON conversations (updated_at);`,

  // 5: Responses chains (Control.putResponse); `sealed` is the encrypted content.
  `
    CREATE TABLE responses (
      agent_id        TEXT NOT NULL,
      id              TEXT NOT NULL,
      conversation_id TEXT NOT NULL,
      previous_id     TEXT,
      created_at      INTEGER NOT NULL,
      sealed          TEXT NOT NULL,
      PRIMARY KEY (agent_id, id)
    );
    CREATE INDEX responses_by_age ON responses (created_at);
  `,
  // 6: conversation writes are revision-checked (ConversationStore.put), and the client
  // sessions the proxy saw get explicit rows instead of a prefix match on conversation ids.
  `
    ALTER TABLE conversations ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE conversation_sessions (
      agent_id TEXT NOT NULL,
      digest   TEXT NOT NULL,
      at       INTEGER NOT NULL,
      PRIMARY KEY (agent_id, digest)
    );
    CREATE INDEX conversation_sessions_by_age ON conversation_sessions (at);
    -- Session conversations are named s:<digest>:<opening>.
    INSERT OR REPLACE INTO conversation_sessions (agent_id, digest, at)
      SELECT agent_id, substr(id, 3, instr(substr(id, 3), ':') - 1), MAX(updated_at)
      FROM conversations WHERE id LIKE 's:%:%' GROUP BY agent_id, substr(id, 3, instr(substr(id, 3), ':') - 1);
  `,
  // 7: where a learnt reflection came from (ReflectionOrigin as JSON; null when stored on purpose).
  `ALTER TABLE reflections ADD COLUMN origin TEXT;`,
  // 8: who holds a lease (BusQueue.lease): the process start that leased it, its pid and
  // host, so a restarted server makes the leases of its dead predecessor due at once
  // instead of waiting out their ack wait (BusQueue.reclaim). Null when not leased.
  `
    ALTER TABLE bus_messages ADD COLUMN lease_owner TEXT;
    ALTER TABLE bus_messages ADD COLUMN lease_pid INTEGER;
    ALTER TABLE bus_messages ADD COLUMN lease_host TEXT;
  `,
  // 9: a message waiting for its notBefore can be superseded by a newer one with the same
  // key (PublishOptions.supersedes): a conversation's newer extraction job replaces the
  // one still waiting for the conversation to settle.
  `
    ALTER TABLE bus_messages ADD COLUMN supersede_key TEXT;
    CREATE INDEX bus_messages_supersede ON bus_messages (subject, supersede_key) WHERE supersede_key IS NOT NULL;
  `,
  // 10: dashboard users, their sessions, and the global MCP server's OAuth state
  // (AccountStore, accounts.ts). Each record is kept whole as JSON; the columns beside it
  // are what is looked up or pruned by. No foreign keys: the NATS adapter has none either,
  // and prune removes sessions and grants on its own schedule.
  `
    CREATE TABLE account_users (
      id     TEXT PRIMARY KEY,
      email  TEXT NOT NULL UNIQUE,  -- normalised; the unique index is what makes it unique
      record TEXT NOT NULL          -- JSON User
    );
    CREATE TABLE account_sessions (
      id         TEXT PRIMARY KEY,
      user_id    TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      record     TEXT NOT NULL       -- JSON SessionRecord
    );
    CREATE INDEX account_sessions_by_user ON account_sessions (user_id);
    CREATE INDEX account_sessions_by_expiry ON account_sessions (expires_at);
    CREATE TABLE oauth_clients (
      id     TEXT PRIMARY KEY,
      record TEXT NOT NULL  -- JSON OAuthClient
    );
    CREATE TABLE oauth_grants (
      id         TEXT PRIMARY KEY,
      user_id    TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      dead_at    INTEGER,        -- from when it can no longer be used; null while that is not known
      record     TEXT NOT NULL   -- JSON OAuthGrant
    );
    CREATE INDEX oauth_grants_by_user ON oauth_grants (user_id, created_at, id);
    CREATE INDEX oauth_grants_by_death ON oauth_grants (dead_at) WHERE dead_at IS NOT NULL;
    -- One row: the first key stored wins (AccountStore.signingKey).
    CREATE TABLE oauth_signing_key (
      slot   INTEGER PRIMARY KEY CHECK (slot = 1),
      record TEXT NOT NULL  -- JSON SigningKeyRecord
    );
  `,
  // 11: requests, injected reflections and extractions per agent and day (ActivityStore,
  // activity.ts). Small rows looked up by their key: WITHOUT ROWID keeps them in the key's
  // b-tree. Pruning goes by day across agents, hence the index. No foreign key to agents:
  // counts flushed after an agent's deletion must not fail (deleteAgent removes them).
  `
    CREATE TABLE agent_activity (
      agent_id    TEXT NOT NULL,
      day         TEXT NOT NULL,  -- YYYY-MM-DD, UTC: compares as text in date order
      requests    INTEGER NOT NULL,
      injected    INTEGER NOT NULL,
      extractions INTEGER NOT NULL,
      PRIMARY KEY (agent_id, day)
    ) WITHOUT ROWID;
    CREATE INDEX agent_activity_by_day ON agent_activity (day);
  `,
  // 12: a reflection replaced by a changed fact is kept as history (superseded_by: the id
  // of the one that replaced it, superseded_at: when; both null while current), and who
  // wrote its subject tags (tags_by: a TagAuthor, null while no one has). Existing tags
  // get the author the domain's backfill rule presumes (`presumedTagAuthor`, shared with
  // the import of older archives): JavaScript, not SQL, so the rule has one home.
  (db) => {
    db.exec(`
      ALTER TABLE reflections ADD COLUMN superseded_by TEXT;
      ALTER TABLE reflections ADD COLUMN superseded_at INTEGER;
      ALTER TABLE reflections ADD COLUMN tags_by TEXT;
    `);
    // Read whole before writing: better-sqlite3 cannot write while a read is iterating.
    const tagged = db.prepare(`SELECT seq, tags, source FROM reflections WHERE tags <> '[]'`).all() as {
      seq: number;
      tags: string;
      source: string;
    }[];
    const setAuthor = db.prepare('UPDATE reflections SET tags_by = ? WHERE seq = ?');
    for (const row of tagged) {
      const author = presumedTagAuthor({ tags: tagList(row.tags), source: row.source });
      if (author) setAuthor.run(author, row.seq);
    }
  },
  // 13: OAuth clients that never completed a sign-in are pruned (AccountStore.pruneClients):
  // unused_since is the registration time while the client has not, null once it has
  // (clientUnusedSince). Clients registered before are left null: whether they ever
  // signed in was not recorded, so they are never taken for unused.
  `
    ALTER TABLE oauth_clients ADD COLUMN unused_since INTEGER;
    CREATE INDEX oauth_clients_unused ON oauth_clients (unused_since) WHERE unused_since IS NOT NULL;
  `,
  // 14: the request log (DESIGN section 12): one row per proxied request, ids and numbers
  // only, never text. seq is the append order and the list's cursor (AUTOINCREMENT: never
  // reused once pruned). Listed per agent newest first, pruned by time across agents. No
  // foreign key to agents: an entry recorded as its agent is deleted must not fail.
  `
    CREATE TABLE request_log (
      seq             INTEGER PRIMARY KEY AUTOINCREMENT,
      id              TEXT NOT NULL UNIQUE,
      agent_id        TEXT NOT NULL,
      at              INTEGER NOT NULL,
      protocol        TEXT NOT NULL,
      conversation_id TEXT,
      status          INTEGER,
      outcome         TEXT NOT NULL,
      latency_ms      REAL NOT NULL,
      upstream_ms     REAL,
      injected        TEXT NOT NULL  -- JSON: [{reflectionId, score, why}]
    );
    CREATE INDEX request_log_by_agent ON request_log (agent_id, seq);
    CREATE INDEX request_log_by_at ON request_log (at);
  `,
  // 15: what Engram's own calls to an agent's upstream spent per day (ACTIVITY_COUNTS):
  // calls answered and the tokens they report, for extraction and for tagging. Days
  // counted before start at 0.
  `
    ALTER TABLE agent_activity ADD COLUMN extraction_calls INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_activity ADD COLUMN extraction_input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_activity ADD COLUMN extraction_output_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_activity ADD COLUMN tagging_calls INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_activity ADD COLUMN tagging_input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_activity ADD COLUMN tagging_output_tokens INTEGER NOT NULL DEFAULT 0;
  `,
  // 16: scopes (DESIGN section 13): the project a reflection holds in (null: everywhere)
  // and the app's end user who taught it (null: the agent's own, shared). Searches filter
  // in memory (the snapshot); listings by scope or user use the index.
  `
    ALTER TABLE reflections ADD COLUMN scope TEXT;
    ALTER TABLE reflections ADD COLUMN user_id TEXT;
    CREATE INDEX reflections_by_scope ON reflections (agent_id, scope, user_id);
  `,
  // 17: the request log says where each request was seen (its scope and end user) and why
  // memory was left out of it on purpose (`skipped`). Entries logged before: all null.
  `
    ALTER TABLE request_log ADD COLUMN scope TEXT;
    ALTER TABLE request_log ADD COLUMN user_id TEXT;
    ALTER TABLE request_log ADD COLUMN skipped TEXT;
  `,
  // 18: the request log says what reached the model and why (issue 32): what was kept
  // from earlier turns (`kept`, JSON [{reflectionId, turn}]), what of it was rebuilt
  // (`rebuilt`, JSON or null), why nothing was added (`reason`, which takes over
  // `skipped`'s two values), the agent's bar and the candidates just under it
  // (`near_misses`, JSON [{reflectionId, relevance}]). An injected reflection's number is
  // its `relevance` (it was written `score`; same scale). Entries logged before: nothing
  // kept, nothing rebuilt, no bar, no near misses. Listings by conversation use the index.
  (db) => {
    db.exec(`
      ALTER TABLE request_log ADD COLUMN kept TEXT NOT NULL DEFAULT '[]';
      ALTER TABLE request_log ADD COLUMN rebuilt TEXT;
      ALTER TABLE request_log ADD COLUMN reason TEXT;
      ALTER TABLE request_log ADD COLUMN bar REAL;
      ALTER TABLE request_log ADD COLUMN near_misses TEXT NOT NULL DEFAULT '[]';
      UPDATE request_log SET reason = skipped;
      ALTER TABLE request_log DROP COLUMN skipped;
      CREATE INDEX request_log_by_conversation ON request_log (agent_id, conversation_id, seq);
    `);
    const rows = db.prepare("SELECT seq, injected FROM request_log WHERE injected <> '[]'").all() as Array<{ seq: number; injected: string }>;
    const rewrite = db.prepare('UPDATE request_log SET injected = ? WHERE seq = ?');
    for (const { seq, injected } of rows) rewrite.run(JSON.stringify(relevanceNamed(injected)), seq);
  },
  // 19: a failed job says why (DESIGN section 12): the reason of a message's last failed
  // delivery, kept while it waits to be retried and carried into its dead letter.
  // Messages and dead letters stored before: null (no reason known).
  `
    ALTER TABLE bus_messages ADD COLUMN last_error TEXT;
    ALTER TABLE bus_dead_letters ADD COLUMN last_error TEXT;
  `,
  // 20: the request log says which bound on answers a request met (issue 31): an answer
  // over ENGRAM_ANSWER_MAX_BYTES, cut at ENGRAM_STREAM_MAX_MS, or with an event too large
  // to assemble. Entries logged before: null.
  `
    ALTER TABLE request_log ADD COLUMN answer_limit TEXT;
  `,
  // 21: of the input tokens Engram's own calls spent, those the provider read from its
  // prompt cache (issue 33). Days counted before: 0.
  `
    ALTER TABLE agent_activity ADD COLUMN extraction_cached_input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE agent_activity ADD COLUMN tagging_cached_input_tokens INTEGER NOT NULL DEFAULT 0;
  `,
];

/** Migration 18: an injected list as written before (`{reflectionId, score, why}`), its number named `relevance`. */
function relevanceNamed(json: string): Array<{ reflectionId: unknown; relevance: unknown; why: unknown }> {
  const list: unknown = JSON.parse(json);
  if (!Array.isArray(list)) return [];
  return list.map((item: { reflectionId?: unknown; score?: unknown; relevance?: unknown; why?: unknown }) => ({
    reflectionId: item.reflectionId,
    relevance: item.relevance ?? item.score,
    why: item.why,
  }));
}

/** A `tags` column as written by every version (a JSON array of strings); anything else reads as none. */
function tagList(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((tag): tag is string => typeof tag === 'string') : [];
  } catch {
    return [];
  }
}

/** Migration 2's per-agent FTS5 tables; `n` is an integer from our own table, so safe in an identifier. */
function keywordTableName(n: number): string {
  return `reflections_fts_${Math.trunc(n)}`;
}
