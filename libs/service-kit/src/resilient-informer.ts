import type * as k8s from '@kubernetes/client-node';

/**
 * A watch that survives failures. client-node's informer stops on any
 * error but 410 Gone; starting the SAME informer again resumes from its last resourceVersion and
 * keeps its cache, so after an outage a relist still reports the objects deleted meanwhile.
 */
export class ResilientInformer<T extends k8s.KubernetesObject> {
  private readonly informer: k8s.Informer<T>;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  private attemptFailed = false;

  constructor(
    informer: k8s.Informer<T>,
    private readonly handlers: {
      upsert: (obj: T) => void;
      remove: (obj: T) => void;
      synced: () => void;
      failed: (err: unknown) => void;
    },
    private readonly maxBackoffMs: number,
  ) {
    this.informer = informer;
    informer.on('add', handlers.upsert);
    informer.on('update', handlers.upsert);
    informer.on('delete', handlers.remove);
    informer.on('error', (err: unknown) => this.fail(err));
  }

  /** Resolves once listed and watching, or once the first attempt has failed (a retry is then scheduled). */
  async start(): Promise<void> {
    this.attemptFailed = false;
    try {
      await this.informer.start();
    } catch (err) {
      this.fail(err);
    }
    if (!this.attemptFailed && !this.stopped) {
      this.failures = 0;
      this.handlers.synced();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.informer.stop();
  }

  private fail(err: unknown): void {
    this.attemptFailed = true;
    if (this.stopped) return;
    this.handlers.failed(err);
    clearTimeout(this.retryTimer);
    const delay = Math.min(this.maxBackoffMs, 250 * 2 ** this.failures++);
    this.retryTimer = setTimeout(() => void this.start(), delay);
  }
}
