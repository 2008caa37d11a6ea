/**
 * The vault a server starts with, checked against what is already sealed. A data dir
 * restored without its `secret-key` used to start with a new key and fail every proxied
 * request with a 500; now the server refuses to start and says which key it needs.
 *
 * The check opens one agent's sealed upstream secrets through the directory port, so it
 * works the same on the embedded SQLite file and on NATS KV.
 */
import { StartupError } from '../errors.js';
import type { Directory } from '../ports/directory.js';
import { loadOrCreateSecretKey, SecretBox, SecretBoxError, SecretKeyMissingError, secretKeyPath } from './secret-box.js';
import { Vault } from './vault.js';

export interface OpenVaultOptions {
  dataDir: string;
  /** `ENGRAM_SECRET_KEY`, when set. */
  configured: string | undefined;
  directory: Directory;
  /** Where the sealed data lives, for the message (`the control store (nats 2.9.10)`). */
  store: string;
}

/** A sealed value to check the key on: the oldest agent of the oldest org that has one. */
interface SealedSample {
  agentId: string;
  label: string;
  sealedSecrets: string;
}

export async function openVault(options: OpenVaultOptions): Promise<Vault> {
  const sample = await firstSealed(options.directory);
  const file = secretKeyPath(options.dataDir);
  let key: Buffer;
  try {
    key = loadOrCreateSecretKey(options.dataDir, options.configured, { create: sample === undefined });
  } catch (error) {
    if (!(error instanceof SecretKeyMissingError) || !sample) throw error;
    throw new StartupError(
      `No secret key: ${file} is missing and ENGRAM_SECRET_KEY is not set, but ${options.store} holds upstream keys ` +
        `sealed with a key (${sample.label}). Put that key back (copy the original secret-key file to ${file}, mode 0600, ` +
        `or set ENGRAM_SECRET_KEY to it); a new key would open none of them, so none is generated.`,
    );
  }
  const vault = new Vault(new SecretBox(key));
  if (sample) {
    try {
      vault.openAgentSecrets(sample.agentId, sample.sealedSecrets);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      const source = options.configured ? 'ENGRAM_SECRET_KEY' : file;
      throw new StartupError(
        `Wrong secret key: the key from ${source} does not open the upstream keys sealed in ${options.store} (${sample.label}). ` +
          (options.configured
            ? `Set ENGRAM_SECRET_KEY to the key they were sealed with (or unset it to use ${file}).`
            : `Put the key they were sealed with in ${file} (mode 0600) or set ENGRAM_SECRET_KEY to it.`),
        { cause: error },
      );
    }
  }
  return vault;
}

async function firstSealed(directory: Directory): Promise<SealedSample | undefined> {
  for (const org of await directory.listOrgs()) {
    for (const agent of await directory.listAgents(org.id)) {
      const entry = await directory.agentEntry(agent.id);
      if (entry) return { agentId: agent.id, label: `agent "${agent.name}" of org "${org.name}"`, sealedSecrets: entry.sealedSecrets };
    }
  }
  return undefined;
}
