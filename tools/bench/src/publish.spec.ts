import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchReport } from './report.js';
import {
  benchPart,
  checkoutRefusals,
  failedClosedWords,
  GENERATED_END,
  GENERATED_START,
  generatedPart,
  LATEST_PROFILE,
  LATEST_RUN,
  PUBLISHED,
  profileRefusals,
  publishRefusals,
  readmePart,
  readmeProfile,
  renderProfile,
  replaceGenerated,
  ROOT,
  unaligned,
} from './publish.js';

function readJson(path: string): BenchReport {
  if (!existsSync(join(ROOT, path)))
    throw new Error(
      `${path} is missing: publish a run and its profile (npm run bench:publish -- RUN PROFILED)`,
    );
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as BenchReport;
}
const latest = readJson(LATEST_RUN);
const latestProfile = readJson(LATEST_PROFILE);

describe('the published run', () => {
  it(`${LATEST_RUN} is a full run of committed code that passed every correctness audit`, () => {
    expect({ commit: latest.commit, refusals: publishRefusals(latest) }).toEqual({
      commit: latest.commit,
      refusals: [],
    });
  });

  it(`${LATEST_PROFILE} profiles the same code, the webhook alone included`, () => {
    expect({ commit: latestProfile.commit, refusals: profileRefusals(latestProfile, latest) }).toEqual({
      commit: latestProfile.commit,
      refusals: [],
    });
  });

  it.each([
    ['README.md shows its headline figures, targets and profile', PUBLISHED.readme, readmePart],
    ['bench.md shows every figure of it and what the profile said', PUBLISHED.bench, benchPart],
  ])('%s (npm run bench:publish rewrites them)', (_what, path, render) => {
    const shown = generatedPart(readFileSync(join(ROOT, path), 'utf8'));
    expect(shown && unaligned(shown)).toBe(unaligned(render(latest, latestProfile)));
  });

  it('its --json has the keys scripts read: webhookAlone.{admissionsPerSec,p99Ms}, resync.seconds, endToEnd.p99Ratio', () => {
    // Read from the file a real run wrote, not through the BenchReport type, which a rename would carry along.
    const json = readJson(LATEST_RUN) as unknown as Record<string, Record<string, unknown>>;
    expect({
      webhookAlone: {
        admissionsPerSec: typeof json.webhookAlone?.admissionsPerSec,
        p99Ms: typeof json.webhookAlone?.p99Ms,
      },
      resync: { seconds: typeof json.resync?.seconds },
      endToEnd: { p99Ratio: typeof json.endToEnd?.p99Ratio },
    }).toEqual({
      webhookAlone: { admissionsPerSec: 'number', p99Ms: 'number' },
      resync: { seconds: 'number' },
      endToEnd: { p99Ratio: 'number' },
    });
  });

  it('README says how many creates failed closed, since a published run may have some', () => {
    const withClosed = (endToEnd: number, hot: number): BenchReport => {
      const run = structuredClone(latest);
      if (run.endToEnd && 'withWebhook' in run.endToEnd) run.endToEnd.withWebhook.failedClosed = endToEnd;
      // The hot-quota part README headlines: the owner's in an owner-mode run.
      if (run.hotQuota && 'batched' in run.hotQuota) {
        const headlined = run.admissionMode === 'owner' ? run.hotQuota.owner : run.hotQuota.batched;
        if (headlined) headlined.errors = hot;
      }
      return run;
    };
    expect(failedClosedWords(withClosed(0, 0))).toBe('no create failed');
    expect(failedClosedWords(withClosed(1, 0))).toBe('1 create failed closed, the Karmada API server late');
    expect(failedClosedWords(withClosed(2, 3))).toBe('5 creates failed closed, the Karmada API server late');
  });

  it("README headlines an owner-mode run's owner figures, and says no claim is a status write", () => {
    const run = structuredClone(latest);
    run.admissionMode = 'owner';
    if (
      !run.hotQuota ||
      !('batched' in run.hotQuota) ||
      !run.webhookAlone ||
      !('oneQuota' in run.webhookAlone)
    )
      throw new Error(`${LATEST_RUN} lacks hot-quota or webhook-alone figures`);
    run.hotQuota.owner = {
      ...run.hotQuota.batched,
      admissionsPerSec: 4_321,
      p99Ms: 12.3,
      allowed: 777,
      errors: 2,
    };
    run.webhookAlone.owner = {
      ...run.webhookAlone.oneQuota,
      admissionsPerSec: 2_468,
      p99Ms: 21,
      bindings: 1,
      cpuUsPerReview: 1,
      oversizedAdmitted: 0,
      bindingsAdmitted: 1,
      ownerClaims: 1,
    };
    const part = readmePart(run, latestProfile);
    expect(part).toMatch(/^The latest full `npm run bench -- --admission-mode owner` \(/);
    expect(part).toMatch(/\| figure \| KarmadaQuota \(owner mode\) \| Karmada FRQ \| target \|/);
    expect(part).toMatch(/\| 64 clients, one quota: requests\/s, p99 \| 4,321, 12 ms \|/);
    expect(part).toMatch(/\| same load: admitted \/ failed closed \/ status exact \| 777 \/ 2 \/ yes \|/);
    expect(part).toMatch(/\| webhook alone, 64 clients: requests\/s, p99 \| 2,468, 21 ms \|/);
    expect(part).not.toMatch(/each claim is a status write/);
    const ownerAlone = latestProfile.profile?.services['webhook-alone-owner/webhook-alone-owner'];
    if (ownerAlone)
      expect(part).toContain(`the owner webhook alone was busy ${(ownerAlone.busyMs / 1000).toFixed(1)} s`);
    if (run.endToEnd && 'withWebhook' in run.endToEnd) run.endToEnd.withWebhook.failedClosed = 0;
    expect(failedClosedWords(run)).toBe('2 creates failed closed, the Karmada API server late');
  });

  it('the README row of a scenario that did not run says so', () => {
    expect(readmePart({ ...latest, userLatency: undefined }, latestProfile)).toMatch(
      /\| Deployment to pods, one at a time: p99 vs no quota \| not measured \|/,
    );
  });
});

type Publishable = Pick<
  BenchReport,
  'mode' | 'commit' | 'code' | 'failures' | 'only' | 'profile' | 'admissionMode'
>;
const passing: Publishable = { mode: 'full', commit: 'abc1234', code: '0123456789abcdef', failures: [] };
const webhookProfile = { durationMs: 60_000, busyMs: 40_000, topFunctions: [], topPackages: [] };
const profiled: Publishable = {
  ...passing,
  mode: 'quick',
  only: ['webhookAlone'],
  profile: {
    dir: 'bench-profiles/x',
    services: { 'webhook-alone/webhook-alone': webhookProfile },
    apiServer: {},
  },
};

describe('publishRefusals', () => {
  it.each<[string, Publishable, RegExp | undefined]>([
    ['a full passing run of a commit', passing, undefined],
    ['a quick run', { ...passing, mode: 'quick' }, /quick run: publish a full one/],
    [
      'a run of some scenarios',
      { ...passing, only: ['hotQuota'] },
      /ran only hotQuota: publish a run of every/,
    ],
    ['a profiled run', { ...passing, profile: profiled.profile }, /was profiled.*without --profile/],
    ['no code digest', { ...passing, code: 'unknown' }, /does not say which commit and code/],
    [
      'a failed audit',
      { ...passing, failures: ['hot-quota: over-admitted'] },
      /failed 1 correctness audit.*over-admitted/,
    ],
    ['uncommitted changes', { ...passing, commit: 'abc1234-dirty' }, /uncommitted changes \(abc1234-dirty\)/],
    ['no commit', { ...passing, commit: 'unknown' }, /does not say which commit/],
  ])('%s', (_what, report, refusal) => {
    const refusals = publishRefusals(report);
    if (refusal) expect(refusals.join('\n')).toMatch(refusal);
    else expect(refusals).toEqual([]);
  });
});

describe('profileRefusals', () => {
  it.each<[string, Publishable, RegExp | undefined]>([
    ['a profile of the same code, any scenarios and size', profiled, undefined],
    ['a run without --profile', { ...profiled, profile: undefined }, /not a --profile run/],
    [
      'a profile without the webhook alone',
      { ...profiled, profile: { ...profiled.profile!, services: {} } },
      /no profile webhook-alone\/webhook-alone: include webhook-alone/,
    ],
    [
      'a profile of other code',
      { ...profiled, commit: 'def5678', code: 'fedcba9876543210' },
      /other code \(def5678, digest fedcba9876543210\) than the run \(digest 0123456789abcdef\)/,
    ],
    [
      'a failed audit',
      { ...profiled, failures: ['endToEnd: 3 creates failed'] },
      /failed 1 correctness audit/,
    ],
    ['uncommitted changes', { ...profiled, commit: 'abc1234-dirty' }, /uncommitted changes/],
    [
      'a profile of the owner mode for a run of the batched one',
      { ...profiled, admissionMode: 'owner' },
      /--admission-mode owner, the run batched: profile the mode the figures measured/,
    ],
  ])('%s', (_what, report, refusal) => {
    const refusals = profileRefusals(report, passing);
    if (refusal) expect(refusals.join('\n')).toMatch(refusal);
    else expect(refusals).toEqual([]);
  });
});

describe('checkoutRefusals', () => {
  it('accepts a run of the code in the checkout', () => {
    expect(checkoutRefusals(passing, passing.code)).toEqual([]);
  });

  it('names both digests and how to see what changed', () => {
    expect(checkoutRefusals(passing, 'ffffffffffffffff')).toEqual([
      expect.stringMatching(
        /digest ffffffffffffffff\) is not the code abc1234 measured \(digest 0123456789abcdef\).*git diff --stat abc1234 -- apps/,
      ),
    ]);
  });
});

describe('replaceGenerated', () => {
  const file = `# Title\n\nprose\n\n${GENERATED_START}\n\nold table\n\n${GENERATED_END}\n\nafter\n`;

  it('replaces only what lies between the markers, keeping them', () => {
    const replaced = replaceGenerated(file, 'new table', 'X.md');
    expect(replaced).toBe(
      `# Title\n\nprose\n\n${GENERATED_START}\n\nnew table\n\n${GENERATED_END}\n\nafter\n`,
    );
    expect(generatedPart(replaced)).toBe('new table');
  });

  it.each([
    ['no markers', '# Title\n'],
    ['the end before the start', `${GENERATED_END}\n${GENERATED_START}\n`],
  ])('names the file and the lines to add when it has %s', (_what, text) => {
    expect(() => replaceGenerated(text, 'x', 'README.md')).toThrow(
      /README.md has no generated part: add the lines/,
    );
    expect(generatedPart(text)).toBeUndefined();
  });
});

describe('unaligned', () => {
  it.each([
    ['| a   | bb |\n| --- | -- |\n| ccc | d  |', '| a | bb |\n| --- | -- |\n| ccc | d |'],
    ['| a | b |\n| ------ | ------- |', '| a | b |\n| --- | --- |'],
    ['| a \\| b | c |', '| a \\| b | c |'],
    ['  prose  ', 'prose'],
  ])('%j reads as %j', (markdown, expected) => {
    expect(unaligned(markdown)).toBe(expected);
  });
});

describe('what the profile said', () => {
  const run = {
    endToEnd: {
      withWebhook: { apiServerCpuMsPerCreate: 16.24 },
      withoutWebhook: { apiServerCpuMsPerCreate: 4.1 },
    },
    statusWrites: {
      writers: 4,
      runs: [
        { entries: 10, apiServerCpuMsPerWrite: 5.2 },
        { entries: 100, apiServerCpuMsPerWrite: 18.46 },
      ],
    },
  } as unknown as BenchReport;
  const share = (name: string, percent: number, selfMs: number) => ({ name, percent, selfMs });
  const profiledRun = {
    commit: 'abc1234',
    startedAt: '2026-11-26T20:00:00.000Z',
    only: ['webhookAlone', 'endToEnd'],
    profile: {
      dir: 'bench-profiles/x',
      services: {
        'webhook-alone/webhook-alone': {
          durationMs: 64_000,
          busyMs: 40_500,
          topFunctions: [
            share('writeUtf8String', 10, 4_050),
            share('(program)', 6, 2_430),
            share('parse', 5.5, 2_228),
            share('sameJson libs/api/src/json.ts:12', 3, 1_215),
            share('(garbage collector)', 2.9, 1_175),
          ],
          topPackages: [share('node:internal', 30.2, 12_231), share('libs/quota', 12, 4_860)],
        },
      },
      apiServer: {
        'end-to-end/host-apiserver-with-webhook': {
          durationSeconds: 15,
          cpuSeconds: 16.8,
          topFunctions: [{ name: 'runtime.mallocgc', percent: 7.32 }],
        },
      },
    },
  } as unknown as BenchReport;

  it("README's sentence: the host's CPU per create and per claim, then the webhook's busy time and top three functions", () => {
    expect(readmeProfile(run, profiledRun)).toBe(
      'Where the CPU went ([profiles](docs/development/bench.md#what-the-profile-said)): a binding create cost ' +
        'the Karmada API server 16.2 ms of CPU with us, 4.1 ms without; each claim is a status write (5.2 ms with 10 ' +
        'entries, 18.5 ms with 100 entries); the webhook alone was busy 40.5 s of 64.0 s, most in ' +
        '`writeUtf8String` 10.0 %, `parse` 5.5 %, `sameJson` 3.0 %.',
    );
  });

  it('leaves out what a failed scenario did not measure', () => {
    expect(readmeProfile({ ...run, endToEnd: { error: 'no binaries' } }, profiledRun)).toMatch(
      /^Where the CPU went \(\[profiles\]\([^)]*\)\): each claim is a status write/,
    );
  });

  it("bench.md's section: how it was run, then each profile's busy time, packages and top functions", () => {
    const section = renderProfile(profiledRun).split('\n');
    expect(section[0]).toBe('### What the profile said');
    expect(section[2]).toMatch(
      /^`npm run bench -- --profile --only webhookAlone,endToEnd` \(2026-11-26, abc1234, the same code as the figures above\)/,
    );
    expect(section).toEqual(
      expect.arrayContaining([
        '#### webhook-alone/webhook-alone: busy 40.5 s of 64.0 s',
        'By package: node:internal 30.2 %, libs/quota 12.0 %.',
        '| 10.0 % | 4,050 ms | `writeUtf8String` |',
        '| 3.0 % | 1,215 ms | `sameJson libs/api/src/json.ts:12` |',
        '#### end-to-end/host-apiserver-with-webhook (Go): 16.8 s of CPU in 15.0 s',
        '| 7.3 % | 1,230 ms | `runtime.mallocgc` |',
      ]),
    );
  });
});
