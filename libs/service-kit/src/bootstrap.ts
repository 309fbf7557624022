import { describeError } from './errors.js';
import { ConsoleLogger, type DynamicModule, type INestApplication, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigError } from './config.js';

const LEVELS: LogLevel[] = ['error', 'warn', 'log', 'debug', 'verbose'];

export interface ServiceOptions {
  name: string;
  port: number;
  bindAddress: string;
  logLevel: LogLevel;
  /** Serve HTTPS with this PEM key and certificate (the webhook: the API server calls only HTTPS). */
  tls?: { key: string; cert: string };
  /** Largest request body accepted (413 above it); Fastify's default is 1 MiB. */
  bodyLimitBytes?: number;
}

/** Structured JSON logs, one object per line, tagged with the service name. */
export function jsonLogger(name: string, level: LogLevel): ConsoleLogger {
  return new ConsoleLogger(name, { json: true, logLevels: LEVELS.slice(0, LEVELS.indexOf(level) + 1) });
}

/**
 * Boots a service on Fastify with JSON logs and graceful shutdown: SIGTERM or SIGINT stop accepting
 * requests, run every onModuleDestroy/onApplicationShutdown hook, then exit 0.
 */
export async function startService(module: unknown, options: ServiceOptions): Promise<INestApplication> {
  const logger = jsonLogger(options.name, options.logLevel);
  const adapter = new FastifyAdapter({
    ...(options.tls ? { https: options.tls } : {}),
    ...(options.bodyLimitBytes ? { bodyLimit: options.bodyLimitBytes } : {}),
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger,
    abortOnError: false,
  });
  await app.listen(options.port, options.bindAddress);
  logger.log(`${options.name} listening on ${await app.getUrl()}`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.log(`${signal} received, shutting down`);
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error(`shutdown failed: ${describeError(err)}`);
          process.exit(1);
        },
      );
    });
  }
  return app;
}

/**
 * Runs `main` and turns a configuration error into a clear message and exit code 2 instead of a
 * stack trace; any other start-up failure exits 1 with its message.
 */
export function runMain(name: string, main: () => Promise<unknown>): void {
  main().catch((err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`${name}: failed to start: ${describeError(err)}\n`);
    process.exit(1);
  });
}

/** What every service's configuration has (see serviceEnv). */
export interface ServiceConfig {
  PORT: number;
  BIND_ADDRESS: string;
  LOG_LEVEL: LogLevel;
}

/**
 * A service's whole main: load and validate the configuration, build the root module from it and
 * serve, with `extra` options (TLS, body limit) derived from the configuration.
 */
export function serviceMain<Config extends ServiceConfig>(
  name: string,
  loadConfig: () => Config,
  rootModule: (config: Config) => DynamicModule,
  extra: (config: Config) => Partial<ServiceOptions> = () => ({}),
): void {
  runMain(name, async () => {
    const config = loadConfig();
    await startService(rootModule(config), {
      name,
      port: config.PORT,
      bindAddress: config.BIND_ADDRESS,
      logLevel: config.LOG_LEVEL,
      ...extra(config),
    });
  });
}
