/**
 * From Engram's one setting (`ENGRAM_WEAVIATE_URL`, plus an optional API key) to a
 * connected weaviate-client v3. The client speaks REST (schema, tenants, single-object
 * writes) and gRPC (queries, batches, aggregates) to two ports; the URL names the REST
 * endpoint, and gRPC is on the same host at 50051 unless configured otherwise.
 */
import weaviate, { type ConnectToCustomOptions, type WeaviateClient } from 'weaviate-client';
import { storeError } from './errors.js';

/** The oldest Weaviate Engram supports (see index.ts). */
export const MINIMUM_VERSION = [1, 27, 0] as const;

export interface WeaviateConnection {
  /** REST endpoint: `http(s)://host[:port][/path]`; the port defaults to 80 or 443. */
  url: string;
  /** Sent as a bearer token (Weaviate API-key authentication); never logged. */
  apiKey?: string;
  /** gRPC endpoint; defaults: the URL's host, port 50051, TLS when the URL is https. */
  grpcHost?: string;
  grpcPort?: number;
  grpcSecure?: boolean;
  /**
   * Seconds a call may take before it fails. Queries run on the request path, so the
   * default (10 s) is well below the client's 30 s; writes run in the background.
   */
  timeoutSeconds?: { query?: number; insert?: number; init?: number };
}

export const DEFAULT_GRPC_PORT = 50051;

/** The client's options for a URL; pure, so it is tested without a server. */
export function connectOptions(connection: WeaviateConnection): ConnectToCustomOptions {
  let url: URL;
  try {
    url = new URL(connection.url);
  } catch {
    // Not echoed: a mistyped URL may hold credentials.
    throw new Error('Weaviate URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`Weaviate URL must be http or https, not ${url.protocol}`);
  }
  const secure = url.protocol === 'https:';
  const path = url.pathname.replace(/\/+$/, '');
  const options: ConnectToCustomOptions = {
    httpHost: url.hostname,
    httpPort: url.port ? Number(url.port) : secure ? 443 : 80,
    httpSecure: secure,
    grpcHost: connection.grpcHost ?? url.hostname,
    grpcPort: connection.grpcPort ?? DEFAULT_GRPC_PORT,
    grpcSecure: connection.grpcSecure ?? secure,
    timeout: { query: 10, insert: 30, init: 5, ...connection.timeoutSeconds },
  };
  if (path) options.httpPath = path;
  if (connection.apiKey) options.authCredentials = new weaviate.ApiKey(connection.apiKey);
  return options;
}

/** Connects and refuses a server older than `MINIMUM_VERSION`. */
export async function connectWeaviate(connection: WeaviateConnection): Promise<WeaviateClient> {
  const secrets = connection.apiKey ? [connection.apiKey] : [];
  const where = redactUrl(connection.url);
  let client: WeaviateClient;
  try {
    client = await weaviate.connectToCustom(connectOptions(connection));
  } catch (error) {
    throw storeError(`connect to ${where}`, error, secrets);
  }
  try {
    const version = await client.getWeaviateVersion();
    const [major, minor, patch] = MINIMUM_VERSION;
    if (version.isLowerThan(major, minor, patch)) {
      throw new Error(`Weaviate ${version.show()} at ${where} is older than ${MINIMUM_VERSION.join('.')}`);
    }
    return client;
  } catch (error) {
    await client.close().catch(() => undefined);
    throw storeError(`connect to ${where}`, error, secrets);
  }
}

/** The URL without user info, query or fragment: safe for messages. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(unparseable URL)';
  }
}
