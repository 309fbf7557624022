import { isFailClosedAnswer, quotaStatusWrites } from './end-to-end.js';

const scrape = (ok: number, conflicts: number, otherPuts: number) =>
  [
    '# TYPE apiserver_request_total counter',
    `apiserver_request_total{code="200",component="apiserver",dry_run="",group="quota.karmada.io",resource="karmadaquotas",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} ${ok}`,
    `apiserver_request_total{code="409",component="apiserver",dry_run="",group="quota.karmada.io",resource="karmadaquotas",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} ${conflicts}`,
    `apiserver_request_total{code="200",component="apiserver",dry_run="",group="quota.karmada.io",resource="karmadaquotas",scope="resource",subresource="",verb="PUT",version="v1alpha1"} ${otherPuts}`,
    `apiserver_request_total{code="200",component="apiserver",dry_run="",group="quota.karmada.io",resource="karmadaquotas",scope="resource",subresource="status",verb="GET",version="v1alpha1"} 99`,
  ].join('\n');

describe('quotaStatusWrites', () => {
  it('counts the status PUTs between two scrapes per create, conflicts apart; other writes and reads are not counted', () => {
    expect(quotaStatusWrites(scrape(10, 2, 5), scrape(1_210, 102, 50), 1_000)).toEqual({
      perCreate: 1.3,
      conflictsPerCreate: 0.1,
    });
  });
});

describe('isFailClosedAnswer', () => {
  const failClosed =
    'admission webhook "resourcebindings.quota.karmada.io" denied the request: karmada-quota could not check ' +
    'the quota, so the request is not admitted (fail closed): the Karmada API server had not answered by the admission deadline';
  test.each([
    ['the webhook failing closed (503 with its message)', 503, { message: failClosed }, true],
    ['the same message with another status', 500, { message: failClosed }, false],
    ['a quota denial', 403, { message: 'exceeded quota: team' }, false],
    [
      'a 503 of the API server itself',
      503,
      { message: 'the server is currently unable to handle the request' },
      false,
    ],
    ['a body without a message', 503, 'upstream connect error', false],
  ])('%s: %s', (_, status, body, expected) => {
    expect(isFailClosedAnswer(status, body)).toBe(expected);
  });
});
