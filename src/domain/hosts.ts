/**
 * Which hosts are this machine: its loopback names and addresses, and what the
 * listener's own reach says of an install (`isPersonalInstall`, which config reads).
 * The other classes of an address (private, link-local, metadata) are decided in
 * `security/address-class.ts`, with `node:net`.
 */

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
  return isLocalhostName(plain) || isLoopbackAddress(plain);
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
export function unmapped(address: string): string {
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

/** Node's `isIPv4`: four decimal parts of 0 to 255, without leading zeros. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;

/**
 * Whether an IP address is a loopback one: 127.0.0.0/8, or ::1 however it is written
 * (`0:0::1`, `::0.0.0.1`, brackets, a zone), IPv4-mapped forms included. The URL parser
 * writes every IPv6 address in its one canonical form.
 */
export function isLoopbackAddress(address: string): boolean {
  const plain = unmapped(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (IPV4.test(plain)) return plain.startsWith('127.');
  if (!plain.includes(':')) return false;
  try {
    return new URL(`http://[${plain}]/`).hostname === '[::1]';
  } catch {
    return false;
  }
}
