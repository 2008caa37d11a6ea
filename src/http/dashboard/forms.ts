/**
 * What the dashboard's forms send, turned into what the management API takes, so a form
 * is checked by the same code (`management/agent-input.ts`) and refused with the same
 * messages as the API.
 */
import type { Agent } from '../../domain/types.js';
import { EngramError } from '../../errors.js';
import type { AgentInfo } from '../../connect/types.js';
import { agentUrls } from '../management/wire.js';

export interface AgentForm {
  name?: string;
  base_url?: string;
  api_key?: string;
  /** One `Name: value` per line. */
  headers?: string;
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** `Name: value` lines; blank lines are skipped, anything else without a colon is refused. */
export function parseHeaderLines(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of raw.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const colon = line.indexOf(':');
    if (colon < 1) throw new EngramError('invalid_request', `Write each extra header as "Name: value" on its own line ("${line.trim().slice(0, 40)}" has no name).`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The management API's agent body for the form's fields. */
export function agentBody(form: AgentForm): Record<string, unknown> {
  return {
    name: text(form.name),
    type: 'api_provider',
    upstream: { base_url: text(form.base_url), api_key: text(form.api_key), headers: parseHeaderLines(typeof form.headers === 'string' ? form.headers : '') },
  };
}

/** The agent as `engram connect` sees it, at Engram's public address. */
export function agentInfo(agent: Pick<Agent, 'id' | 'orgId' | 'name'>, publicUrl: string): AgentInfo {
  const urls = agentUrls(publicUrl, agent);
  return { id: agent.id, orgId: agent.orgId, name: agent.name, baseUrl: urls.base_url, mcpUrl: urls.mcp_url, serverUrl: publicUrl };
}
