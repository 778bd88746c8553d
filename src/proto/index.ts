// Loads the Workload API proto once and exposes the service definition, message codecs and
// the wire constants (method paths, the security header) that agents and clients share.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './gen/workload.js';
import { encodeJWTSVIDResponse } from './jwt-svid-response.js';
import { STRICT_REQUEST_DECODERS } from './strict-request.js';

export type * from './gen/workload.js';
export { encodeJWTSVIDResponse } from './jwt-svid-response.js';
export {
  MalformedRequest,
  UNMARSHAL_ERROR_PREFIX,
  STRICT_REQUEST_DECODERS,
  type JWTSVIDRequestDecoded,
  type ValidateJWTSVIDRequestDecoded,
} from './strict-request.js';
export type { JWTSVIDRequest, JWTSVIDRequest__Output } from './gen/JWTSVIDRequest.js';
export type { JWTSVIDResponse, JWTSVIDResponse__Output } from './gen/JWTSVIDResponse.js';
export type { JWTSVID, JWTSVID__Output } from './gen/JWTSVID.js';
export type { X509SVIDRequest, X509SVIDRequest__Output } from './gen/X509SVIDRequest.js';
export type { X509SVIDResponse, X509SVIDResponse__Output } from './gen/X509SVIDResponse.js';
export type { X509SVID, X509SVID__Output } from './gen/X509SVID.js';
export type { X509BundlesRequest, X509BundlesRequest__Output } from './gen/X509BundlesRequest.js';
export type { X509BundlesResponse, X509BundlesResponse__Output } from './gen/X509BundlesResponse.js';
export type { JWTBundlesRequest, JWTBundlesRequest__Output } from './gen/JWTBundlesRequest.js';
export type { JWTBundlesResponse, JWTBundlesResponse__Output } from './gen/JWTBundlesResponse.js';
export type { ValidateJWTSVIDRequest, ValidateJWTSVIDRequest__Output } from './gen/ValidateJWTSVIDRequest.js';
export type { ValidateJWTSVIDResponse, ValidateJWTSVIDResponse__Output } from './gen/ValidateJWTSVIDResponse.js';
export type { SpiffeWorkloadAPIClient, SpiffeWorkloadAPIHandlers, SpiffeWorkloadAPIDefinition } from './gen/SpiffeWorkloadAPI.js';
export type { Struct, Struct__Output } from './gen/google/protobuf/Struct.js';
export {
  HEALTH_SERVICE_NAME,
  healthClientConstructor,
  healthProtoPath,
  healthService,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type HealthClient,
  type HealthClientConstructor,
  type HealthServingStatus,
} from './health.js';

// From the sources this is ../../proto; from a bundle in node_modules/.cache/attestorm (child
// processes run without the TypeScript loader) it is further up, so walk up until it is found.
function findProto(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'proto', 'workload.proto');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return fileURLToPath(new URL('../../proto/workload.proto', import.meta.url));
}

export const PROTO_PATH = findProto();

/** The metadata key every Workload API call must carry with the single value "true". */
export const SECURITY_HEADER = 'workload.spiffe.io';
export const SERVICE_NAME = 'SpiffeWorkloadAPI';

export const METHODS = {
  FetchX509SVID: '/SpiffeWorkloadAPI/FetchX509SVID',
  FetchX509Bundles: '/SpiffeWorkloadAPI/FetchX509Bundles',
  FetchJWTSVID: '/SpiffeWorkloadAPI/FetchJWTSVID',
  FetchJWTBundles: '/SpiffeWorkloadAPI/FetchJWTBundles',
  ValidateJWTSVID: '/SpiffeWorkloadAPI/ValidateJWTSVID',
} as const;
export type MethodName = keyof typeof METHODS;

let cached: ProtoGrpcType | undefined;

/** The loaded package; keepCase so field names match the proto (spiffe_id, x509_svid). */
export function workloadProto(): ProtoGrpcType {
  cached ??= grpc.loadPackageDefinition(
    protoLoader.loadSync(PROTO_PATH, {
      keepCase: true,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
      includeDirs: [],
    }),
  ) as unknown as ProtoGrpcType;
  return cached;
}

/** Service definition with serializers, for grpc.Server#addService and raw clients. */
export function workloadService() {
  return workloadProto().SpiffeWorkloadAPI.service;
}

let strict: grpc.ServiceDefinition | undefined;

/**
 * The service definition for servers that must refuse malformed requests as grpc-go does: the
 * request deserializers are the strict decoders of strict-request.ts, which return a
 * MalformedRequest (never throw) for bytes that are not a valid message; the handlers answer it.
 * FetchJWTSVID's response is encoded by hand too (jwt-svid-response.ts), the agent's hot path.
 */
export function strictWorkloadService(): grpc.ServiceDefinition {
  if (strict) return strict;
  const base = workloadService() as unknown as grpc.ServiceDefinition;
  const copy: Record<string, grpc.MethodDefinition<unknown, unknown>> = { ...base };
  for (const name of Object.keys(METHODS) as MethodName[]) {
    copy[name] = { ...base[name]!, requestDeserialize: STRICT_REQUEST_DECODERS[name] };
  }
  // The admitted FetchJWTSVID's answer, encoded without protobufjs (same bytes).
  copy.FetchJWTSVID = { ...copy.FetchJWTSVID!, responseSerialize: encodeJWTSVIDResponse as (v: unknown) => Buffer };
  strict = copy;
  return strict;
}
