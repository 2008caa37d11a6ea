/**
 * Reads an archive (`format.ts`) into the stores the configuration selects. Idempotent:
 * a record already present (same id, or same token hash) is skipped, so an interrupted
 * import is simply run again. Refused before anything is written: another format or a
 * newer version, an agent whose sealed upstream key or a user whose sealed password hash
 * the configured secret key cannot open (the archive comes from a deployment with another
 * key), a malformed user or OAuth client, or a name the target gives to something else:
 * an organisation's, an agent's within its organisation, a user's email (another account;
 * accounts are never merged). A user or client already present (same id) is kept as the
 * target has it.
 */
import type { Control } from '../control/control.js';
import { isEmail, normaliseEmail, type OAuthClient } from '../domain/account-records.js';
import { presumedTagAuthor } from '../domain/tag-authors.js';
import { EngramError } from '../errors.js';
import type { Agent, Org, Reflection } from '../domain/types.js';
import type { AccountStore, ReflectionStore, StoredReflection } from '../ports/index.js';
import type { Vault } from '../security/vault.js';
import { validName } from '../domain/scope.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, decodeVector, passwordContext, type ArchivedUser, type ArchiveHeader, type ArchiveRecord } from './format.js';
import { noCounts, type ArchiveCounts } from './export-archive.js';

export interface ImportTargets {
  control: Control;
  reflections: ReflectionStore;
  accounts: AccountStore;
  /** Opens the users' sealed password hashes: the key that opens the agents' upstream keys. */
  vault: Pick<Vault, 'open'>;
}

export interface ImportResult {
  header: ArchiveHeader;
  imported: ArchiveCounts;
  /** Records already present, left as they were. */
  skipped: ArchiveCounts;
}

export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

const BATCH = 200;

/**
 * `open` gives the archive's lines; it is read twice: a first pass checks every line (the
 * header, the JSON, the record types, that the secret key opens every agent's sealed key
 * and every user's sealed password hash, the users' and clients' fields, that no user's
 * email is another account's in the target) and writes nothing, so a bad archive or the
 * wrong key leaves the target untouched; the second pass writes.
 */
export async function importArchive(targets: ImportTargets, open: () => AsyncIterable<string>): Promise<ImportResult> {
  let header: ArchiveHeader | undefined;
  const seen = { userIds: new Set<string>(), emails: new Set<string>() };
  for await (const { record, first, line } of records(open())) {
    if (first) {
      header = first;
      continue;
    }
    switch (record?.type) {
      case 'org':
        await checkOrg(targets, record.org);
        break;
      case 'agent':
        try {
          targets.control.openSealed(record.agent.id, record.sealed_secrets);
        } catch (error) {
          throw new ArchiveError(`the secret key does not open agent "${record.agent.name}"'s upstream key: ${WITH_THE_KEY}`, { cause: error });
        }
        await checkAgent(targets, record.agent);
        break;
      case 'user':
        await checkUser(targets, record.user, record.sealed_password, line, seen);
        break;
      case 'oauth_client':
        if (!isClient(record.client)) throw new ArchiveError(`line ${line}: a malformed OAuth client`);
        break;
    }
  }
  if (!header) throw new ArchiveError('the archive is empty');
  return { header, ...(await write(targets, open(), header.version)) };
}

const WITH_THE_KEY = "import with the exporting deployment's key (ENGRAM_SECRET_KEY, or its <data dir>/secret-key)";

/** An org whose name another org of the target holds would stop the import half-way: refused before it starts. */
async function checkOrg(targets: ImportTargets, org: Org): Promise<void> {
  const holder = await targets.control.directory.getOrg(org.name);
  if (holder && holder.id !== org.id) {
    throw new ArchiveError(`organisation "${org.name}" conflicts with another organisation of that name in the target (${holder.id}); nothing was imported`);
  }
}

/** Likewise an agent whose name another agent of its org (imported before) holds. */
async function checkAgent(targets: ImportTargets, agent: Agent): Promise<void> {
  const holder = await targets.control.directory.getAgent(agent.orgId, agent.name);
  if (holder && holder.id !== agent.id) {
    throw new ArchiveError(`agent "${agent.name}" conflicts with another agent of that name in its organisation in the target (${holder.id}); nothing was imported`);
  }
}

/**
 * A user the target can take: well formed, its password hash opened by the key, once in
 * the archive, and its email free in the target or already this user's (an earlier import
 * of the same archive: skipped). Another account with that email (someone signed up on
 * the target first) refuses the whole import: an import does not merge two accounts, as
 * it cannot tell which password and which organisations the person wants.
 */
async function checkUser(
  targets: ImportTargets,
  user: ArchivedUser,
  sealed: string,
  line: number,
  seen: { userIds: Set<string>; emails: Set<string> },
): Promise<void> {
  if (!isUser(user) || typeof sealed !== 'string') throw new ArchiveError(`line ${line}: a malformed user`);
  if (seen.userIds.has(user.id) || seen.emails.has(user.email)) throw new ArchiveError(`line ${line}: user ${user.email} is in the archive twice`);
  seen.userIds.add(user.id);
  seen.emails.add(user.email);
  try {
    targets.vault.open(sealed, passwordContext(user.id));
  } catch (error) {
    throw new ArchiveError(`the secret key does not open the password hash of user ${user.email}: ${WITH_THE_KEY}`, { cause: error });
  }
  const holder = await targets.accounts.findUserByEmail(user.email);
  if (holder && holder.id !== user.id) {
    throw new ArchiveError(
      `user ${user.email} conflicts with another account with that email in the target (${holder.id}); nothing was imported. ` +
        'An import does not merge accounts: import before that person signs up on the target, or into a target without them',
    );
  }
}

function isUser(user: ArchivedUser | null | undefined): boolean {
  return (
    typeof user?.id === 'string' &&
    typeof user.email === 'string' &&
    user.email === normaliseEmail(user.email) &&
    isEmail(user.email) &&
    Array.isArray(user.orgIds) &&
    user.orgIds.every((id) => typeof id === 'string') &&
    typeof user.createdAt === 'number' &&
    (user.invitation === undefined || (typeof user.invitation?.secretHash === 'string' && typeof user.invitation.expiresAt === 'number')) &&
    !('passwordHash' in user)
  );
}

function isClient(client: OAuthClient | null | undefined): boolean {
  return (
    typeof client?.id === 'string' &&
    typeof client.name === 'string' &&
    Array.isArray(client.redirectUris) &&
    client.redirectUris.every((uri) => typeof uri === 'string') &&
    typeof client.createdAt === 'number'
  );
}

/** The archive's records, checked, with their line numbers; `first` is the header, on the first line. */
async function* records(lines: AsyncIterable<string>): AsyncGenerator<{ first?: ArchiveHeader; record?: ArchiveRecord; line: number }> {
  let number = 0;
  let seenHeader = false;
  for await (const raw of lines) {
    number++;
    const line = raw.trim();
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new ArchiveError(`line ${number} is not JSON`);
    }
    if (!seenHeader) {
      seenHeader = true;
      yield { first: checkHeader(parsed), line: number };
      continue;
    }
    const type = (parsed as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !RECORD_TYPES.has(type)) throw new ArchiveError(`line ${number}: unknown record type ${JSON.stringify(type)}`);
    yield { record: parsed as ArchiveRecord, line: number };
  }
}

const RECORD_TYPES = new Set<string>(['org', 'agent', 'token', 'reflection', 'index', 'user', 'oauth_client']);

async function write(targets: ImportTargets, lines: AsyncIterable<string>, version: number): Promise<Omit<ImportResult, 'header'>> {
  const { control } = targets;
  const imported = noCounts();
  const skipped = noCounts();
  let batch: StoredReflection[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await targets.reflections.upsert(batch);
    imported.reflections += batch.length;
    batch = [];
  };
  for await (const { record } of records(lines)) {
    switch (record?.type) {
      case undefined:
        break;
      case 'org':
        if ((await control.directory.getOrg(record.org.id))?.id === record.org.id) skipped.orgs++;
        else {
          await control.directory.createOrg(record.org).catch(named(`organisation "${record.org.name}"`));
          imported.orgs++;
        }
        break;
      case 'agent':
        if (await control.directory.agentEntry(record.agent.id)) skipped.agents++;
        else {
          await control.directory
            .createAgent({ agent: record.agent, sealedSecrets: record.sealed_secrets })
            .catch(named(`agent "${record.agent.name}"`));
          imported.agents++;
        }
        break;
      case 'token':
        if ((await control.directory.listTokens(record.token.agentId)).some((token) => token.id === record.token.id)) skipped.tokens++;
        else {
          await control.directory.createToken(record.token, record.hash).catch(named(`token ${record.token.id}`));
          imported.tokens++;
        }
        break;
      case 'reflection':
        batch.push({ ...archivedReflection(record.reflection, version), vector: decodeVector(record.vector) });
        if (batch.length >= BATCH) await flush();
        break;
      case 'index':
        await control.indexes.put(record.agent_id, record.markdown);
        break;
      case 'user':
        if (await targets.accounts.getUser(record.user.id)) skipped.users++;
        else {
          // The hash as the source stored it: the same password logs in, and a hash made
          // with older parameters is replaced at the next log-in, as it would have been there.
          const passwordHash = targets.vault.open(record.sealed_password, passwordContext(record.user.id));
          await targets.accounts.createUser({ ...record.user, passwordHash }).catch(named(`user ${record.user.email}`));
          imported.users++;
        }
        break;
      case 'oauth_client':
        if (await targets.accounts.getClient(record.client.id)) skipped.clients++;
        else {
          await targets.accounts.createClient(record.client).catch(named(`OAuth client ${record.client.id}`));
          imported.clients++;
        }
        break;
    }
  }
  await flush();
  // An archive from a version that kept extra header values in clear: sealed like the key.
  await control.sealClearHeaders();
  return { imported, skipped };
}

/**
 * A reflection as the archive's version wrote it. Version 1 predates `tagsBy`: its tags
 * get the author the domain presumes (the rule SQLite migration 12 applies to old files),
 * so an old archive and an upgraded file agree on who tagged what.
 */
function archivedReflection(reflection: Reflection, version: number): Reflection {
  // A scope or user that is not a name is refused, never imported as none: that would share one user's memory with all.
  for (const key of ['scope', 'user'] as const) {
    const value: unknown = reflection[key];
    if (value !== undefined && (typeof value !== 'string' || !validName(value))) {
      throw new ArchiveError(`reflection ${String(reflection.id)} has an unusable \`${key}\``);
    }
  }
  if (version >= 2 || reflection.tagsBy !== undefined) return reflection;
  const author = presumedTagAuthor(reflection);
  return author ? { ...reflection, tagsBy: author } : reflection;
}

function checkHeader(value: unknown): ArchiveHeader {
  const header = value as Partial<ArchiveHeader> | null;
  if (header?.format !== ARCHIVE_FORMAT) throw new ArchiveError(`not an Engram archive (line 1 has no "format": "${ARCHIVE_FORMAT}")`);
  if (typeof header.version !== 'number' || header.version > ARCHIVE_VERSION) {
    throw new ArchiveError(`archive version ${String(header.version)} is newer than this Engram reads (${ARCHIVE_VERSION}): upgrade Engram first`);
  }
  return header as ArchiveHeader;
}

/** A conflict names what collided (an org name taken by another org of the target). */
function named(what: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof EngramError && error.code === 'conflict') {
      throw new ArchiveError(`${what} conflicts with one already in the target: ${error.message}`);
    }
    throw error;
  };
}
