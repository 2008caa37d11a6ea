/**
 * Which work-queue messages are finished, written down where a killed server keeps it.
 *
 * nats-server 2.9 records an ack's removal of a message from the middle of a block in
 * memory, and in an index file some seconds later; a server killed in between comes back
 * with the message stored again while its consumer, whose state is written apart and
 * sooner, has it acked: nothing delivers it, and it lists as still to do. Below the
 * consumer's ack floor the sweep can tell (`bus-acked-sweep.ts`); above it (a message
 * nak'ed to wait, a job deferred to the next day, holds the floor behind it for as long)
 * only a record of the message can. So a message whose work is safely done gets a record
 * in the limits stream `<stream>_SETTLED` before its ack (or burial) is sent: appended,
 * which a killed server keeps as it keeps the messages. The record names the message by
 * its stream and sequence and holds its `Nats-Msg-Id`, so a sequence a server hands out
 * again (it lost the stream's tail) is not taken for the finished message.
 *
 * A record is written only once nothing depends on the message any more: the scheduler's
 * after the work queue stored the due message, a consumer's once its handler acked (or
 * the dead letter is stored). Removing a recorded message is then always safe, whatever
 * its consumer thinks of it. Records expire (`max_age`); past that the ack floor, which
 * passes a waiting message sooner or later, remains.
 */
import type { StoredMsg } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { NatsContext } from './connection.js';
import type { ConnectionGate } from './bus-loop.js';
import { storeMessage } from './bus-streams.js';
import { MSG_ID_HEADER, type BusNames } from './bus-subjects.js';

export interface SettledContext {
  nats: NatsContext;
  gate: ConnectionGate;
  names: BusNames;
}

export class SettledRecords {
  readonly #context: SettledContext;

  constructor(context: SettledContext) {
    this.#context = context;
  }

  /** Records that message `seq` of `stream`, stored under `msgId`, is finished; resolves once the server has it. */
  async record(stream: string, seq: number, msgId: string | undefined): Promise<void> {
    const { nats, gate, names } = this.#context;
    // Without an id (never so for the bus's own messages) nothing could vouch for the record.
    if (!msgId) return;
    await storeMessage(nats, gate, {
      stream: names.settledStream,
      subject: names.settled(stream, seq),
      data: new TextEncoder().encode(msgId),
      headers: natsHeaders(),
      msgId: `settled:${stream}:${seq}:${msgId}`,
    });
  }

  /** Whether `stored`, a message of `stream`, is recorded as finished. */
  async has(stream: string, stored: StoredMsg): Promise<boolean> {
    const { nats, names } = this.#context;
    const msgId = stored.header?.get(MSG_ID_HEADER);
    if (!msgId) return false;
    const record = await nats.jsm.direct.getMessage(names.settledStream, { last_by_subj: names.settled(stream, stored.seq) });
    return record !== null && new TextDecoder().decode(record.data) === msgId;
  }
}
