/** A count seen in the host's status (one member's `status.clusters[].used.pods`) and when. */
export interface Observation {
  at: number;
  count: number;
}

/** Changes of one member in one direction: pods all created (+1) or all deleted (-1). */
export interface Wave {
  /** When the first write was sent: observations before it belong to earlier waves. */
  since: number;
  /** The count before the wave, as the status showed it. */
  baseline: number;
  direction: 1 | -1;
  /** When each write was answered by the member API server. */
  completedAt: number[];
}

/**
 * How long each change of a wave took to show in the host status. Counts only move one way during a
 * wave, so the k-th write answered is reflected once the status shows baseline ± k: its delay runs
 * from its answer to the first observation at or past that count (0 if the status got there even
 * before the answer arrived). `unobserved` counts the writes no observation reflects.
 */
export function waveDelays(
  wave: Wave,
  observations: readonly Observation[],
): { delaysMs: number[]; unobserved: number } {
  const completed = [...wave.completedAt].sort((a, b) => a - b);
  const seen = observations.filter((o) => o.at >= wave.since);
  const reached = (o: Observation, target: number) =>
    wave.direction > 0 ? o.count >= target : o.count <= target;
  const delaysMs: number[] = [];
  let next = 0;
  for (let k = 1; k <= completed.length; k++) {
    const target = wave.baseline + wave.direction * k;
    while (next < seen.length && !reached(seen[next]!, target)) next++;
    if (next === seen.length) return { delaysMs, unobserved: completed.length - k + 1 };
    delaysMs.push(Math.max(0, seen[next]!.at - completed[k - 1]!));
  }
  return { delaysMs, unobserved: 0 };
}
