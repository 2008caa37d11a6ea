import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  agentPath,
  AGENT_OPTIONS,
  flag,
  given,
  integerOption,
  listOption,
  positional,
  queryString,
  seg,
  stringOption,
  type Command,
  type CommandContext,
  type Io,
} from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { learningLine } from './jobs.js';
import { tagAuthorLabel } from '../../domain/tag-authors.js';
import { barRule, relevanceText } from '../../domain/relevance-words.js';
import { clip, printJson, printResult, printTable, shortTime } from '../output.js';

interface ReflectionJson {
  id: string;
  kind: string;
  content: string;
  topic: string;
  tags: string[];
  /** Who wrote the tags; null while no one has (absent from older servers). */
  tags_by?: string | null;
  source: string;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  use_count: number;
  origin?: { conversation_id: string; turn: number | null; role: string | null } | null;
  /** The reflection that replaced this one (a changed fact), and when; null while current. */
  superseded_by?: string | null;
  superseded_at?: string | null;
  /** The project it holds in, and the end user it is for; null: everywhere, the agent's own (absent from older servers). */
  scope?: string | null;
  user?: string | null;
  /** A search result's relevance, on the scale of the agent's bar (`min_score`). */
  relevance?: number;
}

const PAGE_OPTIONS = { kind: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' } } as const;
/** A listing's or a search's project and end user (`--scope ''`: only those that hold everywhere; `--user ''`: the agent's own). */
const PARTITION_OPTIONS = { scope: { type: 'string' }, user: { type: 'string' } } as const;

function listQuery(context: CommandContext, q?: string): string {
  // An empty --scope or --user is passed on: the API lists only those without one.
  const strings = ['kind', 'conversation', 'status', 'scope', 'user'].map((name) => [name, stringOption(context, name)] as const);
  const numbers = ['limit', 'offset'].map((name) => [name, integerOption(context, name)] as const);
  return queryString({ q, ...Object.fromEntries([...strings, ...numbers]) });
}

function printReflections(io: Io, data: ReflectionJson[], scored: boolean): void {
  // History (`--status superseded|all`) says what replaced each one.
  const history = data.some((r) => r.superseded_by);
  // Where each holds and whose it is, once any row has a project or an end user.
  const partitioned = data.some((r) => r.scope || r.user);
  const rows = data.map((r) => [
    r.id,
    r.kind,
    clip(r.topic, 24),
    // Who tagged it, in a word: extraction, tagging, person, agent; '-' while no one has.
    r.tags_by ?? '-',
    ...(scored ? [r.relevance === undefined ? '-' : relevanceText(r.relevance)] : []),
    ...(history ? [r.superseded_by ?? '-'] : []),
    ...(partitioned ? [clip(r.scope ?? 'everywhere', 24), clip(r.user ?? '-', 24)] : []),
    clip(r.content),
  ]);
  printTable(
    io,
    ['ID', 'KIND', 'TOPIC', 'TAGS BY', ...(scored ? ['RELEVANCE'] : []), ...(history ? ['REPLACED BY'] : []), ...(partitioned ? ['SCOPE', 'USER'] : []), 'CONTENT'],
    rows,
    scored ? 'Nothing found.' : 'No reflections yet.',
  );
}

function printReflection(io: Io, r: ReflectionJson): void {
  io.out(`${r.id}  ${r.kind}  topic: ${r.topic || '-'}${r.tags.length ? `  tags: ${r.tags.join(', ')}` : ''}`);
  if (r.tags_by !== undefined) io.out(r.tags_by ? `tags written by ${tagAuthorLabel(r.tags_by)}` : 'not tagged yet: the tagging job gives it tags in the background');
  if (r.scope !== undefined) io.out(r.scope === null ? 'holds everywhere (every project)' : `holds in project ${r.scope}`);
  if (r.user !== undefined) io.out(r.user === null ? "the agent's own, shared by all its users" : `for end user ${r.user} only`);
  io.out(`source ${r.source}, created ${shortTime(r.created_at)}, updated ${shortTime(r.updated_at)}, used ${r.use_count}× (last ${shortTime(r.last_used_at)})`);
  if (r.origin) {
    const turn = r.origin.turn === null ? '' : `, turn ${r.origin.turn}${r.origin.role ? ` (${r.origin.role})` : ''}`;
    io.out(`learnt from conversation ${r.origin.conversation_id}${turn}`);
  }
  if (r.superseded_by) {
    io.out(`superseded by ${r.superseded_by} (${shortTime(r.superseded_at)}): history, never injected; \`engram reflections restore ${r.id}\` makes it current again`);
  }
  io.out('');
  io.out(r.content);
}

/** ` in project P for user U` of a reflection, each part only when it has one. */
function partitionWords(r: ReflectionJson): string {
  return `${r.scope ? ` in project ${r.scope}` : ''}${r.user ? ` for user ${r.user}` : ''}`;
}

/** Copies an export to `out` (private to the user: reflections may hold what one would not share) or, line by line, to stdout. */
async function writeExport(io: Io, body: Readable, out: string | undefined): Promise<void> {
  if (out !== undefined) {
    await pipeline(body, fs.createWriteStream(out, { mode: 0o600 }));
    return;
  }
  let rest = '';
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    const lines = (rest + decoder.decode(chunk as Uint8Array, { stream: true })).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) io.out(line);
  }
  rest += decoder.decode();
  if (rest !== '') io.out(rest);
}

/** `reflections edit` (and its older name `update`): PATCH of the fields given. */
function editCommand(path: string[], summary: string): Command {
  return {
    path,
    synopsis:
      'ID --org NAME_OR_ID --agent NAME_OR_ID [--content TEXT] [--topic TOPIC] [--kind factual|procedural] [--tag TAG]... [--scope NAME | --everywhere] [--json]',
    summary,
    positionals: 1,
    remote: true,
    options: {
      ...AGENT_OPTIONS,
      content: { type: 'string' },
      topic: { type: 'string' },
      kind: { type: 'string' },
      tag: { type: 'string', multiple: true },
      scope: { type: 'string' },
      everywhere: { type: 'boolean' },
    },
    async run(context) {
      const id = positional(context, 0, 'ID');
      const tags = listOption(context, 'tag');
      const scope = stringOption(context, 'scope');
      if (scope !== undefined && flag(context, 'everywhere')) throw new UsageError('Give --scope NAME or --everywhere, not both');
      const body = given({
        content: stringOption(context, 'content'),
        topic: stringOption(context, 'topic'),
        kind: stringOption(context, 'kind'),
        tags: tags.length > 0 ? tags : undefined,
        scope: flag(context, 'everywhere') ? null : scope,
      });
      if (Object.keys(body).length === 0) throw new UsageError('Nothing to change: give --content, --topic, --kind, --tag, --scope or --everywhere');
      const reflection = await context.api().patch<ReflectionJson>(`${agentPath(context)}/reflections/${seg(id)}`, body);
      printResult(context, reflection, () => printReflection(context.io, reflection));
    },
  };
}

export const reflectionCommands: Command[] = [
  {
    path: ['reflections', 'list'],
    synopsis:
      '--org NAME_OR_ID --agent NAME_OR_ID [--kind factual|procedural] [--conversation ID] [--status current|superseded|all] [--scope NAME] [--user ID] [--limit N] [--offset N] [--json]',
    summary:
      "List an agent's reflections, most recently updated first (--conversation: those learnt from it; --status superseded: " +
      "the history a changed fact replaced; --scope NAME: one project's, --scope '': those that hold everywhere; --user ID: one end user's, " +
      "--user '': the agent's own), and what is being learnt",
    remote: true,
    options: { ...AGENT_OPTIONS, ...PAGE_OPTIONS, ...PARTITION_OPTIONS, conversation: { type: 'string' }, status: { type: 'string' } },
    async run(context) {
      const page = await context.api().get<{ data: ReflectionJson[]; has_more?: boolean }>(`${agentPath(context)}/reflections${listQuery(context)}`);
      if (flag(context, 'json')) printJson(context.io, page);
      else {
        printReflections(context.io, page.data, false);
        if (page.has_more) context.io.out('(more: use --offset)');
        // Memory is learnt after a conversation goes quiet: say so, rather than let an
        // empty list read as "nothing was learnt".
        const learning = await learningLine(context.api(), agentPath(context));
        if (learning) context.io.out(learning);
      }
    },
  },
  {
    path: ['reflections', 'search'],
    synopsis: 'QUERY --org NAME_OR_ID --agent NAME_OR_ID [--kind factual|procedural] [--scope NAME] [--user ID] [--limit N] [--json]',
    summary:
      'Hybrid (vector + keyword) search, best first, each result with its RELEVANCE on the scale of the agent\'s bar (min_score): ' +
      'at or above it, a request saying QUERY gets it injected (--scope, --user: what a conversation of that project and end user would find)',
    positionals: 1,
    remote: true,
    options: { ...AGENT_OPTIONS, ...PAGE_OPTIONS, ...PARTITION_OPTIONS },
    async run(context) {
      const query = positional(context, 0, 'QUERY');
      const result = await context.api().get<{ data: ReflectionJson[]; bar?: number }>(`${agentPath(context)}/reflections${listQuery(context, query)}`);
      printResult(context, result, () => {
        // The bar every RELEVANCE is read against (absent from older servers).
        if (result.bar !== undefined && result.data.length > 0) context.io.out(barRule(result.bar));
        printReflections(context.io, result.data, true);
      });
    },
  },
  {
    path: ['reflections', 'show'],
    synopsis: 'ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Show one reflection',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const reflection = await context.api().get<ReflectionJson>(`${agentPath(context)}/reflections/${seg(positional(context, 0, 'ID'))}`);
      printResult(context, reflection, () => printReflection(context.io, reflection));
    },
  },
  {
    path: ['reflections', 'add'],
    synopsis: 'CONTENT --kind factual|procedural --org NAME_OR_ID --agent NAME_OR_ID [--topic TOPIC] [--tag TAG]... [--scope NAME] [--user ID] [--json]',
    summary:
      'Add a reflection by hand (redacted, checked against what is stored, within the limit, like MCP remember); --scope: it holds in that project only, ' +
      "--user: it is that end user's only",
    positionals: 1,
    remote: true,
    options: { ...AGENT_OPTIONS, ...PARTITION_OPTIONS, kind: { type: 'string' }, topic: { type: 'string' }, tag: { type: 'string', multiple: true } },
    async run(context) {
      const content = positional(context, 0, 'CONTENT');
      const kind = stringOption(context, 'kind');
      if (kind === undefined) throw new UsageError('--kind is required: factual (where things are) or procedural (how to avoid a mistake)');
      const tags = listOption(context, 'tag');
      const body = given({
        content,
        kind,
        topic: stringOption(context, 'topic'),
        tags: tags.length > 0 ? tags : undefined,
        scope: stringOption(context, 'scope'),
        user: stringOption(context, 'user'),
      });
      const reflection = await context.api().post<ReflectionJson>(`${agentPath(context)}/reflections`, body);
      if (flag(context, 'json')) printJson(context.io, reflection);
      else context.io.out(`Added reflection ${reflection.id} [${reflection.kind}] (${reflection.topic})${partitionWords(reflection)}: ${reflection.content}`);
    },
  },
  editCommand(['reflections', 'edit'], 'Edit a reflection: it keeps its id and origin and is marked edited-by-hand (--tag replaces all tags)'),
  editCommand(['reflections', 'update'], 'Same as `reflections edit`'),
  {
    path: ['reflections', 'restore'],
    synopsis: 'ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Make a superseded reflection current again (marked edited-by-hand, so extraction does not supersede it again)',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const id = positional(context, 0, 'ID');
      const reflection = await context.api().patch<ReflectionJson>(`${agentPath(context)}/reflections/${seg(id)}`, { superseded_by: null });
      printResult(context, reflection, () => context.io.out(`Restored reflection ${reflection.id}: current again. ${reflection.content}`));
    },
  },
  {
    path: ['reflections', 'export'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--format jsonl|json] [--out FILE]',
    summary: "Write all of an agent's reflections as JSON lines (default) or one JSON document, streamed (a whole deployment, vectors and all: engram export)",
    remote: true,
    options: { org: { type: 'string' }, agent: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' } },
    async run(context) {
      const format = stringOption(context, 'format') ?? 'jsonl';
      if (format !== 'jsonl' && format !== 'json') throw new UsageError(`--format must be jsonl or json, got "${format}"`);
      const body = await context.api().stream(`${agentPath(context)}/reflections/export?format=${format}`);
      const out = stringOption(context, 'out');
      try {
        await writeExport(context.io, Readable.fromWeb(body as NodeReadableStream<Uint8Array>), out);
      } catch (error) {
        // A connection cut mid-stream must not pass for a complete export.
        throw new CliError(`The export was cut off (${(error as Error).message}): ${out ?? 'the output'} is incomplete`);
      }
      if (out !== undefined) context.io.err(`Exported to ${out}.`);
    },
  },
  {
    path: ['reflections', 'delete'],
    synopsis: 'ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Delete a reflection',
    positionals: 1,
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const result = await context.api().delete<{ id: string }>(`${agentPath(context)}/reflections/${seg(positional(context, 0, 'ID'))}`);
      printResult(context, result, () => context.io.out(`Deleted reflection ${result.id}.`));
    },
  },
  {
    path: ['reflections', 'purge'],
    synopsis: '--conversation ID --org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: 'Delete every reflection learnt from one conversation (its id as `reflections show` or `engram jobs` prints it: h:…, s:…, x:… or t:…)',
    remote: true,
    options: { ...AGENT_OPTIONS, conversation: { type: 'string' } },
    async run(context) {
      const conversation = stringOption(context, 'conversation');
      if (conversation === undefined || conversation === '') throw new UsageError('Give --conversation ID');
      const result = await context
        .api()
        .delete<{ deleted: number; ids: string[] }>(`${agentPath(context)}/reflections?conversation=${encodeURIComponent(conversation)}`);
      if (flag(context, 'json')) printJson(context.io, result);
      else context.io.out(`Deleted ${result.deleted} reflection${result.deleted === 1 ? '' : 's'} learnt from ${conversation}.`);
    },
  },
  {
    path: ['index'],
    synopsis: '--org NAME_OR_ID --agent NAME_OR_ID [--json]',
    summary: "Print an agent's root memory index (markdown)",
    remote: true,
    options: AGENT_OPTIONS,
    async run(context) {
      const index = await context.api().get<{ agent_id: string; markdown: string }>(`${agentPath(context)}/index`);
      printResult(context, index, () => context.io.out(index.markdown));
    },
  },
];
