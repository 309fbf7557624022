import type { KarmadaQuota } from '#api';
import {
  bearerToken,
  mapLimited,
  namespacesOf,
  subjectKey,
  tokenKey,
  visibleQuotas,
  type Caller,
  type NamespaceAccess,
} from './access.js';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def', 'abc.def'],
    ['bearer abc', 'abc'],
    ['  Bearer   abc  ', 'abc'],
  ])('%j carries the token %j', (header, token) => {
    expect(bearerToken(header)).toEqual({ token });
  });

  it.each([
    [undefined, /^no bearer token: send .*Authorization: Bearer <token>/],
    ['', /^no bearer token/],
    ['   ', /^no bearer token/],
    ['Basic dXNlcjpwYXNz', /^the Authorization header is not a bearer token: send /],
    ['Bearer', /^the Authorization header is not a bearer token/],
    ['Bearer two tokens', /^the Authorization header is not a bearer token/],
  ])('%j has no token', (header, problem) => {
    const result = bearerToken(header);
    expect('problem' in result && result.problem).toMatch(problem);
  });
});

describe('cache keys', () => {
  const alice: Caller = {
    username: 'alice',
    uid: '1',
    groups: ['dev', 'ops'],
    extra: { scopes: ['a', 'b'] },
  };

  it('a token key is a hash, never the token', () => {
    expect(tokenKey('secret-token')).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenKey('secret-token')).not.toBe(tokenKey('secret-tokem'));
  });

  it('a subject key ignores the order of groups and extras', () => {
    const reordered: Caller = { ...alice, groups: ['ops', 'dev'], extra: { scopes: ['b', 'a'] } };
    expect(subjectKey(reordered)).toBe(subjectKey(alice));
  });

  it.each<[string, Caller]>([
    ['another user', { ...alice, username: 'bob' }],
    ['another uid', { ...alice, uid: '2' }],
    ['one group less', { ...alice, groups: ['dev'] }],
    ['other extras', { ...alice, extra: { scopes: ['a'] } }],
    ['no extras', { ...alice, extra: {} }],
  ])('%s is another subject', (_what, other) => {
    expect(subjectKey(other)).not.toBe(subjectKey(alice));
  });
});

describe('which quotas a caller sees', () => {
  const quota = (namespace: string | undefined, name: string): KarmadaQuota => ({
    metadata: { namespace, name },
    spec: { hard: {} },
  });
  const quotas = [
    quota('b', 'q2'),
    quota('a', 'q1'),
    quota('c', 'q'),
    quota('b', 'q1'),
    quota(undefined, 'x'),
  ];
  const names = (list: KarmadaQuota[]) => list.map((q) => `${q.metadata?.namespace}/${q.metadata?.name}`);

  it('lists the namespaces holding quotas once each, sorted', () => {
    expect(namespacesOf(quotas)).toEqual(['a', 'b', 'c']);
  });

  it.each<[string, NamespaceAccess, string[]]>([
    ['every namespace', 'all', ['a/q1', 'b/q1', 'b/q2', 'c/q']],
    ['one namespace', new Set(['b']), ['b/q1', 'b/q2']],
    ['two namespaces', new Set(['a', 'c']), ['a/q1', 'c/q']],
    ['a namespace without quotas', new Set(['z']), []],
    ['no namespace', new Set<string>(), []],
  ])('a caller allowed in %s sees only those', (_what, access, expected) => {
    expect(names(visibleQuotas(quotas, access))).toEqual(expected);
  });
});

describe('mapLimited', () => {
  it('keeps the order of the items and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const results = await mapLimited([5, 1, 4, 2, 3], 2, async (n) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, n));
      running--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('maps nothing to nothing', async () => {
    expect(await mapLimited([], 4, async () => 1)).toEqual([]);
  });

  it('fails when one item fails', async () => {
    await expect(
      mapLimited([1, 2], 2, async (n) => {
        if (n === 2) throw new Error('no access review');
        return n;
      }),
    ).rejects.toThrow('no access review');
  });
});
