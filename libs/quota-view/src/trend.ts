/** One reading of how full a quota's resource was: used / hard in percent, at `at` (ms since the epoch). */
export interface TrendSample {
  at: number;
  percent: number;
}

/** What the page draws for one resource: an SVG polyline and the words beside it. */
export interface Sparkline {
  /** The polyline's `points` attribute ("x,y x,y ..."); '' without samples. */
  points: string;
  /** The top of the drawing in percent: 100, or the highest sample when over the limit. */
  ceiling: number;
  /** The first and last samples in the window; absent without samples. */
  first?: TrendSample;
  last?: TrendSample;
}

/**
 * The samples within [from, to] as a sparkline `width` x `height`: time left to right over the
 * window, 0% one pixel above the bottom and `ceiling` one below the top (so a line along either
 * edge still shows). A single sample is drawn as a level line from its time to `to`.
 */
export function sparkline(
  samples: readonly TrendSample[],
  window: { from: number; to: number },
  size: { width: number; height: number },
): Sparkline {
  const inWindow = samples
    .filter((s) => s.at >= window.from && s.at <= window.to && Number.isFinite(s.percent))
    .sort((a, b) => a.at - b.at);
  const ceiling = Math.max(100, ...inWindow.map((s) => s.percent));
  if (inWindow.length === 0) return { points: '', ceiling };
  const span = Math.max(1, window.to - window.from);
  const x = (at: number) => round((size.width * (at - window.from)) / span);
  const y = (percent: number) => round(1 + (size.height - 2) * (1 - Math.max(0, percent) / ceiling));
  const drawn = inWindow.length === 1 ? [...inWindow, { ...inWindow[0]!, at: window.to }] : inWindow;
  return {
    points: drawn.map((s) => `${x(s.at)},${y(s.percent)}`).join(' '),
    ceiling,
    first: inWindow[0],
    last: inWindow[inWindow.length - 1],
  };
}

const round = (n: number) => Math.round(n * 10) / 10;
