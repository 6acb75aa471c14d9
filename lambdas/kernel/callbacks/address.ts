/**
 * The addresses a callback must not reach on AWS (SSRF): private, loopback, link-local (the
 * instance metadata service among them), CGNAT, unspecified, multicast and reserved ranges, IPv4
 * and IPv6 (and IPv4 mapped into IPv6). The callback function checks every address a URL's host
 * resolves to, at connect time, so a name that resolves to such an address is refused however
 * the name was chosen. The construct refuses literal ones at synth.
 */
import { BlockList, isIP } from 'node:net';

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** Why `address` (an IP) must not be called back, or undefined when it may. */
export function blockedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blockedAddress(mapped[1]!);
  }
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6')
    ? `${address} is a private, loopback, link-local or reserved address`
    : undefined;
}
