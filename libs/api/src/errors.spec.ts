import * as k8s from '@kubernetes/client-node';
import { describeError, isApiStatus } from './errors.js';

describe('describeError', () => {
  const status = JSON.stringify({ kind: 'Status', message: 'storage is (re)initializing', code: 429 });
  const networkError = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), {
    code: 'ECONNREFUSED',
  });

  test.each<[string, unknown, string]>([
    [
      'an API error with a Status body',
      new k8s.ApiException(429, 'Unknown API Status Code!', status, { 'audit-id': 'x' }),
      'HTTP 429: storage is (re)initializing',
    ],
    ['an API error without one', new k8s.ApiException(502, 'Bad Gateway', '<html>', {}), 'HTTP 502'],
    ['a network error', networkError, 'ECONNREFUSED connect ECONNREFUSED 127.0.0.1:6443'],
    ['a plain error', new Error('boom'), 'boom'],
    ['anything else', 42, '42'],
  ])('%s', (_what, err, expected) => {
    expect(describeError(err)).toBe(expected);
  });
});

describe('isApiStatus', () => {
  const notFound = new k8s.ApiException(404, 'Not Found', '{}', {});
  test.each<[string, unknown, number, boolean]>([
    ['the API answer of that code', notFound, 404, true],
    ['the API answer of another code', notFound, 409, false],
    ['a network error', new Error('connect ECONNREFUSED'), 404, false],
    ['anything else', { code: 404 }, 404, false],
  ])('%s', (_what, err, code, expected) => {
    expect(isApiStatus(err, code)).toBe(expected);
  });
});
