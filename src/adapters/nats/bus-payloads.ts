/**
 * Payload bodies of the NATS event bus. A payload is stored as its JSON in the message
 * body, unless the message would exceed the server's max_payload (1 MB by default): then
 * the JSON goes to an Object Store object and the message carries only its name (a
 * transcript can be several MB, and truncating it silently would teach the pipeline
 * from half a conversation).
 *
 * An object lives as long as some stored message references it: the message, then its
 * dead letter, then the retried message. It is deleted when a message carrying it is
 * acked, or when a duplicate publish left it unreferenced.
 */
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import { nuid, type MsgHdrs } from '@nats-io/transport-node';
import type { NatsContext } from './connection.js';
import { BUS_HEADERS } from './bus-subjects.js';

/**
 * Room kept under max_payload for what the bus adds to a message later (a dead letter's
 * reason and times) and for the protocol's own header line.
 */
const HEADER_ROOM = 8 * 1024;

export type ReadPayload = { ok: true; payload: unknown } | { ok: false; reason: string };

export class BusPayloads {
  readonly #nats: NatsContext;
  readonly #bucket: string;
  #store: Promise<ObjectStore> | undefined;

  constructor(nats: NatsContext, bucket: string) {
    this.#nats = nats;
    this.#bucket = bucket;
  }

  /**
   * The body for `payload`; a payload too big for one message is put in the Object Store
   * first and `headers` gets the object's name. Returns the object name, if any.
   */
  async encode(payload: unknown, headers: MsgHdrs): Promise<{ data: Uint8Array; object?: string }> {
    // `undefined` has no JSON; it is stored as null, as the SQLite bus does.
    const data = Buffer.from(JSON.stringify(payload) ?? 'null', 'utf8');
    // Read on every publish: a reconnect may land on a server with another limit.
    const maxPayload = this.#nats.nc.info?.max_payload ?? 1024 * 1024;
    if (data.byteLength + headerBytes(headers) + HEADER_ROOM <= maxPayload) return { data };
    const object = nuid.next();
    const store = await this.#objects();
    await store.putBlob({ name: object, description: 'engram event bus payload' }, data);
    headers.set(BUS_HEADERS.payloadObject, object);
    return { data: new Uint8Array(0), object };
  }

  /** The payload of a stored message (body or object). */
  async read(headers: MsgHdrs | undefined, data: Uint8Array): Promise<ReadPayload> {
    const object = objectOf(headers);
    let json: Uint8Array = data;
    if (object) {
      const blob = await (await this.#objects()).getBlob(object);
      if (!blob) return { ok: false, reason: `payload object ${object} is missing` };
      json = blob;
    }
    try {
      return { ok: true, payload: JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')) };
    } catch {
      return { ok: false, reason: 'payload is not valid JSON' };
    }
  }

  /**
   * The payload as a listing (queued messages, dead letters) shows it: one that cannot be
   * read (its object gone) is null rather than hiding its message; a failed read is reported.
   */
  async listed(headers: MsgHdrs | undefined, data: Uint8Array, onError: (error: unknown) => void): Promise<unknown> {
    const read = await this.read(headers, data).catch((error: unknown) => {
      onError(error);
      return undefined;
    });
    return read?.ok ? read.payload : null;
  }

  /** Deletes an object nothing references any more. */
  async remove(object: string): Promise<void> {
    await (await this.#objects()).delete(object);
  }

  /** Opened (created when missing) on first use: most deployments never need it. */
  #objects(): Promise<ObjectStore> {
    this.#store ??= new Objm(this.#nats.js).create(this.#bucket, { storage: StorageType.File }).catch((error: unknown) => {
      // Not cached: the next payload tries again (the server may have been away).
      this.#store = undefined;
      throw error;
    });
    return this.#store;
  }
}

/** The Object Store object a message's payload lives in, if any. */
export function objectOf(headers: MsgHdrs | undefined): string | undefined {
  return headers?.get(BUS_HEADERS.payloadObject) || undefined;
}

/** Bytes the headers take on the wire (`Key: value\r\n` each, plus the version line). */
function headerBytes(headers: MsgHdrs): number {
  let bytes = 'NATS/1.0\r\n\r\n'.length;
  for (const [key, values] of headers) {
    for (const value of values) bytes += Buffer.byteLength(key) + Buffer.byteLength(value) + 4;
  }
  return bytes;
}
