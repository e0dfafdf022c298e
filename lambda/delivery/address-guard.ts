import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may be sent (docs/notifications.md, "Webhooks"): https to a public address only.
 * A URL is vetted when a webhook is added and again before every delivery, and the delivery then
 * connects to the very address vetted here (webhook-sender.ts pins it), so a name that resolves to
 * a public address at the check and to a private one a moment later (DNS rebinding) cannot reach
 * inside. The ranges are Node's own `BlockList`, which also matches an IPv4 rule against the
 * IPv4-mapped IPv6 form of the address (`::ffff:10.0.0.1`), so those forms cannot walk around it.
 */

/** What kind of address a host is, by the first range of `RANGES` it falls in; `public` when none. */
export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'metadata'
  | 'cgnat'
  | 'this-network'
  | 'unspecified'
  | 'multicast'
  | 'documentation'
  | 'reserved';

type Family = 'ipv4' | 'ipv6';
type Range = readonly [network: string, prefix: number, family: Family];

/**
 * Every range that is not the public internet, most specific first (the metadata addresses before
 * the link-local and unique-local ranges that hold them). IPv6 outside 2000::/3 is not global
 * unicast at all, so the last row takes everything else there; 6to4, Teredo and NAT64 carry an IPv4
 * address of any kind inside, so they are refused whole rather than unpacked.
 */
const RANGES: readonly (readonly [AddressClass, readonly Range[]])[] = [
  [
    'metadata',
    [
      ['169.254.169.254', 32, 'ipv4'],
      ['fd00:ec2::254', 128, 'ipv6'],
    ],
  ],
  [
    'unspecified',
    [
      ['0.0.0.0', 32, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  ],
  ['this-network', [['0.0.0.0', 8, 'ipv4']]],
  [
    'loopback',
    [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  ],
  [
    'private',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
      ['fec0::', 10, 'ipv6'],
    ],
  ],
  ['cgnat', [['100.64.0.0', 10, 'ipv4']]],
  [
    'link-local',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  ],
  [
    'multicast',
    [
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ],
  ],
  [
    'documentation',
    [
      ['192.0.2.0', 24, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['2001:db8::', 32, 'ipv6'],
    ],
  ],
  [
    'reserved',
    [
      ['192.0.0.0', 24, 'ipv4'],
      ['192.88.99.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
      ['100::', 64, 'ipv6'],
      ['2001::', 23, 'ipv6'],
      ['2002::', 16, 'ipv6'],
      ['64:ff9b::', 96, 'ipv6'],
      ['64:ff9b:1::', 48, 'ipv6'],
    ],
  ],
];

const LISTS: readonly (readonly [AddressClass, BlockList])[] = RANGES.map(([cls, ranges]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return [cls, list] as const;
});

/** Global unicast IPv6: anything outside it is no address a webhook lives at. */
const GLOBAL_V6 = new BlockList();
GLOBAL_V6.addSubnet('2000::', 3, 'ipv6');

/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`): judged as the IPv4 address it is (BlockList matches IPv4 rules against it). */
const MAPPED_V6 = new BlockList();
MAPPED_V6.addSubnet('::ffff:0:0', 96, 'ipv6');

/** The class of an IP address (v4 or v6, without brackets); throws on a string that is none. */
export const classifyAddress = (address: string): AddressClass => {
  const version = isIP(address);
  if (version === 0) throw new TypeError(`not an IP address: ${address}`);
  const family: Family = version === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, list] of LISTS) if (list.check(address, family)) return cls;
  // A mapped address whose IPv4 matched no range above is that public IPv4 address.
  if (family === 'ipv6' && !MAPPED_V6.check(address, 'ipv6') && !GLOBAL_V6.check(address, 'ipv6')) return 'reserved';
  return 'public';
};

/** Whether a delivery may connect to an address of this class. */
export const mayConnect = (cls: AddressClass, allowLoopback: boolean): boolean => cls === 'public' || (allowLoopback && cls === 'loopback');

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** A host name to every address it resolves to: node:dns in production, a table of the test's own in tests. */
export type Resolve = (host: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolve: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** Why a URL may not be a webhook's: stable codes, for code to decide by. */
export type UrlRefusalCause = 'invalid-url' | 'not-https' | 'credentials-in-url' | 'unresolvable' | 'forbidden-address';

export type VettedUrl =
  | {
      readonly ok: true;
      readonly url: URL;
      /** The host as the request names it (for TLS and the Host header), brackets stripped. */
      readonly host: string;
      /** The address the delivery connects to, and nowhere else. */
      readonly address: ResolvedAddress;
    }
  | {
      readonly ok: false;
      readonly cause: UrlRefusalCause;
      /** With `forbidden-address`: the first address refused, and its class. */
      readonly address?: string;
      readonly addressClass?: AddressClass;
    };

/** The longest URL a webhook may have. */
export const MAX_URL_LENGTH = 2048;

export interface VetOptions {
  readonly allowLoopback: boolean;
  readonly resolve?: Resolve;
}

const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Vets a URL: https (or http to loopback, where loopback is allowed), no user or password in it,
 * and every address its host resolves to of a class a delivery may reach. A host with one forbidden
 * address among public ones is refused whole: which one the client would pick is not ours to know.
 */
export const vetUrl = async (text: string, opts: VetOptions): Promise<VettedUrl> => {
  let url: URL;
  try {
    if (text.length > MAX_URL_LENGTH) return { ok: false, cause: 'invalid-url' };
    url = new URL(text);
  } catch {
    return { ok: false, cause: 'invalid-url' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, cause: 'not-https' };
  if (url.username || url.password) return { ok: false, cause: 'credentials-in-url' };
  const host = hostOf(url);
  if (!host) return { ok: false, cause: 'invalid-url' };
  let addresses: readonly ResolvedAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (opts.resolve ?? systemResolve)(host);
    } catch {
      return { ok: false, cause: 'unresolvable' };
    }
    if (addresses.length === 0) return { ok: false, cause: 'unresolvable' };
  }
  const classes = addresses.map((a) => classifyAddress(a.address));
  const refused = classes.findIndex((cls) => !mayConnect(cls, opts.allowLoopback));
  if (refused >= 0) return { ok: false, cause: 'forbidden-address', address: addresses[refused]!.address, addressClass: classes[refused]! };
  // Plain http only where nothing leaves the machine: the local server's own receivers.
  if (url.protocol === 'http:' && !classes.every((cls) => cls === 'loopback')) return { ok: false, cause: 'not-https' };
  return { ok: true, url, host, address: addresses[0]! };
};
