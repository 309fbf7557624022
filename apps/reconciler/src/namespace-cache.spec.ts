import * as k8s from '@kubernetes/client-node';
import type { KarmadaQuota } from '#api';
import { NamespaceCache } from './namespace-cache.js';

const quota = (resourceVersion: string, uid = 'q-1'): KarmadaQuota =>
  ({ metadata: { name: 'team', namespace: 'team-a', uid, resourceVersion } }) as KarmadaQuota;

function namespaceCache(): NamespaceCache {
  const kc = new k8s.KubeConfig();
  kc.loadFromClusterAndUser(
    { name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false },
    { name: 'u' },
  );
  return new NamespaceCache(kc); // never started: only its own-write bookkeeping is used here
}

describe('NamespaceCache own writes', () => {
  test("recognizes a status it wrote once, by uid and resourceVersion, and nobody else's", () => {
    const cache = namespaceCache();
    cache.noteOwnWrite(quota('7'));
    expect(cache.isOwnWrite(quota('8'))).toBe(false);
    expect(cache.isOwnWrite(quota('7', 'another-uid'))).toBe(false);
    expect(cache.isOwnWrite(quota('7'))).toBe(true);
    expect(cache.isOwnWrite(quota('7'))).toBe(false);
  });

  test('forgets the oldest writes past 10,000 (events that never came)', () => {
    const cache = namespaceCache();
    for (let rv = 1; rv <= 10_001; rv++) cache.noteOwnWrite(quota(String(rv)));
    expect(cache.isOwnWrite(quota('1'))).toBe(false);
    expect(cache.isOwnWrite(quota('2'))).toBe(true);
    expect(cache.isOwnWrite(quota('10001'))).toBe(true);
  });

  test('shows no cached view before both watches are running', () => {
    expect(namespaceCache().view('team-a')).toBeUndefined();
  });
});
