/**
 * Input and output items of the Responses API, in the neutral form extraction reads.
 * One item is one turn, in the input and in the answer alike, so the watermark counts
 * an answer's items the same way when they come back as the next request's input.
 * Reasoning items (and their `encrypted_content`) are never turned into text.
 */
import type { Turn } from '../../domain/transcript.js';
import { isObject, partsText, renderToolCall, toolInput } from '../shared.js';
import type { IsInstructionFile, JsonObject, ToolCall } from '../types.js';

export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'developer'] as const;

/**
 * Output items that wait for the client (a tool to run, an approval to give): an answer
 * holding one of them does not end the agent's turn. Server-side tools
 * (`web_search_call`, `mcp_call`, ...) complete on the provider and do not count.
 */
const CLIENT_ACTIONS = new Set(
  'function_call custom_tool_call local_shell_call shell_call apply_patch_call computer_call mcp_approval_request'.split(' '),
);

export function waitsForClient(item: unknown): boolean {
  return isObject(item) && typeof item.type === 'string' && CLIENT_ACTIONS.has(item.type);
}

const TOOL_OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output', 'local_shell_call_output', 'shell_call_output']);

/** A tool's output handed back to the model. */
export function isToolOutput(item: unknown): item is JsonObject & { type: string } {
  return isObject(item) && typeof item.type === 'string' && TOOL_OUTPUTS.has(item.type);
}

/** The text of a tool output item. */
export function toolOutputText(item: unknown): string {
  return isObject(item) ? outputText(item.output) : '';
}

/**
 * The text of a tool output item, in its pieces, uncopied: a string, the text parts of a
 * list, or the `stdout` and `stderr` of a shell call's output.
 */
export function toolOutputPieces(item: unknown): string[] {
  if (!isToolOutput(item)) return [];
  const output = item.output;
  if (typeof output === 'string') return [output];
  if (!Array.isArray(output)) return [];
  return output.filter(isObject).flatMap((part) => {
    if (typeof part.text === 'string') return part.type === 'input_text' || part.type === 'output_text' || part.type === 'text' ? [part.text] : [];
    return [part.stdout, part.stderr].filter((text): text is string => typeof text === 'string' && text.length > 0);
  });
}

/**
 * The call an item makes with its input: a function's parsed arguments, a free-form tool's
 * text (Codex's `apply_patch`), a shell call's `action` (its command), a patch's
 * `operation` (its path). Undefined for anything else.
 */
export function toolCallOf(item: unknown): ToolCall | undefined {
  if (!isObject(item)) return undefined;
  const namespace = typeof item.namespace === 'string' ? { namespace: item.namespace } : {};
  switch (item.type) {
    case 'function_call':
      return typeof item.name === 'string' ? { name: item.name, ...namespace, input: toolInput(item.arguments) } : undefined;
    case 'custom_tool_call':
      return typeof item.name === 'string' ? { name: item.name, ...namespace, input: item.input } : undefined;
    case 'local_shell_call':
    case 'shell_call':
      return { name: 'shell', input: item.action };
    case 'apply_patch_call':
      return { name: 'apply_patch', input: item.operation };
    default:
      return undefined;
  }
}

/** A message item, typed (`type: "message"`) or in the short form (`{role, content}`). */
export function isMessage(item: unknown): item is JsonObject & { role: string } {
  return isObject(item) && (item.type === undefined || item.type === 'message') && typeof item.role === 'string';
}

/** Text of a message's content: a string, or parts (`input_text`, `output_text`, images, files, refusals). */
export function contentText(content: unknown): string {
  return partsText(content, (part) => {
    if ((part.type === 'input_text' || part.type === 'output_text' || part.type === 'text') && typeof part.text === 'string') return part.text;
    if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
    if (part.type === 'input_image') return '[image]';
    if (part.type === 'input_file') return '[file]';
    if (part.type === 'input_audio') return '[audio]';
    return '';
  });
}

/** A tool output: a string, or content parts like a message's. */
function outputText(output: unknown): string {
  return typeof output === 'string' ? output : contentText(output);
}

/** What a user message that only carries the project's instruction files becomes as a turn. */
export const INSTRUCTIONS_TURN = '[the project instructions the client sends with every request]';

/** `isInstructionFile`: tells a client's instruction-file message, which becomes `INSTRUCTIONS_TURN` (none when absent). */
export function itemTurn(item: unknown, isInstructionFile?: IsInstructionFile): Turn | undefined {
  if (!isObject(item)) return undefined;
  if (isMessage(item)) {
    if (item.role === 'user') {
      const text = contentText(item.content);
      // A client's instruction files may come as a user message (Codex's AGENTS.md): not the user's
      // words, and extraction reads them as instructions (`ConversationReader.instructions`). Still a
      // turn, so turns count alike.
      return { role: 'user', text: isInstructionFile?.(text) ? INSTRUCTIONS_TURN : text };
    }
    if (item.role === 'assistant') return { role: 'assistant', text: contentText(item.content) };
    return undefined;
  }
  if (isToolOutput(item)) return { role: 'tool', text: outputText(item.output) };
  switch (item.type) {
    case 'function_call':
    case 'custom_tool_call':
      return { role: 'assistant', text: renderToolCall(String(item.name ?? ''), item.type === 'function_call' ? item.arguments : item.input) };
    case 'local_shell_call':
    case 'shell_call':
      return { role: 'assistant', text: renderToolCall('shell', item.action) };
    default:
      // reasoning, compaction, item_reference, server-side tool records: nothing to learn from.
      return undefined;
  }
}

export function itemTurns(items: unknown[], isInstructionFile?: IsInstructionFile): Turn[] {
  return items.map((item) => itemTurn(item, isInstructionFile)).filter((turn): turn is Turn => turn !== undefined && turn.text.length > 0);
}
