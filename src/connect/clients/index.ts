/** The client kinds `engram connect` knows, in the order `engram connect --help` lists them. */
import type { ClientKind } from '../types.js';
import { agentsSdk } from './agents-sdk.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { crush } from './crush.js';
import { editorExtension } from './editor-extension.js';
import { editorPlugin } from './editor-plugin.js';
import { opencode } from './opencode.js';
import { other } from './other.js';

export const CLIENT_KINDS: readonly ClientKind[] = [codex, claudeCode, copilot, opencode, crush, editorPlugin, editorExtension, agentsSdk, other];

export function findClientKind(name: string): ClientKind | undefined {
  return CLIENT_KINDS.find((kind) => kind.name === name);
}
