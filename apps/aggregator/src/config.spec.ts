import { ConfigError } from '#service-kit';
import { loadAggregatorConfig } from './config.js';

describe('the aggregator configuration', () => {
  test('the default AGGREGATOR_ID names a valid membership Lease', () => {
    expect(loadAggregatorConfig({}).AGGREGATOR_ID).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
  });

  test.each([
    ['AGGREGATOR_ID', 'Aggregator_1', /AGGREGATOR_ID="Aggregator_1": must be lowercase letters/],
    ['AGGREGATOR_ID', 'x'.repeat(201), /AGGREGATOR_ID="x+": must be at most 200 characters/],
    ['LEASE_DURATION_SECONDS', '1', /LEASE_DURATION_SECONDS="1": must be at least 2/],
    ['LEASE_DURATION_SECONDS', '301', /LEASE_DURATION_SECONDS="301": must be at most 300/],
    ['LEASE_DURATION_SECONDS', 'soon', /LEASE_DURATION_SECONDS="soon": must be a number of seconds/],
  ])('%s=%s is refused with a message that says what to set', (variable, value, message) => {
    expect(() => loadAggregatorConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadAggregatorConfig({ [variable]: value })).toThrow(message);
  });

  test('a pod name is a valid AGGREGATOR_ID', () => {
    expect(loadAggregatorConfig({ AGGREGATOR_ID: 'kq-aggregator-7d9f8-x2x9q' }).AGGREGATOR_ID).toBe(
      'kq-aggregator-7d9f8-x2x9q',
    );
  });
});
