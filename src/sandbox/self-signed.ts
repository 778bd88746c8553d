// A throwaway CA-less serving certificate for the kubelet emulator: self-signed, P-256, valid for
// the loopback names, so an agent can verify the emulator with the written CA file like a real kubelet.
import 'reflect-metadata'; // @peculiar/x509's DI container needs the Reflect polyfill loaded first
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

export interface ServingCert {
  certPem: string;
  keyPem: string;
}

// Node's webcrypto is the Crypto the library expects; the DOM type is not in this project's libs.
type ProviderCrypto = Extract<Parameters<typeof x509.cryptoProvider.set>[0], object>;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

/** A self-signed cert for `host` (plus localhost, 127.0.0.1 and ::1), valid for a day. */
export async function generateServingCert(host: string, nodeName: string): Promise<ServingCert> {
  x509.cryptoProvider.set(webcrypto as unknown as ProviderCrypto);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const names: x509.JsonGeneralName[] = [
    { type: 'dns', value: 'localhost' },
    { type: 'dns', value: nodeName },
    { type: 'ip', value: '127.0.0.1' },
    { type: 'ip', value: '::1' },
  ];
  if (!names.some((n) => n.value === host)) names.push({ type: /^[\d.:]+$/.test(host) ? 'ip' : 'dns', value: host });
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: `CN=${nodeName}@${Math.floor(now / 1000)}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- x509's types name the DOM's CryptoKeyPair, which Node's types lack
    keys: keys as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    signingAlgorithm: ALG,
    extensions: [
      // Like the kubelet's own self-signed cert: it is its own CA, so clients trust it via caFile.
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { certPem: cert.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', pkcs8) };
}
