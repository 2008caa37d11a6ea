/** Shared by the transcript-upload tests: the recorded files, and uploading them over real HTTP. */
import fs from 'node:fs';
import path from 'node:path';
import type { ExtractedReflection, RecordedRequest } from './scripted-upstream/types.js';
import type { TestAgent } from './engram.js';

const FIXTURES = path.resolve('test/fixtures/transcripts');

/** A transcript recorded from a real client (see test/fixtures/transcripts/README.md). */
export const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name));

/** What a sensible extraction model would take from the recorded sessions. */
export function releaseExtractor(_request: RecordedRequest, transcript: string): ExtractedReflection[] {
  const out: ExtractedReflection[] = [];
  if (/Remember: the release checklist lives in docs\/RELEASE\.md/.test(transcript)) {
    out.push({ kind: 'factual', topic: 'release', content: 'The release checklist lives in docs/RELEASE.md.' });
  }
  if (/npm run build` before `npm test`/.test(transcript) && /role="assistant">\nFirst step/.test(transcript)) {
    out.push({ kind: 'procedural', topic: 'release', content: 'Run npm run build before npm test: the tests import dist/.' });
  }
  return out;
}

export async function upload(agent: TestAgent, route: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const response = await fetch(`${agent.baseUrl}/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return { status: response.status, json: (await response.json()) as any };
}

/** The `<transcript>` an extraction request carried. */
export function transcriptOf(request: RecordedRequest): string {
  const text = JSON.stringify(request.json);
  const start = text.lastIndexOf('<transcript>\\n');
  return JSON.parse(`"${text.slice(start + '<transcript>\\n'.length, text.lastIndexOf('\\n</transcript>'))}"`);
}

