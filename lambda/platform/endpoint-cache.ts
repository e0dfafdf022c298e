/**
 * Bundling only (lib/bundling.ts aliases `@aws-sdk/endpoint-cache` to this file): the cache of the
 * DynamoDB client's endpoint discovery, which every DynamoDBClient constructs and which is used only
 * when discovery is turned on (AWS_ENABLE_ENDPOINT_DISCOVERY; doers never does). The package's
 * version is the same class on mnemonist's LRU cache, about 7 KB of the bundle with its helpers;
 * this one keeps the same behaviour on a Map (insertion order; a set moves a key last, the oldest
 * goes beyond capacity). Same interface as @aws-sdk/endpoint-cache's `EndpointCache`.
 */
interface Endpoint {
  readonly Address: string;
  readonly CachePeriodInMinutes: number;
}

interface EndpointWithExpiry {
  readonly Address: string;
  readonly Expires: number;
}

export class EndpointCache {
  private readonly cache = new Map<string, EndpointWithExpiry[]>();

  constructor(private readonly capacity: number) {}

  getEndpoint(key: string): string | undefined {
    const endpoints = this.get(key);
    if (!endpoints || endpoints.length === 0) return undefined;
    return endpoints[Math.floor(Math.random() * endpoints.length)]!.Address;
  }

  get(key: string): EndpointWithExpiry[] | undefined {
    const value = this.cache.get(key);
    if (!value || value.length === 0) return undefined;
    const now = Date.now();
    const live = value.filter((e) => now < e.Expires);
    if (live.length === 0) {
      this.delete(key);
      return undefined;
    }
    return live;
  }

  set(key: string, endpoints: readonly Endpoint[]): void {
    const now = Date.now();
    this.cache.delete(key);
    this.cache.set(
      key,
      endpoints.map(({ Address, CachePeriodInMinutes }) => ({ Address, Expires: now + CachePeriodInMinutes * 60_000 })),
    );
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
  }

  delete(key: string): void {
    this.cache.set(key, []);
  }

  has(key: string): boolean {
    return (this.cache.get(key)?.length ?? 0) > 0;
  }

  clear(): void {
    this.cache.clear();
  }
}
