import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createServingCertificate } from '../../../tools/federation/src/index.js';
import { reuseConnections } from './reuse-connections.js';

describe('reuseConnections', () => {
  let dir: string;
  let server: Server;
  let url: string;
  let caPem: string;
  let connections = 0;
  let silent = false;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reuse-connections-'));
    const tls = await createServingCertificate(dir, 'apiserver');
    caPem = tls.caPem;
    server = createServer(
      { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
      (req, res) => {
        if (silent) return; // as a server whose machine is gone: the request is never answered
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ major: '1', minor: '34', gitVersion: req.headers.authorization ?? '' }));
      },
    );
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const kubeConfig = () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'karmada-apiserver', server: url, caData: Buffer.from(caPem).toString('base64') }],
      users: [{ name: 'admin', token: 'secret-token' }],
      contexts: [{ name: 'karmada-apiserver', cluster: 'karmada-apiserver', user: 'admin' }],
      currentContext: 'karmada-apiserver',
    });
    return kc;
  };

  test.each([
    ['as client-node does: a TLS connection per call', (kc: k8s.KubeConfig) => kc, 3],
    ['shared: one TLS connection for every call', reuseConnections, 1],
  ])('%s', async (_what, wrap, expected) => {
    connections = 0;
    const api = wrap(kubeConfig()).makeApiClient(k8s.VersionApi);
    for (let i = 0; i < 3; i++) {
      // The server CA is still verified and the credentials still sent.
      expect((await api.getCode()).gitVersion).toBe('Bearer secret-token');
    }
    expect(connections).toBe(expected);
  });

  test('a call left unanswered is given up after the request timeout, and the next one opens a new connection', async () => {
    connections = 0;
    const api = reuseConnections(kubeConfig(), { requestTimeoutMs: 300 }).makeApiClient(k8s.VersionApi);
    await api.getCode();
    silent = true;
    try {
      const started = Date.now();
      await expect(api.getCode()).rejects.toMatchObject({ name: 'AbortError' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    } finally {
      silent = false;
    }
    expect((await api.getCode()).gitVersion).toBe('Bearer secret-token');
    expect(connections).toBe(2);
  });

  test('a new connection when the TLS settings change, none when only the token does', async () => {
    connections = 0;
    const kc = reuseConnections(kubeConfig());
    const api = kc.makeApiClient(k8s.VersionApi);
    await api.getCode();
    (kc.users[0] as { token?: string }).token = 'rotated-token';
    expect((await api.getCode()).gitVersion).toBe('Bearer rotated-token');
    expect(connections).toBe(1);
    // As after a CA rotation: the settings differ, so the old connection must not be reused.
    (kc.clusters[0] as { caData?: string }).caData = Buffer.from(`${caPem}\n${caPem}`).toString('base64');
    await api.getCode();
    await api.getCode();
    expect(connections).toBe(2);
  });
});
