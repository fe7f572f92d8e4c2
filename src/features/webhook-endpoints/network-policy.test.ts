import { describe, expect, it } from 'vitest';
import { refusedAddressReason } from './network-policy.js';

// Ranges from the IANA special-purpose address registries (RFC 6890 and its updates).
describe('refusedAddressReason', () => {
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
    'fd00:ec2::254',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '[::1]',
  ])('refuses %s', (address) => {
    expect(refusedAddressReason(address)).toMatch(/private, loopback, link-local or reserved/);
  });

  it.each(['8.8.8.8', '172.32.0.1', '192.169.0.1', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(refusedAddressReason(address)).toBeNull();
  });
});
