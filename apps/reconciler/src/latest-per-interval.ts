import { createHash } from 'node:crypto';

/**
 * Hands each key's latest value to `write` at most once per interval, and only when it differs (by
 * fingerprint) from the last one handed over, or that one is older than `refreshMs`: a value offered
 * sooner waits for the interval and is replaced by any later offer. The refresh bounds how long a
 * value another writer (a second replica) wrote over ours can stand. Writes of one key run one after
 * the other, so an older value never lands after a newer one. A write that fails (resolves false) is
 * not taken for written: the next offer, even of the same value, writes again once the interval has
 * passed (a write that keeps failing, a CRD not installed say, is tried once per interval).
 */
export class LatestPerInterval<T> {
  /** Per key: a digest of what was last handed over (or is being written), and when. */
  private readonly written = new Map<string, { digest: string; at: number }>();
  /** Per key: a value that waits for the interval to pass. */
  private readonly waiting = new Map<string, { value: T; digest: string; timer: NodeJS.Timeout }>();
  /** Per key: the write in flight, which the next one waits for. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly refreshMs: number,
    private readonly write: (key: string, value: T, at: Date) => Promise<boolean>,
  ) {}

  offer(key: string, value: T, fingerprint: string): void {
    if (this.stopped) return;
    const digest = createHash('sha256').update(fingerprint).digest('base64');
    const waiting = this.waiting.get(key);
    if (waiting) return void Object.assign(waiting, { value, digest });
    const last = this.written.get(key);
    const now = Date.now();
    if (last?.digest === digest && now - last.at < this.refreshMs) return;
    const due = (last?.at ?? -Infinity) + this.intervalMs - now;
    if (due <= 0) return this.hand(key, value, digest);
    const timer = setTimeout(() => {
      const latest = this.waiting.get(key)!;
      this.waiting.delete(key);
      const written = this.written.get(key);
      if (written?.digest !== latest.digest || Date.now() - written.at >= this.refreshMs)
        this.hand(key, latest.value, latest.digest);
    }, due);
    timer.unref();
    this.waiting.set(key, { value, digest, timer });
  }

  /** Drops the values waiting and refuses new ones: nothing is written after but what is in flight. */
  stop(): void {
    this.stopped = true;
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  private hand(key: string, value: T, digest: string): void {
    const at = Date.now();
    this.written.set(key, { digest, at });
    const previous = this.inFlight.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.write(key, value, new Date(at)))
      .catch(() => false)
      .then((written) => {
        if (!written && this.written.get(key)?.at === at) this.written.set(key, { digest: '', at });
        if (this.inFlight.get(key) === next) this.inFlight.delete(key);
      });
    this.inFlight.set(key, next);
  }
}
