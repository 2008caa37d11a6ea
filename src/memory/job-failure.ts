/**
 * Why a memory job (extraction, tagging) failed, in words a person can act on (what the
 * bus then does about it: `memory-job.ts`): the one place that turns whatever went wrong into
 * "upstream answered 401 Unauthorized", "upstream unreachable: connection refused",
 * "timed out: ..." or "the model answered without calling record_reflections". The words
 * reach the job listings (API, CLI, dashboard) through the bus (`NakOptions.reason`, the
 * dead letter's reason), the log, and, as a short `FailureReason`, the metrics.
 *
 * What the words never hold: a secret or conversation text. So an upstream's refusal is
 * its status and the status's standard phrase only, never the body it sent (a provider's
 * error message may quote the request: a key prefix, the turns), and an error Engram does
 * not know is named by its type and code, never its message (a parser's message quotes
 * the text it choked on).
 */
import { STATUS_CODES } from 'node:http';
import { ToolAnswerError } from '../protocols/forced-tool.js';
import type { JobKind } from './agent-jobs.js';

/** What kind of failure, for the metrics' `reason` label: a short, fixed set. */
export type FailureReason =
  /** A 4xx other than 408/409/425/429: the same call would be refused again. */
  | 'upstream_refused'
  /** A 5xx, or 408/409/425/429: worth a retry. */
  | 'upstream_error'
  | 'unreachable'
  | 'timeout'
  /** The model answered without calling the forced tool. */
  | 'no_tool_call'
  /** The answer could not be read: not JSON, or the tool called with arguments that are not what it takes. */
  | 'bad_answer'
  /** The job on the bus is not one the handler can run (malformed, no model, no adapter). */
  | 'malformed_job'
  /** Anything else: a store, the embedder, Engram itself. */
  | 'internal';

export const FAILURE_REASONS: readonly FailureReason[] = [
  'upstream_refused',
  'upstream_error',
  'unreachable',
  'timeout',
  'no_tool_call',
  'bad_answer',
  'malformed_job',
  'internal',
];

/** A memory job's failure: `message` is the words, `reason` the kind, `permanent` whether a retry is pointless. */
export class JobFailure extends Error {
  override name = 'JobFailure';
  readonly reason: FailureReason;
  readonly permanent: boolean;

  constructor(reason: FailureReason, message: string, options: { permanent?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.reason = reason;
    this.permanent = options.permanent ?? false;
  }
}

/**
 * Upstream statuses worth a retry. Every other 4xx (bad request, auth, unknown model,
 * too large) would fail the same way again: the job is dead-lettered at once with the
 * reason instead of spending the remaining deliveries on it.
 */
export const RETRYABLE_4XX: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/** `upstream answered 401 Unauthorized`: the status and its standard phrase, nothing the upstream wrote. */
export function upstreamRefusal(status: number): JobFailure {
  const permanent = status >= 400 && status < 500 && !RETRYABLE_4XX.has(status);
  const phrase = STATUS_CODES[status];
  return new JobFailure(permanent ? 'upstream_refused' : 'upstream_error', `upstream answered ${status}${phrase ? ` ${phrase}` : ''}`, { permanent });
}

/** What a connection failure's code means, in words. */
const UNREACHABLE: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CLOSED: 'connection closed',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the host',
  UND_ERR_CONNECT_TIMEOUT: 'connecting timed out',
  ENGRAM_ADDRESS_REFUSED: "its address is refused by Engram's upstream address policy",
  UND_ERR_INVALID_ARG: 'the upstream URL is not usable',
};

const TIMEOUT_CODES: ReadonlySet<string> = new Set(['upstream_timeout', 'UND_ERR_HEADERS_TIMEOUT']);

/** The error and its causes, outermost first (a few levels: causes are short chains). */
function chain(error: unknown): Array<{ name?: unknown; code?: unknown }> {
  const links: Array<{ name?: unknown; code?: unknown }> = [];
  for (let link = error, depth = 0; typeof link === 'object' && link !== null && depth < 5; depth++) {
    links.push(link as { name?: unknown; code?: unknown });
    link = (link as { cause?: unknown }).cause;
  }
  return links;
}

/**
 * A failure of Engram's own call to an upstream, with the call's time limit for the words:
 * timed out, or unreachable and why (by the code of the error or one of its causes).
 * Already a `JobFailure`: itself.
 */
export function callFailure(error: unknown, timeoutMs: number): JobFailure {
  if (error instanceof JobFailure) return error;
  const links = chain(error);
  // The call's own time limit (its AbortSignal's TimeoutError)...
  if (links.some((link) => link.name === 'TimeoutError')) {
    const seconds = timeoutMs >= 10_000 ? String(Math.round(timeoutMs / 1000)) : String(Math.round(timeoutMs / 100) / 10);
    return new JobFailure('timeout', `timed out: the upstream did not answer within ${seconds} s`, { cause: error });
  }
  // ... or the upstream client's, which may be the shorter.
  if (links.some((link) => link.code === 'UND_ERR_BODY_TIMEOUT')) {
    return new JobFailure('timeout', "timed out: the upstream's answer stalled for longer than ENGRAM_UPSTREAM_IDLE_TIMEOUT_MS", { cause: error });
  }
  if (links.some((link) => typeof link.code === 'string' && TIMEOUT_CODES.has(link.code))) {
    return new JobFailure('timeout', 'timed out: the upstream did not answer within ENGRAM_UPSTREAM_TIMEOUT_MS', { cause: error });
  }
  const code = links.map((link) => link.code).find((value): value is string => typeof value === 'string' && value in UNREACHABLE);
  const why = code === undefined ? 'could not connect' : UNREACHABLE[code];
  return new JobFailure('unreachable', `upstream unreachable: ${why}`, { cause: error });
}

/**
 * Any failure of a job's delivery as a `JobFailure`: one already made (a refusal, a call
 * failure) stays as it is; a model answer without the tool call, or with arguments the
 * tool does not take, says so; anything else is Engram's own, named by type and code.
 */
export function jobFailure(error: unknown): JobFailure {
  if (error instanceof JobFailure) return error;
  if (error instanceof ToolAnswerError) {
    return error.problem === 'no_call'
      ? new JobFailure('no_tool_call', `the model answered without calling ${error.tool}`, { cause: error })
      : new JobFailure('bad_answer', `the model called ${error.tool} ${error.problem}`, { cause: error });
  }
  const [outer] = chain(error);
  const name = typeof outer?.name === 'string' ? outer.name : typeof error;
  const code = typeof outer?.code === 'string' ? ` ${outer.code}` : '';
  return new JobFailure('internal', `failed inside Engram (${name}${code}); the server log has the details`, { cause: error });
}

/**
 * Deliveries a job gets when the model's answer cannot be used (no tool call, arguments
 * the tool does not take). Sampling can stray once, so the job is asked once more; a
 * second such answer means the model does not do what the job needs (it ignores a forced
 * tool choice, or its answers are cut short), and the job is dead-lettered with the
 * reason at once: the remaining deliveries would spend tokens on the same answer. As a
 * dead letter the job keeps its turns, visible with why, and a retry after the model is
 * changed learns them; acking it instead would lose them without a word.
 */
export const MODEL_ANSWER_DELIVERIES = 2;

/** Told of each failed delivery of a memory job, for the metrics. */
export interface JobFailureObserver {
  jobFailed(kind: JobKind, reason: FailureReason): void;
}
