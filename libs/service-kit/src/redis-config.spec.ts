import { ConfigError, loadConfig, redisEnv } from './config.js';

describe('REDIS_CLUSTER_NODES', () => {
  it.each<[string, string | undefined, { host: string; port: number }[] | undefined]>([
    ['unset: one Redis', undefined, undefined],
    ['empty (a chart value left blank): one Redis', '', undefined],
    ['one node', 'redis-0:6379', [{ host: 'redis-0', port: 6379 }]],
    [
      'several, spaces around commas',
      'redis-0.redis:7000, 10.0.0.2:7001',
      [
        { host: 'redis-0.redis', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
    ],
  ])('%s', (_name, nodes, expected) => {
    const env = nodes === undefined ? {} : { REDIS_CLUSTER_NODES: nodes };
    expect(loadConfig(redisEnv, env).REDIS_CLUSTER_NODES).toEqual(expected);
  });

  it.each([
    ['no port', 'redis-0'],
    ['a URL', 'redis://redis-0:6379'],
    ['a port out of range', 'redis-0:70000'],
    ['an empty entry', 'redis-0:6379,'],
  ])('names the variable, the value and the expected form for %s', (_name, nodes) => {
    expect(() => loadConfig(redisEnv, { REDIS_CLUSTER_NODES: nodes })).toThrow(ConfigError);
    expect(() => loadConfig(redisEnv, { REDIS_CLUSTER_NODES: nodes })).toThrow(
      `REDIS_CLUSTER_NODES=${JSON.stringify(nodes)}: must be the Redis Cluster nodes to start from, as comma-separated host:port (e.g. redis-0.redis:6379,redis-1.redis:6379)`,
    );
  });
});
