/**
 * Prompt-cache-safe injection (DESIGN section 6), pure. Every forwarded request is a
 * byte-identical extension of the one forwarded on the previous turn: the blocks Engram
 * added before are re-applied to the same messages with the same bytes, and a new block
 * only ever joins the newest message (a user input or a tool result). The client's system prompt and tools are
 * never touched.
 */
import { createHash } from 'node:crypto';
import type { ConversationState, Insertion, InsertionKind } from '../domain/conversation-state.js';
import { stableJson } from '../protocols/shared.js';
import { spliceArrayElements } from '../protocols/json-splice.js';
import type { JsonObject, MessageKinds, RequestCodec } from '../protocols/types.js';
import { turnQuery } from '../memory/turn-query.js';

/** Identity of a client message, blind to the `cache_control` markers clients move. */
export function messageFingerprint(message: unknown): string {
  return createHash('sha1').update(stableJson(message)).digest('base64url');
}

export interface InjectionPlan {
  /** Earlier insertions still valid for this message list. */
  kept: Insertion[];
  /** Index of the message that gets the retrieval (the carrier) when there is something to search for, else -1. */
  target: number;
  /** The retrieval query for `target`: what is new in this turn (`turnQuery`). */
  query: string;
  /**
   * Index of the newest message when it is new and may carry an addition (a user input
   * or a tool result), else -1: where reflections, the memory index or a reminder go.
   */
  carrier: number;
  /** Reflections the new messages already show (a `recall` result): never injected beside them. */
  shown: string[];
}

/**
 * Decides what to re-apply and whether to retrieve. An insertion whose message changed
 * (the client edited or rewound the conversation) is dropped with every later one. The
 * query is built from what is new since the previous turn (the messages past `seen`); on
 * a conversation's first turn, from its newest user input on, not the whole history a
 * client may open with (Codex's environment context, a resumed session).
 */
export function planInjection(adapter: MessageKinds, messages: unknown[], state: ConversationState): InjectionPlan {
  const kept: Insertion[] = [];
  let seen = Math.min(state.seenMessages, messages.length);
  for (const insertion of [...state.insertions].sort((a, b) => a.index - b.index)) {
    const message = messages[insertion.index];
    if (message === undefined || messageFingerprint(message) !== insertion.messageHash) {
      seen = Math.min(seen, insertion.index);
      break;
    }
    kept.push(insertion);
  }
  // The newest turn is the last message that is not a system entry: clients may append
  // context after the user's message (Claude Code's mid-conversation system entries).
  let last = messages.length - 1;
  while (last >= 0 && adapter.isSystemEntry(messages[last])) last--;
  const isNew = last >= seen && last >= 0 && !kept.some((i) => i.index === last);
  const carrier = isNew && (adapter.isUserInput(messages[last]) || adapter.isToolResult(messages[last])) ? last : -1;
  if (carrier === -1) return { kept, target: -1, query: '', carrier, shown: [] };
  const from = seen > 0 ? seen : newestUserInput(adapter, messages, last);
  const { text, shown } = turnQuery(adapter, messages, { from, to: last });
  const query = text.trim();
  return { kept, target: query ? carrier : -1, query, carrier, shown };
}

/** Index of the newest user input at or before `last`, or 0 when there is none. */
function newestUserInput(adapter: MessageKinds, messages: unknown[], last: number): number {
  for (let i = last; i >= 0; i--) if (adapter.isUserInput(messages[i])) return i;
  return 0;
}

/** The message list with every insertion applied (copies only the messages it changes). */
export function applyInsertions(adapter: RequestCodec, messages: unknown[], insertions: Insertion[]): unknown[] {
  if (insertions.length === 0) return messages;
  const result = messages.slice();
  for (const insertion of insertions) result[insertion.index] = adapter.appendText(result[insertion.index], insertion.block);
  return result;
}

/**
 * The body to forward: the client's own bytes with only the messages that carry
 * insertions re-serialised (the whole body re-serialised if the raw bytes cannot be
 * mapped, which `JSON.parse` accepting them makes unlikely). With an `offset` the
 * upstream holds the first messages itself: only insertions past them are applied.
 */
export function forwardedBody(
  adapter: RequestCodec,
  base: { raw: Buffer; body: JsonObject; offset: number },
  allMessages: unknown[],
  allInsertions: Insertion[],
): Buffer {
  const { raw, body, offset } = base;
  const messages = offset > 0 ? allMessages.slice(offset) : allMessages;
  const insertions = offset > 0
    ? allInsertions.filter((insertion) => insertion.index >= offset).map((insertion) => ({ ...insertion, index: insertion.index - offset }))
    : allInsertions;
  if (insertions.length === 0) return raw;
  const changed = new Map<number, unknown>();
  for (const insertion of insertions) {
    changed.set(insertion.index, adapter.appendText(changed.get(insertion.index) ?? messages[insertion.index], insertion.block));
  }
  return (
    spliceArrayElements(raw, adapter.messagesField, messages.length, changed) ??
    Buffer.from(JSON.stringify(adapter.withMessages(body, applyInsertions(adapter, messages, insertions))))
  );
}

export function newInsertion(messages: unknown[], index: number, block: string, kind: InsertionKind): Insertion {
  return { index, messageHash: messageFingerprint(messages[index]), block, kind };
}
