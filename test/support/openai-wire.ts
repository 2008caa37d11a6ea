/** Not a test file: helpers for comparing what the openai SDK returns. */

/** A Responses object as it came over the wire, without what the SDK derives from it (`output_text`, parsed forms). */
export function wire(response: unknown): unknown {
  const derived = new Set(['output_text', 'output_parsed', 'parsed', 'parsed_arguments', '_request_id']);
  return JSON.parse(JSON.stringify(response, (key, value) => (derived.has(key) ? undefined : value)));
}
