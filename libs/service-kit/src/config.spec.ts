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
