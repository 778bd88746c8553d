// Names and IDs a Kubernetes node would give a pod: UUID, ReplicaSet-style name, 64-hex container
// ID, digest-pinned image ID, pod IP. Random for sandbox pods, derived from a seed for filler pods.
import { createHash, randomBytes, randomUUID } from 'node:crypto';

// The alphabet Kubernetes uses for generated name suffixes (no vowels, no confusable digits).
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function fromBytes(bytes: Buffer, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SAFE_ALPHABET[bytes[i % bytes.length]! % SAFE_ALPHABET.length];
  return out;
}

export function randomSuffix(length = 5): string {
  return fromBytes(randomBytes(length), length);
}

export function seededSuffix(seed: string, length: number): string {
  return fromBytes(createHash('sha256').update(seed).digest(), length);
}

export function randomContainerId(): string {
  return randomBytes(32).toString('hex');
}

export function seededHex64(seed: string): string {
  return createHash('sha256').update(seed).digest('hex');
}

/** A UUID (v4 layout) derived from a seed, so filler pods keep their UIDs across runs. */
export function seededUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function newPodUid(): string {
  return randomUUID();
}

/** "registry/name:tag" → "registry/name@sha256:<digest>", the form containerd reports as imageID. */
export function imageIdFor(image: string): string {
  const at = image.indexOf('@');
  if (at >= 0) return image;
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  const repo = colon >= 0 ? image.slice(0, colon) : image;
  return `${repo}@sha256:${seededHex64(`image:${image}`)}`;
}

/** The n-th pod IP of the node's pod CIDR 10.244.0.0/16: .2 to .253 of each /24, from 10.244.1.0. */
export function podIpFor(n: number): string {
  const host = n % (252 * 254);
  return `10.244.${1 + Math.floor(host / 252)}.${2 + (host % 252)}`;
}

/** Container names are DNS labels; the app label (or "app") names the sandbox's one container. */
export function containerNameFor(labels: Record<string, string>): string {
  const base = (labels.app ?? 'app')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return base || 'app';
}
