/**
 * The event bus with its payloads sealed at rest: what waits in the queue (an extraction
 * job holds the conversation's turns) is stored encrypted on every engine, the SQLite
 * file and its WAL as much as a JetStream stream, and opened only when delivered (or
 * listed as a dead letter). A decorator over any `EventBus`: the adapters never see the
 * key. Payloads queued before sealing existed are delivered as they were.
 */
import type { BusMessage, ConsumerOptions, DeadLetter, EventBus, PublishOptions, Subscription } from '../ports/index.js';
import type { Vault } from './vault.js';

interface SealedPayload {
  sealed: string;
}

export function sealedBus(bus: EventBus, vault: Vault): EventBus {
  const context = (subject: string) => `bus:${subject}`;
  const open = (subject: string, payload: unknown): unknown => {
    const sealed = (payload as Partial<SealedPayload> | null)?.sealed;
    return typeof sealed === 'string' && Object.keys(payload as object).length === 1
      ? (JSON.parse(vault.open(sealed, context(subject))) as unknown)
      : payload;
  };
  return {
    publish(subject: string, payload: unknown, options?: PublishOptions) {
      const sealed: SealedPayload = { sealed: vault.seal(JSON.stringify(payload) ?? 'null', context(subject)) };
      return bus.publish(subject, sealed, options);
    },
    consume<T>(subject: string, handler: (message: BusMessage<T>) => Promise<void>, options?: Partial<ConsumerOptions>): Subscription {
      return bus.consume<unknown>(
        subject,
        async (message) => {
          let payload: T;
          try {
            payload = open(message.subject, message.payload) as T;
          } catch {
            // Sealed with another key (a restored data dir without its secret key): it can never open.
            await message.term('the payload does not open with this secret key');
            return;
          }
          await handler({
            id: message.id,
            subject: message.subject,
            payload,
            attempt: message.attempt,
            publishedAt: message.publishedAt,
            ack: () => message.ack(),
            nak: (options) => message.nak(options),
            term: (reason) => message.term(reason),
            working: () => message.working(),
          });
        },
        options,
      );
    },
    pending: (subject) => bus.pending(subject),
    async queued(subject, query) {
      return (await bus.queued(subject, query)).map((message) => {
        try {
          return { ...message, payload: open(message.subject, message.payload) };
        } catch {
          // Sealed with another key: listed, its payload unreadable, as delivery would find it.
          return { ...message, payload: null };
        }
      });
    },
    async deadLetters(subject?: string): Promise<DeadLetter[]> {
      return (await bus.deadLetters(subject)).map((dead) => {
        try {
          return { ...dead, payload: open(dead.subject, dead.payload) };
        } catch {
          return dead;
        }
      });
    },
    retryDeadLetter: (id) => bus.retryDeadLetter(id),
    close: () => bus.close(),
  };
}
