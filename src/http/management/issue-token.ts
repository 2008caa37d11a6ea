import type { TokenRecord } from '../../domain/types.js';
import type { ControlStore } from '../../memory/ports.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../security/tokens.js';

/** Creates an access token for an agent; the clear token is returned once and never stored. */
export async function issueToken(control: ControlStore, agentId: string, name: string): Promise<{ token: string; record: TokenRecord }> {
  const token = generateToken();
  const record = await control.createToken(agentId, hashToken(token), tokenDisplayPrefix(token), name);
  return { token, record };
}
