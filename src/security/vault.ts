/**
 * Sealing above the ports: what an adapter stores of an agent's upstream secrets or of a
 * recorded response is sealed here, bound to the record it belongs to (a sealed value
 * copied onto another record fails to open). No adapter holds the key.
 */
import type { AgentSecrets } from '../domain/types.js';
import type { ResponseRecord } from '../domain/response-record.js';
import type { StoredResponse } from '../ports/responses.js';
import type { SecretBox } from './secret-box.js';

type SealedResponsePart = Pick<ResponseRecord, 'input' | 'output' | 'body'>;

/** Opened secrets kept in memory, by agent; beyond this many the cache starts over. */
const OPENED_MAX = 10_000;

export class Vault {
  readonly #box: SecretBox;
  /** Decrypted upstream keys by agent, with the sealed text they came from (in memory only). */
  readonly #opened = new Map<string, { sealed: string; secrets: AgentSecrets }>();

  constructor(box: SecretBox) {
    this.#box = box;
  }

  /** Seals any text, bound to `context` (it opens only with the same context). */
  seal(plain: string, context: string): string {
    return this.#box.encrypt(plain, context);
  }

  open(sealed: string, context: string): string {
    return this.#box.decrypt(sealed, context);
  }

  sealAgentSecrets(agentId: string, secrets: AgentSecrets): string {
    return this.#box.encrypt(JSON.stringify(secrets), agentId);
  }

  /** Every proxied request needs the key: decrypted once per sealed value, not per request. */
  openAgentSecrets(agentId: string, sealed: string): AgentSecrets {
    const cached = this.#opened.get(agentId);
    if (cached?.sealed === sealed) return cached.secrets;
    const secrets = JSON.parse(this.#box.decrypt(sealed, agentId)) as AgentSecrets;
    if (this.#opened.size >= OPENED_MAX) this.#opened.clear();
    this.#opened.set(agentId, { sealed, secrets });
    return secrets;
  }

  sealResponse(record: ResponseRecord): StoredResponse {
    const part: SealedResponsePart = { input: record.input, output: record.output, body: record.body };
    return {
      id: record.id,
      agentId: record.agentId,
      conversationId: record.conversationId,
      previousResponseId: record.previousResponseId,
      createdAt: record.createdAt,
      sealed: this.#box.encrypt(JSON.stringify(part), responseContext(record.agentId, record.id)),
    };
  }

  openResponse(stored: StoredResponse): ResponseRecord {
    const part = JSON.parse(this.#box.decrypt(stored.sealed, responseContext(stored.agentId, stored.id))) as SealedResponsePart;
    return {
      id: stored.id,
      agentId: stored.agentId,
      conversationId: stored.conversationId,
      previousResponseId: stored.previousResponseId,
      createdAt: stored.createdAt,
      ...part,
    };
  }
}

function responseContext(agentId: string, id: string): string {
  return `response:${agentId}:${id}`;
}
