import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { Redis } from 'ioredis';
import { KARMADA_QUOTA, RESOURCE_BINDING } from '#api';
import {
  ensureBinaries,
  Federation,
  freePort,
  kubeConfigFor,
  probe,
  repoRoot,
  SERVICES,
  startServices,
  waitFor,
  type RunningService,
} from '../tools/federation/src/index.js';
import { eventually, testRedisUrl, uniqueName, usageCounted } from './support/federation.js';
import { binding, karmadaQuota } from './support/fixtures.js';

/**
 * What the chart ships for monitoring, against the real thing: the product's services on a
 * federation of their own, scraped by a real Prometheus (Debian's `prometheus` package) loading the
 * chart's rule file; every query of the chart's Grafana dashboard must return data, and every rule
 * must evaluate. docs/operating/monitoring.md.
 */
const REDIS_URL = testRedisUrl(5);
const chart = join(repoRoot(), 'charts', 'karmada-quota');
const RULES_FILE = join(chart, 'files', 'prometheus-rules.yaml');
const DASHBOARD_FILE = join(chart, 'files', 'grafana-dashboard.json');

interface RuleFile {
  groups: {
    name: string;
    rules: { alert: string; expr: string; annotations?: { summary?: string; description?: string } }[];
  }[];
}
interface Dashboard {
  templating: { list: { name: string; type: string; definition?: string }[] };
  panels: { title: string; targets: { expr: string }[] }[];
}
interface RenderedObject {
  kind: string;
  metadata: { labels: Record<string, string> };
  spec?: unknown;
  data?: Record<string, string>;
}
const rules = (yaml.load(readFileSync(RULES_FILE, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

/** Debian's prometheus package puts both here; CI installs it (apt-get install prometheus). */
function prometheusBinary(name: 'prometheus' | 'promtool'): string {
  const path = `/usr/bin/${name}`;
  if (!existsSync(path))
    throw new Error(
      `${path} not found: install Prometheus (apt-get install -y --no-install-recommends prometheus)`,
    );
  return path;
}

describe('the chart rule file, by promtool', () => {
  const dir = mkdtempSync(join(tmpdir(), 'karmada-quota-promtool-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const promtool = (...args: string[]) =>
    spawnSync(prometheusBinary('promtool'), args, { encoding: 'utf8', cwd: dir });

  test('passes promtool check rules', () => {
    const checked = promtool('check', 'rules', RULES_FILE);
    expect(checked.stderr).toBe('');
    expect(checked.status).toBe(0);
    expect(checked.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  test('KarmadaQuotaAlmostFull fires after 15 minutes above 90 %, per quota and resource, not at 90 %', () => {
    // One quota fills up at minute 5, reported by two reconciler replicas (one alert still); another
    // stays at exactly 90 %.
    const series = (quota: string, values: string, pod = 'a') => ({
      series: `karmada_quota_usage_ratio{namespace="team-a",quota="${quota}",resource="cpu",pod="${pod}"}`,
      values,
    });
    const labels = { namespace: 'team-a', quota: 'full', resource: 'cpu' };
    const { annotations } = rules.find((r) => r.alert === 'KarmadaQuotaAlmostFull')!;
    const render = (template: string) =>
      template
        .replaceAll('{{ $labels.namespace }}', labels.namespace)
        .replaceAll('{{ $labels.quota }}', labels.quota)
        .replaceAll('{{ $labels.resource }}', labels.resource)
        .replaceAll('{{ $value | humanizePercentage }}', '95%');
    writeFileSync(
      join(dir, 'almost-full.test.yaml'),
      yaml.dump({
        rule_files: [RULES_FILE],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: [
              series('full', '0.5x4 0.95x30'),
              series('full', '0.5x4 0.95x30', 'b'),
              series('at-ninety', '0.9x34'),
            ],
            alert_rule_test: [
              { eval_time: '15m', alertname: 'KarmadaQuotaAlmostFull', exp_alerts: [] },
              {
                eval_time: '21m',
                alertname: 'KarmadaQuotaAlmostFull',
                exp_alerts: [
                  {
                    exp_labels: { severity: 'warning', ...labels },
                    exp_annotations: {
                      summary: render(annotations!.summary!),
                      description: render(annotations!.description!),
                    },
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    const tested = promtool('test', 'rules', 'almost-full.test.yaml');
    expect(tested.stdout + tested.stderr).toContain('SUCCESS');
    expect(tested.status).toBe(0);
  });
});

describe('the chart monitoring templates', () => {
  test('ship the rule file and the dashboard as they are, only when enabled', async () => {
    const { helm: helmPath } = await ensureBinaries();
    const helm = (...values: string[]) => {
      const out = spawnSync(
        helmPath,
        [
          'template',
          'kq',
          chart,
          '--show-only',
          'templates/monitoring.yaml',
          ...values.flatMap((v) => ['--set', v]),
        ],
        { encoding: 'utf8' },
      );
      return { status: out.status, docs: yaml.loadAll(out.stdout).filter(Boolean) as RenderedObject[] };
    };
    expect(helm().docs).toEqual([]); // off by default
    const { status, docs } = helm(
      'monitoring.serviceMonitor.enabled=true',
      'monitoring.prometheusRule.enabled=true',
      'monitoring.dashboard.enabled=true',
    );
    expect(status).toBe(0);
    const ofKind = (kind: string) => docs.filter((d) => d.kind === kind);
    expect(ofKind('ServiceMonitor').map((d) => d.metadata.labels['app.kubernetes.io/component'])).toEqual([
      ...SERVICES,
    ]);
    expect(ofKind('PrometheusRule')[0]!.spec).toEqual(yaml.load(readFileSync(RULES_FILE, 'utf8')));
    const configMap = ofKind('ConfigMap')[0]!;
    expect(configMap.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(configMap.data!['karmada-quota.json']!)).toEqual(dashboard);
  });
});

describe('the dashboard and the rules on a real Prometheus', () => {
  let stateDir: string;
  let federation: Federation;
  let services: RunningService[];
  let prometheusUrl: string;
  const namespace = uniqueName('mon');
  const quotaName = 'team';

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'karmada-quota-monitoring-'));
    federation = await Federation.start({ stateDir, members: 1 });
    const redis = new Redis(REDIS_URL);
    await redis.flushdb();
    redis.disconnect();
    services = await startServices(federation, { redisUrl: REDIS_URL });
    prometheusUrl = await startPrometheus(federation, stateDir, services);
  }, 300_000);

  afterAll(async () => {
    await federation?.stop(); // stops Prometheus too: it is one of the federation's processes
    if (process.env.KEEP_TEST_STATE !== '1') rmSync(stateDir, { recursive: true, force: true });
  });

  const query = async (
    expr: string,
  ): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
    const res = await fetch(`${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as { status: string; error?: string; data: { result: never[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result;
  };
  const api = async <T>(path: string): Promise<T> =>
    ((await (await fetch(`${prometheusUrl}${path}`)).json()) as { data: T }).data;

  test('a quota and a binding: every dashboard query has data, the rules evaluate, the 90 % alert is pending', async () => {
    const host = kubeConfigFor(federation.info.host);
    for (const endpoint of [federation.info.host, ...federation.info.members])
      await kubeConfigFor(endpoint)
        .makeApiClient(k8s.CoreV1Api)
        .createNamespace({ body: { metadata: { name: namespace } } });
    const objects = host.makeApiClient(k8s.CustomObjectsApi);
    await objects.createNamespacedCustomObject({
      group: KARMADA_QUOTA.group,
      version: KARMADA_QUOTA.version,
      plural: KARMADA_QUOTA.plural,
      namespace,
      body: karmadaQuota(namespace, quotaName, { cpu: '1' }),
    });
    await usageCounted(host, namespace, quotaName);
    await objects.createNamespacedCustomObject({
      group: RESOURCE_BINDING.group,
      version: RESOURCE_BINDING.version,
      plural: RESOURCE_BINDING.plural,
      namespace,
      body: binding(namespace, 'web', { replicas: 1, cpu: '1' }),
    });

    // The reservation fills the quota: (0 used + 1 reserved) / 1.
    await eventually(
      () => query(`karmada_quota_usage_ratio{namespace="${namespace}",quota="${quotaName}",resource="cpu"}`),
      (result) => result.length > 0 && result.every((s) => Number(s.value[1]) === 1),
    );

    // The dashboard's variables offer the quota (label_values(...) is Grafana's: the series API).
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      const [, metric, label] = /^label_values\((.+), (\w+)\)$/.exec(variable.definition!)!;
      const values = await api<string[]>(
        `/api/v1/label/${label}/values?${new URLSearchParams({ 'match[]': substitute(metric!) })}`,
      );
      expect(values).toContain(label === 'namespace' ? namespace : quotaName);
    }
    // Every panel query returns data (rates need two scrapes: eventually).
    const exprs = dashboard.panels.flatMap((p) =>
      p.targets.map((t) => ({ panel: p.title, expr: substitute(t.expr) })),
    );
    expect(exprs.length).toBeGreaterThan(10);
    for (const { panel, expr } of exprs) {
      const result = await eventually(
        () => query(expr),
        (r) => r.length > 0,
        30_000,
      ).catch((err: unknown) => {
        throw new Error(`dashboard panel "${panel}": ${expr} returned no data: ${String(err)}`);
      });
      expect(result.length).toBeGreaterThan(0);
    }

    // Every rule parses and evaluates, in Prometheus itself and as a query.
    for (const rule of rules) await query(rule.expr);
    const loaded = await eventually(
      () =>
        api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules'),
      (data) => data.groups.flatMap((g) => g.rules).every((r) => r.health === 'ok'),
    );
    expect(loaded.groups.flatMap((g) => g.rules.map((r) => r.name)).sort()).toEqual(
      rules.map((r) => r.alert).sort(),
    );
    const alerts = await eventually(
      () => api<{ alerts: { labels: Record<string, string>; state: string }[] }>('/api/v1/alerts'),
      (data) => data.alerts.some((a) => a.labels.alertname === 'KarmadaQuotaAlmostFull'),
    );
    expect(alerts.alerts.filter((a) => a.labels.alertname === 'KarmadaQuotaAlmostFull')).toEqual([
      {
        labels: {
          alertname: 'KarmadaQuotaAlmostFull',
          severity: 'warning',
          namespace,
          quota: quotaName,
          resource: 'cpu',
        },
        state: 'pending',
        annotations: expect.any(Object),
        activeAt: expect.any(String),
        value: expect.any(String),
      },
    ]);

    // A deleted quota's series go with it.
    await objects.deleteNamespacedCustomObject({
      group: KARMADA_QUOTA.group,
      version: KARMADA_QUOTA.version,
      plural: KARMADA_QUOTA.plural,
      namespace,
      name: quotaName,
    });
    await eventually(
      () =>
        query(
          `karmada_quota_hard{namespace="${namespace}"} or karmada_quota_waiting_changes{namespace="${namespace}"}`,
        ),
      (result) => result.length === 0,
    );
  }, 240_000);

  test("Node's process metrics keep their standard names, labelled with the component", async () => {
    for (const component of SERVICES) {
      for (const metric of ['process_cpu_seconds_total', 'nodejs_heap_size_used_bytes']) {
        const result = await eventually(
          () => query(`${metric}{component="${component}"}`),
          (r) => r.length > 0,
          30_000,
        );
        expect(result).toHaveLength(1);
      }
    }
    expect(await query('{__name__=~"karmada_quota_(process|nodejs)_.*"}')).toEqual([]);
  });

  /** The dashboard's variables as a person would pick them: this test's namespace and quota. */
  function substitute(expr: string): string {
    return expr.replaceAll('$namespace', namespace).replaceAll('$quota', quotaName);
  }
});

/**
 * Prometheus on a free port scraping every service each second and evaluating the chart's rules
 * each second; one of the federation's processes, so stopping the federation stops it.
 */
async function startPrometheus(
  federation: Federation,
  stateDir: string,
  services: RunningService[],
): Promise<string> {
  const dir = join(stateDir, 'prometheus');
  mkdirSync(join(dir, 'data'), { recursive: true });
  const scrapeConfigs = services.map((service) => {
    const url = new URL(service.url);
    const tls = url.protocol === 'https:';
    if (tls) writeFileSync(join(dir, `${service.name}-ca.pem`), service.caPem!);
    return {
      job_name: service.name,
      scheme: tls ? 'https' : 'http',
      // As the chart's ServiceMonitors: the quota gauges' `namespace` is the quota's.
      honor_labels: true,
      ...(tls ? { tls_config: { ca_file: join(dir, `${service.name}-ca.pem`) } } : {}),
      static_configs: [{ targets: [url.host] }],
    };
  });
  writeFileSync(
    join(dir, 'prometheus.yml'),
    yaml.dump({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [RULES_FILE],
      scrape_configs: scrapeConfigs,
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = federation.launch(
    'prometheus',
    prometheusBinary('prometheus'),
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    process.env,
  );
  await waitFor(
    `Prometheus to scrape every service at ${url}`,
    async () => {
      if (!proc.running) throw new Error(`prometheus exited; its log:\n${proc.logTail()}`);
      if ((await probe(`${url}/-/ready`)) !== 200) return false;
      const targets = (await (await fetch(`${url}/api/v1/targets`)).json()) as {
        data: { activeTargets: { health: string; lastError: string }[] };
      };
      const active = targets.data.activeTargets;
      return active.length === services.length && active.every((t) => t.health === 'up');
    },
    { timeoutMs: 60_000, describe: () => proc.logTail() },
  );
  return url;
}
