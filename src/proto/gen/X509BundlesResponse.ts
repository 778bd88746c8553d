// Original file: proto/workload.proto


export interface X509BundlesResponse {
  'crl'?: (Buffer | Uint8Array | string)[];
  'bundles'?: ({[key: string]: Buffer | Uint8Array | string});
}

export interface X509BundlesResponse__Output {
  'crl': (Buffer)[];
  'bundles': ({[key: string]: Buffer});
}
