import type { Config } from './config.js';
import type { Control } from './control/control.js';
import type { Embedder, EventBus, ReflectionStore, UpstreamClient } from './ports/index.js';
import type { Reranker } from './memory/rerank.js';
import type { Vocabulary } from './memory/named-terms.js';
import type { Accounts } from './accounts/accounts.js';
import type { Vault } from './security/vault.js';
import type { ClientProfile } from './clients/types.js';

/** Everything `buildApp` needs, connected by `main.ts` (or by a test). */
export interface Deps {
  config: Config;
  /** The control plane: directory, conversations, responses, root indexes. */
  control: Control;
  reflections: ReflectionStore;
  bus: EventBus;
  embedder: Embedder;
  /** Soft-match reranking of searches, when the word vectors are loaded. */
  reranker?: Reranker;
  /** What English knows of words (the word vectors, when loaded): tells names from everyday words. */
  vocabulary?: Vocabulary;
  upstream: UpstreamClient;
  /** SHA-256 of the admin token (see `security/tokens.ts`). */
  adminTokenHash: string;
  /** Dashboard users and their sessions, organisations they belong to (DESIGN section 10). */
  accounts: Accounts;
  /** Seals what is stored secret (upstream keys, recorded responses, the OAuth signing key). */
  vault: Vault;
  /**
   * Engram's public base URL, no trailing slash: the OAuth issuer and the address the
   * dashboard shows. `ENGRAM_PUBLIC_URL`, else the listener's `http://<host>:<port>`
   * (known once it listens: port 0 picks one).
   */
  publicUrl: () => string;
  now: () => number;
  /** The client kinds whose signals requests are read for: `CLIENTS` unless given (a test adds a made-up one). */
  clients?: readonly ClientProfile[];
}
