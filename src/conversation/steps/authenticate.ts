import { authenticateAgent } from '../../control/auth.js';
import type { Deps } from '../../deps.js';
import type { ExchangeRequest } from '../exchange.js';

/** The token looked up from the request's headers, when the transport did not (WebSocket frames). */
export function authenticate({ control }: Pick<Deps, 'control'>, { request }: { request: ExchangeRequest }) {
  return authenticateAgent(control, request.headers, request.orgId, request.agentId);
}
