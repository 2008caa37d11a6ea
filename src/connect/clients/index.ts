/**
 * The client kinds `engram connect` knows, in the order `engram connect --help` and the
 * dashboard's tool picker list them: the plain SDKs first, the most common case.
 */
import type { ClientKind } from '../types.js';
import { agentsSdk } from './agents-sdk.js';
import { anthropicSdk } from './anthropic-sdk.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { crush } from './crush.js';
import { editorExtension } from './editor-extension.js';
import { editorPlugin } from './editor-plugin.js';
import { openaiSdk } from './openai-sdk.js';
import { opencode } from './opencode.js';
import { other } from './other.js';

export const CLIENT_KINDS: readonly ClientKind[] = [openaiSdk, anthropicSdk, codex, claudeCode, copilot, opencode, crush, editorPlugin, editorExtension, agentsSdk, other];

export function findClientKind(name: string): ClientKind | undefined {
  return CLIENT_KINDS.find((kind) => kind.name === name);
}
