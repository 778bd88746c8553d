// SPIRE's Workload API rate-limit keys and the gRPC methods they limit. The scenario's `spire`
// variant settings are validated by the scenario schema; this module only knows SPIRE's names.

/** SPIRE's Workload API/SDS rate-limit keys (agent.experimental.ratelimit), calls per second per selector set. */
export const SPIRE_RATE_LIMIT_KEYS = [
  'fetch_x509_svid',
  'fetch_jwt_svid',
  'fetch_x509_bundles',
  'fetch_jwt_bundles',
  'stream_secrets',
  'fetch_secrets',
] as const;
export type SpireRateLimitKey = (typeof SPIRE_RATE_LIMIT_KEYS)[number];
export type SpireRateLimits = Partial<Record<SpireRateLimitKey, number>>;

/** The gRPC method each key limits, as SPIRE names it in its "rate limiting enabled" log line. */
export const SPIRE_RATE_LIMIT_METHODS: Record<SpireRateLimitKey, string> = {
  fetch_x509_svid: '/SpiffeWorkloadAPI/FetchX509SVID',
  fetch_jwt_svid: '/SpiffeWorkloadAPI/FetchJWTSVID',
  fetch_x509_bundles: '/SpiffeWorkloadAPI/FetchX509Bundles',
  fetch_jwt_bundles: '/SpiffeWorkloadAPI/FetchJWTBundles',
  stream_secrets: '/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets',
  fetch_secrets: '/envoy.service.secret.v3.SecretDiscoveryService/FetchSecrets',
};

/** True when at least one limit is positive (SPIRE treats 0 as no limit): "post-attestation" keyed by selector set. */
export function limiterEnabled(limits: SpireRateLimits | undefined): boolean {
  return !!limits && Object.values(limits).some((v) => typeof v === 'number' && v > 0);
}
