/**
 * What the overview offers before an agent's first request: one command to paste, sent to
 * Engram's one address (`<server>/v1`, the token says which agent), with a model the
 * agent's upstream is likely to serve and a message that gives the agent something to learn.
 */
import type { Agent } from '../../domain/types.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import { sdkBaseUrl } from '../../connect/sdk-env.js';

export interface NextStep {
  command: string;
  model: string;
}

export function nextStep(publicUrl: string, agent: Pick<Agent, 'upstream'>): NextStep {
  // Anthropic answers the chat-completions form too, with its own model names.
  const model = DEFAULT_MODEL[/anthropic/i.test(agent.upstream.baseUrl) ? 'anthropic' : 'openai'];
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Remember: the release checklist lives in docs/RELEASING.md.' }] });
  const command = [`curl ${sdkBaseUrl('openai', publicUrl)}/chat/completions \\`, `  -H "Authorization: Bearer $ENGRAM_TOKEN" \\`, `  -H "Content-Type: application/json" \\`, `  -d '${body}'`].join('\n');
  return { command, model };
}
