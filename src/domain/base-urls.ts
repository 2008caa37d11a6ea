/**
 * Where a client reaches Engram (DESIGN section 4). The one base URL, `<server>/v1`,
 * serves whichever agent the token belongs to, as a gateway's does; the agent's own,
 * `<server>/v0/orgs/{org}/agents/{agent}`, names the agent in the path (hooks live only
 * there). Both take the same token. And where Engram reaches an agent's upstream
 * (`upstreamUrl`), the one join of a stored base URL and a provider path.
 */

/** `<server>/v1`: for clients that take a base URL ending in `/v1` (OpenAI SDKs, Codex, opencode). */
export function shortBaseUrl(serverUrl: string): string {
  return `${trimmed(serverUrl)}/v1`;
}

/** `<server>/v0/mcp`: the MCP server of the token's agent (an agent token, or an OAuth access token). */
export function shortMcpUrl(serverUrl: string): string {
  return `${trimmed(serverUrl)}/v0/mcp`;
}

/** The agent's own base URL with placeholders, for messages that name both forms. */
export function agentBaseUrlPattern(serverUrl: string): string {
  return `${trimmed(serverUrl)}/v0/orgs/{org}/agents/{agent}/v1`;
}

/** The server's address in an agent's own base URL (`<server>/v0/orgs/{org}/agents/{agent}`), as the management API gives it. */
export function serverUrlOf(agentBaseUrl: string): string {
  return agentBaseUrl.replace(/\/v0\/orgs\/[^/]+\/agents\/[^/]+\/?$/, '');
}

/**
 * Where a request to an agent's upstream goes: its stored base URL (`https://host[/path]`,
 * a pasted `/v1` already dropped when it was saved) joined with a provider path, always
 * `/v1/...`, and the client's query string if any.
 */
export function upstreamUrl(baseUrl: string, path: string, search = ''): string {
  return trimmed(baseUrl) + path + search;
}

function trimmed(serverUrl: string): string {
  return serverUrl.replace(/\/+$/, '');
}
