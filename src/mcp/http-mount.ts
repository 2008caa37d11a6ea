/**
 * Endpoint 4: `/v0/orgs/{org}/agents/{agent}/v0/mcp`, a Streamable HTTP MCP server per
 * agent, authenticated by the agent's token as a bearer. It is stateless (the transport
 * spec's mode without `Mcp-Session-Id`): every POST is answered by a server built for
 * that request, so successive requests of one client may land on any replica, a restart
 * loses nothing, and no tenant's sessions can crowd out another's. The tools keep no
 * state between calls; what they change lives behind the ports. GET (a server-to-client
 * stream, which nothing here sends on) and DELETE (ending a session) answer 405, as the
 * spec allows. Errors before the transport takes over are JSON-RPC error objects with the
 * fitting HTTP status; a missing or wrong token gets 401 with `WWW-Authenticate`, from the
 * headers alone, before any byte of the body is read.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Deps } from '../deps.js';
import { EngramError, toEngramError } from '../errors.js';
import { authenticateFromHeaders, closeIfBodyPending } from '../http/before-body.js';
import type { RequestLimits } from '../http/request-limits.js';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../protocols/shared.js';
import { createIndexRefresher } from '../memory/index-refresh.js';
import { createReflectionWriter } from '../memory/reflection-writer.js';
import { memorySearchDeps } from '../http/memory-search-deps.js';
import type { McpContext } from './context.js';
import { headerVisibility } from '../conversation/scope.js';
import type { Visibility } from '../domain/types.js';
import { createMcpServer } from './create-mcp-server.js';

interface Params {
  org: string;
  agent: string;
}

export interface McpMountOptions {
  deps: Deps;
  version: string;
  /** The app's count of bodies being read per client address (`createBodyReads`). */
  bodyReads: onRequestHookHandler;
  /** The app's per-tenant and process-wide limits. */
  limits: RequestLimits;
}

/** JSON-RPC's own codes for what goes wrong before a request reaches the server. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** Implementation-defined server error (JSON-RPC reserves -32000 to -32099); the HTTP status tells which. */
const UNAUTHORIZED = -32001;
const METHOD_NOT_ALLOWED = -32000;

const MCP_BODY_LIMIT = 4 * 1024 * 1024;

function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.code(status).header('content-type', 'application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export interface McpScopeOptions extends McpMountOptions {
  path: string;
  /** Checks the credential from the headers alone, so before any byte of the body is read; sets `request.agentToken`. */
  authenticate(request: FastifyRequest): Promise<unknown>;
  /** The `WWW-Authenticate` value of a 401; `given`: the request carried a credential. */
  challenge(request: FastifyRequest, given: boolean): string;
  /** The agent a POST is served for, once authenticated. */
  agentOf(request: FastifyRequest): { orgId: string; agentId: string };
}

/**
 * Makes `app` (an encapsulated plugin) an MCP scope at `path`: the credential checked, then
 * the limits; JSON-RPC bodies read as text and parsed by the handler (a malformed one gets a
 * JSON-RPC parse error), errors rendered as JSON-RPC error objects, 401s with the mount's
 * challenge; GET and DELETE 405. The per-agent mount and the global one (`global-mount.ts`)
 * differ only in how they authenticate and find the agent.
 */
export function mcpScope(app: FastifyInstance, options: McpScopeOptions): void {
  const { deps, version, challenge } = options;
  app.decorateRequest('agentToken', null);
  app.addHook('onRequest', options.authenticate);
  app.addHook('onRequest', options.limits.onRequest);
  app.addHook('onRequest', options.bodyReads);

  const writer = createReflectionWriter({ ...deps, maxReflections: deps.config.limits.maxReflections });
  const index = createIndexRefresher({ ...deps, onError: (error) => app.log.error({ err: error }, 'rebuilding a root index failed') });
  app.addHook('onClose', async () => {
    await index.close();
  });

  const search = memorySearchDeps(deps, app.log);
  const contextFor = (orgId: string, agentId: string, visible: Visibility): McpContext => ({
    ...deps,
    writer,
    search,
    index,
    visible,
    async agent() {
      const agent = await deps.control.directory.getAgent(orgId, agentId);
      if (!agent) throw new EngramError('not_found', 'The agent was deleted');
      return agent;
    },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MCP_BODY_LIMIT }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error, request, reply) => {
    const engramError = toEngramError(error, { what: 'The MCP request body', bytes: MCP_BODY_LIMIT });
    if (engramError.status >= 500) request.log.error({ err: error }, 'MCP request failed');
    closeIfBodyPending(request, reply);
    if (engramError.status === 401) {
      reply.header('www-authenticate', challenge(request, request.headers.authorization !== undefined));
      return rpcError(reply, 401, UNAUTHORIZED, engramError.message);
    }
    return rpcError(reply, engramError.status, INVALID_REQUEST, engramError.message);
  });

  app.post(options.path, async (request, reply) => {
    const { orgId, agentId } = options.agentOf(request);
    const text = typeof request.body === 'string' ? request.body : '';
    if (jsonDeeperThan(text, MAX_JSON_DEPTH)) {
      return rpcError(reply, 400, PARSE_ERROR, `Parse error: the JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return rpcError(reply, 400, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
    }
    app.metrics.mcpRequest(agentId, body);
    const server = createMcpServer(contextFor(orgId, agentId, headerVisibility(request.headers)), version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, body);
  });
  app.get(options.path, methodNotAllowed);
  app.delete(options.path, methodNotAllowed);
}

/** GET (a server-to-client stream) and DELETE (ending a session) of a stateless MCP server: 405. */
async function methodNotAllowed(request: FastifyRequest, reply: FastifyReply) {
  return rpcError(
    reply.header('allow', 'POST'),
    405,
    METHOD_NOT_ALLOWED,
    request.method === 'GET'
      ? 'This MCP server is stateless and sends nothing unprompted: there is no stream to open'
      : 'This MCP server is stateless: there is no session to end',
  );
}

export const mcpRoutes: FastifyPluginAsync<McpMountOptions> = async (app, options) => {
  mcpScope(app, {
    ...options,
    path: '/v0/orgs/:org/agents/:agent/v0/mcp',
    authenticate: (request) => authenticateFromHeaders(options.deps.control, request, options.deps.adminTokenHash),
    // The message is the one every surface gives (src/control/auth.ts); the header is OAuth's.
    challenge: (_request, given) => `Bearer realm="engram"${given ? ', error="invalid_token"' : ''}`,
    agentOf: (request) => ({ orgId: (request.params as Params).org, agentId: (request.params as Params).agent }),
  });
};
