import { countedResource, countedResourceId } from './counted-resources.js';

describe('countedResource', () => {
  test.each([
    ['services', { group: '', resource: 'services' }],
    ['secrets', { group: '', resource: 'secrets' }],
    ['configmaps', { group: '', resource: 'configmaps' }],
    ['persistentvolumeclaims', { group: '', resource: 'persistentvolumeclaims' }],
    ['replicationcontrollers', { group: '', resource: 'replicationcontrollers' }],
    ['resourcequotas', { group: '', resource: 'resourcequotas' }],
    ['count/services', { group: '', resource: 'services' }],
    ['count/deployments.apps', { group: 'apps', resource: 'deployments' }],
    ['count/jobs.batch', { group: 'batch', resource: 'jobs' }],
    ['count/ingresses.networking.k8s.io', { group: 'networking.k8s.io', resource: 'ingresses' }],
    ['count/widgets.example.com', { group: 'example.com', resource: 'widgets' }],
  ])('%s counts %j', (key, expected) => {
    expect(countedResource(key)).toEqual(expected);
  });

  test.each([
    'cpu',
    'requests.cpu',
    'memory',
    'pods',
    'count/pods',
    'services.nodeports',
    'count/',
    'example.com/gpu',
  ])('%s is not an object count', (key) => {
    expect(countedResource(key)).toBeUndefined();
  });

  test('keys counting the same resource share one id', () => {
    expect(countedResourceId(countedResource('services')!)).toBe(
      countedResourceId(countedResource('count/services')!),
    );
    expect(countedResourceId(countedResource('count/deployments.apps')!)).toBe('deployments.apps');
  });
});
