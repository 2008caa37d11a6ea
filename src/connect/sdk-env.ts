/**
 * The provider SDKs' own variables pointed at Engram. One address serves every agent
 * (`<server>/v1`, the token says which agent): OpenAI-style clients take it as their base
 * URL, Anthropic-style ones take `<server>` and add `/v1` themselves. The agent's own
 * address (`<agent base>/v1`) is the alternative, for an Engram that predates the short one.
 */
import type { AgentInfo } from './types.js';
import { TOKEN_ENV } from './hooks.js';

export type SdkFamily = 'openai' | 'anthropic';

/** `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` as each SDK reads it. */
export function sdkBaseUrl(family: SdkFamily, serverUrl: string): string {
  return family === 'openai' ? `${serverUrl}/v1` : serverUrl;
}

/** The exports, the token last as a reference to `ENGRAM_TOKEN` (filled in when known). */
export function sdkEnv(family: SdkFamily, agent: AgentInfo): Record<string, string> {
  const prefix = family === 'openai' ? 'OPENAI' : 'ANTHROPIC';
  return { [TOKEN_ENV]: '', [`${prefix}_BASE_URL`]: sdkBaseUrl(family, agent.serverUrl), [`${prefix}_API_KEY`]: `$${TOKEN_ENV}` };
}

/** The same line with the agent's own address. */
export function agentBaseUrlLine(family: SdkFamily, agent: AgentInfo): string {
  const prefix = family === 'openai' ? 'OPENAI' : 'ANTHROPIC';
  return `${prefix}_BASE_URL=${sdkBaseUrl(family, agent.baseUrl)}`;
}
