// Original file: proto/workload.proto


export interface JWTBundlesResponse {
  'bundles'?: ({[key: string]: Buffer | Uint8Array | string});
}

export interface JWTBundlesResponse__Output {
  'bundles': ({[key: string]: Buffer});
}
