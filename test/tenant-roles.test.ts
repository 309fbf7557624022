import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import {
  APPLIED_CLUSTER_KARMADA_QUOTA,
  CLUSTER_KARMADA_QUOTA,
  KARMADA_QUOTA,
  type AppliedClusterKarmadaQuota,
  type KarmadaQuota,
} from '#api';
import { ensureBinaries, repoRoot } from '../tools/federation/src/index.js';
import { createNamespace, eventually, federation, uniqueName } from './support/federation.js';
import { karmadaQuota } from './support/fixtures.js';

/**
 * A KarmadaQuota is the limit a federation admin sets for a team, so the team must not change it,
 * as Kubernetes' edit and admin only read ResourceQuotas. The chart's roles for people, rendered by
 * helm, are applied to the host; every call below goes through the host API server as the user
 * (kubectl --as: Impersonate-User), so its RBAC and the clusterrole-aggregation controller decide.
 */
interface ClusterRole {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  rules?: object[];
}
interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

const KQ = `${KARMADA_QUOTA.plural}.${KARMADA_QUOTA.group}`;
const ACKQ = `${APPLIED_CLUSTER_KARMADA_QUOTA.plural}.${APPLIED_CLUSTER_KARMADA_QUOTA.group}`;
const AGGREGATE_TO = 'rbac.authorization.k8s.io/aggregate-to-';
const TEAM_ROLES = ['view', 'edit', 'admin'];

describe("the chart's roles for people, on the host API server", () => {
  const fed = federation();
  const team = uniqueName('kq-team');
  const quotaAdminNamespace = uniqueName('kq-set-by-admin');
  const release = uniqueName('kqt'); // its ClusterRoles never meet another test's
  const helmHome = mkdtempSync(join(tmpdir(), 'karmada-quota-tenant-roles-'));
  const quotaAdminRole = `${release}-karmada-quota-admin`;
  const userOf = (role: string) => `${release}-${role}-user`;
  const quotaAdmin = userOf('quota-admin');
  let roles: ClusterRole[] = [];

  const run = (command: string, args: string[], input?: string): Run =>
    spawnSync(command, args, {
      encoding: 'utf8',
      input,
      env: {
        ...process.env,
        HELM_CONFIG_HOME: join(helmHome, 'config'),
        HELM_CACHE_HOME: join(helmHome, 'cache'),
        HELM_DATA_HOME: join(helmHome, 'data'),
      },
    });
  /** kubectl on the host: as the cluster admin, or as `user` (impersonated, in system:authenticated). */
  const kubectl = (user: string | undefined, args: string[], input?: string): Run =>
    run(fed.kubectl, ['--kubeconfig', fed.host.kubeconfig, ...(user ? ['--as', user] : []), ...args], input);
  const ok = (result: Run): string => {
    if (result.status !== 0) throw new Error(`kubectl failed: ${result.stderr}`);
    return result.stdout;
  };
  const readQuota = (user: string | undefined, namespace: string, name: string): KarmadaQuota =>
    JSON.parse(ok(kubectl(user, ['get', KQ, name, '-n', namespace, '-o', 'json']))) as KarmadaQuota;
  const createQuota = (user: string | undefined, namespace: string, name: string, cpu: string): Run =>
    kubectl(user, ['create', '-f', '-'], JSON.stringify(karmadaQuota(namespace, name, { cpu })));

  /** Every write by which `user` could change the limits of `namespace`, given its quota `name`. */
  const writes = (user: string, namespace: string, name: string): [string, () => Run][] => [
    ['create', () => createQuota(user, namespace, `${name}-another`, '100')],
    [
      'update',
      () => {
        const quota = readQuota(undefined, namespace, name);
        quota.spec!.hard = { cpu: '1000' };
        return kubectl(user, ['replace', '-f', '-'], JSON.stringify(quota));
      },
    ],
    [
      'patch',
      () =>
        kubectl(user, [
          'patch',
          KQ,
          name,
          '-n',
          namespace,
          '--type=merge',
          '-p',
          '{"spec":{"hard":{"cpu":"999"}}}',
        ]),
    ],
    ['delete', () => kubectl(user, ['delete', KQ, name, '-n', namespace, '--wait=false'])],
    [
      'deletecollection',
      () =>
        kubectl(user, [
          'delete',
          '--raw',
          `/apis/${KARMADA_QUOTA.apiVersion}/namespaces/${namespace}/${KARMADA_QUOTA.plural}`,
        ]),
    ],
  ];
  /** A status write (only the webhook and the reconciler may make them). */
  const statusUpdate = (user: string, namespace: string, name: string): Run => {
    const quota = readQuota(undefined, namespace, name);
    quota.status = { ...quota.status, used: { cpu: '0' } };
    return kubectl(user, ['replace', '--subresource=status', '-f', '-'], JSON.stringify(quota));
  };
  const forbidden = (user: string, verb: string, resource: string, namespace: string) =>
    `User "${user}" cannot ${verb} resource "${resource}" in API group "${KARMADA_QUOTA.group}" in the namespace "${namespace}"`;

  beforeAll(async () => {
    const { helm } = await ensureBinaries(); // built and cached by `npm run kube:binaries`
    const rendered = run(helm, [
      'template',
      release,
      join(repoRoot(), 'charts', 'karmada-quota'),
      '--namespace',
      team,
      '--kube-version',
      fed.kubernetesVersion,
      '--show-only',
      'templates/karmada-apiserver.yaml',
    ]);
    if (rendered.status !== 0) throw new Error(`helm template failed: ${rendered.stderr}`);
    // The roles for people, of what the chart puts into the Karmada API server.
    roles = (yaml.loadAll(rendered.stdout) as (ClusterRole | null)[]).filter(
      (doc): doc is ClusterRole => doc?.kind === 'ClusterRole' && /-(view|admin)$/.test(doc.metadata.name),
    );
    expect(roles).toHaveLength(2);
    await createNamespace(fed.host, team);
    await createNamespace(fed.host, quotaAdminNamespace);
    ok(
      kubectl(
        undefined,
        ['apply', '--server-side', '--field-manager=tenant-roles-test', '-f', '-'],
        roles.map((role) => yaml.dump(role)).join('---\n'),
      ),
    );
    // A team's members, each bound to a built-in role in the team's namespace, as a cluster admin
    // binds them; a federation admin, bound to the chart's quota-admin role in its own.
    for (const role of TEAM_ROLES)
      ok(
        kubectl(undefined, [
          'create',
          'rolebinding',
          `${release}-${role}`,
          `--clusterrole=${role}`,
          `--user=${userOf(role)}`,
          '-n',
          team,
        ]),
      );
    ok(
      kubectl(undefined, [
        'create',
        'rolebinding',
        `${release}-quota-admin`,
        `--clusterrole=${quotaAdminRole}`,
        `--user=${quotaAdmin}`,
        '-n',
        quotaAdminNamespace,
      ]),
    );
    // Until the clusterrole-aggregation controller has copied every rule of the chart's roles into
    // the built-in ones, a refusal would prove nothing.
    await eventually(
      async () =>
        TEAM_ROLES.map((builtIn) => {
          const got = JSON.parse(
            ok(kubectl(undefined, ['get', 'clusterrole', builtIn, '-o', 'json'])),
          ) as ClusterRole;
          return roles
            .filter((role) => role.metadata.labels?.[`${AGGREGATE_TO}${builtIn}`] === 'true')
            .flatMap((role) => role.rules ?? [])
            .every((rule) => got.rules?.some((r) => JSON.stringify(r) === JSON.stringify(rule)));
        }),
      (aggregated) => aggregated.every(Boolean),
    );
  });

  afterAll(() => {
    kubectl(undefined, ['delete', 'clusterrole', ...roles.map((r) => r.metadata.name), '--ignore-not-found']);
    kubectl(undefined, [
      'delete',
      'namespace',
      team,
      quotaAdminNamespace,
      '--wait=false',
      '--ignore-not-found',
    ]);
    rmSync(helmHome, { recursive: true, force: true });
  });

  test.each(TEAM_ROLES)(
    "a team member bound to %s reads the namespace's KarmadaQuotas, and every write of them is refused",
    (role) => {
      const name = `limit-for-${role}`;
      ok(createQuota(undefined, team, name, '10'));
      const user = userOf(role);
      expect(readQuota(user, team, name).spec?.hard).toEqual({ cpu: '10' });
      expect(ok(kubectl(user, ['get', KQ, '-n', team, '-o', 'name']))).toContain(`/${name}\n`);
      const refusals = [
        ...writes(user, team, name).map(([verb, write]) => [verb, KARMADA_QUOTA.plural, write] as const),
        ['update', `${KARMADA_QUOTA.plural}/status`, () => statusUpdate(user, team, name)] as const,
      ];
      for (const [verb, resource, write] of refusals) {
        const refused = write();
        expect({ verb, resource, status: refused.status, stderr: refused.stderr }).toEqual({
          verb,
          resource,
          status: 1,
          stderr: expect.stringContaining(forbidden(user, verb, resource, team)),
        });
      }
      const after = readQuota(undefined, team, name);
      expect([after.spec?.hard, after.metadata?.deletionTimestamp]).toEqual([{ cpu: '10' }, undefined]);
      expect(kubectl(undefined, ['get', KQ, `${name}-another`, '-n', team]).status).toBe(1);
      // Only in the namespace it is bound in.
      expect(kubectl(user, ['get', KQ, '-n', quotaAdminNamespace]).stderr).toContain(
        forbidden(user, 'list', KARMADA_QUOTA.plural, quotaAdminNamespace),
      );
    },
  );

  /** A projection as the reconciler writes it (apps/reconciler applied-cluster-quotas.ts). */
  const applied = (namespace: string, name: string, cpu: string): AppliedClusterKarmadaQuota => ({
    apiVersion: APPLIED_CLUSTER_KARMADA_QUOTA.apiVersion,
    kind: APPLIED_CLUSTER_KARMADA_QUOTA.kind,
    metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'karmada-quota' } },
    spec: { hard: { cpu }, namespaceSelector: { matchLabels: { team: 'x' } } },
    status: { hard: { cpu }, used: { cpu: '1' }, namespaces: [{ namespace, used: { cpu: '1' } }] },
  });

  test.each(TEAM_ROLES)(
    `a team member bound to %s reads the ${CLUSTER_KARMADA_QUOTA.kind}s selecting the namespace there (AppliedClusterKarmadaQuotas), and writes none`,
    (role) => {
      const name = `shared-for-${role}`;
      for (const namespace of [team, quotaAdminNamespace])
        ok(kubectl(undefined, ['create', '-f', '-'], JSON.stringify(applied(namespace, name, '100'))));
      const user = userOf(role);
      const read = JSON.parse(
        ok(kubectl(user, ['get', ACKQ, name, '-n', team, '-o', 'json'])),
      ) as AppliedClusterKarmadaQuota;
      expect([read.spec.hard, read.status?.used]).toEqual([{ cpu: '100' }, { cpu: '1' }]);
      expect(ok(kubectl(user, ['get', 'ackq', '-n', team, '-o', 'name']))).toContain(`/${name}\n`);
      const refusals: [string, () => Run][] = [
        [
          'create',
          () => kubectl(user, ['create', '-f', '-'], JSON.stringify(applied(team, `${name}-2`, '1'))),
        ],
        [
          'patch',
          () =>
            kubectl(user, [
              'patch',
              ACKQ,
              name,
              '-n',
              team,
              '--type=merge',
              '-p',
              '{"spec":{"hard":{"cpu":"9"}}}',
            ]),
        ],
        ['delete', () => kubectl(user, ['delete', ACKQ, name, '-n', team, '--wait=false'])],
      ];
      for (const [verb, write] of refusals) {
        const refused = write();
        expect({ verb, status: refused.status, stderr: refused.stderr }).toEqual({
          verb,
          status: 1,
          stderr: expect.stringContaining(forbidden(user, verb, APPLIED_CLUSTER_KARMADA_QUOTA.plural, team)),
        });
      }
      // Not in another namespace: there the quotas selecting that one are its users' to read.
      expect(kubectl(user, ['get', ACKQ, name, '-n', quotaAdminNamespace]).stderr).toContain(
        forbidden(user, 'get', APPLIED_CLUSTER_KARMADA_QUOTA.plural, quotaAdminNamespace),
      );
    },
  );

  test(`a federation admin bound to <release>-karmada-quota-admin creates, updates, patches and deletes them, not their status`, () => {
    const name = 'limit';
    ok(createQuota(undefined, quotaAdminNamespace, name, '10'));
    expect(readQuota(quotaAdmin, quotaAdminNamespace, name).spec?.hard).toEqual({ cpu: '10' });
    expect(statusUpdate(quotaAdmin, quotaAdminNamespace, name).stderr).toContain(
      forbidden(quotaAdmin, 'update', `${KARMADA_QUOTA.plural}/status`, quotaAdminNamespace),
    );
    for (const [verb, write] of writes(quotaAdmin, quotaAdminNamespace, name)) {
      const done = write();
      expect({ verb, status: done.status, stderr: done.stderr }).toEqual({ verb, status: 0, stderr: '' });
      const hard = { update: { cpu: '1000' }, patch: { cpu: '999' } }[verb as 'update' | 'patch'];
      if (hard) expect(readQuota(quotaAdmin, quotaAdminNamespace, name).spec?.hard).toEqual(hard);
    }
    // The delete and the deletecollection took both quotas.
    expect(ok(kubectl(quotaAdmin, ['get', KQ, '-n', quotaAdminNamespace, '-o', 'name']))).toBe('');
    // Only in the namespace it is bound in.
    expect(createQuota(quotaAdmin, team, 'raised', '1000').stderr).toContain(
      forbidden(quotaAdmin, 'create', KARMADA_QUOTA.plural, team),
    );
  });
});
