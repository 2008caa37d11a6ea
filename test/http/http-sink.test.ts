/**
 * The HTTP sink holds a JSON answer until the exchange ends and sends it with its end;
 * a long one (or a stream) flows as it comes. Over a real HTTP connection.
 */
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { httpSink } from '../../src/http/http-sink.js';

interface Drive {
  response: ServerResponse;
  /** Resolves once the client has seen more bytes; rejects when it sees none within 2 s. */
  clientSaw(): Promise<void>;
  /** Records a server-side moment among the client's `data` events. */
  mark(text: string): void;
}

/** One response driven by `drive`; what the client saw, in order with the server's marks. */
async function exchange(drive: (d: Drive) => Promise<void>) {
  const events: string[] = [];
  let saw: (() => void) | undefined;
  const clientSaw = () =>
    new Promise<void>((resolve, reject) => {
      saw = resolve;
      setTimeout(() => reject(new Error('the client saw nothing more')), 2000);
    });
  const server = createServer((_req, response) => {
    drive({ response, clientSaw, mark: (text) => events.push(text) }).catch((error: unknown) => {
      events.push(`server failed: ${String(error)}`);
      response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const bytes = await new Promise<number>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST' }, (res) => {
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          events.push('data');
          saw?.();
        });
        res.on('end', () => resolve(total));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    return { events, bytes };
  } finally {
    server.close();
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 30));

test('a JSON answer is held until the end, then sent whole with it', async () => {
  const { events, bytes } = await exchange(async ({ response, mark }) => {
    const sink = httpSink(response);
    sink.writeHead(200, { 'content-type': 'application/json' });
    assert.is(sink.headersSent, true, 'the status line is decided: no error envelope may replace it');
    sink.write(Buffer.from('{"answer":'));
    await pause();
    sink.write(Buffer.from('"yes"}'));
    await pause();
    mark('end');
    sink.end();
  });
  assert.is(bytes, 16);
  assert.equal(events, ['end', 'data'], 'nothing before the end, then all of it');
});

test('an answer longer than what is held flows as it comes', async () => {
  const chunk = Buffer.alloc(200 * 1024, 0x61);
  const { events, bytes } = await exchange(async ({ response, clientSaw, mark }) => {
    const sink = httpSink(response);
    sink.writeHead(200, { 'content-type': 'application/json' });
    sink.write(chunk);
    sink.write(chunk);
    await clientSaw();
    mark('end');
    sink.end();
  });
  assert.is(bytes, 400 * 1024);
  assert.is(events[0], 'data', 'bytes before the end');
  assert.ok(events.includes('end'));
});

test('a stream is never held', async () => {
  const { events } = await exchange(async ({ response, clientSaw, mark }) => {
    const sink = httpSink(response);
    sink.writeHead(200, { 'content-type': 'text/event-stream' }, true);
    sink.write(Buffer.from('data: 1\n\n'));
    await clientSaw();
    sink.write(Buffer.from('data: 2\n\n'));
    await clientSaw();
    mark('end');
    sink.end();
  });
  assert.equal(events.slice(0, 3), ['data', 'data', 'end']);
});

test.run();
