import * as k8s from '@kubernetes/client-node';
import { explainError, isObjectNotFound, type RequestTarget } from './errors.js';

const target: RequestTarget = {
  server: 'https://karmada.example:5443',
  context: 'karmada-apiserver',
  verb: 'get',
  resource: 'karmadaquotas.quota.karmada.io',
  namespace: 'team-a',
  name: 'team',
};

const status = (code: number, reason: string, message: string, details: object = {}) =>
  new k8s.ApiException(
    code,
    'Unknown API Status Code!',
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, details, code }),
    {},
  );

/** A network failure as node-fetch (client-node's HTTP client) reports it. */
const fetchError = (code: string, reason: string) =>
  Object.assign(new Error(`request to ${target.server}/apis/quota.karmada.io failed, reason: ${reason}`), {
    name: 'FetchError',
    type: 'system',
    code,
    errno: code,
  });

const forbidden =
  'karmadaquotas.quota.karmada.io "team" is forbidden: User "system:serviceaccount:team-a:viewer" cannot get ' +
  'resource "karmadaquotas" in API group "quota.karmada.io" in the namespace "team-a"';

describe('explainError', () => {
  it.each([
    {
      case: 'no such quota: kubectl NotFound',
      err: status(404, 'NotFound', 'karmadaquotas.quota.karmada.io "team" not found', {
        name: 'team',
        group: 'quota.karmada.io',
        kind: 'karmadaquotas',
      }),
      message: 'Error from server (NotFound): karmadaquotas.quota.karmada.io "team" not found',
    },
    {
      case: 'CRD not installed: the resource type itself is not found',
      err: status(404, 'NotFound', 'the server could not find the requested resource'),
      message:
        'error: the server https://karmada.example:5443 doesn\'t have a resource type "karmadaquotas.quota.karmada.io": ' +
        'is karmada-quota installed there (its CRDs), and is kubeconfig context "karmada-apiserver" ' +
        'the Karmada control plane?',
    },
    {
      case: 'no access: the server names the user, verb, resource and namespace',
      err: status(403, 'Forbidden', forbidden, { name: 'team', kind: 'karmadaquotas' }),
      message: `Error from server (Forbidden): ${forbidden}`,
    },
    {
      case: 'no access from a proxy that sends no Status: say what was refused',
      err: new k8s.ApiException(403, 'Unknown API Status Code!', '<html>Forbidden</html>', {}),
      message:
        'Error from server (Forbidden): the user of kubeconfig context "karmada-apiserver" cannot get resource ' +
        '"karmadaquotas.quota.karmada.io" in the namespace "team-a"',
    },
    {
      case: 'bad credentials',
      err: new k8s.ApiException(401, 'Unauthorized', undefined, {}),
      message:
        'error: You must be logged in to the server (Unauthorized): https://karmada.example:5443 rejected the ' +
        'credentials of kubeconfig context "karmada-apiserver"',
    },
    {
      case: 'any other Status keeps its reason and message',
      err: status(429, 'TooManyRequests', 'storage is (re)initializing'),
      message: 'Error from server (TooManyRequests): storage is (re)initializing',
    },
    {
      case: 'a Status without a reason',
      err: status(500, '', 'etcdserver: request timed out'),
      message: 'Error from server: etcdserver: request timed out',
    },
    {
      case: 'an answer that is not a Status',
      err: new k8s.ApiException(502, 'Unknown API Status Code!', 'Bad Gateway', {}),
      message: 'Error from server: https://karmada.example:5443 answered HTTP 502',
    },
    {
      case: 'no cluster: connection refused',
      err: fetchError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:5443'),
      message:
        'error: the connection to the server https://karmada.example:5443 was refused: is the API server running, ' +
        'and is kubeconfig context "karmada-apiserver" the cluster you meant? (kubectl config get-contexts)',
    },
    {
      case: 'no cluster: unknown host',
      err: fetchError('ENOTFOUND', 'getaddrinfo ENOTFOUND karmada.example'),
      message:
        'error: cannot resolve the host of the server https://karmada.example:5443: check its address in ' +
        'kubeconfig context "karmada-apiserver" (kubectl config view --minify)',
    },
    {
      case: 'no cluster: a certificate the kubeconfig does not trust',
      err: fetchError('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
      message: expect.stringMatching(
        /^error: cannot verify the TLS certificate of the server https:\/\/karmada\.example:5443 \(SELF_SIGNED_CERT_IN_CHAIN .*self-signed certificate in certificate chain\): check certificate-authority-data of the cluster in kubeconfig context "karmada-apiserver"$/,
      ),
    },
    {
      case: 'no cluster: timeout',
      err: fetchError('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.1:5443'),
      message:
        'error: unable to connect to the server https://karmada.example:5443 (ETIMEDOUT): check the network and ' +
        'kubeconfig context "karmada-apiserver"',
    },
    {
      case: 'anything else',
      err: new Error('No active cluster!'),
      message: 'error: No active cluster!',
    },
  ])('$case', ({ err, message }) => {
    expect(explainError(err, target)).toEqual(message);
  });

  it('says "in any namespace" for a refused list across all namespaces', () => {
    const err = new k8s.ApiException(403, 'Unknown API Status Code!', '', {});
    expect(explainError(err, { ...target, verb: 'list', namespace: undefined, name: undefined })).toBe(
      'Error from server (Forbidden): the user of kubeconfig context "karmada-apiserver" cannot list resource ' +
        '"karmadaquotas.quota.karmada.io" in any namespace',
    );
  });
});

describe('isObjectNotFound', () => {
  it.each([
    {
      case: 'a missing quota',
      err: status(404, 'NotFound', 'karmadaquotas.quota.karmada.io "team" not found', { name: 'team' }),
      expected: true,
    },
    {
      case: 'a missing resource type',
      err: status(404, 'NotFound', 'the server could not find the requested resource'),
      expected: false,
    },
    { case: 'a refusal', err: status(403, 'Forbidden', forbidden, { name: 'team' }), expected: false },
    { case: 'a network failure', err: fetchError('ECONNREFUSED', 'connect ECONNREFUSED'), expected: false },
  ])('$case: $expected', ({ err, expected }) => {
    expect(isObjectNotFound(err)).toBe(expected);
  });
});
