// Which addresses a delivery may connect to. Refused unless private networks are allowed:
// loopback, private (RFC 1918, unique-local), link-local (where cloud metadata services such as
// 169.254.169.254 live), carrier-grade NAT (Alibaba's metadata at 100.100.100.200), "this network",
// benchmarking, multicast and reserved ranges, and every IPv6 form that carries an IPv4 address a
// router or the host's own stack may unwrap: IPv4-compatible (::/96, so [::127.0.0.1]), IPv4-
// translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4
// (2002::/16) and Teredo (2001::/32). IPv4-mapped addresses (::ffff:0:0/96) are judged as the IPv4
// address they carry, as the host's stack connects to that address: ::ffff:127.0.0.1 is loopback.
import { BlockList, isIP } from 'node:net';

/** What every refusal says: never the address itself, which may be what a name resolved to. */
export const PRIVATE_ADDRESS = 'a private, loopback, link-local or reserved address';

// Two lists: Node judges an IPv4 address against IPv6 rules as its IPv4-mapped form, so one list
// holding ::ffff:0:0/96 would refuse every IPv4 address.
const refusedV4 = new BlockList();
const refusedV6 = new BlockList();
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
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];
for (const [network, prefix] of V4) refusedV4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of V6) refusedV6.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address in any spelling (compressed, with a dotted IPv4 tail). */
function hextetsOf(address: string): number[] {
  // The WHATWG URL parser writes every spelling in one canonical form: hex groups, at most one "::".
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const groups = (text: string) => (text === '' ? [] : text.split(':').map((group) => parseInt(group, 16)));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function dottedOf(high: number, low: number): string {
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

function refusedV6Address(address: string): boolean {
  const groups = hextetsOf(address);
  const zeroUpTo = (end: number) => groups.slice(0, end).every((group) => group === 0);
  // IPv4-mapped: the stack connects to the IPv4 address it carries, so that address decides.
  if (zeroUpTo(5) && groups[5] === 0xffff) return refusedV4.check(dottedOf(groups[6] ?? 0, groups[7] ?? 0), 'ipv4');
  // IPv4-translated (::ffff:0:0:0/96) and IPv4-compatible (::/96, with :: and ::1).
  if (zeroUpTo(4) && groups[4] === 0xffff && groups[5] === 0) return true;
  if (zeroUpTo(6)) return true;
  return refusedV6.check(address, 'ipv6');
}

/** Whether a connection to this IP address is refused (unless private networks are allowed); a non-address is refused. */
export function isRefusedAddress(address: string): boolean {
  // A zone (fe80::1%eth0) names an interface, not an address; link-local is refused either way.
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return refusedV4.check(bare, 'ipv4');
  if (family === 6) return refusedV6Address(bare);
  return true;
}
