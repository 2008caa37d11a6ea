/**
 * `engram transcripts upload <client> FILE...`: learn from session files already on disk
 * (a backfill of the sessions before the hooks were set up). Each file goes to the same
 * endpoint the client's stop hook uses, so it is read, deduplicated and queued the same
 * way; uploading a file twice does nothing the second time.
 */
import fs from 'node:fs';
import { loadConnectConfig } from '../../config.js';
import { agentPath, AGENT_OPTIONS, flag, type Command } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { printJson } from '../output.js';
import type { AgentJson } from './agents.js';
import { resolveToken, TOKEN_OPTIONS, TOKEN_SYNOPSIS } from './connect.js';
import { CLIENTS } from '../../clients/index.js';

/** The hook endpoint, under the agent's base URL, of each client's session files: its stop hook's. */
const ROUTES: Record<string, string> = Object.fromEntries(
  CLIENTS.flatMap(({ id, transcript, hooks }) => (transcript && hooks ? [[id, hooks.stopPath.replace(/^\//, '')]] : [])),
);
const CLIENT_NAMES = Object.keys(ROUTES).join(', ');

interface Outcome {
  file: string;
  status: number;
  answer: Record<string, unknown>;
}

export const transcriptUploadCommand: Command = {
  path: ['transcripts', 'upload'],
  synopsis: `<${Object.keys(ROUTES).join('|')}> FILE... --org NAME_OR_ID --agent NAME_OR_ID [${TOKEN_SYNOPSIS}] [--json]`,
  summary: 'Learn from session files already on disk: uploads each as the client’s stop hook would',
  positionals: Number.POSITIVE_INFINITY,
  remote: true,
  options: { ...AGENT_OPTIONS, ...TOKEN_OPTIONS },
  async run(context) {
    const [client, ...files] = context.positionals;
    const route = client === undefined ? undefined : ROUTES[client];
    if (!route) throw new UsageError(`Which client wrote the files? One of ${CLIENT_NAMES}`);
    if (files.length === 0) throw new UsageError('No files: name the session files to upload');
    const agent = await context.api().get<AgentJson>(agentPath(context));
    const { token } = await resolveToken(context, `transcripts ${client}`, loadConnectConfig().token);
    if (!token) throw new CliError("Uploads use the agent's token: set ENGRAM_TOKEN, pass --token-env VAR, --token-file PATH or --token-stdin, or use --new-token to mint one");

    const outcomes: Outcome[] = [];
    for (const file of files) {
      let body: Buffer;
      try {
        body = fs.readFileSync(file);
      } catch (error) {
        outcomes.push({ file, status: 0, answer: { error: { message: (error as Error).message } } });
        continue;
      }
      const response = await fetch(`${agent.base_url}/${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(body),
      });
      const text = await response.text();
      let answer: Record<string, unknown>;
      try {
        answer = JSON.parse(text) as Record<string, unknown>;
      } catch {
        answer = { error: { message: text.slice(0, 300) } };
      }
      outcomes.push({ file, status: response.status, answer });
      if (response.status === 401) break;
    }

    if (flag(context, 'json')) printJson(context.io, outcomes);
    else for (const outcome of outcomes) context.io.out(describe(outcome));
    const failed = outcomes.filter((outcome) => outcome.status < 200 || outcome.status > 299);
    if (failed.length > 0) {
      const unauthorised = failed.some((outcome) => outcome.status === 401);
      throw new CliError(`${failed.length} of ${files.length} file(s) not uploaded${unauthorised ? ': Engram rejected the token' : ''}`);
    }
  },
};

function describe({ file, status, answer }: Outcome): string {
  const error = answer.error as { message?: string } | undefined;
  if (status < 200 || status > 299) return `${file}: ${status === 0 ? 'unreadable' : `HTTP ${status}`}: ${error?.message ?? 'failed'}`;
  const detail = answer.status === 'queued' ? `${answer.queued_turns} of ${answer.turns} turns queued for extraction` : `${answer.turns} turns`;
  const reason = typeof answer.reason === 'string' ? `: ${answer.reason}` : '';
  return `${file}: ${answer.status} (${detail}, session ${answer.session})${reason}`;
}
