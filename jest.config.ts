import type { Config } from 'jest';

// ESM throughout (NestJS 12 and client-node are ESM-only): ts-jest compiles our TypeScript as ESM
// and npm scripts run jest under Node 24 with --experimental-vm-modules.
const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: {
    // package.json "imports" (#quantity, #api, ...) point at each lib's index.ts.
    '^#([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^#api/crds$': '<rootDir>/libs/api/src/crds.ts',
    // ESM sources import siblings as ./x.js; jest resolves them to ./x.ts.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
} satisfies Partial<Config>;

const config: Config = {
  // Integration tests wait for real API servers and controllers; unit tests finish far sooner.
  testTimeout: 120_000,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/apps/**/*.spec.ts',
        '<rootDir>/tools/**/*.spec.ts',
      ],
      // A few specs run on real Redis: REDIS_URL's, or a private redis-server for the run.
      globalSetup: '<rootDir>/test/support/unit-global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/unit-global-teardown.mjs',
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    {
      // Fault injection on the real federation (`npm run test:chaos`): each file starts its own
      // federation, services and Redis, so no global setup. Named *.chaos.ts: never integration.
      ...shared,
      displayName: 'chaos',
      testMatch: ['<rootDir>/test/chaos/**/*.chaos.ts'],
    },
  ],
};

export default config;
