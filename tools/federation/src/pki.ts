import 'reflect-metadata'; // @peculiar/x509's dependency injection needs it
import { webcrypto } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as ReturnType<typeof x509.cryptoProvider.get>);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const VALIDITY_MS = 365 * 24 * 3600 * 1000;

export interface ServingCertificate {
  /** PEM of the CA that signed the serving certificate: the webhook's caBundle. */
  caPem: string;
  /** The same, as a file (the webhook replicas' peer CA, ADMISSION_PEER_CA_FILE). */
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A client certificate and the CA that signed it (the one its verifier trusts), as PEM files. */
export interface ClientCertificate {
  caFile: string;
  certFile: string;
  keyFile: string;
}

const pem = (der: ArrayBuffer, label: string): string => x509.PemConverter.encode(der, label);

interface Ca {
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
}

async function createCa(commonName: string): Promise<Ca> {
  const now = new Date();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${commonName} CA`,
    notBefore: now,
    notAfter: new Date(now.getTime() + VALIDITY_MS),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  return { cert, keys };
}

/** A leaf certificate `ca` signs for `commonName`, written as PEM to certFile and keyFile (0600). */
async function issue(
  ca: Ca,
  commonName: string,
  extensions: x509.Extension[],
  files: { certFile: string; keyFile: string },
): Promise<void> {
  const now = new Date();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `CN=${commonName}`,
    issuer: ca.cert.subject,
    notBefore: now,
    notAfter: new Date(now.getTime() + VALIDITY_MS),
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ...extensions,
    ],
  });
  writeFileSync(files.certFile, cert.toString('pem'));
  writeFileSync(
    files.keyFile,
    pem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY'),
    {
      mode: 0o600,
    },
  );
}

/**
 * A throwaway CA and a serving certificate it signs for `127.0.0.1` and `localhost` (the API server
 * calls webhooks registered by URL on those), written as tls.crt / tls.key / ca.crt into `dir`. It
 * is a client certificate too, as Helm's genSignedCert makes it: webhook replicas present it to each
 * other (ADMISSION_MODE=owner).
 */
export async function createServingCertificate(dir: string, commonName: string): Promise<ServingCertificate> {
  const ca = await createCa(commonName);
  const files = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  await issue(
    ca,
    commonName,
    [
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'dns', value: 'localhost' },
      ]),
    ],
    files,
  );
  const caPem = ca.cert.toString('pem');
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, caPem);
  return { caPem, caFile, ...files };
}

/**
 * A throwaway CA and a client certificate it signs for `commonName` (what an API server presents to
 * the webhooks it calls), written as ca.crt, client.crt and client.key into `dir`.
 */
export async function createClientCertificate(dir: string, commonName: string): Promise<ClientCertificate> {
  return (await createClientCertificates(dir, commonName, [commonName]))[0]!;
}

/**
 * A throwaway CA named `caName` and a client certificate it signs for each of `commonNames`: ca.crt,
 * then client.crt and client.key for the first, client-<name>.crt and .key for the others.
 */
export async function createClientCertificates(
  dir: string,
  caName: string,
  commonNames: readonly string[],
): Promise<ClientCertificate[]> {
  const ca = await createCa(caName);
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, ca.cert.toString('pem'));
  const certificates: ClientCertificate[] = [];
  for (const [i, commonName] of commonNames.entries()) {
    const stem = i === 0 ? 'client' : `client-${commonName}`;
    const files = { certFile: join(dir, `${stem}.crt`), keyFile: join(dir, `${stem}.key`) };
    await issue(
      ca,
      commonName,
      [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
      files,
    );
    certificates.push({ caFile, ...files });
  }
  return certificates;
}
