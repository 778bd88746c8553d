// Original file: proto/workload.proto

import type { X509SVID as _X509SVID, X509SVID__Output as _X509SVID__Output } from './X509SVID.js';

export interface X509SVIDResponse {
  'svids'?: (_X509SVID)[];
  'crl'?: (Buffer | Uint8Array | string)[];
  'federated_bundles'?: ({[key: string]: Buffer | Uint8Array | string});
}

export interface X509SVIDResponse__Output {
  'svids': (_X509SVID__Output)[];
  'crl': (Buffer)[];
  'federated_bundles': ({[key: string]: Buffer});
}
