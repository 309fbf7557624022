import { formatList } from '#quantity';
import { decodeReplicasQuestion, type WireReplicasRequest } from './scheduler-estimator.js';

const OBJECT = 'kind=Deployment, name=team-a/web';

describe('decodeReplicasQuestion', () => {
  const cases: {
    name: string;
    request: WireReplicasRequest;
    object?: string;
    want?: {
      member: string;
      namespace: string;
      requests: Record<string, string>;
      workload?: { kind: string; name: string };
    };
  }[] = [
    {
      name: 'the requests from resourceRequestBytes, the namespace from the object metadata',
      request: {
        cluster: 'member1',
        replicaRequirements: {
          resourceRequestBytes: { cpu: { string: '1500m' }, memory: { string: '1Gi' } },
          resourceRequest: { cpu: { string: '9' } },
          namespace: '',
        },
      },
      object: OBJECT,
      want: {
        member: 'member1',
        namespace: 'team-a',
        requests: { cpu: '1500m', memory: '1Gi' },
        workload: { kind: 'Deployment', name: 'web' },
      },
    },
    {
      name: 'the deprecated resourceRequest when the bytes are absent',
      request: { cluster: 'member1', replicaRequirements: { resourceRequest: { cpu: { string: '2' } } } },
      object: OBJECT,
      want: {
        member: 'member1',
        namespace: 'team-a',
        requests: { cpu: '2' },
        workload: { kind: 'Deployment', name: 'web' },
      },
    },
    {
      name: 'no requirements: one pod, nothing else',
      request: { cluster: 'member2', replicaRequirements: null },
      object: OBJECT,
      want: {
        member: 'member2',
        namespace: 'team-a',
        requests: {},
        workload: { kind: 'Deployment', name: 'web' },
      },
    },
    {
      name: 'the namespace from the requirements without the metadata (ResourceQuotaEstimate gate)',
      request: { cluster: 'member1', replicaRequirements: { namespace: 'team-b' } },
      want: { member: 'member1', namespace: 'team-b', requests: {} },
    },
    {
      name: 'no namespace anywhere: not answered',
      request: { cluster: 'member1' },
      object: 'kind=Deployment',
    },
    { name: 'no member: not answered', request: { cluster: '' }, object: OBJECT },
    {
      name: 'a quantity that does not parse: not answered',
      request: {
        cluster: 'member1',
        replicaRequirements: { resourceRequestBytes: { cpu: { string: 'lots' } } },
      },
      object: OBJECT,
    },
  ];

  it.each(cases)('$name', ({ request, object, want }) => {
    const question = decodeReplicasQuestion(request, object);
    expect(question && { ...question, requests: formatList(question.requests) }).toEqual(want);
  });
});
