export { releaseTestRedis as default } from './test-redis.mjs';
