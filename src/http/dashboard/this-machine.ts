/**
 * Whether a dashboard request came from a browser on this machine, straight to Engram: a
 * personal install (`Config.dashboardUpstreamPrivateFromThisMachineOnly`) lets its users
 * reach loopback and private upstreams only then. A tunnel or reverse proxy in front of a
 * loopback listener (ngrok, cloudflared, an nginx the operator did not name in
 * `ENGRAM_TRUST_PROXY`) connects from loopback too, but says where the request came from
 * in forwarding headers, or keeps the public host name in `Host`; such a request, and one
 * a DNS-rebinding page sends under its own name, is held to the strict policy.
 */
import type { FastifyRequest } from 'fastify';
import { isLoopbackHost } from '../../domain/hosts.js';
import { classifyAddress } from '../../security/address-class.js';
import type { Config } from '../../config.js';
import { upstreamPolicies, type AddressPolicy } from '../../security/address-policy.js';
import type { UpstreamOwner } from '../../domain/types.js';

/** Headers a proxy or tunnel adds to say whom it forwards for. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip', 'cf-connecting-ip', 'true-client-ip'];

export function fromThisMachine(request: FastifyRequest): boolean {
  if (FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined)) return false;
  const peer = request.socket.remoteAddress;
  if (peer === undefined || classifyAddress(peer) !== 'loopback') return false;
  const host = request.headers.host;
  if (host === undefined) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  return isLoopbackHost(hostname);
}

type Settings = Pick<Config, 'upstreamAllowPrivate' | 'dashboardUpstreamAllowPrivate' | 'dashboardUpstreamPrivateFromThisMachineOnly'>;

export interface RequestPolicies {
  policies: Record<UpstreamOwner, AddressPolicy>;
  /**
   * Stricter than the process's own (a personal install, a request from elsewhere): the
   * upstream client connects under the process's policy, so the URL must be checked
   * against these before any connection.
   */
  stricter: boolean;
}

/**
 * The address policies a dashboard request's upstreams are held to: the configured ones,
 * or, on a personal install, the strict ones for a request not from this machine.
 */
export function dashboardPolicies(settings: Settings): (request: FastifyRequest) => RequestPolicies {
  const configured = { policies: upstreamPolicies(settings), stricter: false };
  const strict = { policies: upstreamPolicies({ upstreamAllowPrivate: settings.upstreamAllowPrivate, dashboardUpstreamAllowPrivate: false }), stricter: true };
  return (request) => (settings.dashboardUpstreamPrivateFromThisMachineOnly && !fromThisMachine(request) ? strict : configured);
}
