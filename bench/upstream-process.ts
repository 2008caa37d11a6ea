/**
 * Child process: the scripted upstream, on its own event loop. Answers the multi-turn
 * workload's requests with the agent's answer its client sends back (`workloadAnswer`),
 * every other request with its default echo; the streaming phase queues slow replies through `enqueue`, the
 * extraction-cost phase scripted tool calls through `enqueueReplies`.
 * Request records are dropped as they pile up so a long run does not balloon; the bytes
 * of their bodies are tallied first, conversation, extraction and tagging requests apart.
 */
import { readFileSync } from 'node:fs';
import { echoReply, startScriptedUpstream, type RecordedRequest, type Reply } from '../test/support/scripted-upstream/index.js';
import { rssSampler, serveParent } from './ipc.js';
import { workloadAnswer } from './workload.js';

export interface UpstreamHello {
  url: string;
}

const upstream = await startScriptedUpstream();
// The multi-turn workload's conversations get the agent's answer its client sends back next turn.
const answerWorkload = () => upstream.setDefaultReply((req) => {
  const text = workloadAnswer(req.json);
  return text === undefined ? echoReply(req) : { type: 'text', text };
});
answerWorkload();
const port = Number(new URL(upstream.url).port);
const rss = rssSampler();

export interface ByteTally {
  /** Requests to a model endpoint that are not extraction calls, and their body bytes. */
  conversationRequests: number;
  conversationBytes: number;
  /** Extraction calls (they offer `record_reflections`), and their body bytes. */
  extractionRequests: number;
  extractionBytes: number;
  /** Tagging calls (they offer `record_tags`), and their body bytes. */
  taggingRequests: number;
  taggingBytes: number;
}

const emptyTally = (): ByteTally => ({ conversationRequests: 0, conversationBytes: 0, extractionRequests: 0, extractionBytes: 0, taggingRequests: 0, taggingBytes: 0 });
let served = 0;
let tally = emptyTally();
/** The transcripts extraction calls carried, kept only while `keepTranscripts` is on (one phase's worth). */
let transcripts: string[] | undefined;

function count(request: RecordedRequest): void {
  if (request.extraction) {
    tally.extractionRequests++;
    tally.extractionBytes += request.raw.length;
    transcripts?.push(request.raw.toString('utf8'));
  } else if (request.tagging) {
    tally.taggingRequests++;
    tally.taggingBytes += request.raw.length;
  } else if (request.protocol !== 'other') {
    tally.conversationRequests++;
    tally.conversationBytes += request.raw.length;
  }
}

/** Counts and forgets the requests recorded since the last time. */
function drain(): void {
  served += upstream.requests.length;
  for (const request of upstream.requests) count(request);
  upstream.requests.length = 0;
}

const drop = setInterval(drain, 100);
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
    /** Queue replies (tool calls, texts) for the next conversation requests, in order. */
    enqueueReplies({ replies }: { replies: Reply[] }) {
      upstream.enqueue(...replies);
      return replies.length;
    },
    reset() {
      drain();
      upstream.reset();
      answerWorkload();
      return true;
    },
    /** Starts a fresh byte tally; with `keepTranscripts`, extraction bodies are kept for `bytes` to return. */
    resetBytes({ keepTranscripts }: { keepTranscripts?: boolean } = {}) {
      drain();
      tally = emptyTally();
      transcripts = keepTranscripts ? [] : undefined;
      return true;
    },
    /** The tally since `resetBytes`, and the extraction bodies kept. */
    bytes(): ByteTally & { extractionBodies: string[] } {
      drain();
      return { ...tally, extractionBodies: transcripts ?? [] };
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
