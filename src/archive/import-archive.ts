/**
 * Reads an archive (`format.ts`) into the stores the configuration selects. Idempotent:
 * a record already present (same id, or same token hash) is skipped, so an interrupted
 * import is simply run again. Refused before anything is written: another format or a
 * newer version, or an agent whose sealed upstream key the configured secret key cannot
 * open (the archive comes from a deployment with another key).
 */
import type { Control } from '../control/control.js';
import { presumedTagAuthor } from '../domain/tag-authors.js';
import { EngramError } from '../errors.js';
import type { Reflection } from '../domain/types.js';
import type { ReflectionStore, StoredReflection } from '../ports/index.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, decodeVector, type ArchiveHeader, type ArchiveRecord } from './format.js';
import type { ArchiveCounts } from './export-archive.js';

export interface ImportTargets {
  control: Control;
  reflections: ReflectionStore;
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
 * header, the JSON, the record types, that the secret key opens every agent's sealed key)
 * and writes nothing, so a bad archive or the wrong key leaves the target untouched; the
 * second pass writes.
 */
export async function importArchive(targets: ImportTargets, open: () => AsyncIterable<string>): Promise<ImportResult> {
  let header: ArchiveHeader | undefined;
  for await (const { record, first } of records(open())) {
    if (first) {
      header = first;
      continue;
    }
    if (record?.type === 'agent') {
      try {
        targets.control.openSealed(record.agent.id, record.sealed_secrets);
      } catch (error) {
        throw new ArchiveError(
          `the secret key does not open agent "${record.agent.name}"'s upstream key: import with the exporting deployment's key (ENGRAM_SECRET_KEY, or its <data dir>/secret-key)`,
          { cause: error },
        );
      }
    }
  }
  if (!header) throw new ArchiveError('the archive is empty');
  return { header, ...(await write(targets, open(), header.version)) };
}

/** The archive's records, checked; `first` is the header, on the first line. */
async function* records(lines: AsyncIterable<string>): AsyncGenerator<{ first?: ArchiveHeader; record?: ArchiveRecord }> {
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
      yield { first: checkHeader(parsed) };
      continue;
    }
    const type = (parsed as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !RECORD_TYPES.has(type)) throw new ArchiveError(`line ${number}: unknown record type ${JSON.stringify(type)}`);
    yield { record: parsed as ArchiveRecord };
  }
}

const RECORD_TYPES = new Set<string>(['org', 'agent', 'token', 'reflection', 'index']);

async function write(targets: ImportTargets, lines: AsyncIterable<string>, version: number): Promise<Omit<ImportResult, 'header'>> {
  const { control } = targets;
  const imported: ArchiveCounts = { orgs: 0, agents: 0, tokens: 0, reflections: 0 };
  const skipped: ArchiveCounts = { orgs: 0, agents: 0, tokens: 0, reflections: 0 };
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
