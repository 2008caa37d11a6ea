/**
 * The key that signs access tokens: one ES256 key pair for every replica. The first
 * process to start offers a fresh pair to the store (`AccountStore.signingKey`, first
 * wins) and every process uses whichever was stored, so a token signed by one replica
 * verifies on all. The private half is stored sealed by the vault, with the other
 * secrets; it is opened once per process and kept in memory.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey } from 'jose';
import type { SigningKeyRecord } from '../domain/account-records.js';
import type { AccountStore } from '../ports/accounts.js';
import type { Vault } from '../security/vault.js';

export const SIGNING_ALG = 'ES256';
/** The vault context the private key is sealed under: it opens under no other. */
export const SIGNING_KEY_CONTEXT = 'oauth-signing-key';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

export interface SigningKeysOptions {
  store: AccountStore;
  vault: Vault;
  now: () => number;
}

async function candidate(now: number, vault: Vault): Promise<SigningKeyRecord> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const sealedPrivateJwk = vault.seal(JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG }), SIGNING_KEY_CONTEXT);
  return { kid, alg: SIGNING_ALG, sealedPrivateJwk, publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }, createdAt: now };
}

/** The shared signing key of this process, loaded once (see the header). */
export class SigningKeys {
  readonly #options: SigningKeysOptions;
  #loaded: Promise<SigningKey> | undefined;

  constructor(options: SigningKeysOptions) {
    this.#options = options;
  }

  /** The shared key, loaded (or created) on first use; a failed load is retried on the next call. */
  current(): Promise<SigningKey> {
    this.#loaded ??= this.#load().catch((error: unknown) => {
      this.#loaded = undefined;
      throw error;
    });
    return this.#loaded;
  }

  async #load(): Promise<SigningKey> {
    const { store, vault, now } = this.#options;
    // A pair is generated even when one is stored already: a millisecond once per process,
    // and it makes "store if none, else read" a single call every store can do atomically.
    const record = await store.signingKey(await candidate(now(), vault));
    const privateJwk = JSON.parse(vault.open(record.sealedPrivateJwk, SIGNING_KEY_CONTEXT)) as Record<string, unknown>;
    const privateKey = await importJWK(privateJwk, record.alg);
    const publicKey = await importJWK(record.publicJwk, record.alg);
    if (privateKey instanceof Uint8Array || publicKey instanceof Uint8Array) throw new Error('The OAuth signing key is not an asymmetric key');
    return { kid: record.kid, alg: record.alg, privateKey, publicKey };
  }
}
