/**
 * What kind of network address a host is (loopback, private, link-local, a cloud
 * metadata service, …): the facts the upstream address policy
 * (`src/security/address-policy.ts`) and the listener's own reach (`isPersonalInstall`)
 * are decided from.
 */
import { BlockList, isIP } from 'node:net';

export type AddressClass = 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'public';

function blockList(ranges: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']>, addresses: ReadonlyArray<[string, 'ipv4' | 'ipv6']> = []): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  for (const [address, family] of addresses) list.addAddress(address, family);
  return list;
}

/** Instance metadata endpoints: AWS (IPv4, IPv6, ECS), GCP, Azure, Alibaba, Oracle, OpenStack. */
const METADATA = blockList([], [
  ['169.254.169.254', 'ipv4'],
  ['169.254.170.2', 'ipv4'],
  ['169.254.169.123', 'ipv4'],
  ['100.100.100.200', 'ipv4'],
  ['168.63.129.16', 'ipv4'],
  ['192.0.0.192', 'ipv4'],
  ['fd00:ec2::254', 'ipv6'],
  ['fd00:ec2::23', 'ipv6'],
]);

const CLASSES: ReadonlyArray<[Exclude<AddressClass, 'metadata' | 'public'>, BlockList]> = [
  ['unspecified', blockList([['0.0.0.0', 8, 'ipv4']], [['::', 'ipv6']])],
  ['loopback', blockList([['127.0.0.0', 8, 'ipv4']], [['::1', 'ipv6']])],
  ['link-local', blockList([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']])],
  [
    'private',
    blockList([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ]),
  ],
  ['multicast', blockList([['224.0.0.0', 4, 'ipv4'], ['240.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']])],
];

/** Names of this machine's own loopback interface. */
export function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** A host as names and addresses compare: no IPv6 brackets, no root dot, lower case. */
export function plainHost(host: string): string {
  return host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/**
 * Whether a listener on `host` is reachable only from this machine: a loopback address
 * (127.0.0.0/8, ::1) or `localhost`. `0.0.0.0`, `::` and every other address are not.
 */
export function isLoopbackHost(host: string): boolean {
  const plain = plainHost(host);
  return isLocalhostName(plain) || classifyAddress(plain) === 'loopback';
}

/**
 * A personal install: Engram listens only on this machine, is not behind a reverse proxy
 * (`ENGRAM_TRUST_PROXY` unset), and says no public address of its own: whoever signs up
 * to its dashboard is already on this machine, so its loopback and private networks
 * (a local model server) are theirs to reach.
 */
export function isPersonalInstall(settings: { host: string; trustProxy: unknown; publicUrl: string | undefined }): boolean {
  if (!isLoopbackHost(settings.host) || settings.trustProxy !== false) return false;
  return settings.publicUrl === undefined || isLoopbackHost(new URL(settings.publicUrl).hostname);
}

/** An IPv4 address inside IPv6 (`::ffff:169.254.169.254`, `::ffff:a9fe:a9fe`) as its IPv4 form. */
function unmapped(address: string): string {
  const lower = address.toLowerCase();
  const dotted = /^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:0*:)*:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return address;
}

/** The class of an IP address (v4 or v6); `undefined` when `address` is not one. */
export function classifyAddress(address: string): AddressClass | undefined {
  const plain = unmapped(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const family = isIP(plain);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (METADATA.check(plain, type)) return 'metadata';
  for (const [name, list] of CLASSES) if (list.check(plain, type)) return name;
  return 'public';
}
