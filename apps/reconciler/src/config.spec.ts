import { loadReconcilerConfig } from './config.js';

describe('the reconciler configuration', () => {
  test('SCHEDULER_ESTIMATOR_ADDRESS: unset or empty is off', () => {
    expect(loadReconcilerConfig({}).SCHEDULER_ESTIMATOR_ADDRESS).toBeUndefined();
    expect(
      loadReconcilerConfig({ SCHEDULER_ESTIMATOR_ADDRESS: '' }).SCHEDULER_ESTIMATOR_ADDRESS,
    ).toBeUndefined();
  });

  test.each([
    [
      'karmada-quota-webhook.karmada-quota.svc:10352',
      { host: 'karmada-quota-webhook.karmada-quota.svc', port: 10352 },
    ],
    ['127.0.0.1:4000', { host: '127.0.0.1', port: 4000 }],
  ])('SCHEDULER_ESTIMATOR_ADDRESS=%s is a host and a port', (address, expected) => {
    expect(
      loadReconcilerConfig({ SCHEDULER_ESTIMATOR_ADDRESS: address }).SCHEDULER_ESTIMATOR_ADDRESS,
    ).toEqual(expected);
  });

  test.each([
    'webhook',
    'Webhook.svc:10352',
    'webhook.svc:0',
    'webhook.svc:99999',
    'https://webhook.svc:10352',
  ])('SCHEDULER_ESTIMATOR_ADDRESS=%s is refused, saying what it must be', (address) => {
    expect(() => loadReconcilerConfig({ SCHEDULER_ESTIMATOR_ADDRESS: address })).toThrow(
      `SCHEDULER_ESTIMATOR_ADDRESS=${JSON.stringify(address)}: must be <host>:<port>`,
    );
  });
});
