/**
 * The client kinds Engram knows, one folder each: the one list every generic piece
 * (identity, scope, chores, transcripts, hooks, `engram connect`) iterates. Order matters:
 * signals are tried in it (a session header or body signal of an earlier kind wins), and
 * `engram connect --help` and the dashboard's tool picker list the kinds in it, the plain
 * SDKs first, the most common case.
 */
import type { ClientKind } from '../connect/types.js';
import { agentsSdk } from './agents-sdk/index.js';
import { anthropicSdk } from './anthropic-sdk/index.js';
import { claudeCode } from './claude-code/index.js';
import { codex } from './codex/index.js';
import { copilot } from './copilot/index.js';
import { crush } from './crush/index.js';
import { editorExtension } from './editor-extension/index.js';
import { editorPlugin } from './editor-plugin/index.js';
import { openaiSdk } from './openai-sdk/index.js';
import { opencode } from './opencode/index.js';
import { other } from './other/index.js';
import type { ClientProfile } from './types.js';

const KINDS: readonly ClientProfile[] = [openaiSdk, anthropicSdk, codex, claudeCode, copilot, opencode, crush, editorPlugin, editorExtension, agentsSdk];
export const CLIENTS: readonly ClientProfile[] = [...KINDS, other(KINDS)];

/** The kinds `engram connect` sets up, as its commands and views name them. */
export function clientKinds(clients: readonly ClientProfile[] = CLIENTS): ClientKind[] {
  return clients.flatMap(({ id, title, connect }) =>
    connect ? [{ ...connect, name: id, title, plan: (input) => ({ files: [], env: {}, commands: [], snippets: [], notes: [], ...connect.plan(input) }) }] : [],
  );
}

/** Tells a text among the user's messages that carries a client's instruction files (`ClientProfile.isInstructionFile`). */
export function instructionFiles(clients: readonly ClientProfile[] = CLIENTS): (text: string) => boolean {
  return (text) => clients.some((client) => client.isInstructionFile?.(text) ?? false);
}

export const CLIENT_KINDS: readonly ClientKind[] = clientKinds();

export function findClientKind(name: string): ClientKind | undefined {
  return CLIENT_KINDS.find((kind) => kind.name === name);
}

