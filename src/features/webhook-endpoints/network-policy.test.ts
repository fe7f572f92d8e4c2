import { describe, expect, it } from 'vitest';
import { isRefusedAddress } from './network-policy.js';

// Ranges from the IANA special-purpose address registries (RFC 6890 and its updates), and every
// IPv6 form that carries an IPv4 address.
describe('isRefusedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fd00:ec2::254',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '0:0:0:0:0:ffff:7f00:1',
    '[::1]',
    // IPv4-compatible (::/96), whatever the IPv4 address: [::127.0.0.1] and [::8.8.8.8].
    '::127.0.0.1',
    '::7f00:1',
    '::808:808',
    // IPv4-translated (::ffff:0:0:0/96).
    '::ffff:0:7f00:1',
    '::ffff:0:808:808',
    // NAT64, with a private and a public IPv4 address embedded, and the local-use prefix.
    '64:ff9b::7f00:1',
    '64:ff9b::10.0.0.1',
    '64:ff9b::808:808',
    '64:ff9b:1::a00:1',
    '64:ff9b:1:ffff::1',
    // 6to4 and Teredo.
    '2002:7f00:1::1',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '172.32.0.1', '192.169.0.1', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9c::1'])(
    'allows %s',
    (address) => {
      expect(isRefusedAddress(address)).toBe(false);
    },
  );
});
