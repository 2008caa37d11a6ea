/**
 * Which network addresses an upstream may live at (server-side request forgery). Engram
 * connects wherever an agent's upstream URL points, so an admin, or anyone who gets an
 * admin token, could aim it at the cloud metadata service and read its answer back
 * through the proxy. Link-local, metadata, unspecified and multicast addresses are
 * always refused; loopback and private ranges are allowed (a local model server is a real
 * use) unless the operator forbids them. The check runs on the URL when an agent is
 * saved, and again on the address a name resolves to when Engram connects, so a name
 * that later resolves somewhere forbidden (DNS rebinding) is caught too.
 *
 * Upstreams set by dashboard users (`UpstreamSettings.setBy`) have a policy of their own
 * (`upstreamPolicies`): with sign-up open anyone may be such a user, and the operator's
 * loopback and private networks are not theirs to reach, probe or read.
 */
import { isLocalhostName, plainHost } from '../domain/hosts.js';
import { classifyAddress, type AddressClass } from './address-class.js';
import type { UpstreamOwner } from '../domain/types.js';

export interface AddressPolicy {
  /** Loopback and private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7). */
  allowPrivate: boolean;
  /** The setting a refusal of a loopback or private address names; `ENGRAM_UPSTREAM_ALLOW_PRIVATE` when absent. */
  setting?: string;
  /**
   * The one who set the URL is a dashboard user, not the operator: a refusal of a
   * loopback or private address says what they can do (a public address, or ask the
   * operator), not only which setting is off.
   */
  setByUser?: boolean;
  /**
   * A refusal of a name does not say which address it resolved to: the person who set
   * the URL is not the operator, and what the operator's DNS answers for an internal name
   * is not theirs to learn.
   */
  discreet?: boolean;
}

const OPERATOR_SETTING = 'ENGRAM_UPSTREAM_ALLOW_PRIVATE';
const DASHBOARD_SETTING = 'ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE';

/**
 * The policy for each setter of an upstream URL (the config's settings of the same names):
 * the operator's (`ENGRAM_UPSTREAM_ALLOW_PRIVATE`), and a dashboard user's, which allows
 * loopback and private addresses only when both that and `ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE` do.
 */
export function upstreamPolicies(settings: { upstreamAllowPrivate: boolean; dashboardUpstreamAllowPrivate: boolean }): Record<UpstreamOwner, AddressPolicy> {
  const { upstreamAllowPrivate, dashboardUpstreamAllowPrivate } = settings;
  return {
    operator: { allowPrivate: upstreamAllowPrivate },
    user: {
      allowPrivate: upstreamAllowPrivate && dashboardUpstreamAllowPrivate,
      setting: upstreamAllowPrivate ? DASHBOARD_SETTING : OPERATOR_SETTING,
      setByUser: true,
      discreet: true,
    },
  };
}

/** Host names that only ever mean a metadata service. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** What an address of `kind` is, when the policy refuses it: `a loopback address and … is off`, or for a dashboard user what to do instead. */
function refusedAs(kind: AddressClass | undefined, policy: AddressPolicy): string | undefined {
  switch (kind) {
    case undefined:
    case 'public':
      return undefined;
    case 'loopback':
    case 'private':
      if (policy.allowPrivate) return undefined;
      return policy.setByUser
        ? `a ${kind} address, and this Engram does not let the agents of people who sign up reach its own machine or network. ` +
            `Use the public address of the model server, or ask whoever runs Engram to allow local models (${policy.setting ?? OPERATOR_SETTING}=true)`
        : `a ${kind} address and ${policy.setting ?? OPERATOR_SETTING} is off`;
    case 'metadata':
      return 'a cloud metadata address';
    default:
      return `a ${kind} address`;
  }
}

/** Why an address may not be connected to under the policy; `undefined` when it may. */
export function refusal(address: string, policy: AddressPolicy): string | undefined {
  const refused = refusedAs(classifyAddress(address), policy);
  return refused && `${address} is ${refused}`;
}

/**
 * Why an upstream URL's host is refused before any lookup: an IP literal of a refused
 * class, or a metadata service's name. A name that resolves somewhere refused is caught
 * when connecting (`refusal` on each resolved address).
 */
export function hostRefusal(url: URL, policy: AddressPolicy): string | undefined {
  const host = plainHost(url.hostname);
  if (METADATA_NAMES.has(host)) return `${host} is a cloud metadata service`;
  if (!policy.allowPrivate && isLocalhostName(host)) return `${host} is ${refusedAs('loopback', policy)}`;
  return refusal(host, policy);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
interface LookupAddress {
  address: string;
  family: number;
}
type Lookup = (hostname: string, options: { all?: boolean } & Record<string, unknown>, callback: LookupCallback) => void;

/** The error a refused address fails the connection with (its code names it for the error catalogue). */
export class AddressRefusedError extends Error {
  readonly code = 'ENGRAM_ADDRESS_REFUSED';
}

/** Whether `error`, or an error it was caused by, is a refusal by the address policy. */
export function isAddressRefusal(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if ((current as { code?: unknown }).code === 'ENGRAM_ADDRESS_REFUSED') return true;
  }
  return false;
}

/**
 * A `lookup` for `net.connect` that resolves with `resolve` (the system's `dns.lookup`)
 * and fails the connection when any resolved address is refused: the address checked is
 * the one connected to, not the name in the URL.
 */
export function guardedLookup(resolve: Lookup, policy: AddressPolicy): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, options.all ? [] : '');
      const addresses = found as LookupAddress[];
      for (const { address } of addresses) {
        const refused = refusedAs(classifyAddress(address), policy);
        if (!refused) continue;
        const why = policy.discreet ? `it resolves to ${refused}` : `${address} is ${refused}`;
        return callback(new AddressRefusedError(`The upstream host ${hostname} is refused: ${why}`), options.all ? [] : '');
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      callback(null, first.address, first.family);
    });
  };
}
