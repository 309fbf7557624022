import { ConfigError, loadConfig, serviceEnv } from './config.js';

describe('LOG_LEVEL', () => {
  const { LOG_LEVEL } = serviceEnv(8080);
  test.each([
    { given: undefined, level: 'log' },
    { given: 'warn', level: 'warn' },
    { given: 'info', level: 'log' }, // pino's name, as the JSON lines show it
    { given: 'trace', level: 'verbose' },
    { given: 'verbose', level: 'verbose' },
  ])('$given is $level', ({ given, level }) => {
    expect(loadConfig({ LOG_LEVEL }, given === undefined ? {} : { LOG_LEVEL: given })).toEqual({
      LOG_LEVEL: level,
    });
  });

  test('anything else is refused, naming every accepted level', () => {
    expect(() => loadConfig({ LOG_LEVEL }, { LOG_LEVEL: 'chatty' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_LEVEL }, { LOG_LEVEL: 'chatty' })).toThrow(
      'LOG_LEVEL="chatty": must be error, warn, log (or info), debug or verbose (or trace)',
    );
  });
});

describe('API_REQUEST_TIMEOUT_SECONDS', () => {
  const { API_REQUEST_TIMEOUT_SECONDS } = serviceEnv(8080);
  const load = (given?: string) =>
    loadConfig(
      { API_REQUEST_TIMEOUT_SECONDS },
      given === undefined ? {} : { API_REQUEST_TIMEOUT_SECONDS: given },
    );

  test.each([
    { given: undefined, seconds: 60 },
    { given: '1', seconds: 1 },
    { given: '600', seconds: 600 },
    { given: '3600', seconds: 3600 },
  ])('$given is $seconds s', ({ given, seconds }) => {
    expect(load(given)).toEqual({ API_REQUEST_TIMEOUT_SECONDS: seconds });
  });

  test.each([
    ['0', 'must be between 1 and 3600'],
    ['3601', 'must be between 1 and 3600'],
    ['1.5', 'must be a whole number of seconds'],
    ['a minute', 'must be a number of seconds'],
  ])('%j is refused: %s', (given, message) => {
    expect(() => load(given)).toThrow(`API_REQUEST_TIMEOUT_SECONDS="${given}": ${message}`);
  });
});
