/**
 * Child process: the scripted upstream, on its own event loop. Answers every request
 * with its default echo; the streaming phase queues slow replies through `enqueue`.
 * Request records are dropped as they pile up so a long run does not balloon.
 */
import { readFileSync } from 'node:fs';
import { startScriptedUpstream, type Reply } from '../test/support/scripted-upstream/index.js';
import { rssSampler, serveParent } from './ipc.js';

export interface UpstreamHello {
  url: string;
}

const upstream = await startScriptedUpstream();
const port = Number(new URL(upstream.url).port);
const rss = rssSampler();

let served = 0;
const drop = setInterval(() => {
  served += upstream.requests.length;
  upstream.requests.length = 0;
}, 100);
drop.unref();

/** Established TCP connections to our port (Linux), or -1 where /proc is not there. */
function openConnections(): number {
  try {
    const hexPort = ':' + port.toString(16).toUpperCase().padStart(4, '0');
    let count = 0;
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(hexPort) && fields[3] === '01') count++;
    }
    return count;
  } catch {
    return -1;
  }
}

let peakConnections = 0;
let watch: NodeJS.Timeout | undefined;

serveParent(
  {
    /** Queue `count` text replies streamed with `chunkDelayMs` between events. */
    enqueue({ count, text, chunkDelayMs }: { count: number; text: string; chunkDelayMs: number }) {
      const reply: Reply = { type: 'text', text };
      for (let i = 0; i < count; i++) upstream.enqueue([reply, { chunkDelayMs }]);
      return count;
    },
    reset() {
      upstream.reset();
      return true;
    },
    /** Starts sampling the open connections; `stopWatch` returns the peak. */
    startWatch() {
      peakConnections = openConnections();
      watch = setInterval(() => (peakConnections = Math.max(peakConnections, openConnections())), 100);
      return peakConnections;
    },
    stopWatch() {
      clearInterval(watch);
      return peakConnections;
    },
    stats: () => ({ served: served + upstream.requests.length, connections: openConnections(), ...rss.memory() }),
    async close() {
      await upstream.close();
      process.exit(0);
    },
  },
  { url: upstream.url } satisfies UpstreamHello,
);
