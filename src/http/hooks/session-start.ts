/**
 * Endpoint 6, `POST .../copilot/session-start`: the root memory index for a session-start
 * hook to hand its client as context. The hook prints the answer as it comes, so the
 * answer is already in the client's own hook-output form (`HookProfile.answer`), the one
 * its `?format=` names: a top-level `additionalContext` with the index as data beside it,
 * or `hookSpecificOutput`. With no format, the form of the client whose script asks for none.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Visibility } from '../../domain/types.js';
import { hookScope } from '../../domain/scope.js';
import { headerVisibility, placeSignals, withScope } from '../../conversation/scope.js';
import { EngramError } from '../../errors.js';
import { renderIndexBlock } from '../../memory/engram-blocks.js';
import { ENGRAM_TOOLS } from '../../domain/engram-tools.js';
import type { ReflectionStore } from '../../ports/index.js';
import type { Control } from '../../control/control.js';
import { currentRootIndex, listAllReflections, topicKey } from '../../memory/root-index.js';
import { CLIENTS } from '../../clients/index.js';
import type { ClientProfile, HookProfile } from '../../clients/types.js';

type HookedClient = ClientProfile & { hooks: HookProfile };

/** The client whose hook form `?format=` asks for (the default form's when none). */
export function sessionStartFormat(value: unknown, clients: readonly ClientProfile[] = CLIENTS): HookedClient {
  const forms = clients.filter((client): client is HookedClient => client.hooks !== undefined).sort((a, b) => Number(b.hooks.defaultForm ?? false) - Number(a.hooks.defaultForm ?? false));
  const found = value === undefined || value === '' ? forms.find(({ hooks }) => hooks.defaultForm) : forms.find(({ hooks }) => hooks.format === value);
  if (found) return found;
  throw new EngramError('invalid_request', `\`format\` must be one of ${forms.map(({ hooks }) => hooks.format).join(', ')}`, { param: 'format' });
}

/**
 * The session's scope and user (DESIGN section 13): `x-engram-scope` and `x-engram-user`,
 * else the repository of the `cwd` every client's hook input carries: its git root when
 * the hook script found one (`x-engram-repository-root`) or the input's transcript path
 * (a client's `HookProfile.transcriptField`) is in a folder the client keys by that root.
 */
export function sessionVisibility(headers: IncomingHttpHeaders, input: unknown, clients: readonly ClientProfile[] = CLIENTS): Visibility {
  const given = headerVisibility(headers);
  if (given.scope !== undefined) return given;
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const { cwd } = fields;
  if (typeof cwd !== 'string') return given;
  const transcript = clients.map(({ hooks }) => hooks && fields[hooks.transcriptField.replace(/^\./, '')]).find((value) => typeof value === 'string');
  return withScope(given, hookScope(cwd, { path: transcript as string | undefined, root: pathHeader(headers, REPOSITORY_ROOT_HEADER) }, placeSignals(clients)));
}

/** Where the stop hook says the transcript file is, and the git root the hook scripts found. */
export const TRANSCRIPT_PATH_HEADER = 'x-engram-transcript-path';
export const REPOSITORY_ROOT_HEADER = 'x-engram-repository-root';

/** A path a hook script sends: a hint to the scope only, so an unusable one is ignored, never an error. */
export function pathHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const path = typeof value === 'string' ? value.trim() : undefined;
  return path && path.length <= 4096 ? path : undefined;
}

export async function sessionStartAnswer(
  deps: { control: Control; reflections: ReflectionStore },
  agent: Agent,
  client: HookedClient,
  server: string,
  visible: Visibility = {},
): Promise<object> {
  const markdown = await currentRootIndex(deps, agent.id, visible);
  // Engram's tools as the client shows them to the model (`server`: the name Engram was registered under).
  const names = Object.fromEntries(ENGRAM_TOOLS.map((tool) => [tool, `${client.mcpTools?.prefix(server) ?? ''}${tool}`]));
  const context = renderIndexBlock(markdown, { names, deferred: false }, visible.scope);
  if (client.hooks.answer === 'hookSpecificOutput') {
    return { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: context } };
  }
  return { additionalContext: context, index: await summary(deps.reflections, agent.id, markdown, visible) };
}

/** The `index` beside a top-level `additionalContext`: counts by kind and topic, and the index itself. */
async function summary(store: ReflectionStore, agentId: string, markdown: string, visible: Visibility) {
  // What the index lists: current reflections (superseded ones are history) the session may see.
  const all = await listAllReflections(store, agentId, { superseded: false, visible });
  const topics = new Map<string, number>();
  for (const reflection of all) {
    const topic = topicKey(reflection.topic);
    topics.set(topic, (topics.get(topic) ?? 0) + 1);
  }
  const procedural = all.filter((reflection) => reflection.kind === 'procedural').length;
  return {
    reflections: all.length,
    procedural,
    factual: all.length - procedural,
    topics: [...topics].map(([topic, count]) => ({ topic, count })).sort((a, b) => b.count - a.count || (a.topic < b.topic ? -1 : 1)),
    markdown,
  };
}
