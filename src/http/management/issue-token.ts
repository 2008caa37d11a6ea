import type { Agent, TokenRecord } from '../../domain/types.js';
import type { Control } from '../../control/control.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../security/tokens.js';

/** Creates an access token for an agent; the clear token is returned once and never stored. */
export async function issueToken(control: Control, agent: Pick<Agent, 'id' | 'orgId'>, name: string): Promise<{ token: string; record: TokenRecord }> {
  const token = generateToken();
  const record = await control.createToken(agent, hashToken(token), tokenDisplayPrefix(token), name);
  return { token, record };
}
