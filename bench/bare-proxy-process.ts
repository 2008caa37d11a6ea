/**
 * Child process: the bare proxy reference (issue 12). The least a Node proxy in front of
 * the upstream can do: a `node:http` server that reads the request body whole, forwards
 * it with `node:http` on a keep-alive Agent (same method, path and headers, minus the
 * hop-by-hop ones), and pipes the answer's status, headers and body back as they come.
 * No parsing, no memory. Engram's added latency is reported as a ratio to this proxy's,
 * so what Node's HTTP stack costs on this machine is not charged to Engram.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveParent } from './ipc.js';

export interface BareProxyHello {
  url: string;
}

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
if (!upstreamUrl) throw new Error('BENCH_UPSTREAM_URL is required');
const upstream = new URL(upstreamUrl);

/** RFC 9110 section 7.6.1: hop-by-hop headers, plus any the Connection header names. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.includes(name)) out[name] = value;
  }
  return out;
}

// Without a socket cap, as Engram's upstream pool: the 50-concurrent phases must not queue here.
const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: Infinity, maxFreeSockets: 256 });

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('error', () => res.destroy());
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const headers = endToEnd(req.headers);
    headers.host = upstream.host;
    headers['content-length'] = String(body.length);
    const forward = http.request(
      { agent, protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    forward.on('error', (error) => {
      if (res.headersSent) res.destroy(error);
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(`bare proxy: ${error.message}`);
    });
    // A client that goes away mid-answer takes the upstream request with it.
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    forward.end(body);
  });
});
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

serveParent(
  {
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
      process.exit(0);
    },
  },
  { url: `http://127.0.0.1:${port}` } satisfies BareProxyHello,
);
