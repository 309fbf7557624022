import { describeError } from '#api';
import type { ServerResponse } from 'node:http';
import {
  HttpException,
  Logger,
  ServiceUnavailableException,
  UnauthorizedException,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { stopIntervals } from '#service-kit';
import { Gauge, type Registry } from 'prom-client';
import type { Caller } from './access.js';
import type { QuotaCache } from './watched-objects.js';
import type { QuotaReader } from './quota-reader.js';
import { snapshot, sseFrame } from './snapshot.js';

/** A slow reader this far behind is dropped (its page falls back to polling and reconnects). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

const INTERVAL = 'live-refresh';

interface Stream {
  authorization: string;
  response: ServerResponse;
  /** The views last sent, serialised: an unchanged list is not sent again on a change elsewhere. */
  lastSent?: string;
  running: boolean;
  queued: boolean;
  refreshQueued: boolean;
  closed: boolean;
}

/**
 * Server-sent events of the quotas a caller may read: a `quotas` snapshot at once, after every
 * change of what they see, and at least every `refreshSeconds` (re-checking the token and access,
 * so revoked access stops within the auth cache TTL); `unauthorized` then the end when the token
 * stops being valid; `unavailable` when the Karmada API server cannot answer (the stream stays
 * open).
 */
export class LiveUpdates implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('live');
  private readonly streams = new Set<Stream>();
  private readonly open: Gauge;
  private unsubscribe?: () => void;

  constructor(
    private readonly reader: QuotaReader,
    private readonly quotas: QuotaCache,
    private readonly options: { refreshSeconds: number; maxStreams: number },
    metrics: Registry,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.open = new Gauge({
      name: 'karmada_quota_console_live_streams',
      help: 'Live update streams open',
      registers: [metrics],
    });
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = this.quotas.onChange(() => this.pushAll(false));
    this.scheduler.addInterval(
      INTERVAL,
      setInterval(() => this.pushAll(true), this.options.refreshSeconds * 1000),
    );
  }

  /** Ends every stream: the HTTP server closes only once no response is open. */
  onModuleDestroy(): void {
    this.unsubscribe?.();
    stopIntervals(this.scheduler, INTERVAL);
    for (const stream of this.streams) this.close(stream);
  }

  /** Refuses (503) when at the limit; the caller has been authenticated already. */
  checkCapacity(): void {
    if (this.streams.size >= this.options.maxStreams) {
      throw new ServiceUnavailableException(
        `the console serves ${this.options.maxStreams} live streams already (MAX_LIVE_STREAMS): poll GET /api/quotas`,
      );
    }
  }

  /** Streams to `response` (headers not sent yet) until the client goes or the service stops. */
  serve(authorization: string, caller: Caller, response: ServerResponse): void {
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no', // reverse proxies must not hold events back
      'X-Content-Type-Options': 'nosniff',
    });
    const stream: Stream = {
      authorization,
      response,
      running: false,
      queued: false,
      refreshQueued: false,
      closed: false,
    };
    this.streams.add(stream);
    this.open.set(this.streams.size);
    response.on('close', () => this.forget(stream));
    this.logger.debug({ user: caller.username }, 'live stream opened');
    this.schedule(stream, true);
  }

  private pushAll(refresh: boolean): void {
    for (const stream of this.streams) this.schedule(stream, refresh);
  }

  /** One push at a time per stream; what arrives meanwhile makes exactly one more. */
  private schedule(stream: Stream, refresh: boolean): void {
    stream.refreshQueued ||= refresh;
    if (stream.running) {
      stream.queued = true;
      return;
    }
    stream.running = true;
    void (async () => {
      try {
        do {
          stream.queued = false;
          const refreshNow = stream.refreshQueued;
          stream.refreshQueued = false;
          await this.push(stream, refreshNow);
        } while (stream.queued && !stream.closed);
      } catch (err) {
        // A broken stream must never take the service down: drop it, the page reconnects.
        this.logger.warn({ error: describeError(err) }, 'dropped a live stream');
        this.close(stream);
      } finally {
        stream.running = false;
      }
    })();
  }

  private async push(stream: Stream, refresh: boolean): Promise<void> {
    if (stream.closed) return;
    try {
      const caller = await this.reader.authenticate(stream.authorization);
      const visible = await this.reader.visible(caller);
      // Views only: the trends' latest point moves with the clock, and the refresh sends it.
      const serialised = JSON.stringify(visible.map((v) => v.view));
      if (!refresh && serialised === stream.lastSent) return;
      stream.lastSent = serialised;
      const now = new Date();
      const quotas = await Promise.all(visible.map((v) => this.reader.present(v, now)));
      this.write(stream, sseFrame('quotas', JSON.stringify(snapshot(caller.username, quotas, now))));
    } catch (err) {
      if (err instanceof UnauthorizedException) {
        this.write(stream, sseFrame('unauthorized', err.message));
        this.close(stream);
      } else {
        const message = err instanceof HttpException ? err.message : describeError(err);
        this.logger.warn({ error: message }, 'live update failed');
        this.write(stream, sseFrame('unavailable', message));
      }
    }
  }

  private write(stream: Stream, frame: string): void {
    if (stream.closed) return;
    if (stream.response.writableLength > MAX_BUFFERED_BYTES) {
      this.logger.warn('dropped a live stream whose client does not keep up');
      this.close(stream);
      return;
    }
    stream.response.write(frame);
  }

  private close(stream: Stream): void {
    if (!stream.closed) stream.response.end();
    this.forget(stream);
  }

  private forget(stream: Stream): void {
    stream.closed = true;
    this.streams.delete(stream);
    this.open.set(this.streams.size);
  }
}
