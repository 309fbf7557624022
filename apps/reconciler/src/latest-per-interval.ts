/**
 * Hands each key's latest value to `write` at most once per interval, and only when it differs (by
 * fingerprint) from the last one handed over: a value offered sooner waits for the interval and is
 * replaced by any later offer. A write that fails (resolves false) is not taken for written: the
 * next offer, even of the same value, writes again once the interval has passed (a write that keeps
 * failing, a CRD not installed say, is tried once per interval, not at every offer).
 */
export class LatestPerInterval<T> {
  /** Per key: what was last handed over (or is being written), and when. */
  private readonly written = new Map<string, { fingerprint: string; at: number }>();
  /** Per key: a value that waits for the interval to pass. */
  private readonly waiting = new Map<string, { value: T; fingerprint: string; timer: NodeJS.Timeout }>();

  constructor(
    private readonly intervalMs: number,
    private readonly write: (key: string, value: T, at: Date) => Promise<boolean>,
  ) {}

  offer(key: string, value: T, fingerprint: string): void {
    const waiting = this.waiting.get(key);
    if (waiting) return void Object.assign(waiting, { value, fingerprint });
    const last = this.written.get(key);
    if (last?.fingerprint === fingerprint) return;
    const due = (last?.at ?? -Infinity) + this.intervalMs - Date.now();
    if (due <= 0) return this.hand(key, value, fingerprint);
    const timer = setTimeout(() => {
      const latest = this.waiting.get(key)!;
      this.waiting.delete(key);
      if (this.written.get(key)?.fingerprint !== latest.fingerprint)
        this.hand(key, latest.value, latest.fingerprint);
    }, due);
    timer.unref();
    this.waiting.set(key, { value, fingerprint, timer });
  }

  /** Drops the values waiting; nothing is written after. */
  stop(): void {
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  private hand(key: string, value: T, fingerprint: string): void {
    const at = Date.now();
    this.written.set(key, { fingerprint, at });
    void this.write(key, value, new Date(at)).then((written) => {
      if (!written && this.written.get(key)?.at === at) this.written.set(key, { fingerprint: '', at });
    });
  }
}
