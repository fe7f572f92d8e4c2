// Which addresses a delivery may connect to. Refused unless private networks are allowed:
// loopback, private (RFC 1918, unique-local), link-local (where cloud metadata services such as
// 169.254.169.254 live), carrier-grade NAT (Alibaba's metadata at 100.100.100.200), "this network",
// benchmarking, multicast and reserved ranges. IPv4-mapped IPv6 addresses are judged as the IPv4
// address they carry, so ::ffff:127.0.0.1 is loopback.
import { BlockList, isIP } from 'node:net';

const refused = new BlockList();
const V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];
for (const [network, prefix] of V4) refused.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of V6) refused.addSubnet(network, prefix, 'ipv6');

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
// The same in hex, as the WHATWG URL parser writes it: [::ffff:127.0.0.1] becomes ::ffff:7f00:1.
const MAPPED_V4_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address an IPv4-mapped IPv6 address carries, or the address itself. */
function unmapped(address: string): string {
  const dotted = MAPPED_V4.exec(address);
  if (dotted?.[1]) return dotted[1];
  const hex = MAPPED_V4_HEX.exec(address);
  if (!hex?.[1] || !hex[2]) return address;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why the address may not be connected to, or null when it may. */
export function refusedAddressReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const ip = unmapped(bare);
  const family = isIP(ip);
  if (family === 0) return `"${address}" is not an IP address`;
  const blocked = refused.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  return blocked ? `${ip} is a private, loopback, link-local or reserved address` : null;
}
