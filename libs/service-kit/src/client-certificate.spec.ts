import { judgeClientCertificate, type PeerCertificate } from './client-certificate.js';

const none: PeerCertificate = { presented: false, authorized: false };
const verified: PeerCertificate = { presented: true, authorized: true };
const foreign: PeerCertificate = {
  presented: true,
  authorized: false,
  authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
};

describe('judgeClientCertificate', () => {
  test.each([
    ['/validate/resourcebindings', verified, true],
    ['/validate/resourcebindings', none, 401],
    ['/validate/resourcebindings', foreign, 403],
    ['/validate/karmadaquotas?timeout=10s', none, 401],
    ['/readyz', none, true],
    ['/healthz', foreign, true],
    ['/metrics', none, true],
    ['/metrics?x=1', none, true],
    // Only the exact open paths: anything else (unknown, encoded, nested) needs the certificate.
    ['/readyz/../validate/resourcebindings', none, 401],
    ['/%76alidate/resourcebindings', none, 401],
    ['/', none, 401],
    ['/metricsx', none, 401],
  ])('%s with %j: %s', (url, peer, expected) => {
    const verdict = judgeClientCertificate(url, peer);
    expect(verdict.allowed ? true : verdict.statusCode).toBe(expected);
  });

  const names = ['karmada-apiserver', 'host-apiserver'];
  test.each([
    ['/validate/resourcebindings', { ...verified, commonName: 'host-apiserver' }, true],
    ['/validate/resourcebindings', { ...verified, commonName: 'karmada-controller-manager' }, 403],
    ['/validate/resourcebindings', { ...verified, commonName: '' }, 403],
    ['/validate/resourcebindings', verified, 403], // a name never read is no name
    ['/validate/resourcebindings', { ...foreign, commonName: 'host-apiserver' }, 403],
    ['/validate/resourcebindings', none, 401],
    ['/readyz', { ...verified, commonName: 'someone' }, true],
  ])('with allowed names: %s with %j: %s', (url, peer, expected) => {
    const verdict = judgeClientCertificate(url, peer, names);
    expect(verdict.allowed ? true : verdict.statusCode).toBe(expected);
  });

  test('a name not allowed is refused naming it and the allowed ones', () => {
    const verdict = judgeClientCertificate(
      '/validate/resourcebindings',
      { ...verified, commonName: 'karmada-controller-manager' },
      names,
    );
    expect(verdict).toMatchObject({
      message: expect.stringMatching(
        /^client certificate CN "karmada-controller-manager" is not one of CLIENT_CERT_ALLOWED_NAMES \(karmada-apiserver, host-apiserver\); only the API server/,
      ),
    });
  });

  test('the refusals say what is missing and how the API server presents a certificate', () => {
    const noCertificate = judgeClientCertificate('/validate/resourcebindings', none);
    expect(noCertificate).toMatchObject({ message: expect.stringMatching(/^no client certificate: /) });
    const wrongCa = judgeClientCertificate('/validate/resourcebindings', foreign);
    expect(wrongCa).toMatchObject({
      message: expect.stringContaining(
        '(UNABLE_TO_VERIFY_LEAF_SIGNATURE): it is not from the CA in CLIENT_CA_FILE',
      ),
    });
    for (const verdict of [noCertificate, wrongCa])
      expect(verdict).toMatchObject({
        message: expect.stringContaining('admission configuration names a kubeconfig'),
      });
  });
});
