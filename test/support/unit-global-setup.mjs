// The unit project's global setup: a few specs run on real Redis (testRedisUrl), so they get the
// test run's Redis too (test-redis.mjs).
export { acquireTestRedis as default } from './test-redis.mjs';
