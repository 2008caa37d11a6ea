/**
 * The hook endpoints (interface endpoints 6-8): what coding CLIs call from their session
 * hooks with curl. An encapsulated plugin: bodies stay unread streams (a transcript is
 * parsed as it arrives, never held whole), the token is checked before any byte of the
 * body is read, and errors are HTTP statuses with a JSON message, since hooks run curl
 * with fail-on-error and show its output. An agent has at most
 * `transcriptMaxConcurrent` uploads in progress: one more gets 429 before its body is read.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { Deps } from '../../deps.js';
import type { ProtocolId } from '../../domain/types.js';
import { EngramError, tooLarge } from '../../errors.js';
import { jsonErrorHandler } from '../json-errors.js';
import { createSessionQueue, ingestTranscript, type IngestResult } from '../../memory/transcript-ingest.js';
import { PROTOCOLS } from '../../protocols/index.js';
import type { TranscriptFormat } from '../../transcripts/types.js';
import { CLIENTS } from '../../clients/index.js';
import { agentTokenOf, authenticateFromHeaders } from '../before-body.js';
import type { RequestLimits } from '../request-limits.js';
import { ConcurrencyLimiter } from '../../security/rate-limits.js';
import { readJsonBody } from './json-body.js';
import { SESSION_START_PATH } from '../../connect/hooks.js';
import { headerVisibility, placeSignals } from '../../conversation/scope.js';
import { REPOSITORY_ROOT_HEADER, TRANSCRIPT_PATH_HEADER, pathHeader, sessionStartAnswer, sessionVisibility, sessionStartFormat } from './session-start.js';

interface Params {
  org: string;
  agent: string;
  format?: string;
}

interface Query {
  format?: string;
  protocol?: string;
  session?: string;
}

const PREFIX = '/v0/orgs/:org/agents/:agent';
/** What a refused upload is told to wait: an upload takes about that long (seconds for the largest). */
const UPLOAD_RETRY_AFTER_S = 2;
/** The hook's own input is a few kilobytes. */
const SESSION_START_BODY_LIMIT = 1024 * 1024;
const UPLOADS = '/transcripts/';

export const hookRoutes: FastifyPluginAsync<{ deps: Deps; limits: RequestLimits }> = async (app, { deps, limits }) => {
  const clients = deps.clients ?? CLIENTS;
  const places = placeSignals(clients);
  /** `…/transcripts/<route>` → the format it uploads, each client's routes in turn. */
  const formatPaths = new Map(clients.flatMap(({ transcript }) => transcript?.routes.map((route) => [route, transcript] as const) ?? []));
  const queue = createSessionQueue();
  /** Uploads in progress per agent id, in this process. */
  const uploading = new ConcurrencyLimiter(deps.config.transcriptMaxConcurrent);

  app.setErrorHandler(jsonErrorHandler('hook'));
  // Every content type, and none, reaches the handler as the unread request stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addHook('onRequest', async (request) => {
    await authenticateFromHeaders(deps.control, request, deps.adminTokenHash);
  });
  app.decorateRequest('agentToken', null);
  app.addHook('onRequest', limits.onRequest);

  app.post<{ Params: Params; Querystring: Query }>(`${PREFIX}${SESSION_START_PATH}`, async (request, reply) => {
    const client = sessionStartFormat(request.query.format, clients);
    // The hook's input says which session starts, why, and where (its `cwd`: the session's scope).
    const input = await readJsonBody(body(request), SESSION_START_BODY_LIMIT);
    const visible = sessionVisibility(request.headers, input, clients);
    return reply.send(await sessionStartAnswer(deps, agentTokenOf(request).agent, client, deps.config.mcp.serverNames[0] ?? 'engram', visible));
  });

  const upload = async (request: FastifyRequest<{ Params: Params; Querystring: Query }>, reply: FastifyReply, format: TranscriptFormat) => {
    checkLength(request, deps.config.transcriptMaxBytes);
    const { agent } = agentTokenOf(request);
    const release = uploading.enter(agent.id);
    if (!release) {
      reply.header('retry-after', String(UPLOAD_RETRY_AFTER_S));
      const limit = deps.config.transcriptMaxConcurrent;
      throw new EngramError('rate_limited', `This agent already has ${limit} transcript uploads in progress; retry when one is done`);
    }
    try {
      const result = await ingestTranscript(
        deps,
        {
          agent,
          format,
          body: body(request),
          session: request.query.session ?? ((request.headers['x-engram-session'] as string | undefined)?.trim() || undefined),
          protocol: protocolParam(request.query.protocol),
          visible: headerVisibility(request.headers),
          path: pathHeader(request.headers, TRANSCRIPT_PATH_HEADER),
          root: pathHeader(request.headers, REPOSITORY_ROOT_HEADER),
          places,
        },
        queue,
      );
      request.log.info({ agentId: agent.id, format: format.id, status: result.status, turns: result.turns, queued: result.queuedTurns }, 'transcript uploaded');
      return reply.code(result.status === 'queued' ? 202 : 200).send(answer(result));
    } finally {
      release();
    }
  };
  // A stop hook's own upload path beside `…/transcripts/<route>` (installed scripts call it).
  for (const { hooks, transcript } of clients) {
    if (!hooks || !transcript || hooks.stopPath.startsWith(UPLOADS)) continue;
    app.post<{ Params: Params; Querystring: Query }>(`${PREFIX}${hooks.stopPath}`, (request, reply) => upload(request, reply, transcript));
  }
  app.post<{ Params: Params; Querystring: Query }>(`${PREFIX}${UPLOADS}:format`, (request, reply) => {
    const format = formatPaths.get(request.params.format ?? '');
    if (!format) {
      throw new EngramError('not_found', `No transcript format "${request.params.format}": use one of ${[...formatPaths.keys()].join(', ')}`);
    }
    return upload(request, reply, format);
  });
};

/** The unread request body (an empty one when the request had none). */
function body(request: FastifyRequest): Readable | AsyncIterable<Buffer> {
  return (request.body as Readable | undefined) ?? (async function* () {})();
}

/** A declared length over the limit is refused before any byte is read. */
function checkLength(request: FastifyRequest, limit: number): void {
  const length = Number(request.headers['content-length']);
  if (Number.isFinite(length) && length > limit) {
    throw tooLarge({ what: 'The transcript', bytes: limit, setting: 'ENGRAM_TRANSCRIPT_MAX_BYTES' });
  }
}

function protocolParam(value: string | undefined): ProtocolId | undefined {
  if (value === undefined || value === '') return undefined;
  if (value in PROTOCOLS) return value as ProtocolId;
  throw new EngramError('invalid_request', `\`protocol\` must be one of ${Object.keys(PROTOCOLS).join(', ')}`, { param: 'protocol' });
}

function answer(result: IngestResult): object {
  return {
    status: result.status,
    session: result.session,
    turns: result.turns,
    queued_turns: result.queuedTurns,
    ...(result.reason ? { reason: result.reason } : {}),
    records: result.read.records,
    skipped_lines: result.read.skipped,
    truncated_last_line: result.read.truncatedTail,
    bytes: result.read.bytes,
  };
}
