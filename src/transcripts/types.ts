/**
 * One normaliser per client transcript format (Codex rollout, Claude Code transcript,
 * Copilot CLI `events.jsonl`), all behind this interface: records in, the protocol-neutral
 * turns the extraction pipeline already reads out. The generic code never asks which
 * client wrote the file.
 */
import type { Turn } from '../domain/transcript.js';
import type { ProtocolId } from '../domain/types.js';

export interface TranscriptFormat {
  /** The client's id (`ClientProfile.id`); stored in the ids of transcript conversations (`t:<id>:…`), so never renamed. */
  id: string;
  /** Client name for messages (`Codex rollout`, ...). */
  label: string;
  /**
   * The wire protocol the client speaks to its provider: extraction of its transcripts
   * calls the agent's upstream in it, unless the upload names another.
   */
  protocol: ProtocolId;
  /** A fresh reader for one upload. */
  reader(): TranscriptReader;
}

/**
 * Reads one transcript record by record. A record yields turns as soon as it is read and
 * never changes a turn it yielded before: the same file grown by appended lines gives the
 * same first turns, which is what lets a watermark count them.
 */
export interface TranscriptReader {
  /** The turns one record adds (often none: metadata, token counts, reasoning). */
  read(record: unknown): Turn[];
  /** What the records said about the session, once they are all read. */
  meta(): TranscriptMeta;
}

export interface TranscriptMeta {
  /** The client's own session id, when the transcript names it. */
  sessionId?: string;
  /** The model the session used, when the transcript names it. */
  model?: string;
  /** The working directory the session ran in, when the transcript names it (its scope, DESIGN section 13). */
  cwd?: string;
  /** Records of a kind this reader knows; zero means the file is not of this format. */
  recognised: number;
  /**
   * The instructions the client gave the model, as recorded (Codex: its developer
   * messages and the AGENTS.md it injects), first seen first, each once, bounded: what
   * extraction must not store again (`memory/restatement.ts`).
   */
  instructions?: string[];
}
