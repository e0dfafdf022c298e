import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AddressClass, classifyAddress, type Resolve, vetUrl } from '../../lambda/delivery/address-guard.js';

// Where a webhook may be sent (lambda/delivery/address-guard.ts): every class of address that is not
// the public internet, in IPv4, IPv6 and the IPv4-mapped IPv6 forms, at the URL and behind a name.

const FORBIDDEN: readonly (readonly [string, AddressClass])[] = [
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fec0::1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['::1', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.10.20', 'link-local'],
  ['fe80::1', 'link-local'],
  ['febf::1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.254', 'cgnat'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['0.1.2.3', 'this-network'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['192.0.0.8', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['100::1', 'reserved'],
  ['64:ff9b::a00:1', 'reserved'],
  ['2002:a00:1::1', 'reserved'],
  ['2001:0:4136:e378::1', 'reserved'],
  ['::a00:1', 'reserved'],
  ['4000::1', 'reserved'],
  // IPv4-mapped IPv6: judged as the IPv4 address inside, in both spellings.
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a00:1', 'private'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:100.64.0.1', 'cgnat'],
  ['::ffff:192.168.0.1', 'private'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:224.0.0.1', 'multicast'],
];

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '100.128.0.1',
  '169.253.255.255',
  '2606:4700:4700::1111',
  '2a00:1450::1',
  '::ffff:8.8.8.8',
];

describe('classifyAddress', () => {
  for (const [address, cls] of FORBIDDEN) {
    test(`${address} is ${cls}`, () => {
      assert.equal(classifyAddress(address), cls);
    });
  }

  test('public addresses, v4, v6 and mapped, are public', () => {
    for (const address of PUBLIC) assert.equal(classifyAddress(address), 'public', address);
  });

  test('a string that is no address is a TypeError', () => {
    assert.throws(() => classifyAddress('example.com'), TypeError);
  });
});

/** A resolver of the test's own: DNS is not reachable here, and the attack is a name that maps inside. */
const table =
  (map: Readonly<Record<string, readonly string[]>>): Resolve =>
  async (host) => {
    const addresses = map[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('vetUrl', () => {
  const resolve = table({
    'hooks.example.com': ['93.184.216.34'],
    'v6.example.com': ['2606:4700::1'],
    'inside.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '192.168.0.10'],
    'metadata.example.com': ['169.254.169.254'],
    'mapped.example.com': ['::ffff:10.0.0.1'],
    'localhost.example.com': ['127.0.0.1'],
    'empty.example.com': [],
  });

  test('https to a public name or address passes, pinned to the address resolved', async () => {
    const byName = await vetUrl('https://hooks.example.com/in?x=1', { allowLoopback: false, resolve });
    assert.ok(byName.ok);
    assert.deepEqual(byName.address, { address: '93.184.216.34', family: 4 });
    assert.equal(byName.host, 'hooks.example.com');
    const v6 = await vetUrl('https://v6.example.com/', { allowLoopback: false, resolve });
    assert.ok(v6.ok);
    assert.equal(v6.address.family, 6);
    const literal = await vetUrl('https://[2606:4700::1]:8443/x', { allowLoopback: false, resolve });
    assert.ok(literal.ok);
    assert.equal(literal.host, '2606:4700::1');
  });

  test('every forbidden address is refused as a literal, naming its class', async () => {
    for (const [address, cls] of FORBIDDEN) {
      const host = address.includes(':') ? `[${address}]` : address;
      const vetted = await vetUrl(`https://${host}/hook`, { allowLoopback: false, resolve });
      assert.ok(!vetted.ok, address);
      assert.equal(vetted.cause, 'forbidden-address', address);
      assert.equal(vetted.addressClass, cls, address);
    }
  });

  test('a name resolving inside is refused; one forbidden address among public ones is enough', async () => {
    for (const [host, cls] of [
      ['inside.example.com', 'private'],
      ['mixed.example.com', 'private'],
      ['metadata.example.com', 'metadata'],
      ['mapped.example.com', 'private'],
      ['localhost.example.com', 'loopback'],
    ] as const) {
      const vetted = await vetUrl(`https://${host}/`, { allowLoopback: false, resolve });
      assert.ok(!vetted.ok, host);
      assert.equal(vetted.cause, 'forbidden-address');
      assert.equal(vetted.addressClass, cls, host);
    }
  });

  test('loopback, http or https, passes only with allowLoopback; nothing else opens with it', async () => {
    for (const url of ['http://127.0.0.1:8080/x', 'https://127.0.0.1/x', 'http://[::1]:9/x', 'http://localhost.example.com/x']) {
      const off = await vetUrl(url, { allowLoopback: false, resolve });
      assert.ok(!off.ok && off.cause === 'forbidden-address' && off.addressClass === 'loopback', url);
      assert.ok((await vetUrl(url, { allowLoopback: true, resolve })).ok, url);
    }
    for (const url of ['https://10.0.0.1/', 'https://169.254.169.254/', 'https://[::ffff:a9fe:a9fe]/', 'https://[fd00:ec2::254]/']) {
      const on = await vetUrl(url, { allowLoopback: true, resolve });
      assert.ok(!on.ok && on.cause === 'forbidden-address', url);
    }
    // Mapped loopback is loopback: allowed exactly where loopback is.
    assert.ok((await vetUrl('http://[::ffff:127.0.0.1]:9/', { allowLoopback: true, resolve })).ok);
  });

  test('plain http to anything but loopback is refused, even with allowLoopback', async () => {
    for (const allowLoopback of [false, true]) {
      const vetted = await vetUrl('http://hooks.example.com/x', { allowLoopback, resolve });
      assert.ok(!vetted.ok);
      assert.equal(vetted.cause, 'not-https');
    }
  });

  test('other schemes, credentials, junk, overlong URLs and names that do not resolve are refused by cause', async () => {
    const cases: readonly (readonly [string, string])[] = [
      ['ftp://hooks.example.com/x', 'not-https'],
      ['file:///etc/passwd', 'not-https'],
      ['javascript:alert(1)', 'not-https'],
      ['gopher://10.0.0.1:70/', 'not-https'],
      ['https://user:pw@hooks.example.com/', 'credentials-in-url'],
      ['not a url', 'invalid-url'],
      [`https://hooks.example.com/${'a'.repeat(2100)}`, 'invalid-url'],
      ['https://nowhere.example.com/', 'unresolvable'],
      ['https://empty.example.com/', 'unresolvable'],
    ];
    for (const [url, cause] of cases) {
      const vetted = await vetUrl(url, { allowLoopback: true, resolve });
      assert.ok(!vetted.ok, url);
      assert.equal(vetted.cause, cause, url);
    }
  });

  test('numeric spellings of an inside address are read as the address they are', async () => {
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://0177.0.0.1/', 'https://127.1/', 'https://0xa9fea9fe/']) {
      const vetted = await vetUrl(url, { allowLoopback: false, resolve });
      assert.ok(!vetted.ok && vetted.cause === 'forbidden-address', url);
    }
  });
});
