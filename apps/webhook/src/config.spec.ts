import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWebhookConfig, peerAddress } from './config.js';

describe('the webhook configuration', () => {
  let dir: string;
  let tls: { TLS_CERT_FILE: string; TLS_KEY_FILE: string };
  /** What owner mode needs beyond TLS: the peers' CA and an address they reach. */
  let owner: NodeJS.ProcessEnv;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'webhook-config-'));
    tls = { TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key') };
    writeFileSync(tls.TLS_CERT_FILE, '');
    writeFileSync(tls.TLS_KEY_FILE, '');
    owner = { ADMISSION_MODE: 'owner', ADMISSION_PEER_CA_FILE: join(dir, 'ca.crt'), POD_IP: '10.0.0.7' };
    writeFileSync(owner.ADMISSION_PEER_CA_FILE!, '-----BEGIN CERTIFICATE-----\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each([
    [undefined, 'batched'],
    ['batched', 'batched'],
    ['cas-per-admission', 'cas-per-admission'],
    ['owner', 'owner'],
  ])('ADMISSION_MODE=%s selects %s', (mode, expected) => {
    expect(loadWebhookConfig({ ...tls, ...owner, ADMISSION_MODE: mode }).ADMISSION_MODE).toBe(expected);
  });

  test.each([
    [{}, undefined, '10.0.0.7:8444'],
    [{ ADMISSION_PEER_PORT: '9444' }, undefined, '10.0.0.7:9444'],
    [{ POD_IP: 'fd00::7' }, undefined, '[fd00::7]:8444'],
    [{ POD_IP: '', BIND_ADDRESS: '127.0.0.1' }, undefined, '127.0.0.1:8444'],
    [{ ADMISSION_PEER_CA_FILE: '' }, 'ADMISSION_MODE=owner needs ADMISSION_PEER_CA_FILE', undefined],
    [
      { POD_IP: '', BIND_ADDRESS: '0.0.0.0' },
      'ADMISSION_MODE=owner needs POD_IP (or a BIND_ADDRESS other than 0.0.0.0)',
      undefined,
    ],
    [{ ADMISSION_PEER_PORT: '0' }, 'ADMISSION_PEER_PORT="0": must be between 1 and 65535', undefined],
    [{ POD_IP: 'web-0' }, 'POD_IP="web-0": must be an IP address', undefined],
    [
      { BIND_ADDRESS: '127.0.0.1' },
      'with POD_IP=10.0.0.7 needs a BIND_ADDRESS other pods reach, not 127.0.0.1',
      undefined,
    ],
  ])('owner mode with %j: refused for %s, else peers reach it at %s', (env, error, address) => {
    const load = () => loadWebhookConfig({ ...tls, ...owner, ...env });
    if (error !== undefined) return expect(load).toThrow(error);
    expect(peerAddress(load())).toBe(address);
  });

  test('LEASE_NAMESPACE: karmada-quota-system by default; set, that namespace; empty is refused', () => {
    expect(loadWebhookConfig(tls).LEASE_NAMESPACE).toBe('karmada-quota-system');
    expect(loadWebhookConfig({ ...tls, LEASE_NAMESPACE: 'quota' }).LEASE_NAMESPACE).toBe('quota');
    expect(() => loadWebhookConfig({ ...tls, LEASE_NAMESPACE: '' })).toThrow('LEASE_NAMESPACE=""');
  });

  test('SCHEDULER_ESTIMATOR_PORT: unset is off; set, a port', () => {
    expect(loadWebhookConfig(tls).SCHEDULER_ESTIMATOR_PORT).toBeUndefined();
    expect(loadWebhookConfig({ ...tls, SCHEDULER_ESTIMATOR_PORT: '10352' }).SCHEDULER_ESTIMATOR_PORT).toBe(
      10352,
    );
    expect(() => loadWebhookConfig({ ...tls, SCHEDULER_ESTIMATOR_PORT: '70000' })).toThrow(
      'SCHEDULER_ESTIMATOR_PORT="70000": must be between 1 and 65535',
    );
  });

  test('SCHEDULER_ESTIMATOR_FORWARD_TO: unset is off; set, an address, {member} standing for the member', () => {
    expect(loadWebhookConfig(tls).SCHEDULER_ESTIMATOR_FORWARD_TO).toBeUndefined();
    const karmadas = 'karmada-scheduler-estimator-{member}.karmada-system.svc.cluster.local:10352';
    expect(
      loadWebhookConfig({ ...tls, SCHEDULER_ESTIMATOR_FORWARD_TO: karmadas }).SCHEDULER_ESTIMATOR_FORWARD_TO,
    ).toBe(karmadas);
    expect(
      loadWebhookConfig({ ...tls, SCHEDULER_ESTIMATOR_FORWARD_TO: 'estimator.example.com:10352' })
        .SCHEDULER_ESTIMATOR_FORWARD_TO,
    ).toBe('estimator.example.com:10352');
    expect(() =>
      loadWebhookConfig({ ...tls, SCHEDULER_ESTIMATOR_FORWARD_TO: 'https://{member}:10352' }),
    ).toThrow('must be <host>:<port>');
  });

  test('CLIENT_CA_FILE: unset or empty is off; set, it must be a file holding a PEM certificate', () => {
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(loadWebhookConfig(tls).CLIENT_CA_FILE).toBeUndefined();
    expect(loadWebhookConfig({ ...tls, CLIENT_CA_FILE: '' }).CLIENT_CA_FILE).toBeUndefined();
    expect(loadWebhookConfig({ ...tls, CLIENT_CA_FILE: ca }).CLIENT_CA_FILE).toBe(ca);
    const missing = join(dir, 'missing.crt');
    expect(() => loadWebhookConfig({ ...tls, CLIENT_CA_FILE: missing })).toThrow(
      `CLIENT_CA_FILE=${JSON.stringify(missing)}: no such file`,
    );
    expect(() => loadWebhookConfig({ ...tls, CLIENT_CA_FILE: tls.TLS_KEY_FILE })).toThrow(
      "holds no PEM certificate: give the CA of the API server's webhook client certificate",
    );
    expect(() => loadWebhookConfig({ ...tls, CLIENT_CA_FILE: dir })).toThrow('holds no PEM certificate');
  });

  test('CLIENT_CERT_ALLOWED_NAMES: a comma-separated list, only with CLIENT_CA_FILE', () => {
    const ca = join(dir, 'names-ca.crt');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(loadWebhookConfig({ ...tls, CLIENT_CA_FILE: ca }).CLIENT_CERT_ALLOWED_NAMES).toEqual([]);
    expect(
      loadWebhookConfig({
        ...tls,
        CLIENT_CA_FILE: ca,
        CLIENT_CERT_ALLOWED_NAMES: ' karmada-apiserver, ,host ',
      }).CLIENT_CERT_ALLOWED_NAMES,
    ).toEqual(['karmada-apiserver', 'host']);
    expect(() => loadWebhookConfig({ ...tls, CLIENT_CERT_ALLOWED_NAMES: 'karmada-apiserver' })).toThrow(
      'CLIENT_CERT_ALLOWED_NAMES is set without CLIENT_CA_FILE',
    );
  });

  test('an unknown ADMISSION_MODE is refused, naming the choices', () => {
    expect(() => loadWebhookConfig({ ...tls, ADMISSION_MODE: 'fast' })).toThrow(
      'ADMISSION_MODE="fast": must be batched, cas-per-admission or owner',
    );
  });

  test.each([
    [{}, undefined],
    [
      {
        ADMISSION_LEASE_DURATION_SECONDS: '4',
        ADMISSION_LEASE_RENEW_DEADLINE_SECONDS: '3',
        ADMISSION_LEASE_RETRY_SECONDS: '1',
      },
      undefined,
    ],
    [
      { ADMISSION_LEASE_DURATION_SECONDS: '10' },
      'ADMISSION_LEASE_RENEW_DEADLINE_SECONDS (10) < ADMISSION_LEASE_DURATION_SECONDS (10)',
    ],
    [
      { ADMISSION_LEASE_RETRY_SECONDS: '10' },
      'ADMISSION_LEASE_RETRY_SECONDS (10) < ADMISSION_LEASE_RENEW_DEADLINE_SECONDS (10)',
    ],
  ])('the admission Lease timings %j: retry < renew deadline < duration (%s)', (env, error) => {
    const load = () => loadWebhookConfig({ ...tls, ...env });
    if (error === undefined) expect(load).not.toThrow();
    else expect(load).toThrow(error);
  });
});
