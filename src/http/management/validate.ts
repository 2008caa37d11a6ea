/**
 * Hand-written checks for management bodies and queries. Every failure is an
 * `invalid_request` naming the offending field in `param` (dotted path), so clients see
 * the same envelope as for any other Engram error.
 */
import { z } from 'zod';
import { EngramError } from '../../errors.js';

export type Json = Record<string, unknown>;

export function invalid(param: string | null, message: string): EngramError {
  return new EngramError('invalid_request', message, param === null ? undefined : { param });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * The JSON object of a request body. A body that reached us unparsed (a buffer or a
 * string, when another content-type parser is in force) is parsed here.
 */
export function bodyObject(body: unknown): Json {
  let value = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    if (value.trim() === '') value = {};
    else {
      try {
        value = JSON.parse(value) as unknown;
      } catch (error) {
        throw new EngramError('invalid_json', undefined, { cause: error });
      }
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(null, `The body must be a JSON object, got ${describe(value)}`);
  return value as Json;
}

function joined(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

export function optionalString(object: Json, key: string, prefix = '', options: { max?: number; allowEmpty?: boolean } = {}): string | undefined {
  const value = object[key];
  const param = joined(prefix, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(param, `\`${param}\` must be a string, got ${describe(value)}`);
  if (!options.allowEmpty && value.trim() === '') throw invalid(param, `\`${param}\` must not be empty`);
  const max = options.max ?? 10_000;
  if (value.length > max) throw invalid(param, `\`${param}\` must be at most ${max} characters`);
  return value;
}

export function requiredString(object: Json, key: string, prefix = '', options: { max?: number } = {}): string {
  const value = optionalString(object, key, prefix, options);
  if (value === undefined) throw invalid(joined(prefix, key), `\`${joined(prefix, key)}\` is required`);
  return value;
}

/**
 * Characters that make a name display as something else: direction overrides and
 * isolates (U+202A-U+202E, U+2066-U+2069), direction and zero-width marks (U+200B-U+200F,
 * U+061C, U+2060, U+FEFF) and every other format character (Unicode category Cf), line
 * and paragraph separators, lone surrogates, and the Hangul fillers that draw as blanks.
 */
const DECEPTIVE = /[\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0]/u;

/** `U+202E`: how a refused character is named in an error (it would not show itself). */
function codePointOf(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Names of orgs, agents and tokens appear in URLs, CLI output and logs: printable, no
 * slash, trimmed, at most 100 characters, and shown as what they are (no direction
 * overrides or invisible characters, which would let one name pass for another).
 */
export function resourceName(object: Json, key: string, required: true): string;
export function resourceName(object: Json, key: string, required: false): string | undefined;
export function resourceName(object: Json, key: string, required: boolean): string | undefined {
  const raw = required ? requiredString(object, key, '', { max: 100 }) : optionalString(object, key, '', { max: 100 });
  if (raw === undefined) return undefined;
  const name = raw.trim();
  if (/[\p{Cc}/]/u.test(name)) {
    throw invalid(key, `\`${key}\` must not contain "/" or control characters`);
  }
  const deceptive = DECEPTIVE.exec(name);
  if (deceptive) {
    throw invalid(
      key,
      `\`${key}\` must not contain invisible or text-direction characters (found ${codePointOf(deceptive[0])}): they make a name display as another`,
    );
  }
  return name;
}

/** A query-string integer such as `?limit=20`. */
export function queryInteger(raw: unknown, param: string, range: { min: number; max: number; fallback: number }): number {
  if (raw === undefined || raw === '') return range.fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw invalid(param, `\`${param}\` must be an integer from ${range.min} to ${range.max}`);
  }
  return value;
}

export function queryString(raw: unknown, param: string): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw invalid(param, `\`${param}\` must be given once`);
  return raw;
}

/** A query-string value out of `values`, such as `?format=json`. */
export function queryOneOf<T extends string>(raw: unknown, param: string, values: readonly T[]): T | undefined {
  const value = queryString(raw, param);
  if (value !== undefined && !(values as readonly string[]).includes(value)) throw invalid(param, `\`${param}\` must be one of: ${values.join(', ')}`);
  return value as T | undefined;
}

/**
 * A body checked against a zod schema, the same schema the OpenAPI document shows
 * (`openapi.ts`). The first issue becomes the `invalid_request`: its field as the dotted
 * `param` (an array item is named by its array), an unknown field by its own name.
 */
export function parseBody<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const body = bodyObject(raw);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.filter((part): part is string => typeof part === 'string');
  if (issue.code === 'unrecognized_keys') {
    const field = [...path, issue.keys[0]].join('.');
    const allowed = fieldsAt(schema, path);
    throw invalid(field, `Unknown field \`${field}\`${allowed ? `; expected one of: ${allowed.join(', ')}` : ''}`);
  }
  const param = path.length === 0 ? null : path.join('.');
  if (param !== null && issue.code === 'invalid_type' && valueAt(body, path) === undefined) {
    throw invalid(param, `\`${param}\` is required`);
  }
  throw invalid(param, param === null ? issue.message : `\`${param}\`: ${issue.message}`);
}

function valueAt(body: unknown, path: string[]): unknown {
  let value = body;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Json)[key] : undefined;
  return value;
}

/** The field names an object schema at `path` takes, for the message about an unknown one. */
function fieldsAt(schema: z.ZodType, path: string[]): string[] | undefined {
  let current: z.ZodType | undefined = schema;
  for (const key of ['', ...path]) {
    while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap() as z.ZodType;
    if (!(current instanceof z.ZodObject)) return undefined;
    if (key !== '') current = (current.shape as Record<string, z.ZodType>)[key];
  }
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap() as z.ZodType;
  return current instanceof z.ZodObject ? Object.keys(current.shape) : undefined;
}

/*
 * The bodies of the org, agent and token routes, parsed first with these schemas
 * (`parseBody`): the shape the OpenAPI document shows is the one enforced.
 * `test/http/openapi.test.ts` sends what the schemas allow and refuse and expects the same.
 */
const Name = (what: string) =>
  z.string().min(1).max(100).describe(`The ${what}'s name: printable, no "/", no invisible or text-direction characters`);

export const OrgBody = z.strictObject({ name: Name('organisation') }).meta({ id: 'NewOrg' });

export const TokenBody = z.strictObject({ name: Name('token').optional().describe('Default `default`') }).meta({ id: 'NewToken' });

const UpstreamBody = z.strictObject({
  base_url: z.string().describe('http(s) URL that `/v1/...` is appended to (a trailing `/v1` is dropped)'),
  api_key: z.string().max(4096).optional().describe('Stored sealed; never shown again'),
  headers: z.record(z.string(), z.string()).optional().describe('Extra headers sent upstream; only their names are shown'),
  responses_state: z.enum(['service', 'upstream']).optional(),
});

/** `POST /v0/upstream-check`: the upstream part of an agent body, checked before it is saved. */
export const UpstreamCheckBody = z.strictObject({ upstream: UpstreamBody }).meta({ id: 'UpstreamCheck' });

/** A trillion tokens a day: far past any real spend, and an exact integer everywhere it is stored. */
export const MAX_DAILY_TOKEN_BUDGET = 1_000_000_000_000;

const MemoryBody = z.strictObject({
  inject: z.boolean().optional(),
  extract: z.boolean().optional(),
  top_k: z.number().int().min(1).max(100).optional(),
  token_budget: z.number().int().min(1).max(100_000).optional(),
  min_score: z.number().min(0).max(1).optional(),
  extraction_model: z.string().max(200).nullable().optional(),
  daily_token_budget: z
    .number()
    .int()
    .min(1)
    .max(MAX_DAILY_TOKEN_BUDGET)
    .nullable()
    .optional()
    .describe("Input plus output tokens Engram's extraction and tagging calls may use per UTC day; once spent, conversations wait until 00:00 UTC. null: unlimited (default)"),
});

export const AgentBody = z
  .strictObject({ name: Name('agent'), type: z.literal('api_provider').optional(), upstream: UpstreamBody, memory: MemoryBody.optional() })
  .meta({ id: 'NewAgent' });

export const AgentPatchBody = z
  .strictObject({
    name: Name('agent').optional(),
    type: z.literal('api_provider').optional(),
    upstream: UpstreamBody.partial().optional(),
    memory: MemoryBody.optional(),
  })
  .meta({ id: 'AgentPatch' });
