// The standard gRPC health service (grpc.health.v1.Health): its proto is the one the published
// grpc-health-check package ships, loaded with this project's own proto-loader and options, so an
// agent serving it loads no second copy of proto-loader. Loaded on first use: load workers import
// this folder and never need it.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';

export type HealthServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

export interface HealthCheckRequest {
  service: string;
}

export interface HealthCheckResponse {
  status: HealthServingStatus;
}

/** A client of the health service, as grpc.loadPackageDefinition builds it. */
export interface HealthClient extends grpc.Client {
  Check(
    req: HealthCheckRequest,
    md: grpc.Metadata,
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: HealthCheckResponse) => void,
  ): grpc.ClientUnaryCall;
}

export type HealthClientConstructor = new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => HealthClient;

/** Where the health proto lies inside the grpc-health-check package (resolved, not imported). */
export function healthProtoPath(): string {
  const pkg = createRequire(import.meta.url).resolve('grpc-health-check/package.json');
  return join(dirname(pkg), 'proto', 'health', 'v1', 'health.proto');
}

let loaded: { service: grpc.ServiceDefinition; Client: HealthClientConstructor } | undefined;

function load(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  const def = protoLoader.loadSync(healthProtoPath(), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: HealthClientConstructor & { service: grpc.ServiceDefinition } } } };
  };
  const Health = pkg.grpc.health.v1.Health;
  loaded = { service: Health.service, Client: Health };
  return loaded;
}

/** The service definition, for grpc.Server#addService. */
export function healthService(): grpc.ServiceDefinition {
  return load().service;
}

/** The client class, for callers of Check (tests, probes). */
export function healthClientConstructor(): HealthClientConstructor {
  return load().Client;
}
