import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { describeError } from '#api';
import type { DynamicModule, INestApplication, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger, PinoLogger } from 'nestjs-pino';
import { pino, type Level } from 'pino';
import { judgeClientCertificate, peerCertificateOf } from './client-certificate.js';
import { ConfigError } from './config.js';

/** LOG_LEVEL names Nest's levels; pino's for the same. */
const PINO_LEVELS: Record<LogLevel, Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

export interface ServiceOptions {
  name: string;
  port: number;
  bindAddress: string;
  logLevel: LogLevel;
  /**
   * Serve HTTPS with the PEM key and certificate in these files (the webhook: the API server calls
   * only HTTPS), re-read every `reloadSeconds` so a renewed certificate (cert-manager, a rotated
   * Secret) is served without a restart. With `clientCaFile` (PEM), every caller is asked for a
   * certificate verified against that CA (re-read with the pair), and only probes and /metrics answer
   * without one (see judgeClientCertificate): asked, not required at the handshake, because the
   * kubelet's probes and Prometheus present none.
   */
  tls?: TlsFiles & { reloadSeconds: number };
  /** Largest request body accepted (413 above it); Fastify's default is 1 MiB. */
  bodyLimitBytes?: number;
}

interface TlsFiles {
  keyFile: string;
  certFile: string;
  clientCaFile?: string | undefined;
  /** With clientCaFile: the common names a client certificate may have (empty: any the CA signs). */
  clientNames?: readonly string[];
}

/**
 * Structured logs (pino through nestjs-pino), one JSON object per line on stdout: `level` (`info`,
 * `warn`, ...), `timestamp` (ms since the epoch), `component` (the service), `context` (the part of
 * it), `message`, and the facts a call site passes as fields: `logger.warn({ namespace, error },
 * 'text')`. The process has one pino logger: every call returns a view of the first one's.
 */
export function jsonLogger(name: string, level: LogLevel): Logger {
  const root = pino({
    level: PINO_LEVELS[level],
    messageKey: 'message',
    base: { component: name },
    timestamp: () => `,"timestamp":${Date.now()}`,
    formatters: { level: (label) => ({ level: label }) },
  });
  return new Logger(new PinoLogger({ pinoHttp: { logger: root } }), {});
}

// startService logs through jsonLogger's logger itself, which reads a call's last argument as the
// context: a call with fields passes one after the message, or the message would become the context.
const TLS_CONTEXT = 'tls';
const SERVICE_CONTEXT = 'service';

/**
 * Boots a service on Fastify with JSON logs and graceful shutdown: SIGTERM or SIGINT stop accepting
 * requests, run every onModuleDestroy/onApplicationShutdown hook, then exit 0.
 */
export async function startService(module: unknown, options: ServiceOptions): Promise<INestApplication> {
  const logger = jsonLogger(options.name, options.logLevel);
  const tls = options.tls;
  let served = tls && readTlsFiles(tls);
  const adapter = new FastifyAdapter({
    ...(served
      ? { https: { ...served, ...(served.ca ? { requestCert: true, rejectUnauthorized: false } : {}) } }
      : {}),
    ...(options.bodyLimitBytes ? { bodyLimit: options.bodyLimitBytes } : {}),
  });
  if (tls?.clientCaFile) {
    const names = tls.clientNames ?? [];
    // onRequest runs before the body is read: a refused caller costs no parsing.
    adapter.getInstance().addHook('onRequest', async (request, reply) => {
      const peer = peerCertificateOf(request.raw.socket as TLSSocket, { commonName: names.length > 0 });
      const verdict = judgeClientCertificate(request.url, peer, names);
      if (verdict.allowed) return;
      logger.warn(
        { method: request.method, url: request.url, caller: request.ip, reason: verdict.message },
        'refused a request for its client certificate',
        TLS_CONTEXT,
      );
      await reply.code(verdict.statusCode).send({
        statusCode: verdict.statusCode,
        error: verdict.statusCode === 401 ? 'Unauthorized' : 'Forbidden',
        message: verdict.message,
      });
    });
  }
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger,
    abortOnError: false,
  });
  await app.listen(options.port, options.bindAddress);
  logger.log({ url: await app.getUrl() }, 'listening', SERVICE_CONTEXT);
  if (tls && served) {
    const server = app.getHttpServer() as HttpsServer;
    const files = [tls.certFile, tls.keyFile, tls.clientCaFile].filter(Boolean);
    const reload = setInterval(() => {
      try {
        const next = readTlsFiles(tls);
        if (next.key === served!.key && next.cert === served!.cert && next.ca === served!.ca) return;
        server.setSecureContext(next); // throws on a key that does not match the certificate
        if (next.ca !== served!.ca) {
          // A client verified against the old CA keeps that verdict on its open connections and in
          // resumed TLS sessions: end both, so every caller is verified against the new one.
          server.setTicketKeys(randomBytes(48));
          server.closeIdleConnections();
        }
        served = next;
        logger.log({ files }, 'serving the renewed TLS certificate', TLS_CONTEXT);
      } catch (err) {
        // A renewal caught half-written is retried at the next tick; the old one keeps serving.
        logger.error(
          { files, error: describeError(err) },
          'could not load the TLS certificate, serving the previous one',
          TLS_CONTEXT,
        );
      }
    }, tls.reloadSeconds * 1000).unref();
    server.once('close', () => clearInterval(reload));
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.log({ signal }, 'shutting down on a signal', SERVICE_CONTEXT);
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ error: describeError(err) }, 'shutdown failed', SERVICE_CONTEXT);
          process.exit(1);
        },
      );
    });
  }
  return app;
}

function readTlsFiles(tls: TlsFiles): { key: string; cert: string; ca?: string } {
  return {
    key: readFileSync(tls.keyFile, 'utf8'),
    cert: readFileSync(tls.certFile, 'utf8'),
    ...(tls.clientCaFile ? { ca: readFileSync(tls.clientCaFile, 'utf8') } : {}),
  };
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
