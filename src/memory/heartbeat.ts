import type { BusMessage } from '../ports/index.js';

/**
 * `handler` telling the bus every `everyMs` that it is still working on its message
 * (`BusMessage.working()`), so a consumer's ack wait can stay short: a crashed worker's
 * job is redelivered soon, a slow upstream's is not redelivered at all. Without
 * `everyMs`, `handler` itself.
 */
export function withHeartbeat<T>(handler: (message: BusMessage<T>) => Promise<void>, everyMs: number | undefined): (message: BusMessage<T>) => Promise<void> {
  if (!everyMs) return handler;
  return async (message) => {
    const heartbeat = setInterval(() => void message.working().catch(() => undefined), everyMs);
    try {
      await handler(message);
    } finally {
      clearInterval(heartbeat);
    }
  };
}
