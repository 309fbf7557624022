/** The parts of a V8 CPU profile (`node --cpu-prof`, a `.cpuprofile` file) the summary reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
  }[];
  startTime: number;
  endTime: number;
}

export interface CpuShare {
  /** A function (`name file:line`) or a package (`node_modules/x`, `node:internal`, a repo file). */
  name: string;
  selfMs: number;
  /** Of the time the process was busy (idle excluded). */
  percent: number;
}

export interface CpuProfileSummary {
  durationMs: number;
  busyMs: number;
  topFunctions: CpuShare[];
  topPackages: CpuShare[];
}

/** V8's pseudo-frames: time spent waiting, not running JavaScript or the runtime. */
const IDLE = new Set(['(idle)']);

/**
 * Where a process spent its CPU: self time per function and per package, largest first. Self time
 * is each frame's share of the samples times the profile's duration.
 */
export function summarizeCpuProfile(profile: CpuProfile, top = 15): CpuProfileSummary {
  const durationMs = (profile.endTime - profile.startTime) / 1000;
  const samples = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
  const msPerSample = samples > 0 ? durationMs / samples : 0;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let busyMs = 0;
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const selfMs = (node.hitCount ?? 0) * msPerSample;
    if (selfMs === 0 || IDLE.has(functionName)) continue;
    busyMs += selfMs;
    const where = url ? ` ${shortPath(url)}:${lineNumber + 1}` : '';
    const fn = `${functionName || '(anonymous)'}${where}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + selfMs);
    const pkg = packageOf(url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + selfMs);
  }
  const rank = (totals: Map<string, number>): CpuShare[] =>
    [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, selfMs]) => ({
        name,
        selfMs: Math.round(selfMs),
        percent: busyMs > 0 ? Math.round((selfMs / busyMs) * 1000) / 10 : 0,
      }));
  return {
    durationMs: Math.round(durationMs),
    busyMs: Math.round(busyMs),
    topFunctions: rank(byFunction),
    topPackages: rank(byPackage),
  };
}

/** A profile's summary as text: what `npm run bench -- --profile` prints and writes. */
export function renderCpuProfileSummary(name: string, summary: CpuProfileSummary): string {
  const lines = (shares: CpuShare[]) =>
    shares.map(
      (s) => `  ${s.percent.toFixed(1).padStart(5)}%  ${String(s.selfMs).padStart(7)} ms  ${s.name}`,
    );
  return [
    `${name}: busy ${summary.busyMs} ms of ${summary.durationMs} ms profiled`,
    ' by package:',
    ...lines(summary.topPackages),
    ' by function (self time):',
    ...lines(summary.topFunctions),
  ].join('\n');
}

/** The path from the last node_modules, or from the repository's apps/libs/tools, or as given. */
function shortPath(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + 1);
  const repo = /\/(?:dist\/)?((?:apps|libs|tools)\/.*)$/.exec(path);
  return repo ? repo[1]! : path;
}

/** The npm package, Node's own code, the repository's app or lib, or V8's pseudo-frame. */
function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const path = shortPath(url);
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  const own = /^((?:apps|libs|tools)\/[^/]+)/.exec(path);
  return own ? own[1]! : path;
}

/** What `go tool pprof -top` says of a Go CPU profile (the host API server's). */
export interface GoCpuProfileSummary {
  /** How long the profile sampled, and the CPU time its samples add up to. */
  durationSeconds: number;
  cpuSeconds: number;
  /** Functions by self (flat) time, largest first, as shares of the samples. */
  topFunctions: { name: string; percent: number }[];
}

/** A Go duration as pprof prints it (`980ms`, `16.80s`, `1.50mins`, `2hrs`), in seconds. */
function goSeconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s|mins|hrs)$/.exec(text);
  if (!match) throw new Error(`go tool pprof: cannot read the duration "${text}"`);
  const unit = { us: 1e-6, ms: 1e-3, s: 1, mins: 60, hrs: 3600 }[
    match[2] as 'us' | 'ms' | 's' | 'mins' | 'hrs'
  ];
  return Number(match[1]) * unit;
}

/** Reads `go tool pprof -top`'s text: its Duration line and its table of flat times. */
export function parseGoPprofTop(text: string, top = 15): GoCpuProfileSummary {
  const totals = /^Duration: (\S+), Total samples = (\S+)/m.exec(text);
  if (!totals) throw new Error('go tool pprof -top: no "Duration: ..., Total samples = ..." line');
  const rows = [...text.matchAll(/^\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$/gm)];
  return {
    durationSeconds: goSeconds(totals[1]!),
    cpuSeconds: goSeconds(totals[2]!),
    topFunctions: rows
      .slice(0, top)
      .map(([, percent, name]) => ({ name: name!.trim(), percent: Number(percent) })),
  };
}

/** A Go profile's summary as text, like the services'. */
export function renderGoProfileSummary(name: string, summary: GoCpuProfileSummary): string {
  return [
    `${name} (Go): ${summary.cpuSeconds.toFixed(2)} s of CPU in ${summary.durationSeconds.toFixed(1)} s profiled`,
    ' by function (self time):',
    ...summary.topFunctions.map((f) => `  ${f.percent.toFixed(1).padStart(5)}%  ${f.name}`),
  ].join('\n');
}

/** A `--profile` run's summaries, kept in its report (`--json`) so they can be published. */
export interface BenchProfile {
  /** Where the profiles themselves are: bench-profiles/<start time>. */
  dir: string;
  /** Each service's V8 profile, by `<scenario>/<service>`. */
  services: Record<string, CpuProfileSummary>;
  /** The host API server's Go profiles, by `<scenario>/<name>`. */
  apiServer: Record<string, GoCpuProfileSummary>;
}
