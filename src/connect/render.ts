/** What `engram connect` prints: for people, or as one JSON document with `--json`. */
import path from 'node:path';
import { fragment, plannedMode, type FileOutcome } from './apply.js';
import type { Change } from './json-file.js';
import { shortBaseUrl, shortMcpUrl } from '../domain/base-urls.js';
import { sdkBaseUrl } from './sdk-env.js';
import type { AgentInfo, ClientKind, Locations, PlannedFile, Setup } from './types.js';

export interface Report {
  kind: ClientKind;
  agent: AgentInfo;
  setup: Setup;
  locations: Locations;
  /** The token, when the user gave it or `--new-token` minted it. */
  token: string | undefined;
  /** True when `--new-token` minted the token just now (it is shown this once). */
  minted: boolean;
  /** Set in `--write` mode. */
  outcomes?: FileOutcome[];
  /** How to make a token, for the placeholder line. */
  tokenHint: string;
}

/** `~/.codex/config.toml` for paths below the home dir. */
function shown(file: string, locations: Locations): string {
  const relative = path.relative(locations.home, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : `~/${relative}`;
}

const SECRET_KEY = /token|key|secret|authorization|password/i;

/** Replaced values may be the user's secrets: show only their start. */
function redact(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    // References to a variable, and variable names, are not secrets.
    const reference = value.includes('$') || value.includes('{env:') || /^[A-Z_][A-Z0-9_]*$/.test(value);
    return SECRET_KEY.test(key) && !reference && value.length > 8 ? `${value.slice(0, 4)}…` : value;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, redact(item, name)]));
  }
  return value;
}

function describeChange(change: Change): string {
  const key = change.path.join('.');
  const last = String(change.path[change.path.length - 1] ?? '');
  const before = JSON.stringify(redact(change.before, last));
  const after = change.after === undefined ? '(removed: a duplicate of ours)' : JSON.stringify(redact(change.after, last));
  const clip = (text: string) => (text.length > 160 ? text.slice(0, 159) + '…' : text);
  return `replaced ${key}: ${clip(before)} -> ${clip(after)}`;
}

function exportLine(name: string, value: string): string {
  return `export ${name}="${value.replace(/["\\`]/g, '\\$&')}"`;
}

function envLines({ setup, token, tokenHint }: Report): string[] {
  return Object.entries(setup.env).map(([name, value]) => {
    if (name !== 'ENGRAM_TOKEN' || value !== '') return exportLine(name, value);
    return token ? exportLine(name, token) : `export ENGRAM_TOKEN='<the agent token>'   # ${tokenHint}`;
  });
}

function fileHeading(file: PlannedFile, report: Report): string {
  const how = file.type === 'script' ? `script, mode ${plannedMode(file).toString(8)}` : file.secret ? 'merged, mode 600' : 'merged';
  return `${shown(file.path, report.locations)}  (${how}): ${file.purpose}`;
}

export function renderText(report: Report): string[] {
  const { kind, agent, setup } = report;
  const out: string[] = [];
  // Label and value: a kind's title ("Any other tool") does not read well inside a sentence.
  out.push(`Engram agent "${agent.name}" (${agent.id}, organisation ${agent.orgId})`);
  out.push(`  tool       ${kind.title}`);
  // The one base URL first, in the form this tool takes (the one its exports and files name):
  // the token says which agent. The agent's own URLs serve the same, and the hooks.
  const form = kind.baseUrlForm ?? 'openai';
  out.push(`  base URL   ${sdkBaseUrl(form, agent.serverUrl)}   (any agent: the token says which${form === 'anthropic' ? '; the client adds /v1' : ''})`);
  out.push(`  MCP URL    ${shortMcpUrl(agent.serverUrl)}`);
  out.push(`  agent URL  ${agent.baseUrl}   (this agent's own base URL, and its hooks)`);
  if (report.minted) out.push('', 'Minted a new token for this client. It is shown only now: keep it (the ENGRAM_TOKEN line below).');

  const env = envLines(report);
  if (env.length > 0) {
    out.push('', 'Environment: add these lines to your shell profile (~/.bashrc, ~/.zshrc), then start the tool from a new shell:');
    for (const line of env) out.push(`  ${line}`);
  }

  if (report.outcomes) {
    out.push('', 'Files:');
    for (const outcome of report.outcomes) {
      const file = setup.files.find((candidate) => candidate.path === outcome.path)!;
      const backup = outcome.backup ? `  (backup: ${shown(outcome.backup, report.locations)})` : '';
      out.push(`  ${outcome.status.padEnd(9)} ${fileHeading(file, report)}${backup}`);
      for (const change of outcome.changes) out.push(`            ${describeChange(change)}`);
      if (outcome.commentsDropped) out.push('            its comments could not be kept; the backup has them');
    }
  } else if (setup.files.length > 0) {
    out.push('', 'Files (`--write` merges these into yours, backing up each file it changes):');
    for (const file of setup.files) {
      out.push('', `# ${fileHeading(file, report)}`);
      out.push(fragment(file).trimEnd());
    }
  }

  if (setup.commands.length > 0) {
    out.push('', 'Or with the tool\'s own command:');
    for (const command of setup.commands) out.push(`  ${command}`);
  }
  for (const snippet of setup.snippets) {
    out.push('', `# ${snippet.title}`, snippet.text.trimEnd());
  }
  if (setup.notes.length > 0) {
    out.push('', 'Notes:');
    for (const note of setup.notes) out.push(`  - ${note}`);
  }
  if (!report.outcomes && setup.files.length > 0) {
    out.push('', `Run again with --write to write the files.`);
  }
  return out;
}

export function renderJson(report: Report): unknown {
  const outcomes = new Map((report.outcomes ?? []).map((outcome) => [outcome.path, outcome]));
  return {
    client: report.kind.name,
    agent: {
      org_id: report.agent.orgId,
      agent_id: report.agent.id,
      name: report.agent.name,
      short_base_url: shortBaseUrl(report.agent.serverUrl),
      short_mcp_url: shortMcpUrl(report.agent.serverUrl),
      base_url: report.agent.baseUrl,
      mcp_url: report.agent.mcpUrl,
    },
    ...(report.minted ? { token: report.token } : {}),
    env: Object.fromEntries(Object.entries(report.setup.env).map(([name, value]) => [name, name === 'ENGRAM_TOKEN' && value === '' ? (report.token ?? null) : value])),
    files: report.setup.files.map((file) => {
      const outcome = outcomes.get(file.path);
      return {
        path: file.path,
        purpose: file.purpose,
        format: file.type === 'script' ? 'bash' : file.format,
        mode: outcome?.mode ?? plannedMode(file),
        content: fragment(file),
        ...(outcome
          ? { status: outcome.status, backup: outcome.backup ?? null, changes: outcome.changes.map((change) => describeChange(change)), comments_dropped: outcome.commentsDropped }
          : {}),
      };
    }),
    commands: report.setup.commands,
    snippets: report.setup.snippets,
    notes: report.setup.notes,
  };
}
