import { clusterQuotaNamed } from './api.js';

describe('clusterQuotaNamed', () => {
  it.each<[string, string | undefined]>([
    ['ClusterKarmadaQuota/org', 'org'],
    ['clusterkarmadaquota/org', 'org'],
    ['ckq/org', 'org'],
    ['org', undefined],
    ['KarmadaQuota/org', undefined],
  ])('%s', (name, expected) => {
    expect(clusterQuotaNamed(name)).toBe(expected);
  });
});
