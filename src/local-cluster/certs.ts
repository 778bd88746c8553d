// The cluster's PKI, made in-process with @peculiar/x509 (already a dependency; no openssl needed):
// a CA, serving certs for the API server and the kubelet, client certs for every component and the
// admin, a front-proxy CA and client, and the service-account key pair. All P-256, valid 30 days.
import 'reflect-metadata'; // @peculiar/x509's DI container needs the Reflect polyfill loaded first
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type ProviderCrypto = Extract<Parameters<typeof x509.cryptoProvider.set>[0], object>;
type Keys = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'];

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface PemPair {
  certPem: string;
  keyPem: string;
}

interface Issuer {
  cert: x509.X509Certificate;
  keys: webcrypto.CryptoKeyPair;
  pair: PemPair;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

const serial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(12)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  x509.cryptoProvider.set(webcrypto as unknown as ProviderCrypto);
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function keyPem(keys: webcrypto.CryptoKeyPair): Promise<string> {
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
}

async function makeCa(cn: string): Promise<Issuer> {
  const keys = await keyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${cn}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 30 * DAY),
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- x509's types name the DOM's CryptoKeyPair, which Node's types lack
    keys: keys as Keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { cert, keys, pair: { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys) } };
}

export interface LeafSpec {
  cn: string;
  /** Organisations: Kubernetes reads them as groups (system:masters, system:nodes). */
  orgs?: string[];
  dns?: string[];
  ips?: string[];
  server?: boolean;
  client?: boolean;
}

/** The subject as an X.500 name string; orgs become O= attributes (groups). */
export function subjectOf(spec: LeafSpec): string {
  return [`CN=${spec.cn}`, ...(spec.orgs ?? []).map((o) => `O=${o}`)].join(', ');
}

async function signLeaf(ca: Issuer, spec: LeafSpec): Promise<PemPair> {
  const keys = await keyPair();
  const now = Date.now();
  const usages: string[] = [];
  if (spec.server) usages.push(x509.ExtendedKeyUsage.serverAuth);
  if (spec.client) usages.push(x509.ExtendedKeyUsage.clientAuth);
  const names: x509.JsonGeneralName[] = [
    ...(spec.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(spec.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subjectOf(spec),
    issuer: ca.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 30 * DAY),
    publicKey: keys.publicKey as never,
    signingKey: ca.keys.privateKey as never,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(usages),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys) };
}

/** File name (without .crt/.key) → certificate and key; `sa` has the public key in certPem. */
export type ClusterPki = Record<string, PemPair>;

/** Every certificate the cluster uses, for a node named `nodeName`. */
export async function makeClusterPki(nodeName: string): Promise<ClusterPki> {
  const ca = await makeCa('attestorm-local-ca');
  const frontProxyCa = await makeCa('attestorm-local-front-proxy-ca');
  const local = { dns: ['localhost', nodeName], ips: ['127.0.0.1'] };
  const out: ClusterPki = {
    ca: ca.pair,
    'front-proxy-ca': frontProxyCa.pair,
    apiserver: await signLeaf(ca, {
      cn: 'kube-apiserver',
      server: true,
      dns: [...local.dns, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
      ips: ['127.0.0.1', '10.96.0.1'],
    }),
    'apiserver-kubelet-client': await signLeaf(ca, { cn: 'kube-apiserver-kubelet-client', orgs: ['system:masters'], client: true }),
    'front-proxy-client': await signLeaf(frontProxyCa, { cn: 'front-proxy-client', client: true }),
    admin: await signLeaf(ca, { cn: 'attestorm-admin', orgs: ['system:masters'], client: true }),
    'controller-manager': await signLeaf(ca, { cn: 'system:kube-controller-manager', client: true }),
    scheduler: await signLeaf(ca, { cn: 'system:kube-scheduler', client: true }),
    'kubelet-client': await signLeaf(ca, { cn: `system:node:${nodeName}`, orgs: ['system:nodes'], client: true }),
    kubelet: await signLeaf(ca, { cn: nodeName, server: true, ...local }),
  };
  const sa = await keyPair();
  out.sa = { certPem: pem('PUBLIC KEY', await webcrypto.subtle.exportKey('spki', sa.publicKey)), keyPem: await keyPem(sa) };
  return out;
}
