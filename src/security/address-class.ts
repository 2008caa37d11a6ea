/**
 * What kind of network address a host is (loopback, private, link-local, a cloud
 * metadata service, …): the facts the upstream address policy (`address-policy.ts`) is
 * decided from. Loopback is decided in `domain/hosts.ts`, which config reads too
 * (`isPersonalInstall`) and which may use no `node:net`.
 */
import { BlockList, isIP } from 'node:net';
import { isLoopbackAddress, unmapped } from '../domain/hosts.js';

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

const CLASSES: ReadonlyArray<[Exclude<AddressClass, 'metadata' | 'loopback' | 'public'>, BlockList]> = [
  ['unspecified', blockList([['0.0.0.0', 8, 'ipv4']], [['::', 'ipv6']])],
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

/** The class of an IP address (v4 or v6); `undefined` when `address` is not one. */
export function classifyAddress(address: string): AddressClass | undefined {
  const plain = unmapped(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const family = isIP(plain);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (METADATA.check(plain, type)) return 'metadata';
  if (isLoopbackAddress(plain)) return 'loopback';
  for (const [name, list] of CLASSES) if (list.check(plain, type)) return name;
  return 'public';
}
