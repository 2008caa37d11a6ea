/**
 * The only reader of `process.env`. Every setting is also a `engram serve` flag
 * (`--port`, `--data-dir`, ...) and a key of the config file (`--config FILE`, else
 * `<data dir>/engram.toml` when present): flags win over the environment, which wins
 * over the file.
 */
import fs from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { isPersonalInstall } from './domain/hosts.js';
import { DEFAULT_MCP_SERVER_NAMES } from './domain/engram-tools.js';
import { adminTokenWeakness } from './domain/token-strength.js';
import { MAX_REFLECTIONS_PER_AGENT } from './domain/limits.js';
import { ConfigError } from './errors.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * Admin bearer token; when absent one is generated into `<dataDir>/admin-token`. A
   * configured one must be long and random enough (`adminTokenWeakness`).
   */
  adminToken: string | undefined;
  /** Quiet time after a final answer before a conversation's new turns are extracted. */
  settleMs: number;
  /** What this process runs (`engram serve --role`): the HTTP API, the extraction workers, or both. */
  role: Role;
  /** NATS with JetStream: the event bus and the control stores move there (DESIGN section 9). */
  natsUrl: string | undefined;
  /** Prefix of the streams, consumers and buckets Engram creates, so deployments can share one NATS. */
  natsPrefix: string;
  /** Weaviate: the reflection store moves there (one tenant per agent). */
  weaviateUrl: string | undefined;
  weaviateApiKey: string | undefined;
  weaviateCollection: string;
  /** Largest request body accepted on the proxy endpoints, in bytes. */
  bodyLimit: number;
  /** Largest transcript a hook may upload (endpoints 7 and 8), in bytes. */
  transcriptMaxBytes: number;
  /** Transcript uploads one agent may have in progress at once; past it a hook gets 429. */
  transcriptMaxConcurrent: number;
  /** Largest upstream SSE event (or JSON answer) the extraction side holds, in bytes: a larger one is relayed, not learnt from. */
  sseMaxEventBytes: number;
  /**
   * Most of one answer's text (content, tool calls, output items) the extraction side
   * assembles, in bytes: past it the client still gets the whole stream, and the turn is
   * learnt from its first this many bytes (the request log says `answer_max_bytes`).
   */
  answerMaxBytes: number;
  /**
   * Longest an upstream's answer may stream, from its headers to its end: past it the
   * upstream is cut and the client gets the protocol's error event (`stream_time_limit`).
   */
  streamMaxMs: number;
  /**
   * Time allowed for the upstream to send its response headers. A non-streamed answer's
   * headers come only once it is generated whole, so this is long.
   */
  upstreamTimeoutMs: number;
  /** Longest silence of the upstream between two chunks of its body: a stalled stream ends with an error event. */
  upstreamIdleTimeoutMs: number;
  /**
   * Whether upstreams may be at loopback and private addresses (a local model server).
   * Link-local and cloud metadata addresses are refused whatever this says.
   */
  upstreamAllowPrivate: boolean;
  /**
   * Whether upstreams that dashboard users set (`UpstreamSettings.setBy`) may be at
   * loopback and private addresses too (only when `upstreamAllowPrivate` also allows
   * them). By default they may when sign-up is off (the dashboard's users are the ones
   * the operator invited), or on a personal install (`isPersonalInstall`: Engram listens
   * on loopback only, behind no proxy, so whoever signs up is on this machine already),
   * and may not when anyone can sign up from elsewhere: the operator's own network is not
   * a stranger's to reach through Engram.
   */
  dashboardUpstreamAllowPrivate: boolean;
  /**
   * `dashboardUpstreamAllowPrivate` holds only because this is a personal install (not
   * set, sign-up open): a dashboard request that did not come from this machine's own
   * browser (through a proxy or tunnel, or naming another host) is held to the strict
   * policy all the same (src/http/dashboard/this-machine.ts).
   */
  dashboardUpstreamPrivateFromThisMachineOnly: boolean;
  /** What one tenant may ask of this process (src/http/request-limits.ts); 0 turns a per-tenant limit off. */
  limits: {
    /** Requests a minute per agent (proxy, MCP, hooks, WebSocket frames). */
    agentPerMinute: number;
    /** Requests a minute per access token. */
    tokenPerMinute: number;
    /**
     * Requests in flight and WebSockets open per agent. On by default, at a sixteenth of
     * `maxInFlight`, so one agent (any stranger's, with open sign-up) cannot hold every
     * slot, nor every answer buffer, of the process.
     */
    agentConcurrency: number;
    /** Requests in flight in this process, all agents together (always on). */
    maxInFlight: number;
    /** Responses WebSockets open in this process (always on). */
    maxWebSockets: number;
    /** Reflections one agent may hold. */
    maxReflections: number;
  };
  /**
   * How long a client may take to send a request (Node's `server.requestTimeout` and
   * `headersTimeout`). Only the arrival of the request is bounded: a long answer streams
   * as long as it needs.
   */
  http: {
    /** Headers and body, from the first byte; 0: unbounded. */
    requestTimeoutMs: number;
    /** The headers alone. */
    headersTimeoutMs: number;
    /** Request bodies read at once for one client address (the proxy and MCP endpoints); more get 429. */
    bodiesPerAddress: number;
    /**
     * After an answer given before the request's body was read (401, 413, 429): how long
     * the rest of the body is read and discarded before the connection closes, so that the
     * client reads the answer instead of a reset (`src/http/lingering-close.ts`); 0: close at once.
     */
    lingerMs: number;
  };
  /**
   * The proxies in front of Engram whose `X-Forwarded-For` names the client: none
   * (`false`: the connection's own address is the client's), or their addresses and
   * ranges. Every per-address limit (log-in, sign-up, OAuth registration, bodies per
   * address) counts the address this yields, so behind a proxy without it every client
   * shares the proxy's.
   */
  trustProxy: TrustProxy;
  /** 32-byte key (hex or base64) encrypting upstream keys; else `<dataDir>/secret-key`. */
  secretKey: string | undefined;
  embeddings: { url: string; model: string; apiKey: string | undefined } | undefined;
  extraction: {
    /** Upper bound of the transcript text sent to one extraction call. */
    maxBytes: number;
    /**
     * Extraction calls one uploaded transcript may take (each up to `maxBytes`); a longer
     * new part keeps its most recent turns.
     */
    maxChunks: number;
    /** A job not acked (and not heartbeating) this long after delivery is redelivered to another worker. */
    ackWaitMs: number;
    maxDeliver: number;
    /** Jobs one worker process runs at once. */
    concurrency: number;
    /**
     * An agent's tagging jobs (its reflections without tags) run at most once per this
     * interval, each making at most 2 calls of 20 reflections (`memory/tagging-job.ts`).
     */
    taggingIntervalMs: number;
  };
  logLevel: string;
  /** `pretty` for a person at a terminal, `json` for a log collector; by default pretty when stdout is a terminal. */
  logFormat: LogFormat;
  /** `GET /metrics` answers only with the admin token (by default it is open on the listen address, as Prometheus targets usually are). */
  metricsRequireAdmin: boolean;
  /**
   * Engram's public base URL (`ENGRAM_PUBLIC_URL`): the OAuth issuer and the address in
   * the dashboard's configuration snippets. Undefined: `http://<host>:<port>` of the listener.
   */
  publicUrl: string | undefined;
  /** Whether anyone may sign up on the dashboard (`ENGRAM_SIGNUP=false`: invite-only; users are added by an operator). */
  signup: boolean;
  /**
   * OAuth clients registered at once (dynamic registration is open to anyone); past it a
   * registration gets 503 until unused ones are pruned (`UNUSED_CLIENT_GRACE_MS` after registering).
   */
  oauthMaxClients: number;
  /** The config file the settings were read from, if any. */
  configFile: string | undefined;
  /** Conversations idle this long are forgotten (their blocks, watermark); reflections stay. */
  conversationTtlMs: number;
  /** The request log (DESIGN section 12) keeps each proxied request's entry this long. */
  requestLogMs: number;
  /**
   * On SIGTERM, SIGINT or `close()`: how long requests, streams and WebSockets in flight may
   * run on once Engram takes no new ones; what remains then is cut.
   */
  shutdownGraceMs: number;
  /**
   * Answered turns whose recording the store refused (a full disk, NATS away) are kept in
   * memory and retried: at most this many turns and bytes, past which the oldest are lost.
   */
  recordingRetry: { maxTurns: number; maxBytes: number };
  mcp: {
    /** MCP server names under which a client's tools count as Engram's (detection of `mcp__engram__recall`, ...). */
    serverNames: string[];
  };
  websocket: {
    /** Largest frame a Responses WebSocket client may send (close code 1009 beyond it). */
    maxFrameBytes: number;
    /** A Responses WebSocket connection ends this long after it opened (the API's 60 minutes). */
    maxConnectionMs: number;
  };
}

export type Role = 'all' | 'api' | 'worker';
/** `false`, or addresses, CIDR ranges and `loopback` / `linklocal` / `uniquelocal` (Fastify's `trustProxy`). */
export type TrustProxy = false | string[];
export type LogFormat = 'pretty' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['pretty', 'json'];
/** The config file looked for in the data dir when neither `--config` nor `ENGRAM_CONFIG` names one. */
export const CONFIG_FILE_NAME = 'engram.toml';
export const ROLES: readonly Role[] = ['all', 'api', 'worker'];

export type Overrides = Partial<Record<SettingName, string>>;

type SettingName = (typeof SETTINGS)[number];
const SETTINGS = [
  'port',
  'host',
  'data-dir',
  'admin-token',
  'settle-ms',
  'role',
  'nats-url',
  'nats-prefix',
  'weaviate-url',
  'weaviate-api-key',
  'weaviate-collection',
  'body-limit',
  'upstream-timeout-ms',
  'upstream-idle-timeout-ms',
  'upstream-allow-private',
  'dashboard-upstream-allow-private',
  'rate-limit-agent',
  'rate-limit-token',
  'concurrency-per-agent',
  'max-in-flight',
  'max-websockets',
  'max-reflections',
  'request-timeout-ms',
  'headers-timeout-ms',
  'bodies-per-address',
  'trust-proxy',
  'linger-ms',
  'secret-key',
  'embeddings-url',
  'embeddings-model',
  'embeddings-key',
  'extraction-max-bytes',
  'extraction-max-chunks',
  'extraction-ack-wait-ms',
  'extraction-concurrency',
  'extraction-max-deliver',
  'tagging-interval-ms',
  'transcript-max-bytes',
  'transcript-max-concurrent',
  'sse-max-event-bytes',
  'answer-max-bytes',
  'stream-max-ms',
  'log-level',
  'log-format',
  'metrics-require-admin',
  'public-url',
  'signup',
  'oauth-max-clients',
  'config',
  'conversation-ttl-days',
  'request-log-days',
  'mcp-server-names',
  'ws-max-frame-bytes',
  'ws-max-connection-ms',
  'shutdown-grace-ms',
  'recording-retry-max-turns',
  'recording-retry-max-bytes',
] as const;

export const SETTING_NAMES: readonly string[] = SETTINGS;

export { ConfigError } from './errors.js';

/** The public URL without a trailing slash; it is a base, so it carries no query or fragment. */
function publicUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const url = new URL(raw);
  if (url.search || url.hash || !/^https?:$/.test(url.protocol)) {
    throw new ConfigError(`ENGRAM_PUBLIC_URL must be an http(s) URL without query or fragment, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, '');
}

/** `ENGRAM_DATA_DIR` for `data-dir`, and so on. */
function envName(setting: SettingName): string {
  return 'ENGRAM_' + setting.toUpperCase().replaceAll('-', '_');
}

interface ConfigFile {
  path: string;
  /** As strings, like the environment's. */
  settings: Overrides;
}

/**
 * The settings, from flags (`overrides`), else the environment, else the config file,
 * else the defaults. The file is `--config` / `ENGRAM_CONFIG` (which must exist), else
 * `<data dir>/engram.toml` if there is one.
 */
export function loadConfig(overrides: Overrides = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const named = overrides.config ?? (env.ENGRAM_CONFIG || undefined);
  if (named !== undefined) return resolveConfig(overrides, env, readConfigFile(path.resolve(named), { required: true }));
  // The data dir as flags and environment give it, to look for its engram.toml.
  const base = resolveConfig(overrides, env, undefined);
  const file = readConfigFile(path.join(base.dataDir, CONFIG_FILE_NAME), { required: false });
  if (file === undefined) return base;
  if (file.settings['data-dir'] !== undefined) {
    throw new ConfigError(`${file.path}: "data-dir" cannot be set in the data dir's own config file; use --config FILE (or ENGRAM_CONFIG) to name a file elsewhere`);
  }
  return resolveConfig(overrides, env, file);
}

/**
 * A TOML file of settings: keys are the setting names (`rate-limit-agent = 60`, or
 * `rate_limit_agent`); values are strings, numbers, booleans, or arrays of strings (a
 * list setting such as `mcp-server-names`). Unknown keys and tables are errors.
 */
function readConfigFile(file: string, options: { required: true }): ConfigFile;
function readConfigFile(file: string, options: { required: boolean }): ConfigFile | undefined;
function readConfigFile(file: string, { required }: { required: boolean }): ConfigFile | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (!required && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`Cannot read the config file ${file}: ${(error as Error).message}`);
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text);
  } catch (error) {
    throw new ConfigError(`The config file ${file} is not valid TOML: ${(error as Error).message}`);
  }
  const settings: Overrides = {};
  for (const [key, value] of Object.entries(parsed)) {
    const name = key.replaceAll('_', '-').toLowerCase();
    if (!(SETTINGS as readonly string[]).includes(name) || name === 'config') {
      throw new ConfigError(`${file}: unknown setting "${key}" (the settings are: ${SETTINGS.filter((setting) => setting !== 'config').join(', ')})`);
    }
    settings[name as SettingName] = fileValue(file, key, value);
  }
  return { path: file, settings };
}

function fileValue(file: string, key: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(',');
  throw new ConfigError(`${file}: "${key}" must be a string, a number, a boolean or a list of strings`);
}

function resolveConfig(overrides: Overrides, env: NodeJS.ProcessEnv, file: ConfigFile | undefined): Config {
  const fromFile: Overrides = file?.settings ?? {};
  const get = (name: SettingName): string | undefined => {
    const value = overrides[name] ?? (env[envName(name)] || undefined) ?? fromFile[name];
    return value === undefined || value === '' ? undefined : value;
  };
  /** Where a setting's value came from, so an error blames what the user wrote: `--port`, `ENGRAM_PORT`, or the file. */
  const source = (name: SettingName): string => {
    if (overrides[name] !== undefined) return `--${name}`;
    if (env[envName(name)]) return envName(name);
    if (file && fromFile[name] !== undefined) return `"${name}" in ${file.path}`;
    return envName(name);
  };
  const int = (name: SettingName, fallback: number, min = 0): number => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) {
      throw new ConfigError(`${source(name)} must be an integer >= ${min}, got "${raw}"`);
    }
    return value;
  };
  const bool = (name: SettingName, fallback: boolean): boolean => {
    const raw = get(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(raw)) return true;
    if (['false', '0', 'no', 'off'].includes(raw)) return false;
    throw new ConfigError(`${source(name)} must be true or false, got "${get(name)}"`);
  };
  const url = (name: SettingName): string | undefined => {
    const raw = get(name);
    if (raw === undefined) return undefined;
    try {
      new URL(raw);
    } catch {
      throw new ConfigError(`${source(name)} is not a URL: "${raw}"`);
    }
    return raw;
  };

  /** A name NATS and Weaviate both accept in theirs: letters, digits, `_` and `-`, starting with a letter. */
  const name = (setting: SettingName, fallback: string): string => {
    const raw = get(setting) ?? fallback;
    if (!/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(raw)) {
      throw new ConfigError(`${source(setting)} must be a letter then up to 63 letters, digits, _ or -, got "${raw}"`);
    }
    return raw;
  };

  const embeddingsUrl = url('embeddings-url');
  const maxInFlight = int('max-in-flight', 1024, 1);
  const signup = bool('signup', true);
  const requestTimeoutMs = int('request-timeout-ms', 300_000);
  const headersTimeoutMs = int('headers-timeout-ms', Math.min(60_000, requestTimeoutMs || 60_000), 1);
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`ENGRAM_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed ENGRAM_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  const host = get('host') ?? '127.0.0.1';
  const trust = trustProxy(get('trust-proxy'), source('trust-proxy'));
  const publicAddress = publicUrl(url('public-url'));
  // Open sign-up lets strangers in, unless only this machine can reach the dashboard.
  const personal = signup && get('dashboard-upstream-allow-private') === undefined && isPersonalInstall({ host, trustProxy: trust, publicUrl: publicAddress });
  return {
    port: int('port', 8420),
    host,
    dataDir: path.resolve(get('data-dir') ?? defaultDataDir(env)),
    adminToken: adminToken(get('admin-token')),
    settleMs: int('settle-ms', 30_000),
    role: role(get('role')),
    natsUrl: url('nats-url'),
    natsPrefix: name('nats-prefix', 'engram'),
    weaviateUrl: url('weaviate-url'),
    weaviateApiKey: get('weaviate-api-key'),
    weaviateCollection: collection(get('weaviate-collection')),
    bodyLimit: int('body-limit', 32 * 1024 * 1024, 1024),
    transcriptMaxBytes: int('transcript-max-bytes', 64 * 1024 * 1024, 1024),
    transcriptMaxConcurrent: int('transcript-max-concurrent', 2, 1),
    sseMaxEventBytes: int('sse-max-event-bytes', 8 * 1024 * 1024, 1024),
    // At least 64 KiB: an answer's first 16,384 characters name its conversation (`answeredConversationId`), so they are always kept.
    answerMaxBytes: int('answer-max-bytes', 4 * 1024 * 1024, 64 * 1024),
    streamMaxMs: int('stream-max-ms', 30 * 60 * 1000, 1),
    upstreamTimeoutMs: int('upstream-timeout-ms', 600_000, 1),
    upstreamIdleTimeoutMs: int('upstream-idle-timeout-ms', 60_000, 1),
    upstreamAllowPrivate: bool('upstream-allow-private', true),
    dashboardUpstreamAllowPrivate: bool('dashboard-upstream-allow-private', !signup || personal),
    dashboardUpstreamPrivateFromThisMachineOnly: personal,
    limits: {
      agentPerMinute: int('rate-limit-agent', 0),
      tokenPerMinute: int('rate-limit-token', 0),
      agentConcurrency: int('concurrency-per-agent', Math.max(1, Math.floor(maxInFlight / 16))),
      maxInFlight,
      maxWebSockets: int('max-websockets', 1024, 1),
      maxReflections: int('max-reflections', MAX_REFLECTIONS_PER_AGENT, 1),
    },
    http: { requestTimeoutMs, headersTimeoutMs, bodiesPerAddress: int('bodies-per-address', 16, 1), lingerMs: int('linger-ms', 30_000) },
    trustProxy: trust,
    secretKey: get('secret-key'),
    embeddings: embeddingsUrl
      ? { url: embeddingsUrl, model: get('embeddings-model') ?? 'text-embedding-3-small', apiKey: get('embeddings-key') }
      : undefined,
    extraction: {
      maxBytes: int('extraction-max-bytes', 48 * 1024, 1024),
      maxChunks: int('extraction-max-chunks', 8, 1),
      ackWaitMs: int('extraction-ack-wait-ms', 30_000, 1_000),
      maxDeliver: int('extraction-max-deliver', 5, 1),
      concurrency: int('extraction-concurrency', 2, 1),
      taggingIntervalMs: int('tagging-interval-ms', 5 * 60 * 1000, 1),
    },
    logLevel: get('log-level') ?? 'info',
    logFormat: logFormat(get('log-format')),
    metricsRequireAdmin: bool('metrics-require-admin', false),
    publicUrl: publicAddress,
    signup,
    oauthMaxClients: int('oauth-max-clients', 10_000, 1),
    configFile: file?.path,
    conversationTtlMs: int('conversation-ttl-days', 30, 1) * 24 * 60 * 60 * 1000,
    requestLogMs: int('request-log-days', 7, 1) * 24 * 60 * 60 * 1000,
    shutdownGraceMs: int('shutdown-grace-ms', 30_000),
    recordingRetry: {
      maxTurns: int('recording-retry-max-turns', 1_000, 1),
      maxBytes: int('recording-retry-max-bytes', 64 * 1024 * 1024, 1024),
    },
    mcp: { serverNames: serverNames(get('mcp-server-names')) },
    websocket: {
      maxFrameBytes: int('ws-max-frame-bytes', int('body-limit', 32 * 1024 * 1024, 1024), 1024),
      maxConnectionMs: int('ws-max-connection-ms', 60 * 60 * 1000, 1),
    },
  };
}

/** A configured admin token guards every org: a short or guessable one is refused before anything starts. */
function adminToken(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const weakness = adminTokenWeakness(raw);
  if (weakness !== undefined) {
    throw new ConfigError(
      `ENGRAM_ADMIN_TOKEN is too weak: ${weakness}. Use a random one, e.g. \`openssl rand -hex 32\`, or leave it unset to have Engram generate one into <data dir>/admin-token`,
    );
  }
  return raw;
}

/** The named ranges Fastify's `trustProxy` (proxy-addr) knows. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `ENGRAM_TRUST_PROXY`: off by default, else a comma-separated list of addresses, CIDR
 * ranges and the named ranges. Named by address, not by a count of hops: a count cannot
 * tell the proxy from a client that connects directly and sends its own header (Fastify
 * ignores one for that reason), and `true` would take any client's `X-Forwarded-For` at
 * its word, so anyone could pick the address every limit counts.
 */
function trustProxy(raw: string | undefined, source: string): TrustProxy {
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (['false', 'no', 'off'].includes(value)) return false;
  const how = "the proxies' addresses and ranges, comma-separated (10.0.0.5, 172.16.0.0/12, loopback, linklocal, uniquelocal)";
  if (['true', 'yes', 'on'].includes(value) || /^\d+$/.test(value)) {
    throw new ConfigError(`${source} must name the proxies by address: ${how}; "${raw}" would believe a client's own X-Forwarded-For`);
  }
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  const bad = entries.find((entry) => {
    if (PROXY_RANGE_NAMES.has(entry)) return false;
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return true;
    return prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
  });
  if (entries.length === 0 || bad !== undefined) throw new ConfigError(`${source} must be ${how}; got "${bad ?? raw}"`);
  return entries;
}

/** Weaviate capitalises a class name silently: only names it keeps as given are accepted. */
function collection(raw: string | undefined): string {
  const value = raw ?? 'EngramReflection';
  if (!/^[A-Z][_0-9A-Za-z]{0,63}$/.test(value)) {
    throw new ConfigError(`ENGRAM_WEAVIATE_COLLECTION must be a capital letter then letters, digits or _, got "${value}"`);
  }
  return value;
}

function logFormat(raw: string | undefined): LogFormat {
  if (raw === undefined) return process.stdout.isTTY ? 'pretty' : 'json';
  if (!(LOG_FORMATS as readonly string[]).includes(raw)) throw new ConfigError(`ENGRAM_LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}, got "${raw}"`);
  return raw as LogFormat;
}

function role(raw: string | undefined): Role {
  if (raw === undefined) return 'all';
  if (!(ROLES as readonly string[]).includes(raw)) throw new ConfigError(`ENGRAM_ROLE must be one of ${ROLES.join(', ')}, got "${raw}"`);
  return raw as Role;
}

/** `engram,service` → `['engram', 'service']`; names are matched case-insensitively. */
function serverNames(raw: string | undefined): string[] {
  if (raw === undefined) return [...DEFAULT_MCP_SERVER_NAMES];
  const names = raw.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
  const bad = names.find((name) => !/^[a-z0-9][a-z0-9._-]*$/.test(name));
  if (names.length === 0 || bad !== undefined) {
    throw new ConfigError(`ENGRAM_MCP_SERVER_NAMES must be a comma-separated list of MCP server names, got "${raw}"`);
  }
  return names;
}

/**
 * `~/.engram` (DESIGN section 4): per user, not per working directory, so the client
 * commands find the server's admin token from anywhere. `$HOME`, else the OS's idea of it.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.HOME || os.homedir(), '.engram');
}

/** Where the `engram` client commands (org, agent, token, ...) find the server. */
export interface CliConfig {
  /** Server base URL, without a trailing slash. */
  url: string;
  /** Admin token from the flag or `ENGRAM_ADMIN_TOKEN`; else the CLI reads `<dataDir>/admin-token`. */
  adminToken: string | undefined;
  dataDir: string;
}

export type CliOverrides = Partial<Record<'url' | 'host' | 'port' | 'admin-token' | 'data-dir', string>>;

/**
 * `--url`, else `ENGRAM_URL`, else `http://<ENGRAM_HOST>:<ENGRAM_PORT>` (the address
 * `engram serve` listens on with the same environment). A wildcard listen address is
 * reached through loopback.
 */
export function loadCliConfig(overrides: CliOverrides = {}, env: NodeJS.ProcessEnv = process.env): CliConfig {
  const get = (flag: keyof CliOverrides, variable: string): string | undefined => {
    const value = overrides[flag] ?? env[variable];
    return value === undefined || value === '' ? undefined : value;
  };
  let url = get('url', 'ENGRAM_URL');
  if (url === undefined) {
    let host = get('host', 'ENGRAM_HOST') ?? '127.0.0.1';
    if (host === '0.0.0.0') host = '127.0.0.1';
    else if (host === '::' || host === '[::]') host = '[::1]';
    else if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
    const port = get('port', 'ENGRAM_PORT') ?? '8420';
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
      throw new ConfigError(`${overrides.port !== undefined ? '--port' : 'ENGRAM_PORT'} must be a port number (0-65535), got "${port}"`);
    }
    url = `http://${host}:${port}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`The Engram server URL is not a URL: "${url}" (set --url or ENGRAM_URL)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`The Engram server URL must be http(s): "${url}"`);
  }
  return {
    url: url.replace(/\/+$/, ''),
    adminToken: get('admin-token', 'ENGRAM_ADMIN_TOKEN'),
    dataDir: path.resolve(get('data-dir', 'ENGRAM_DATA_DIR') ?? defaultDataDir(env)),
  };
}

/** What `engram connect` reads from the environment. */
export interface ConnectConfig {
  /** `$HOME`; the command falls back to the OS's idea of it. */
  home: string | undefined;
  /** `$XDG_CONFIG_HOME` (opencode, Crush and Engram's hook scripts live below it). */
  configHome: string | undefined;
  /** The variables asked for (a client kind's, `ConnectRecipe.env`); undefined when unset. */
  vars: Record<string, string | undefined>;
  /** `$ENGRAM_TOKEN`: the agent token the connected clients and hooks read. */
  token: string | undefined;
}

export function loadConnectConfig(env: NodeJS.ProcessEnv = process.env, names: readonly string[] = []): ConnectConfig {
  const get = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const vars = Object.fromEntries(names.map((name) => [name, get(name)]));
  return { home: get('HOME'), configHome: get('XDG_CONFIG_HOME'), vars, token: get('ENGRAM_TOKEN') };
}
