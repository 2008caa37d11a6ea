/**
 * Endpoint 4: `/v0/orgs/{org}/agents/{agent}/v0/mcp`, a Streamable HTTP MCP server per
 * agent (POST for client messages, GET for the server's stream, DELETE to end a
 * session), authenticated by the agent's token as a bearer. Errors before the MCP
 * transport takes over are JSON-RPC error objects with the fitting HTTP status; a
 * missing or wrong token gets 401 with `WWW-Authenticate`.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps.js';
import { EngramError, toEngramError } from '../errors.js';
import { authenticateAgent } from '../control/auth.js';
import { createIndexRefresher } from '../memory/index-refresh.js';
import { createReflectionWriter } from '../memory/reflection-writer.js';
import type { McpContext } from './context.js';
import { createMcpServer } from './create-mcp-server.js';
import { McpSessions } from './sessions.js';

interface Params {
  org: string;
  agent: string;
}

export interface McpMountOptions {
  deps: Deps;
  version: string;
}

/** JSON-RPC's own codes for what goes wrong before a request reaches the server. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** Implementation-defined server error (JSON-RPC reserves -32000 to -32099); the HTTP status tells which. */
const UNAUTHORIZED = -32001;
const SESSION_NOT_FOUND = -32001;

const MCP_BODY_LIMIT = 4 * 1024 * 1024;
const SESSION_IDLE_MS = 30 * 60 * 1000;
const MAX_SESSIONS = 10_000;

function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.code(status).header('content-type', 'application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function sessionHeader(request: FastifyRequest): string | undefined {
  const value = request.headers['mcp-session-id'];
  return Array.isArray(value) ? value[0] : value;
}

export const mcpRoutes: FastifyPluginAsync<McpMountOptions> = async (app, { deps, version }) => {
  const writer = createReflectionWriter({ reflections: deps.reflections, embedder: deps.embedder, control: deps.control, now: deps.now });
  const index = createIndexRefresher({ ...deps, onError: (error) => app.log.error({ err: error }, 'rebuilding a root index failed') });
  const sessions = new McpSessions({ idleMs: SESSION_IDLE_MS, max: MAX_SESSIONS, now: deps.now });
  app.addHook('onClose', async () => {
    await sessions.close();
    await index.close();
  });

  const contextFor = (orgId: string, agentId: string): McpContext => ({
    ...deps,
    writer,
    index,
    async agent() {
      const agent = await deps.control.directory.getAgent(orgId, agentId);
      if (!agent) throw new EngramError('not_found', 'The agent was deleted');
      return agent;
    },
  });

  // JSON-RPC bodies are parsed here, so a malformed one gets a JSON-RPC parse error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MCP_BODY_LIMIT }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error, request, reply) => {
    const engramError = toEngramError(error);
    if (engramError.status >= 500) request.log.error({ err: error }, 'MCP request failed');
    return rpcError(reply, engramError.status, INVALID_REQUEST, engramError.message);
  });

  const handle = async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const { org, agent: agentId } = request.params;
    try {
      await authenticateAgent(deps.control, request.headers, org, agentId);
    } catch {
      const given = request.headers.authorization !== undefined;
      return rpcError(
        reply.header('www-authenticate', `Bearer realm="engram"${given ? ', error="invalid_token"' : ''}`),
        401,
        UNAUTHORIZED,
        given ? 'The access token is not valid for this agent' : 'Send the agent access token as Authorization: Bearer <token>',
      );
    }

    let body: unknown;
    if (request.method === 'POST') {
      const text = typeof request.body === 'string' ? request.body : '';
      try {
        body = JSON.parse(text);
      } catch (error) {
        return rpcError(reply, 400, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
      }
    }

    const sessionId = sessionHeader(request);
    let session = sessionId === undefined ? undefined : sessions.get(sessionId, agentId);
    if (sessionId !== undefined && !session) {
      return rpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found: initialize a new session');
    }
    if (!session) {
      const initializing = request.method === 'POST' && (isInitializeRequest(body) || (Array.isArray(body) && body.some(isInitializeRequest)));
      if (!initializing) {
        return rpcError(reply, 400, INVALID_REQUEST, 'Bad Request: no Mcp-Session-Id header; send initialize first');
      }
      session = await sessions.open(agentId, createMcpServer(contextFor(org, agentId), version));
    }
    reply.hijack();
    await session.transport.handleRequest(request.raw, reply.raw, body);
  };

  const path = '/v0/orgs/:org/agents/:agent/v0/mcp';
  app.post<{ Params: Params }>(path, handle);
  app.get<{ Params: Params }>(path, handle);
  app.delete<{ Params: Params }>(path, handle);
};
