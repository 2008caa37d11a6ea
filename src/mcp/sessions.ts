/**
 * Live MCP sessions (Streamable HTTP keeps one per client connection, named by the
 * `Mcp-Session-Id` header), per app instance. A session belongs to the agent that
 * opened it; an idle one is closed after `idleMs`. A client whose session is gone (idle,
 * or a restart) gets a 404 and, as the transport spec says, initialises a new one.
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface McpSession {
  agentId: string;
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
}

export interface McpSessionsOptions {
  idleMs: number;
  /** Beyond this many live sessions the least recently used is closed. */
  max: number;
  now: () => number;
}

export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #options: McpSessionsOptions;
  readonly #sweeper: NodeJS.Timeout;

  constructor(options: McpSessionsOptions) {
    this.#options = options;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, options.idleMs)).unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** The agent's session with that id (another agent's session is not found). */
  get(id: string, agentId: string): McpSession | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.agentId !== agentId) return undefined;
    session.lastSeen = this.#options.now();
    // Map order is recency order: the first entry is the least recently used.
    this.#sessions.delete(id);
    this.#sessions.set(id, session);
    return session;
  }

  /** A transport that registers itself here once the client's `initialize` is answered. */
  async open(agentId: string, server: McpServer): Promise<McpSession> {
    const session: McpSession = {
      agentId,
      lastSeen: this.#options.now(),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.#sessions.set(id, session);
          this.#evict();
        },
        onsessionclosed: (id) => void this.#sessions.delete(id),
      }),
    };
    session.transport.onclose = () => {
      const id = session.transport.sessionId;
      if (id !== undefined && this.#sessions.get(id) === session) this.#sessions.delete(id);
    };
    await server.connect(session.transport);
    return session;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map((session) => session.transport.close().catch(() => undefined)));
  }

  #evict(): void {
    for (const [id, session] of this.#sessions) {
      if (this.#sessions.size <= this.#options.max) break;
      this.#sessions.delete(id);
      void session.transport.close().catch(() => undefined);
    }
  }

  #sweep(): void {
    const before = this.#options.now() - this.#options.idleMs;
    for (const [id, session] of this.#sessions) {
      if (session.lastSeen >= before) continue;
      this.#sessions.delete(id);
      void session.transport.close().catch(() => undefined);
    }
  }
}
