import { readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { describeError } from '#api';
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
  /**
   * Serve HTTPS with the PEM key and certificate in these files (the webhook: the API server calls
   * only HTTPS), re-read every `reloadSeconds` so a renewed certificate (cert-manager, a rotated
   * Secret) is served without a restart.
   */
  tls?: { keyFile: string; certFile: string; reloadSeconds: number };
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
  const tls = options.tls;
  let served = tls && readKeyPair(tls);
  const adapter = new FastifyAdapter({
    ...(served ? { https: served } : {}),
    ...(options.bodyLimitBytes ? { bodyLimit: options.bodyLimitBytes } : {}),
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger,
    abortOnError: false,
  });
  await app.listen(options.port, options.bindAddress);
  logger.log(`${options.name} listening on ${await app.getUrl()}`);
  if (tls && served) {
    const server = app.getHttpServer() as HttpsServer;
    const reload = setInterval(() => {
      try {
        const next = readKeyPair(tls);
        if (next.key === served!.key && next.cert === served!.cert) return;
        server.setSecureContext(next); // throws on a key that does not match the certificate
        served = next;
        logger.log(`serving the renewed TLS certificate from ${tls.certFile}`);
      } catch (err) {
        // A renewal caught half-written is retried at the next tick; the old pair keeps serving.
        logger.error(
          `could not load the TLS certificate ${tls.certFile}: ${describeError(err)}; serving the previous one`,
        );
      }
    }, tls.reloadSeconds * 1000).unref();
    server.once('close', () => clearInterval(reload));
  }
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

function readKeyPair(tls: { keyFile: string; certFile: string }): { key: string; cert: string } {
  return { key: readFileSync(tls.keyFile, 'utf8'), cert: readFileSync(tls.certFile, 'utf8') };
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
