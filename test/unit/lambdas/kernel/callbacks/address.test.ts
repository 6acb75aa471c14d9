/** The addresses a callback must not reach on AWS. */
import { blockedAddress } from '../../../../../lambdas/kernel/callbacks/address';

test.each([
  '127.0.0.1',
  '10.1.2.3',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '::1',
  '::',
  'fe80::1',
  'fd00::1',
  '::ffff:127.0.0.1',
  '::ffff:a9fe:a9fe',
])('%s is refused', (address) => {
  expect(blockedAddress(address)).toContain('private, loopback, link-local or reserved');
});

test.each(['93.184.216.34', '172.32.0.1', '8.8.8.8', '2606:4700::1111'])('%s may be called', (address) => {
  expect(blockedAddress(address)).toBeUndefined();
});

test('a name is not an address', () => {
  expect(blockedAddress('example.com')).toContain('not an IP address');
});
