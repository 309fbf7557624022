/**
 * Objects to bring in step one at a time, each key queued once however often it changes meanwhile
 * (as client-go's workqueue dedups): a sync that fails is queued again after the delay `failed`
 * returns. Used where a watch's changes are few and each sync reads what is current.
 */
export class KeyQueue {
  private readonly pending = new Set<string>();
  private running = false;
  private stopped = false;

  constructor(
    private readonly sync: (key: string) => Promise<void>,
    /** Reports a failed sync; returns when to try it again, in ms. */
    private readonly failed: (key: string, err: unknown) => number,
  ) {}

  add(key: string): void {
    if (key === '' || this.stopped) return;
    this.pending.add(key);
    void this.drain();
  }

  /** No sync starts after this; one in flight finishes. */
  stop(): void {
    this.stopped = true;
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    while (!this.stopped && this.pending.size > 0) {
      const key = this.pending.values().next().value!;
      this.pending.delete(key);
      try {
        await this.sync(key);
      } catch (err) {
        setTimeout(() => this.add(key), this.failed(key, err)).unref();
      }
    }
    this.running = false;
  }
}
